//! `sifter bench`: throughput, hit ratio and latency of concurrent caches side by side, over a
//! list of thread counts, with repeats; a terminal table, CSV, JSON and plots.

use crate::sim::{Bars, STOP};
use anyhow::{bail, Context, Result};
use sifter_bench::adapter::CACHES;
pub use sifter_lab::report::list;
use sifter_lab::report::{
    csv_text, exhausted_warning, measure, plots, table_text, transfer_note, BenchSize, BenchSpec,
};
use std::path::PathBuf;

/// Arguments of `sifter bench`.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Caches (comma-separated): mobius, mobius-wd, sieve, lru, fifo, clock, s3fifo, nbq-clock,
    /// quick_cache, moka, mini_moka, foyer, foyer-sieve, mutex-lru, null (`--list` describes
    /// them).
    #[arg(short, long, default_value = "mobius,sieve,lru,quick_cache,moka")]
    pub caches: String,
    /// Thread counts (comma-separated).
    #[arg(short, long, default_value = "1,2,4")]
    pub threads: String,
    /// Workload: zipf:alpha=..,keys=.. | ycsb:a|b|c or ycsb:read=.. | nbq:get=0.7 |
    /// cachebench:lookup=..,insert=..,lookup-insert=..,erase=.. | a trace file or the trace
    /// layer's generators (uniform:, latest:, scan:, twophase:).
    #[arg(short, long, default_value = "zipf:alpha=1.0,keys=1000000")]
    pub workload: String,
    /// Key sharing (comma-separated): `shared` (one key space and capacity) and/or
    /// `per-thread` (each thread its own key space, capacity × threads: the papers' method).
    #[arg(short, long, default_value = "shared")]
    pub mode: String,
    /// Cache sizes (comma-separated): fractions of the dataset, the distinct keys of one
    /// thread's sequence (`0.01`: has a `.`), or numbers of entries (`10000`, `10k`, `1M`).
    /// Default 0.1; with `--mem`, numbers of entries only (default 100k).
    #[arg(short, long)]
    pub size: Option<String>,
    /// Measured operations per thread; the phase ends when the first thread is done.
    #[arg(long, default_value_t = 1_000_000)]
    pub requests: u64,
    /// Measure for a fixed time instead (e.g. `1s`, `500ms`).
    #[arg(long)]
    pub duration: Option<String>,
    /// Precomputed operations per thread (synthetic workloads; a trace is its own sequence:
    /// in `shared` mode each thread replays one of as many consecutive parts as threads).
    /// The warm-up runs the first part (`--warmup-passes`), the measured phase the rest: it
    /// ends early, with a warning, if a thread reaches the end.
    #[arg(long, default_value_t = 4_000_000)]
    pub sequence: usize,
    /// Runs per cache and configuration (medians and min–max are reported); thread counts and
    /// caches take turns inside each repetition.
    #[arg(short, long, default_value_t = 3)]
    pub repeat: usize,
    /// Time one operation in this many on average (a power of two; 0 disables latency
    /// sampling).
    #[arg(long, default_value_t = 256)]
    pub sample_every: u32,
    /// Warm-up ends when the cache is this full and every thread has run the first
    /// `--warmup-passes` of its sequence (if it is not this full by then, the warm-up goes on
    /// into at most half of the rest; or ends at `--warmup-limit`).
    #[arg(long, default_value_t = 0.98)]
    pub fill: f64,
    /// Share of each thread's sequence the warm-up runs at least, in [0, 1), so that the
    /// measurement starts in steady state: a full cache is not yet a settled one (0 ends the
    /// warm-up as soon as the cache is `--fill` full). The measured phase runs on the rest of
    /// the sequence: no measured request is a replay of a warm-up request.
    #[arg(long, default_value_t = 0.5)]
    pub warmup_passes: f64,
    /// Longest warm-up.
    #[arg(long, default_value = "30s")]
    pub warmup_limit: String,
    /// Report heap bytes per entry instead of throughput: each cache of `--caches` built with
    /// each capacity of `--size` (numbers of entries; default 100,000) and filled with as many
    /// distinct u64 → u64 entries, live heap bytes counted by the allocator, divided by the
    /// entries it holds. Only `--caches`, `--size`, `--out` and `--quiet` apply; the
    /// throughput options are refused with it.
    #[arg(long, conflicts_with_all = [
        "threads", "workload", "mode", "requests", "duration", "sequence", "repeat",
        "sample_every", "fill", "warmup_passes", "warmup_limit", "hit_only", "touch", "json", "no_plots",
    ])]
    pub mem: bool,
    /// Hit-only mode (Caffeine's GetPutBenchmark read mix): every key the threads request is
    /// inserted before the run and the capacity holds them all, so every read hits; `--size`
    /// is refused with it. Shared mode only. Caffeine's own keys: `-w
    /// zipf:alpha=0.99,keys=10922` (2^15 / 3 items); the default 1M-key stream puts most of the
    /// cache beyond the L2.
    #[arg(long, conflicts_with = "size")]
    pub hit_only: bool,
    /// Bytes of an object behind each cached value (the multi-step LRU paper's Fig. 10: 64):
    /// a hit reads all of it through the value the cache returned, a miss writes all of it
    /// before the insert. A multiple of 8, up to 65536; 0 = no object. The objects are a table
    /// of at least the capacity's count, preallocated per run.
    #[arg(long, default_value_t = 0)]
    pub touch: u32,
    /// Output directory for results.csv, results.json and the plots.
    #[arg(short, long, default_value = "bench-results")]
    pub out: PathBuf,
    /// Print the JSON results to stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Skip the plots.
    #[arg(long)]
    pub no_plots: bool,
    /// List the caches and exit (alone: no other option applies).
    #[arg(long, exclusive = true)]
    pub list: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

impl BenchArgs {
    /// The measurement these options ask for.
    pub fn spec(&self) -> BenchSpec {
        BenchSpec {
            caches: self.caches.clone(),
            threads: self.threads.clone(),
            workload: self.workload.clone(),
            mode: self.mode.clone(),
            size: self.size.clone().unwrap_or_else(|| "0.1".into()),
            requests: self.requests,
            duration: self.duration.clone(),
            sequence: self.sequence,
            repeat: self.repeat,
            sample_every: self.sample_every,
            fill: self.fill,
            warmup_passes: self.warmup_passes,
            warmup_limit: self.warmup_limit.clone(),
            hit_only: self.hit_only,
            touch: self.touch,
            fits: Some(sifter_lab::memory::fits),
        }
    }
}

/// `sifter bench`.
pub fn run_cmd(a: BenchArgs) -> Result<()> {
    if a.list {
        for (name, about) in CACHES {
            println!("{name:<12} {about}");
        }
        println!("\npeer crates: {}", crate::output::peers_line());
        return Ok(());
    }
    if a.mem {
        return mem_report(&a);
    }
    let report = measure(&a.spec(), &Bars::new(a.quiet), &STOP)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    std::fs::write(a.out.join("results.csv"), csv_text(&report.rows))?;
    let json = serde_json::json!({
        "command": std::env::args().collect::<Vec<_>>().join(" "),
        "machine": crate::output::machine(),
        "peers": crate::output::peers_json(),
        "report": report,
    });
    let json_text = serde_json::to_string_pretty(&json)? + "\n";
    std::fs::write(a.out.join("results.json"), &json_text)?;
    let mut files = vec![a.out.join("results.csv"), a.out.join("results.json")];
    if !a.no_plots {
        files.extend(plots(&a.out, &report)?);
    }
    if a.json {
        print!("{json_text}");
    } else {
        print!("{}", table_text(&report.rows));
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    eprintln!("wrote {}", names.join(", "));
    if let Some(w) = exhausted_warning(&a.spec(), &report.rows) {
        eprintln!("{w}");
    }
    if let Some(n) = transfer_note(&report.rows) {
        eprintln!("{n}");
    }
    Ok(())
}

/// `--mem`: heap bytes per entry of each cache at each capacity of `--size` (entries;
/// 100,000 by default), filled with as many u64 → u64 entries.
fn mem_report(a: &BenchArgs) -> Result<()> {
    let sizes: Vec<u64> = match &a.size {
        None => vec![100_000],
        Some(s) => list::<BenchSize>(s, "--size")?
            .into_iter()
            .map(|z| match z {
                BenchSize::Entries(n) => Ok(n),
                BenchSize::Fraction(f) => bail!(
                    "--size: {f} is a fraction; --mem fills each cache with distinct keys and has \
                     no key space to take a fraction of: give numbers of entries (10k, 100000)"
                ),
            })
            .collect::<Result<_>>()?,
    };
    let caches: Vec<String> = list(&a.caches, "--caches")?;
    let mut rows = vec![vec![
        "cache".to_string(),
        "capacity".into(),
        "entries".into(),
        "heap bytes".into(),
        "bytes/entry".into(),
        "beyond key+value".into(),
    ]];
    let mut csv =
        String::from("cache,capacity,entries,heap_bytes,bytes_per_entry,overhead_per_entry\n");
    for &n in &sizes {
        for c in
            caches.iter().filter(|c| c.as_str() != "null" && !sifter_bench::adapter::is_ceiling(c))
        {
            sifter_lab::memory::fits(c, n).context("--mem")?;
            let (cache, len, bytes) = sifter_lab::memory::filled(c, n)?;
            drop(cache);
            let per = bytes as f64 / len.max(1) as f64;
            rows.push(vec![
                c.clone(),
                n.to_string(),
                len.to_string(),
                bytes.to_string(),
                format!("{per:.1}"),
                format!("{:.1}", per - 16.0),
            ]);
            csv.push_str(&format!("{c},{n},{len},{bytes},{per:.2},{:.2}\n", per - 16.0));
        }
    }
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    std::fs::write(a.out.join("memory.csv"), &csv)?;
    for r in &rows {
        println!("{:<12} {:>9} {:>8} {:>12} {:>12} {:>17}", r[0], r[1], r[2], r[3], r[4], r[5]);
    }
    println!("wrote {}", a.out.join("memory.csv").display());
    Ok(())
}

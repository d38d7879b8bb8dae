//! `sifter bench`: throughput, hit ratio and latency of concurrent caches side by side, over a
//! list of thread counts, with repeats; a terminal table, CSV, JSON and plots.

use crate::closed_loop::parse_latency_arg;
use crate::output::{csv_line, table};
use crate::plot::{bars_svg_png, lines_svg_png, Axes, Series};
use anyhow::{bail, Context, Result};
use sifter_bench::adapter::{make, CACHES};
use sifter_bench::run::{run, Measure, RunConfig, RunResult};
use sifter_bench::workload::{Mode, Workload};
use sifter_bench::{summarize, Summary};
use std::path::{Path, PathBuf};

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
    /// Cache sizes as fractions of the dataset: the distinct keys of one thread's sequence
    /// (comma-separated).
    #[arg(short, long, default_value = "0.1")]
    pub size: String,
    /// Measured operations per thread; the phase ends when the first thread is done.
    #[arg(long, default_value_t = 1_000_000)]
    pub requests: u64,
    /// Measure for a fixed time instead (e.g. `1s`, `500ms`).
    #[arg(long)]
    pub duration: Option<String>,
    /// Precomputed operations per thread (synthetic workloads; replayed cyclically).
    #[arg(long, default_value_t = 2_000_000)]
    pub sequence: usize,
    /// Runs per cache and configuration (medians and min–max are reported).
    #[arg(short, long, default_value_t = 3)]
    pub repeat: usize,
    /// Time one operation in this many on average (a power of two; 0 disables latency
    /// sampling).
    #[arg(long, default_value_t = 256)]
    pub sample_every: u32,
    /// Warm-up ends when the cache is this full (or after one pass, or `--warmup-limit`).
    #[arg(long, default_value_t = 0.98)]
    pub fill: f64,
    /// Longest warm-up.
    #[arg(long, default_value = "30s")]
    pub warmup_limit: String,
    /// Report heap bytes per entry instead of throughput: each cache of `--caches` filled
    /// with 100,000 distinct u64 → u64 entries (capacity 100,000), live heap bytes counted
    /// by the allocator, divided by the entries it holds.
    #[arg(long)]
    pub mem: bool,
    /// Hit-only mode (Caffeine's GetPutBenchmark read mix): every key the threads request is
    /// inserted before the run and the capacity holds them all, so every read hits; `--size`
    /// is ignored. Shared mode only.
    #[arg(long)]
    pub hit_only: bool,
    /// Output directory for results.csv, results.json and the plots.
    #[arg(short, long, default_value = "bench-results")]
    pub out: PathBuf,
    /// Print the JSON results to stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Skip the plots.
    #[arg(long)]
    pub no_plots: bool,
    /// List the caches and exit.
    #[arg(long)]
    pub list: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

/// One summarised configuration.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    /// Key sharing.
    pub mode: Mode,
    /// Size as a fraction of one key space.
    pub size: f64,
    /// The summary (cache, threads, capacity, throughput, hit ratio, latencies).
    #[serde(flatten)]
    pub summary: Summary,
}

/// A comma-separated list of `T` (`what` names the option in errors); empty is an error.
pub(crate) fn list<T: std::str::FromStr>(s: &str, what: &str) -> Result<Vec<T>> {
    let v: Vec<T> = s
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| x.parse::<T>().map_err(|_| anyhow::anyhow!("{what}: {x:?} is not valid")))
        .collect::<Result<_>>()?;
    if v.is_empty() {
        bail!("{what}: empty list");
    }
    Ok(v)
}

/// Everything `sifter bench` measured, with what it was asked.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    /// The workload spec.
    pub workload: String,
    /// Distinct keys in one key space.
    pub keys: u64,
    /// The run configuration (thread count varies per row).
    pub config: RunConfig,
    /// Rows in run order.
    pub rows: Vec<Row>,
}

/// Runs the benchmark (no output files).
pub fn measure(a: &BenchArgs) -> Result<Report> {
    let caches: Vec<String> = list(&a.caches, "--caches")?;
    for c in caches.iter().filter(|c| c.as_str() != "ceiling") {
        make(c, 1).with_context(|| "--caches")?;
    }
    let threads: Vec<usize> = list(&a.threads, "--threads")?;
    if threads.iter().any(|&t| t == 0 || t > 64) {
        bail!("--threads: each count must be between 1 and 64");
    }
    let modes: Vec<Mode> = list::<String>(&a.mode, "--mode")?
        .iter()
        .map(|m| Mode::parse(m))
        .collect::<Result<_, _>>()?;
    let sizes: Vec<f64> = if a.hit_only { vec![1.0] } else { list(&a.size, "--size")? };
    if (a.hit_only || caches.iter().any(|c| c == "ceiling")) && modes.contains(&Mode::PerThread) {
        bail!("--hit-only and the ceiling cache need --mode shared");
    }
    if sizes.iter().any(|&s| !(s > 0.0 && s <= 16.0)) {
        bail!("--size: fractions must be in (0, 16]");
    }
    if a.repeat == 0 || a.sequence == 0 || a.requests == 0 {
        bail!("--repeat, --sequence and --requests must be at least 1");
    }
    if a.sample_every != 0 && !a.sample_every.is_power_of_two() {
        bail!("--sample-every must be 0 or a power of two (got {})", a.sample_every);
    }
    if !(a.fill > 0.0 && a.fill <= 1.0) {
        bail!("--fill must be in (0, 1]");
    }
    let measure = match &a.duration {
        Some(d) => Measure::Duration(parse_latency_arg(d).context("--duration")?),
        None => Measure::Requests(a.requests),
    };
    let warmup_limit = parse_latency_arg(&a.warmup_limit).context("--warmup-limit")?;
    let workload = Workload::parse(&a.workload)?;
    let max_t = *threads.iter().max().unwrap_or(&1);
    // Precomputed operations live in memory: refuse absurd sizes instead of failing to allocate.
    let copies = if modes.contains(&Mode::Shared) { max_t as u128 } else { 1 };
    let bytes = a.sequence as u128 * copies * 8;
    const LIMIT: u128 = 8 << 30;
    if bytes > LIMIT {
        bail!(
            "--sequence {} × {copies} thread sequence(s) would take {:.1} GiB; the limit is 8 GiB",
            a.sequence,
            bytes as f64 / (1u64 << 30) as f64
        );
    }
    let total = (modes.len() * sizes.len() * threads.len() * caches.len() * a.repeat) as u64;
    let pb = crate::progress::bar(total, "bench", a.quiet);
    let mut rows = Vec::new();
    let mut keys = 0;
    let mut config = None;
    for &mode in &modes {
        pb.set_message(format!("generating {} ({})", workload.spec(), mode.name()));
        let (seqs, k) = workload.generate(max_t, a.sequence, mode)?;
        keys = k;
        for &size in &sizes {
            for &t in &threads {
                // Hit-only: every key of the threads' sequences, inserted before the run.
                let resident: Vec<u64> = if a.hit_only {
                    let mut all = std::collections::HashSet::new();
                    for seq in &seqs[..t] {
                        all.extend(seq.iter().map(|&w| sifter_bench::workload::unpack(w).1));
                    }
                    let mut v: Vec<u64> = all.into_iter().collect();
                    v.sort_unstable();
                    v
                } else {
                    Vec::new()
                };
                let per_space = if a.hit_only {
                    resident.len() as u64
                } else {
                    ((k as f64 * size).round() as u64).max(1)
                };
                let capacity = match mode {
                    Mode::Shared => per_space,
                    Mode::PerThread => per_space * t as u64,
                };
                let cfg = RunConfig {
                    threads: t,
                    mode,
                    measure,
                    fill: a.fill,
                    warmup_limit,
                    sample_every: a.sample_every,
                };
                config.get_or_insert(cfg);
                // Caches round-robined inside each repetition, so that the host's noise hits
                // every cache alike.
                let mut runs: Vec<Vec<RunResult>> = caches.iter().map(|_| Vec::new()).collect();
                for _ in 0..a.repeat {
                    for (i, c) in caches.iter().enumerate() {
                        pb.set_message(format!("{} size {size} {t} thr {c}", mode.name()));
                        let cache = if c == "ceiling" {
                            sifter_bench::adapter::ceiling(capacity, &seqs[..t])
                        } else {
                            make(c, capacity)?
                        };
                        for &key in &resident {
                            cache.insert(key);
                        }
                        runs[i].push(run(&*cache, capacity, &seqs[..t], &cfg)?);
                        pb.inc(1);
                    }
                }
                for (c, r) in caches.iter().zip(&runs) {
                    rows.push(Row { mode, size, summary: summarize(c, t, capacity, r) });
                }
            }
        }
    }
    pb.finish_and_clear();
    let config = config.context("nothing to run")?;
    Ok(Report { workload: a.workload.clone(), keys, config, rows })
}

fn lat(s: &Summary, class: &str) -> Option<sifter_bench::Latency> {
    s.latency.iter().find(|(c, _)| c == class).map(|(_, l)| *l)
}

/// The terminal table.
pub fn table_text(rows: &[Row]) -> String {
    let header = [
        "mode",
        "size",
        "thr",
        "cache",
        "Mops/s",
        "min",
        "max",
        "hit ratio",
        "hit p50 ns",
        "hit p99 ns",
        "miss+ins p99 ns",
        "time % hit/miss/ins/evict",
    ];
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let s = &r.summary;
            let p = |c: &str, f: fn(&sifter_bench::Latency) -> u64| {
                lat(s, c).map_or("-".into(), |l| f(&l).to_string())
            };
            let miss_ins = match (lat(s, "miss"), lat(s, "insert")) {
                (Some(m), Some(i)) => (m.p99 + i.p99).to_string(),
                (None, Some(i)) => i.p99.to_string(),
                _ => "-".into(),
            };
            let share = |class: &str| {
                s.breakdown
                    .iter()
                    .find(|(c, _)| c == class)
                    .map_or("-".into(), |(_, v)| format!("{:.0}", v * 100.0))
            };
            let shares = ["hit", "miss", "insert", "evict"].map(share).join("/");
            vec![
                r.mode.name().into(),
                format!("{}", r.size),
                s.threads.to_string(),
                s.cache.clone(),
                format!("{:.2}", s.mops),
                format!("{:.2}", s.mops_min),
                format!("{:.2}", s.mops_max),
                if s.hit_ratio.is_finite() { format!("{:.4}", s.hit_ratio) } else { "-".into() },
                p("hit", |l| l.p50),
                p("hit", |l| l.p99),
                miss_ins,
                shares,
            ]
        })
        .collect();
    table(&header, &body)
}

/// CSV: one row per cache × configuration, latency columns per class.
pub fn csv_text(rows: &[Row]) -> String {
    let classes = ["hit", "miss", "insert", "evict", "erase"];
    let mut head = vec![
        "mode".to_string(),
        "size".into(),
        "capacity".into(),
        "threads".into(),
        "cache".into(),
        "mops_median".into(),
        "mops_min".into(),
        "mops_max".into(),
        "mops_runs".into(),
        "hit_ratio".into(),
        "warmup_secs".into(),
        "filled".into(),
    ];
    for c in classes {
        for f in ["count", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "time_share"] {
            head.push(format!("{c}_{f}"));
        }
    }
    let mut out = csv_line(&head.iter().map(String::as_str).collect::<Vec<_>>());
    for r in rows {
        let s = &r.summary;
        let runs: Vec<String> = s.mops_runs.iter().map(|x| format!("{x:.3}")).collect();
        let mut f = vec![
            r.mode.name().to_string(),
            r.size.to_string(),
            s.capacity.to_string(),
            s.threads.to_string(),
            s.cache.clone(),
            format!("{:.3}", s.mops),
            format!("{:.3}", s.mops_min),
            format!("{:.3}", s.mops_max),
            runs.join(" "),
            format!("{:.5}", s.hit_ratio),
            format!("{:.3}", s.warmup_secs),
            format!("{:.3}", s.filled),
        ];
        for c in classes {
            let share = s.breakdown.iter().find(|(n, _)| n == c).map(|x| x.1);
            match lat(s, c) {
                Some(l) => {
                    for v in [l.count, l.p50, l.p90, l.p99, l.p999] {
                        f.push(v.to_string());
                    }
                    f.push(format!("{:.4}", share.unwrap_or(0.0)));
                }
                None => f.extend(std::iter::repeat_n(String::new(), 6)),
            }
        }
        out.push_str(&csv_line(&f.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    out
}

/// Plots for each mode × size: throughput vs threads, latency percentiles and hit ratio at the
/// largest thread count. Returns the files written.
pub fn plots(out: &Path, report: &Report) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut groups: Vec<(Mode, f64)> = Vec::new();
    for r in &report.rows {
        if !groups.contains(&(r.mode, r.size)) {
            groups.push((r.mode, r.size));
        }
    }
    for (mode, size) in groups {
        // The null cache measures the harness; at tens of times the real caches' rate it would
        // flatten every other line, so it stays in the tables, not the plots.
        let rows: Vec<&Row> = report
            .rows
            .iter()
            .filter(|r| r.mode == mode && r.size == size && r.summary.cache != "null")
            .collect();
        if rows.is_empty() {
            continue;
        }
        let tag = format!("{}-{}", mode.name(), size);
        let caches = caches_in_order(&rows);
        let series: Vec<Series> = caches
            .iter()
            .map(|c| {
                let pts = rows
                    .iter()
                    .filter(|r| r.summary.cache == *c)
                    .map(|r| (r.summary.threads as f64, r.summary.mops))
                    .collect();
                (c.to_string(), pts)
            })
            .collect();
        let title = format!(
            "Throughput vs threads: {} ({}, {} keys, cache {} %)",
            report.workload,
            mode.name(),
            report.keys,
            crate::plot::tick(size * 100.0)
        );
        let axes = Axes {
            title: &title,
            xlabel: "threads",
            ylabel: "Mops/s",
            log_y: false,
            x_names: None,
        };
        files.extend(lines_svg_png(&out.join(format!("throughput-{tag}")), &axes, &series)?);
        let max_t = rows.iter().map(|r| r.summary.threads).max().unwrap_or(1);
        let at_max: Vec<&&Row> = rows.iter().filter(|r| r.summary.threads == max_t).collect();
        let names = ["P50", "P90", "P99", "P99.9"];
        let mut lat_series: Vec<Series> = Vec::new();
        for r in &at_max {
            for class in ["hit", "insert"] {
                if let Some(l) = lat(&r.summary, class) {
                    let pts = [l.p50, l.p90, l.p99, l.p999]
                        .iter()
                        .enumerate()
                        .map(|(i, &v)| ((i + 1) as f64, v as f64))
                        .collect();
                    lat_series.push((format!("{} {class}", r.summary.cache), pts));
                }
            }
        }
        if !lat_series.is_empty() {
            let title = format!(
                "Latency percentiles at {max_t} threads: {} ({}, cache {} %)",
                report.workload,
                mode.name(),
                crate::plot::tick(size * 100.0)
            );
            let axes = Axes {
                title: &title,
                xlabel: "percentile",
                ylabel: "ns (log scale)",
                log_y: true,
                x_names: Some(&names),
            };
            files.extend(lines_svg_png(&out.join(format!("latency-{tag}")), &axes, &lat_series)?);
        }
        let bars: Vec<(String, f64)> = at_max
            .iter()
            .filter(|r| r.summary.hit_ratio.is_finite())
            .map(|r| (r.summary.cache.clone(), r.summary.hit_ratio))
            .collect();
        if bars.iter().any(|b| b.1 > 0.0) {
            let title = format!(
                "Hit ratio at {max_t} threads: {} ({}, cache {} %)",
                report.workload,
                mode.name(),
                crate::plot::tick(size * 100.0)
            );
            files.extend(bars_svg_png(
                &out.join(format!("hit-ratio-{tag}")),
                &title,
                "hit ratio",
                &bars,
            )?);
        }
    }
    files.extend(size_plots(out, report)?);
    Ok(files)
}

/// The cache names of `rows`, each once, in first-seen order.
fn caches_in_order<'a>(rows: &[&'a Row]) -> Vec<&'a str> {
    let mut caches: Vec<&str> = Vec::new();
    for r in rows {
        if !caches.contains(&r.summary.cache.as_str()) {
            caches.push(&r.summary.cache);
        }
    }
    caches
}

/// With several sizes, the Mobius paper's Fig. 10 views per mode: the best throughput over the
/// thread counts, the single-thread throughput and the single-thread hit ratio, against size.
fn size_plots(out: &Path, report: &Report) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut modes: Vec<Mode> = Vec::new();
    for r in &report.rows {
        if !modes.contains(&r.mode) {
            modes.push(r.mode);
        }
    }
    for mode in modes {
        let rows: Vec<&Row> =
            report.rows.iter().filter(|r| r.mode == mode && r.summary.cache != "null").collect();
        let mut sizes: Vec<f64> = rows.iter().map(|r| r.size).collect();
        sizes.sort_by(f64::total_cmp);
        sizes.dedup();
        if sizes.len() < 2 {
            continue;
        }
        let caches = caches_in_order(&rows);
        let min_t = rows.iter().map(|r| r.summary.threads).min().unwrap_or(1);
        let per_cache = |f: &dyn Fn(&[&&Row]) -> Option<f64>| -> Vec<Series> {
            caches
                .iter()
                .map(|c| {
                    let pts = sizes
                        .iter()
                        .filter_map(|&sz| {
                            let at: Vec<&&Row> = rows
                                .iter()
                                .filter(|r| r.summary.cache == *c && r.size == sz)
                                .collect();
                            f(&at).map(|y| (sz * 100.0, y))
                        })
                        .collect();
                    (c.to_string(), pts)
                })
                .collect()
        };
        let best = per_cache(&|at| at.iter().map(|r| r.summary.mops).max_by(f64::total_cmp));
        let one = |get: fn(&Summary) -> f64| {
            per_cache(&move |at: &[&&Row]| {
                at.iter().find(|r| r.summary.threads == min_t).map(|r| get(&r.summary))
            })
        };
        let m = mode.name();
        let views: [(String, &str, &str, Vec<Series>); 3] = [
            (
                format!(
                    "Best throughput over thread counts vs cache size: {} ({m})",
                    report.workload
                ),
                "Mops/s",
                "max-throughput-vs-size",
                best,
            ),
            (
                format!("Throughput at {min_t} thread(s) vs cache size: {} ({m})", report.workload),
                "Mops/s",
                "throughput-vs-size",
                one(|s| s.mops),
            ),
            (
                format!("Hit ratio at {min_t} thread(s) vs cache size: {} ({m})", report.workload),
                "hit ratio",
                "hit-ratio-vs-size",
                one(|s| s.hit_ratio),
            ),
        ];
        for (title, ylabel, stem, series) in views {
            let axes = Axes {
                title: &title,
                xlabel: "cache size (% of the dataset)",
                ylabel,
                log_y: false,
                x_names: None,
            };
            files.extend(lines_svg_png(&out.join(format!("{stem}-{m}")), &axes, &series)?);
        }
    }
    Ok(files)
}

/// `sifter bench`.
pub fn run_cmd(a: BenchArgs) -> Result<()> {
    if a.list {
        for (name, about) in CACHES {
            println!("{name:<12} {about}");
        }
        return Ok(());
    }
    if a.mem {
        return mem_report(&a);
    }
    let report = measure(&a)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    std::fs::write(a.out.join("results.csv"), csv_text(&report.rows))?;
    let json = serde_json::json!({
        "command": std::env::args().collect::<Vec<_>>().join(" "),
        "machine": crate::sim::machine(),
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
    Ok(())
}

/// `--mem`: heap bytes per entry of each cache, 100,000 u64 → u64 entries.
fn mem_report(a: &BenchArgs) -> Result<()> {
    const N: u64 = 100_000;
    let caches: Vec<String> = list(&a.caches, "--caches")?;
    let mut rows = vec![vec![
        "cache".to_string(),
        "entries".into(),
        "heap bytes".into(),
        "bytes/entry".into(),
        "beyond key+value".into(),
    ]];
    let mut csv = String::from("cache,entries,heap_bytes,bytes_per_entry,overhead_per_entry\n");
    for c in caches.iter().filter(|c| !matches!(c.as_str(), "null" | "ceiling")) {
        let (built, bytes) = crate::alloc_count::measure(|| -> Result<_> {
            let cache = make(c, N)?;
            for k in 0..N {
                cache.insert(sifter_bench::workload::splitmix(k));
            }
            let len = cache.len();
            Ok((cache, len))
        });
        let (cache, len) = built?;
        drop(cache);
        let per = bytes as f64 / len.max(1) as f64;
        rows.push(vec![
            c.clone(),
            len.to_string(),
            bytes.to_string(),
            format!("{per:.1}"),
            format!("{:.1}", per - 16.0),
        ]);
        csv.push_str(&format!("{c},{len},{bytes},{per:.2},{:.2}\n", per - 16.0));
    }
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    std::fs::write(a.out.join("memory.csv"), &csv)?;
    for r in &rows {
        println!("{:<12} {:>8} {:>12} {:>12} {:>17}", r[0], r[1], r[2], r[3], r[4]);
    }
    println!("wrote {}", a.out.join("memory.csv").display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_has_one_row_per_summary_and_stable_columns() {
        let a = BenchArgs {
            caches: "mobius,null".into(),
            threads: "1,2".into(),
            workload: "zipf:keys=2000".into(),
            mode: "shared,per-thread".into(),
            size: "0.1".into(),
            requests: 2_000,
            duration: None,
            sequence: 10_000,
            repeat: 2,
            sample_every: 8,
            fill: 0.98,
            warmup_limit: "5s".into(),
            hit_only: false,
            mem: false,
            out: PathBuf::from("unused"),
            json: false,
            no_plots: true,
            list: false,
            quiet: true,
        };
        let r = measure(&a).unwrap();
        assert_eq!(r.rows.len(), 2 * 2 * 2);
        let csv = csv_text(&r.rows);
        let n = csv.lines().next().unwrap().split(',').count();
        assert!(csv.lines().all(|l| l.split(',').count() == n), "{csv}");
        // per-thread capacity grows with threads
        let cap = |mode: Mode, t: usize| {
            r.rows
                .iter()
                .find(|x| x.mode == mode && x.summary.threads == t)
                .unwrap()
                .summary
                .capacity
        };
        assert_eq!(cap(Mode::PerThread, 2), 2 * cap(Mode::PerThread, 1));
        assert_eq!(cap(Mode::Shared, 2), cap(Mode::Shared, 1));
        for bad in ["nope", ""] {
            let mut b = a.clone();
            b.caches = bad.into();
            assert!(measure(&b).is_err(), "{bad:?} accepted");
        }
        let mut b = a.clone();
        b.threads = "0".into();
        assert!(measure(&b).is_err());
    }
}

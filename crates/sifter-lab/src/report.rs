//! `sifter bench`'s measurement: caches × key sharing × sizes × thread counts, repeated with the
//! thread counts and caches round-robined inside each repetition, summarised per
//! configuration; its text table, CSV and plots.

use crate::closed_loop::parse_latency;
use crate::plot::{bars_svg_png, lines_svg_png, Axes, Series};
use crate::table::{csv_line, table};
use anyhow::{bail, Context, Result};
use sifter_bench::adapter::make;
use sifter_bench::run::{run, Measure, RunConfig, RunResult};
use sifter_bench::workload::{Mode, Workload};
use sifter_bench::{summarize, Summary};
use sifter_sim::sweep::Observer;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// What `sifter bench` measures, as the CLI's options spell it (lists comma-separated; the
/// same parsing and error messages).
#[derive(Debug, Clone)]
pub struct BenchSpec {
    /// Caches (see [`sifter_bench::adapter::CACHES`], and `ceiling`).
    pub caches: String,
    /// Thread counts, each in 1..=64.
    pub threads: String,
    /// The workload spec ([`Workload::parse`]).
    pub workload: String,
    /// Key sharing: `shared` and/or `per-thread`.
    pub mode: String,
    /// Cache sizes: fractions of one key space, in (0, 16], or numbers of entries
    /// ([`BenchSize`]).
    pub size: String,
    /// Measured operations per thread (unless `duration`).
    pub requests: u64,
    /// Measure for a fixed time instead (`1s`, `500ms`).
    pub duration: Option<String>,
    /// Precomputed operations per thread.
    pub sequence: usize,
    /// Runs per cache and configuration.
    pub repeat: usize,
    /// Time one operation in this many (a power of two; 0: no latency sampling).
    pub sample_every: u32,
    /// Warm-up ends when the cache is this full and every thread has run the first
    /// `warmup_passes` of its sequence ([`RunConfig::fill`]).
    pub fill: f64,
    /// Share of each thread's sequence the warm-up runs at least, in [0, 1); the measured
    /// phase runs on the rest ([`RunConfig::warmup_passes`]).
    pub warmup_passes: f64,
    /// Longest warm-up (`30s`).
    pub warmup_limit: String,
    /// Hit-only mode: every requested key resident.
    pub hit_only: bool,
    /// Bytes of an object read on each hit and written on each miss (0: none; see
    /// [`sifter_bench::run::Objects`]).
    pub touch: u32,
    /// Asked before any cache is built whether cache `name` filled to `capacity` entries fits
    /// the machine's memory (an error says why not); `None`: not asked. The CLI answers from
    /// a cache of 100,000 entries measured with its counting allocator.
    pub fits: Option<fn(&str, u64) -> Result<()>>,
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

/// One `--size` of `sifter bench`: a fraction of one key space, or a number of entries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BenchSize {
    /// A fraction of the distinct keys of one thread's sequence, in (0, 16].
    Fraction(f64),
    /// Entries (at least 1): the capacity of one key space whatever the workload's size.
    Entries(u64),
}

impl std::fmt::Display for BenchSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BenchSize::Fraction(x) => write!(f, "{x}"),
            BenchSize::Entries(n) => write!(f, "{n} entries"),
        }
    }
}

impl std::str::FromStr for BenchSize {
    type Err = String;

    /// A count as `sifter sim --size` reads one (`10000`, `10k`, `1.5k`, `1M`; not bytes),
    /// or a fraction: `0.01` (of one key space, up to 16 here, where the simulator stops at 1).
    fn from_str(s: &str) -> Result<Self, String> {
        use sifter_sim::runner::CacheSize;
        let t = s.trim();
        let bad = || {
            format!(
                "{t:?}: expected a fraction like 0.01 or a number of entries like 10000 or 10k \
                 (1 to 2^31; the bench counts entries, not bytes)"
            )
        };
        if t.contains('.') && !t.to_ascii_lowercase().ends_with(['k', 'm']) {
            return match t.parse::<f64>() {
                Ok(f) if f > 0.0 && f <= 16.0 => Ok(BenchSize::Fraction(f)),
                _ => Err(format!("{t:?}: a fraction must be a number in (0, 16]")),
            };
        }
        match CacheSize::parse(t) {
            _ if t.to_ascii_lowercase().ends_with("ib") => Err(bad()),
            Ok(CacheSize::Fraction(f)) => Ok(BenchSize::Fraction(f)),
            Ok(CacheSize::Absolute(n)) if (1..=1 << 31).contains(&n) => Ok(BenchSize::Entries(n)),
            _ => Err(bad()),
        }
    }
}

/// A comma-separated list of `T` (`what` names the option in errors); empty is an error.
pub fn list<T: std::str::FromStr>(s: &str, what: &str) -> Result<Vec<T>>
where
    T::Err: std::fmt::Display,
{
    let v: Vec<T> = s
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| x.parse::<T>().map_err(|e| anyhow::anyhow!("{what}: {x:?} is not valid ({e})")))
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

/// Whether cache `name` holds tables of its own that grow with its capacity (not the null
/// cache, nor the ceiling, which is the threads' own keys).
fn builds_own_tables(name: &str) -> bool {
    name != "null" && !sifter_bench::adapter::is_ceiling(name)
}

/// Runs the benchmark (no output files); progress goes to `obs` (one phase, one step per run).
/// `stop` (checked before each run) ends it with an error.
pub fn measure(a: &BenchSpec, obs: &dyn Observer, stop: &AtomicBool) -> Result<Report> {
    let caches: Vec<String> = list(&a.caches, "--caches")?;
    for c in caches.iter().filter(|c| !sifter_bench::adapter::is_ceiling(c)) {
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
    let sizes: Vec<BenchSize> =
        if a.hit_only { vec![BenchSize::Fraction(1.0)] } else { list(&a.size, "--size")? };
    if (a.hit_only || caches.iter().any(|c| sifter_bench::adapter::is_ceiling(c)))
        && modes.contains(&Mode::PerThread)
    {
        bail!("--hit-only and the ceiling cache need --mode shared");
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
    if !(0.0..1.0).contains(&a.warmup_passes) {
        bail!(
            "--warmup-passes must be in [0, 1) (got {}): the measured phase runs on the rest of \
             each thread's sequence, never on a replay of the warm-up; for a longer warm-up give \
             a longer --sequence",
            a.warmup_passes
        );
    }
    if a.touch != 0 {
        sifter_bench::run::Objects::check(a.touch).context("--touch")?;
    }
    let measure = match &a.duration {
        Some(d) => Measure::Duration(parse_latency(d).context("--duration")?),
        None => Measure::Requests(a.requests),
    };
    let warmup_limit = parse_latency(&a.warmup_limit).context("--warmup-limit")?;
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
    // Sizes in entries have their capacities now (per thread: times the threads): refuse what
    // would not fit before anything runs. Fractions, whose capacities the generated key space
    // decides, are asked below, before their own runs.
    if let Some(fits) = a.fits {
        for &size in &sizes {
            let BenchSize::Entries(n) = size else { continue };
            for &mode in &modes {
                let most = match mode {
                    Mode::Shared => n,
                    Mode::PerThread => n * max_t as u64,
                };
                for c in caches.iter().filter(|c| builds_own_tables(c)) {
                    fits(c, most)?;
                }
            }
        }
    }
    let total = (modes.len() * sizes.len() * threads.len() * caches.len() * a.repeat) as u64;
    obs.begin("bench", total);
    let mut rows = Vec::new();
    let mut keys = 0;
    let mut config = None;
    for &mode in &modes {
        obs.relabel(&format!("generating {} ({})", workload.spec(), mode.name()));
        let (all, k) = workload.generate(max_t, a.sequence, mode)?;
        keys = k;
        // Each thread count's sequences: the first `t` of those for the most threads, or (a
        // trace shared out, one part per thread) its own.
        let joined: Vec<u64> = if workload.shares_out(mode) {
            all.iter().flat_map(|s| s.iter().copied()).collect()
        } else {
            Vec::new()
        };
        let mut per_t = Vec::with_capacity(threads.len());
        for &t in &threads {
            per_t.push(if workload.shares_out(mode) && t != max_t {
                // The parts for `max_t` threads are consecutive: joined, they are the trace.
                sifter_bench::workload::share_out(&joined, t).map_err(anyhow::Error::msg)?
            } else {
                all[..t].to_vec()
            });
        }
        for &asked in &sizes {
            // A count is kept as the fraction of this key space it is (rows, plots and
            // tables show fractions), its capacity exactly the count.
            let size = match asked {
                BenchSize::Fraction(f) => f,
                BenchSize::Entries(n) => n as f64 / k.max(1) as f64,
            };
            // Per thread count: the resident keys (hit-only), the capacity and the run's
            // configuration.
            let mut points = Vec::new();
            for (&t, seqs) in threads.iter().zip(&per_t) {
                // Hit-only: every key of the threads' sequences, inserted before the run.
                let resident: Vec<u64> = if a.hit_only {
                    let mut all = std::collections::HashSet::new();
                    for seq in seqs {
                        all.extend(seq.iter().map(|&w| sifter_bench::workload::unpack(w).1));
                    }
                    let mut v: Vec<u64> = all.into_iter().collect();
                    v.sort_unstable();
                    v
                } else {
                    Vec::new()
                };
                let per_space = match asked {
                    _ if a.hit_only => resident.len() as u64,
                    BenchSize::Fraction(f) => ((k as f64 * f).round() as u64).max(1),
                    BenchSize::Entries(n) => n,
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
                    warmup_passes: a.warmup_passes,
                    warmup_limit,
                    sample_every: a.sample_every,
                    touch: a.touch,
                };
                config.get_or_insert(cfg);
                points.push((t, seqs, resident, capacity, cfg));
            }
            // A size in entries was asked above, before anything ran.
            if let (Some(fits), BenchSize::Fraction(_)) = (a.fits, asked) {
                for (_, _, _, capacity, _) in &points {
                    for c in caches.iter().filter(|c| builds_own_tables(c)) {
                        fits(c, *capacity)?;
                    }
                }
            }
            // Thread counts and caches round-robined inside each repetition, so that the
            // host's noise hits every cache and every thread count alike: repetition i of two
            // caches, or of one cache at two thread counts, ran close together in time (see
            // `benchsuite/tools/paired_ratios.py`).
            let mut runs: Vec<Vec<Vec<RunResult>>> =
                points.iter().map(|_| caches.iter().map(|_| Vec::new()).collect()).collect();
            for _ in 0..a.repeat {
                for (p, (t, seqs, resident, capacity, cfg)) in points.iter().enumerate() {
                    for (i, c) in caches.iter().enumerate() {
                        // Relaxed: a request to stop, acted on at the next run.
                        if stop.load(Ordering::Relaxed) {
                            obs.end();
                            bail!("stopped before the measurement was complete");
                        }
                        obs.relabel(&format!("{} size {asked} {t} thr {c}", mode.name()));
                        let cache = if sifter_bench::adapter::is_ceiling(c) {
                            sifter_bench::adapter::ceiling(c, *capacity, seqs)?
                        } else {
                            make(c, *capacity)?
                        };
                        for &key in resident {
                            cache.insert(key);
                        }
                        runs[p][i].push(run(&*cache, *capacity, seqs, cfg)?);
                        obs.advance(1);
                    }
                }
            }
            for ((t, _, _, capacity, _), runs) in points.iter().zip(&runs) {
                for (c, r) in caches.iter().zip(runs) {
                    rows.push(Row { mode, size, summary: summarize(c, *t, *capacity, r) });
                }
            }
        }
    }
    obs.end();
    let config = config.context("nothing to run")?;
    Ok(Report { workload: a.workload.clone(), keys, config, rows })
}

/// A warning when some runs' measured phase ended at the end of a thread's sequence, before
/// the requests or duration asked ([`sifter_bench::run::RunResult::exhausted`]); `None` if no
/// run did.
pub fn exhausted_warning(a: &BenchSpec, rows: &[Row]) -> Option<String> {
    let cut: usize = rows.iter().map(|r| r.summary.exhausted_runs).sum();
    let all: usize = rows.iter().map(|r| r.summary.mops_runs.len()).sum();
    (cut > 0).then(|| {
        let asked = match &a.duration {
            Some(d) => format!("--duration {d}"),
            None => format!("--requests {}", a.requests),
        };
        let head = format!(
            "warning: in {cut} of {all} runs a thread reached the end of its sequence before \
             {asked} was measured, which ended the measured phase early."
        );
        if Workload::parse(&a.workload).is_ok_and(|w| w.is_trace()) {
            return format!(
                "{head} A trace is its own sequence (in shared mode each thread has one of as \
                 many consecutive parts as threads; in per-thread mode the whole trace): the \
                 warm-up runs the first {} of it or more (--warmup-passes, more while the cache \
                 is not --fill full), the measured phase the rest, never a replay of the \
                 warm-up. Measure fewer requests or use a longer trace.",
                a.warmup_passes
            );
        }
        let (least, most) = sifter_bench::run::warm_span(a.sequence, a.warmup_passes);
        format!(
            "{head} Each thread's --sequence ({} requests) is split: the warm-up runs the first \
             {least}-{most} (--warmup-passes {}, more while the cache is not --fill full), the \
             measured phase the rest, never a replay of the warm-up. Give a longer --sequence \
             to measure longer.",
            a.sequence, a.warmup_passes
        )
    })
}

/// The host's cache-line transfer times over the multi-thread runs of `rows`
/// ([`sifter_bench::run::RunResult::transfer_ns`]): the fastest, the slowest, how many runs
/// took more than [`SLOW_TRANSFER`] times the fastest, and how many runs gave a figure. `None`
/// if no run was probed.
pub fn transfer_range(rows: &[Row]) -> Option<TransferRange> {
    let all: Vec<f64> = rows
        .iter()
        .flat_map(|r| r.summary.transfer_ns_runs.iter().copied())
        .filter(|x| !x.is_nan())
        .collect();
    let lo = all.iter().copied().reduce(f64::min)?;
    let hi = all.iter().copied().reduce(f64::max)?;
    let slow = all.iter().filter(|&&x| x > SLOW_TRANSFER * lo).count();
    Some(TransferRange { lo, hi, slow, runs: all.len() })
}

/// A run whose cache-line transfer time is more than this many times the fastest run's is in
/// the host's slow state (`benchsuite/tools/paired_ratios.py --host` uses the same factor).
pub const SLOW_TRANSFER: f64 = 2.0;

/// What [`transfer_range`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransferRange {
    /// The fastest and slowest transfer times, ns.
    pub lo: f64,
    pub hi: f64,
    /// Runs slower than [`SLOW_TRANSFER`] × `lo`.
    pub slow: usize,
    /// Runs with a figure.
    pub runs: usize,
}

/// A note when the host's cache-line transfer time between CPUs changed between multi-thread
/// runs by more than [`SLOW_TRANSFER`]× ([`transfer_range`]): on a VM whose two vCPUs
/// sometimes move a line 4× slower, every cache that writes shared memory runs about 3×
/// slower at two threads in those runs, so figures compare only within runs of one state.
/// `None` if no run was probed or the times stayed within the factor.
pub fn transfer_note(rows: &[Row]) -> Option<String> {
    let TransferRange { lo, hi, slow, runs } = transfer_range(rows)?;
    (slow > 0).then(|| {
        format!(
            "note: the host's cache-line transfer time between CPUs ranged {lo:.0}-{hi:.0} ns \
             over the multi-thread runs ({slow} of {runs} runs above {SLOW_TRANSFER}× the \
             fastest; per run in results.csv, column transfer_ns_runs). Caches that write shared \
             memory run slower in the slow runs: compare multi-thread figures within runs of \
             one state."
        )
    })
}

/// A size for tables and file names: as given when short (`0.1`), else six decimals (a
/// number of entries as a fraction of the key space: the table adds the capacity).
fn short_size(x: f64) -> String {
    let s = x.to_string();
    if s.len() <= 8 {
        s
    } else {
        format!("{x:.6}")
    }
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
        "hits writing",
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
                match short_size(r.size) {
                    x if x == r.size.to_string() => x,
                    x => format!("{x} ({})", s.capacity),
                },
                s.threads.to_string(),
                s.cache.clone(),
                format!("{:.2}", s.mops),
                format!("{:.2}", s.mops_min),
                format!("{:.2}", s.mops_max),
                if s.hit_ratio.is_finite() { format!("{:.4}", s.hit_ratio) } else { "-".into() },
                // The share of hits that wrote the policy's shared state (sifter's caches).
                if s.hit_writes.is_finite() {
                    format!("{:.1} %", s.hit_writes * 100.0)
                } else {
                    "-".into()
                },
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
        "exhausted_runs".into(),
    ];
    for c in classes {
        for f in ["count", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "time_share"] {
            head.push(format!("{c}_{f}"));
        }
    }
    // Last, so that the earlier columns keep their places.
    head.push("hit_writes".into());
    head.push("transfer_ns_runs".into());
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
            s.exhausted_runs.to_string(),
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
        // The share of hits that wrote the policy's state; blank for caches that do not count.
        f.push(if s.hit_writes.is_nan() { String::new() } else { format!("{:.5}", s.hit_writes) });
        // The host's cache-line transfer time per run (multi-thread runs), in run order.
        let transfers: Vec<String> =
            s.transfer_ns_runs.iter().filter(|x| !x.is_nan()).map(|x| format!("{x:.1}")).collect();
        f.push(transfers.join(" "));
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
        let tag = format!("{}-{}", mode.name(), short_size(size));
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

#[cfg(test)]
mod tests {
    use super::*;
    use sifter_sim::sweep::Silent;

    #[test]
    fn csv_has_one_row_per_summary_and_stable_columns() {
        let a = BenchSpec {
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
            warmup_passes: 0.5,
            warmup_limit: "5s".into(),
            hit_only: false,
            touch: 0,
            fits: None,
        };
        let r = measure(&a, &Silent, &AtomicBool::new(false)).unwrap();
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
        // One transfer time per run, and only the multi-thread runs probe the host (a probe
        // may give no figure on a machine busy with other tests: NaN then).
        for x in &r.rows {
            let t = &x.summary.transfer_ns_runs;
            assert_eq!(t.len(), 2, "{}", x.summary.cache);
            if x.summary.threads == 1 {
                assert!(t.iter().all(|v| v.is_nan()), "{t:?}");
            } else {
                assert!(t.iter().all(|v| v.is_nan() || *v > 0.0), "{t:?}");
            }
        }
        assert_eq!(csv.lines().next().unwrap().rsplit(',').next(), Some("transfer_ns_runs"));
        for bad in ["nope", ""] {
            let mut b = a.clone();
            b.caches = bad.into();
            assert!(measure(&b, &Silent, &AtomicBool::new(false)).is_err(), "{bad:?} accepted");
        }
        let mut b = a.clone();
        b.threads = "0".into();
        assert!(measure(&b, &Silent, &AtomicBool::new(false)).is_err());
    }

    #[test]
    fn a_change_of_the_hosts_transfer_time_is_noted() {
        let row = |threads: usize, transfers: Vec<f64>| {
            let mut summary = summarize("mobius", threads, 100, &[]);
            summary.transfer_ns_runs = transfers;
            Row { mode: Mode::Shared, size: 0.1, summary }
        };
        // Steady (within 2×), or no multi-thread run: nothing to say.
        assert_eq!(transfer_note(&[row(1, vec![f64::NAN; 3])]), None);
        assert_eq!(transfer_note(&[row(2, vec![42.0, 60.0]), row(1, vec![f64::NAN])]), None);
        // The host's slow state in one run of three.
        let n = transfer_note(&[row(2, vec![42.0, 190.0]), row(4, vec![45.0])]).expect("noted");
        assert!(n.contains("42-190 ns") && n.contains("1 of 3 runs above 2× the fastest"), "{n}");
    }

    /// A short run of `caches` at one and two threads (2,000 keys, no warm-up passes, no
    /// latency sampling, two repetitions).
    fn small(caches: &str, mode: &str, size: &str) -> BenchSpec {
        BenchSpec {
            caches: caches.into(),
            threads: "1,2".into(),
            workload: "zipf:keys=2000".into(),
            mode: mode.into(),
            size: size.into(),
            requests: 500,
            duration: None,
            sequence: 5_000,
            repeat: 2,
            sample_every: 0,
            fill: 0.98,
            warmup_passes: 0.0,
            warmup_limit: "5s".into(),
            hit_only: false,
            touch: 0,
            fits: None,
        }
    }

    #[test]
    fn sizes_are_fractions_or_numbers_of_entries() {
        let ok = [
            ("0.01", BenchSize::Fraction(0.01)),
            ("1.0", BenchSize::Fraction(1.0)),
            ("16.0", BenchSize::Fraction(16.0)),
            ("1e-05", BenchSize::Fraction(1e-5)),
            ("1", BenchSize::Entries(1)),
            (" 10000 ", BenchSize::Entries(10_000)),
            ("10k", BenchSize::Entries(10_000)),
            ("1M", BenchSize::Entries(1_000_000)),
            ("1.5k", BenchSize::Entries(1_500)),
            ("1e3k", BenchSize::Entries(1_000_000)),
        ];
        for (s, want) in ok {
            assert_eq!(s.parse::<BenchSize>(), Ok(want), "{s:?}");
        }
        for bad in ["0", "0.0", "16.5", "-1", "1.2345k", "64MiB", "k", "abc", "3000000000", "NaN"] {
            let e = bad.parse::<BenchSize>().unwrap_err();
            assert!(e.contains(bad.trim()), "{bad:?}: {e}");
        }
    }

    #[test]
    fn a_number_of_entries_is_the_capacity_of_one_key_space() {
        let a = BenchSpec { repeat: 1, ..small("null", "shared,per-thread", "0.1,150") };
        let r = measure(&a, &Silent, &AtomicBool::new(false)).unwrap();
        let caps: Vec<(Mode, usize, u64)> = r
            .rows
            .iter()
            .filter(|x| x.size != 0.1)
            .map(|x| (x.mode, x.summary.threads, x.summary.capacity))
            .collect();
        assert_eq!(
            caps,
            [
                (Mode::Shared, 1, 150),
                (Mode::Shared, 2, 150),
                (Mode::PerThread, 1, 150),
                (Mode::PerThread, 2, 300)
            ]
        );
        // The row's size is the fraction of the key space those 150 entries are.
        let row = r.rows.iter().find(|x| x.size != 0.1).unwrap();
        assert!((row.size * r.keys as f64 - 150.0).abs() < 1e-6, "{} of {}", row.size, r.keys);
        let mut b = a.clone();
        b.size = "0.1,0".into();
        let e = measure(&b, &Silent, &AtomicBool::new(false)).unwrap_err().to_string();
        assert!(e.contains("--size") && e.contains("\"0\""), "{e}");
    }

    /// The labels of the runs, in the order they ran.
    #[derive(Default)]
    struct Order(std::sync::Mutex<Vec<String>>);

    impl Observer for Order {
        fn relabel(&self, label: &str) {
            if label.contains(" thr ") {
                self.0.lock().unwrap().push(label.to_string());
            }
        }
    }

    #[test]
    fn thread_counts_and_caches_take_turns_inside_each_repetition() {
        let a = small("null,mobius", "shared", "0.1,0.2");
        let order = Order::default();
        let r = measure(&a, &order, &AtomicBool::new(false)).unwrap();
        let one_rep = |size: &str| {
            ["1 thr null", "1 thr mobius", "2 thr null", "2 thr mobius"]
                .map(|x| format!("shared size {size} {x}"))
        };
        let want: Vec<String> =
            [one_rep("0.1"), one_rep("0.1"), one_rep("0.2"), one_rep("0.2")].concat();
        assert_eq!(*order.0.lock().unwrap(), want);
        // Rows stay grouped by configuration, each with one run per repetition.
        let got: Vec<(f64, usize, &str, usize)> = r
            .rows
            .iter()
            .map(|x| {
                (x.size, x.summary.threads, x.summary.cache.as_str(), x.summary.mops_runs.len())
            })
            .collect();
        assert_eq!(
            got,
            [
                (0.1, 1, "null", 2),
                (0.1, 1, "mobius", 2),
                (0.1, 2, "null", 2),
                (0.1, 2, "mobius", 2),
                (0.2, 1, "null", 2),
                (0.2, 1, "mobius", 2),
                (0.2, 2, "null", 2),
                (0.2, 2, "mobius", 2),
            ]
        );
    }
}

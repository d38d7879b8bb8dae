//! `sifter lab`: the default experiment suite.
//!
//! Miss ratios of every simulator policy on built-in synthetic workloads (and on real traces
//! given with `--trace`) at three cache sizes; throughput, hit ratio and latency percentiles of
//! every concurrent sifter policy and the peer caches over 1–8 threads (`sifter bench`); the
//! queueing model's predictions and a measured-vs-predicted check. Written as tables, CSV, JSON
//! and one self-contained HTML page with the plots inline.

use crate::report::{
    csv_text, exhausted_warning, measure, plots, table_text, transfer_note, transfer_range,
    BenchSpec, Row, SLOW_TRANSFER,
};
use crate::table::{machine, peers_json, peers_line, sim_csv, table};
use anyhow::{Context, Result};
use sifter_sim::registry::{names, PolicySpec};
use sifter_sim::runner::{CacheSize, SimResult};
use sifter_sim::sweep::{self, Observer};
use sifter_trace::TraceSource;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// What `sifter lab` runs and where it writes.
#[derive(Debug, Clone)]
pub struct LabOptions {
    /// Output directory (created).
    pub out: PathBuf,
    /// A smaller, faster suite (about two minutes on two cores, most of it the closed loop of
    /// every policy at two target hit ratios; the full suite takes about 13 minutes).
    pub quick: bool,
    /// Real traces to simulate too (format detected).
    pub traces: Vec<String>,
    /// The command that asked for the run, recorded in `results.json`.
    pub command: String,
}

/// Where a lab run reports as it goes: progress (the simulator's [`Observer`]), the step
/// being started, and each result table when it is ready.
pub trait LabObserver: Observer {
    /// A step begins (`[1/6] zipf:...`, `throughput: ...`).
    fn step(&self, _what: &str) {}
    /// A result table is ready, as text.
    fn table(&self, _text: &str) {}
}

/// What a lab run wrote and found.
#[derive(Debug, Clone)]
pub struct LabOutcome {
    /// The files written: `index.html`, `results.json`, `sim.csv` (plots and the bench files
    /// beside them).
    pub files: Vec<PathBuf>,
    /// The findings, as plain text (the top of the page).
    pub findings: String,
    /// Seconds the run took.
    pub seconds: f64,
}

/// The built-in workloads: (spec, what it shows).
fn workloads(quick: bool) -> Vec<(String, &'static str)> {
    let (n, m) = if quick { (20_000, 200_000) } else { (1_000_000, 5_000_000) };
    vec![
        (format!("zipf:alpha=0.8,n={n},requests={m},seed=1"), "mildly skewed popularity"),
        (format!("zipf:alpha=1.0,n={n},requests={m},seed=1"), "the classic web/KV skew"),
        (format!("zipf:alpha=1.2,n={n},requests={m},seed=1"), "highly skewed popularity"),
        (
            format!("scan:alpha=1.0,n={n},requests={m},scan-frac=0.3,scan-len=2000,seed=1"),
            "Zipf with 30 % one-pass scans: punishes LRU, rewards scan resistance",
        ),
        (
            format!("twophase:alpha=1.0,n={n},requests={m},seed=1"),
            "popularity changes abruptly half-way (SIEVE paper, Fig. 10)",
        ),
        (
            format!("latest:alpha=0.99,n={n},requests={m},insert=0.05,seed=1"),
            "YCSB latest: new keys are hot",
        ),
    ]
}

/// Runs the lab: miss ratios of every simulator policy on the built-in workloads (and
/// `opts.traces`), the concurrent caches' throughput, the queueing model and the
/// measured-vs-model closed loop; writes the report into `opts.out`. `stop` ends the
/// simulations early (the rows done are kept) and the measurements with an error.
pub fn run(opts: &LabOptions, obs: &dyn LabObserver, stop: &AtomicBool) -> Result<LabOutcome> {
    let t0 = Instant::now();
    let out = &opts.out;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let specs: Vec<PolicySpec> =
        names().into_iter().map(PolicySpec::parse).collect::<Result<_, _>>()?;
    let sizes = [CacheSize::Fraction(0.001), CacheSize::Fraction(0.01), CacheSize::Fraction(0.1)];
    let mut sources: Vec<(TraceSource, String)> = Vec::new();
    for (spec, about) in workloads(opts.quick) {
        sources.push((TraceSource::parse(&spec, None)?, about.to_string()));
    }
    for t in &opts.traces {
        sources.push((TraceSource::parse(t, None)?, "real trace".to_string()));
    }
    let mut all: Vec<SimResult> = Vec::new();
    let mut sections = Vec::new();
    for (i, (src, about)) in sources.iter().enumerate() {
        obs.step(&format!("[{}/{}] {}", i + 1, sources.len(), src.name()));
        let trace = sweep::load(src, obs)?;
        let sizes: Vec<CacheSize> =
            sizes.iter().copied().filter(|s| s.resolve(&trace, false) > 0).collect();
        let options = sweep::Options { bytes: false, seed: 0, mode: sweep::Mode::Memory };
        let res = sweep::sweep_loaded(&trace, &specs, &sizes, &options, obs, stop)?.results;
        let misses = MissTable::new(&res, &sizes);
        obs.table(&format!(
            "\n{} — {about} ({} requests, {} objects)\n{}{}",
            trace.name,
            trace.len(),
            trace.n_objects,
            misses.text(),
            sifter_sim::runner::stored_nothing_note(&res)
                .map_or(String::new(), |n| format!("† {}", n.trim_start_matches("note: ")))
        ));
        sections.push(Workload {
            name: trace.name.clone(),
            about: about.clone(),
            requests: trace.len(),
            objects: trace.n_objects,
            misses,
        });
        all.extend(res);
    }
    std::fs::write(out.join("sim.csv"), sim_csv(&all))?;
    obs.step("throughput: concurrent caches over 1-8 threads");
    let bench = throughput_section(out, opts.quick, obs, stop)?;
    obs.table(&format!("\n{}", bench.text));
    obs.step("throughput vs hit ratio: measured closed loop and model, then the extrapolation");
    let model = model_section(out, opts.quick, stop)?;
    obs.table(&format!("\n{}", model.text));
    let json = serde_json::json!({
        "command": opts.command,
        "machine": machine(),
        "peers": peers_json(),
        "seconds": t0.elapsed().as_secs_f64(),
        "simulation": all,
        "throughput": bench.json,
        "model": model.json,
    });
    std::fs::write(out.join("results.json"), serde_json::to_string_pretty(&json)? + "\n")?;
    let (page, findings) = html(out, &sections, &bench, &model)?;
    std::fs::write(out.join("index.html"), page)?;
    Ok(LabOutcome {
        files: vec![out.join("index.html"), out.join("results.json"), out.join("sim.csv")],
        findings,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// One workload's miss-ratio table, as the lab shows it.
struct Workload {
    name: String,
    about: String,
    requests: usize,
    objects: u32,
    misses: MissTable,
}

/// One simulation's cell of a [`MissTable`].
#[derive(Debug, Clone, Copy, PartialEq)]
struct Miss {
    ratio: f64,
    /// The run stored no object ([`SimResult::stored_nothing`]): marked "†" with a footnote.
    stored_nothing: bool,
}

/// Miss ratios of a workload: a row per policy (in the order of the results), a column per
/// cache size; `None` where a policy has no result at a size.
struct MissTable {
    sizes: Vec<CacheSize>,
    rows: Vec<(String, Vec<Option<Miss>>)>,
}

impl MissTable {
    fn new(res: &[SimResult], sizes: &[CacheSize]) -> MissTable {
        let mut policies: Vec<&str> = Vec::new();
        for r in res {
            if !policies.contains(&r.policy.as_str()) {
                policies.push(&r.policy);
            }
        }
        let rows = policies
            .into_iter()
            .map(|p| {
                let cells = sizes
                    .iter()
                    .map(|s| {
                        res.iter().find(|r| r.policy == p && r.size == *s).map(|r| Miss {
                            ratio: r.miss_ratio,
                            stored_nothing: r.stored_nothing(),
                        })
                    })
                    .collect();
                (p.to_string(), cells)
            })
            .collect();
        MissTable { sizes: sizes.to_vec(), rows }
    }

    /// The column headers after "policy".
    fn headers(&self) -> Vec<String> {
        self.sizes.iter().map(|s| format!("miss @ {}", s.label())).collect()
    }

    /// A cell as text: the miss ratio to four places, "†" when the run stored nothing.
    fn cell_text(m: Option<Miss>) -> String {
        match m {
            Some(m) => format!("{:.4}{}", m.ratio, if m.stored_nothing { " †" } else { "" }),
            None => "-".into(),
        }
    }

    /// The plain-text table (the terminal's).
    fn text(&self) -> String {
        let mut header = vec!["policy".to_string()];
        header.extend(self.headers());
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|(p, cells)| {
                std::iter::once(p.clone())
                    .chain(cells.iter().map(|&m| Self::cell_text(m)))
                    .collect()
            })
            .collect();
        table(&header.iter().map(String::as_str).collect::<Vec<_>>(), &rows)
    }
}

/// A plain HTML table (header row, then the rows), escaped.
fn html_table<S: AsRef<str>>(header: &[S], rows: &[Vec<String>]) -> String {
    let mut h = String::from("<table><tr>");
    for c in header {
        let _ = write!(h, "<th>{}</th>", esc(c.as_ref()));
    }
    h.push_str("</tr>");
    for r in rows {
        h.push_str("<tr>");
        for c in r {
            let _ = write!(h, "<td>{}</td>", esc(c));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    h
}

/// An SVG file's text from its first tag, for inlining in the page.
fn inline_svg(path: &std::path::Path) -> Result<String> {
    let text = std::fs::read_to_string(path)?;
    Ok(text.trim_start_matches(|c| c != '<').to_string())
}

/// Writes `<stem>.svg` and `.png` of a line chart and returns the SVG for inlining.
fn plot_inline(
    stem: &std::path::Path,
    axes: &crate::plot::Axes<'_>,
    series: &[crate::plot::Series],
) -> Result<String> {
    let files = crate::plot::lines_svg_png(stem, axes, series)?;
    inline_svg(&files[0])
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The caches the lab measures: every concurrent sifter policy, the peers, and the null cache
/// (the harness's own ceiling).
const LAB_CACHES: &str =
    "mobius,mobius-wd,sieve,lru,fifo,clock,s3fifo,nbq-clock,multistep,quick_cache,moka,mini_moka,foyer,foyer-sieve,mutex-lru,null";
const LAB_CACHES_QUICK: &str = "mobius,sieve,lru,quick_cache,moka,null";

/// Throughput vs threads, hit ratio and latency percentiles (`sifter bench` with the lab's
/// settings), the headline table and the null-cache check.
fn throughput_section(
    out: &std::path::Path,
    quick: bool,
    obs: &dyn Observer,
    stop: &AtomicBool,
) -> Result<Section> {
    let dir = out.join("bench");
    std::fs::create_dir_all(&dir)?;
    let args = BenchSpec {
        caches: if quick { LAB_CACHES_QUICK } else { LAB_CACHES }.into(),
        threads: if quick { "1,2,4" } else { "1,2,4,8" }.into(),
        workload: format!("zipf:alpha=1.0,keys={}", if quick { 100_000 } else { 1_000_000 }),
        mode: "shared".into(),
        size: "0.1".into(),
        // Each thread's sequence: the warm-up runs its first half, the measured phase up to
        // half of the rest (fresh requests only, never a replay of the warm-up's).
        requests: if quick { 100_000 } else { 1_000_000 },
        duration: None,
        sequence: if quick { 400_000 } else { 4_000_000 },
        repeat: if quick { 1 } else { 3 },
        sample_every: 256,
        fill: 0.98,
        warmup_passes: 0.5,
        warmup_limit: "5s".into(),
        hit_only: false,
        touch: 0,
        fits: None,
    };
    let report = measure(&args, obs, stop)?;
    std::fs::write(dir.join("results.csv"), csv_text(&report.rows))?;
    let files = plots(&dir, &report)?;
    let svg = |prefix: &str| -> Result<String> {
        let f = files
            .iter()
            .find(|f| {
                f.extension().is_some_and(|e| e == "svg")
                    && f.file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix))
            })
            .with_context(|| format!("no {prefix} plot"))?;
        inline_svg(f)
    };
    let find = |cache: &str, t: usize| {
        report.rows.iter().find(|r| r.summary.cache == cache && r.summary.threads == t)
    };
    let max_t = report.rows.iter().map(|r| r.summary.threads).max().unwrap_or(1);
    let mut head_threads: Vec<usize> =
        [1, 2, max_t].into_iter().filter(|&t| find("mobius", t).is_some()).collect();
    head_threads.dedup();
    let mut header: Vec<String> = vec!["cache".into()];
    header.extend(head_threads.iter().map(|t| format!("Mops/s @{t} thr")));
    header.push(format!("hit ratio @{max_t} thr"));
    // The papers' mechanism: how many hits wrote the policy's shared state (sifter's caches).
    header.push(format!("hits writing @{max_t} thr"));
    let rows: Vec<Vec<String>> = ["mobius", "sieve", "lru", "quick_cache", "moka"]
        .iter()
        .filter(|c| find(c, 1).is_some())
        .map(|c| {
            let mut row = vec![c.to_string()];
            for &t in &head_threads {
                row.push(find(c, t).map_or("-".into(), |r| format!("{:.2}", r.summary.mops)));
            }
            row.push(find(c, max_t).map_or("-".into(), |r| format!("{:.4}", r.summary.hit_ratio)));
            row.push(match find(c, max_t) {
                Some(r) if r.summary.hit_writes.is_finite() => {
                    format!("{:.1} %", r.summary.hit_writes * 100.0)
                }
                _ => "-".into(),
            });
            row
        })
        .collect();
    // The harness's ceiling: the null cache against the fastest real cache, per thread count.
    let mut ceiling = Vec::new();
    for t in
        report.rows.iter().map(|r| r.summary.threads).collect::<std::collections::BTreeSet<_>>()
    {
        let null = find("null", t).map(|r| r.summary.mops);
        let best = report
            .rows
            .iter()
            .filter(|r| r.summary.threads == t && r.summary.cache != "null")
            .map(|r| (r.summary.mops, r.summary.cache.clone()))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let (Some(n), Some((b, name))) = (null, best) {
            ceiling.push((t, n, b, name));
        }
    }
    let ceiling_text: Vec<String> = ceiling
        .iter()
        .map(|(t, n, b, name)| {
            format!("{t} thr: null {n:.1} Mops/s = {:.1}× {name} ({b:.2})", n / b)
        })
        .collect();
    let findings = throughput_findings(&report.rows, max_t);
    let header_ref: Vec<&str> = header.iter().map(String::as_str).collect();
    let short = exhausted_warning(&args, &report.rows);
    let mut text = format!(
        "Throughput (Zipf 1.0 read-through, {} distinct keys, cache 10 %, shared keys; medians of {})\n{}\nHarness ceiling (null cache): {}\n\nAll caches and thread counts:\n{}",
        report.keys,
        args.repeat,
        table(&header_ref, &rows),
        ceiling_text.join("; "),
        table_text(&report.rows)
    );
    if let Some(w) = &short {
        let _ = write!(text, "\n{w}\n");
    }
    if let Some(n) = transfer_note(&report.rows) {
        let _ = write!(text, "\n{n}\n");
    }
    let mut h = format!(
        "<h2 id=\"throughput\">Throughput of the concurrent caches</h2><figure>{}<figcaption>Throughput \
         (million operations per second) against the number of threads: Zipf(1.0) read-through, \
         {} distinct keys, cache 10 % of them, shared keys. Policies that only touch shared state on \
         a miss (Mobius, CLOCK, FIFO, and SIEVE's lock-free hits) keep their throughput as threads \
         are added; LRU takes a lock on every hit.</figcaption></figure>",
        svg("throughput-")?,
        report.keys
    );
    let _ = write!(
        h,
        "<p>Each cache serves a read-through workload: every request looks a key up and, on a miss, \
         inserts it (as an application does in front of a database). Keys follow a Zipf(1.0) \
         popularity, the cache holds 10 % of them, and all threads share one key space, so popular \
         keys are contended. Each thread's requests are drawn in advance; a warm-up on the first half \
         of them fills the cache and lets it settle, then each configuration is measured on \
         {} further requests per thread, none of them a replay of a warm-up request (a policy that \
         saw the measured requests before would be flattered); the figure is the median of the \
         repetitions. This machine has two cores: \
         above 2 threads the threads are <em>oversubscribed</em>, which punishes caches whose locks \
         are held by a thread the operating system has paused. <em>null</em> is a cache that does \
         nothing: it shows the cost of the benchmark harness itself, which must be far below any \
         real cache's. The peers are these releases: {}.</p>",
        args.requests,
        esc(&peers_line())
    );
    if let Some(w) = &short {
        let _ = write!(h, "<p><strong>{}</strong></p>", esc(w));
    }
    if let Some(p) = transfer_html(&report.rows) {
        h.push_str(&p);
    }
    h.push_str(&html_table(&header, &rows));
    h.push_str(
        "<p><em>Hits writing</em> is the share of the measured hits that wrote the policy's shared \
         state (sifter's caches count it): a reference bit set because it was clear, a counter \
         raised, or, under LRU, the list's lock taken to move the entry. Each such write takes the \
         entry's cache line away from the other cores, which is why hits that write stop scaling \
         with threads; Mobius's bit is tested before it is set, so most of its hits write \
         nothing.</p>",
    );
    let _ = write!(
        h,
        "<p>Harness ceiling: {}.</p><figure>{}<figcaption>Hit ratio at {max_t} threads: what each \
         cache's eviction policy keeps. A faster cache with a lower hit ratio sends more requests to \
         the backend.</figcaption></figure>",
        esc(&ceiling_text.join("; ")),
        svg("hit-ratio-")?
    );
    let _ = write!(
        h,
        "<h2 id=\"latency\">Latency percentiles</h2><figure>{}<figcaption>Latency percentiles at \
         {max_t} threads (nanoseconds, logarithmic scale): lookups that hit (solid) and inserts \
         (dashed).</figcaption></figure><p>One operation in 256 on average (at random gaps, so the \
         sampling cannot fall in step with a cache's periodic housekeeping) is timed: the median \
         (P50) and the tail (P90, P99, P99.9) of lookups that hit and of inserts (which include \
         making room by evicting). The times include the clock reads themselves (about 20 ns). \
         Tails grow when a thread waits for a lock whose holder was preempted, or when a cache does \
         batched maintenance inside a request.</p>",
        svg("latency-")?
    );
    Ok(Section {
        text,
        html: h,
        findings,
        json: serde_json::json!({
            "workload": report.workload,
            "keys": report.keys,
            "config": report.config,
            "rows": report.rows,
        }),
    })
}

/// The report's paragraph on the host's cache-line transfer time during the multi-thread runs
/// (`None` if none was probed), and in bold how many runs were in the host's slow state
/// ([`SLOW_TRANSFER`]) when there were any.
fn transfer_html(rows: &[Row]) -> Option<String> {
    let r = transfer_range(rows)?;
    let mut p = format!(
        "<p>During the multi-thread runs the host moved a cache line from one CPU to another in \
         {:.0}–{:.0} ns (probed for {} ms just before and just after each measured phase; per \
         run in <code>bench/results.csv</code>, column <code>transfer_ns_runs</code>). On a \
         virtual machine this time can grow 4× for seconds at a time, and caches that write \
         shared memory then run up to 3× slower with two threads: compare multi-thread figures \
         only between runs that saw similar times.</p>",
        r.lo,
        r.hi,
        sifter_bench::run::PROBE.as_millis()
    );
    if r.slow > 0 {
        let _ = write!(
            p,
            "<p><strong>The host changed state during this lab: {} of {} multi-thread runs took \
             more than {}× the fastest run's time. Compare multi-thread figures only within runs \
             of one state.</strong></p>",
            r.slow, r.runs, SLOW_TRANSFER
        );
    }
    Some(p)
}

struct Section {
    text: String,
    html: String,
    /// Findings for the top of the report: (HTML, plain text).
    findings: Vec<(String, String)>,
    json: serde_json::Value,
}

/// The caches that are measured for their own sake (not the harness's yardsticks).
fn is_cache(name: &str) -> bool {
    name != "null" && !sifter_bench::adapter::is_ceiling(name)
}

/// Who is fastest at 1 thread and at the most threads, and by how much against the others.
fn throughput_findings(rows: &[Row], max_t: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut ts = vec![1, max_t];
    ts.dedup();
    for t in ts {
        let mut at: Vec<(&str, f64, f64)> = rows
            .iter()
            .filter(|r| r.summary.threads == t && is_cache(&r.summary.cache))
            .map(|r| (r.summary.cache.as_str(), r.summary.mops, r.summary.hit_ratio))
            .collect();
        at.sort_by(|a, b| b.1.total_cmp(&a.1));
        let Some(&(best, x, h)) = at.first() else { continue };
        let vs = |of: &str, x: f64| -> Vec<String> {
            ["quick_cache", "moka", "lru", "mobius", "sieve"]
                .iter()
                .filter(|p| **p != of)
                .filter_map(|p| at.iter().find(|(c, _, _)| c == p))
                .map(|(c, y, hy)| format!("{:.2}× {c} at {hy:.3}", x / y))
                .collect()
        };
        let threads = if t == 1 { "1 thread".to_string() } else { format!("{t} threads") };
        let mut text = format!(
            "At {threads} the fastest cache is {best} with {x:.1} Mops/s at hit ratio {h:.3} ({}).",
            vs(best, x).join(", ")
        );
        // Throughput only compares at equal hit ratios: the fastest of the caches within half a
        // point of the best hit ratio, if that is another one.
        let top = at.iter().map(|a| a.2).fold(0.0, f64::max);
        if let Some(&(fair, fx, fh)) = at.iter().find(|a| a.2 >= top - 0.005) {
            if fair != best {
                text.push_str(&format!(
                    " At the best hit ratio ({top:.3}, within 0.5 points) the fastest is {fair} with \
                     {fx:.1} Mops/s at {fh:.3} ({}).",
                    vs(fair, fx).join(", ")
                ));
            }
        }
        out.push((format!("{} <a href=\"#throughput\">Throughput</a>", esc(&text)), text));
    }
    out
}

const MODEL_POLICIES: [&str; 7] = ["lru", "problru", "fifo", "clock", "s3fifo", "sieve", "mobius"];

/// The closed loop's policies (every one `sifter bench closed-loop` knows), each measured in
/// the lab's closed-loop section.
pub const CLOSED_LOOP_POLICIES: [&str; 10] = [
    "lru",
    "problru",
    "problru-mpl",
    "fifo",
    "clock",
    "sieve",
    "s3fifo",
    "nbq-clock",
    "multistep",
    "mobius",
];

/// The lab's closed-loop multiprogramming level: the paper's (72 workers).
const MPL: usize = 72;

/// p* per policy and core count, the predicted throughput at 16/72/144 cores with a 5 µs SSD,
/// and a plot of throughput against hit ratio (bound and MVA).
fn model_section(out: &std::path::Path, quick: bool, stop: &AtomicBool) -> Result<Section> {
    let mut findings = Vec::new();
    // First what was measured on this machine: a closed loop with a sleeping 100 µs backend,
    // every closed-loop policy, each point sized for a target hit ratio and prefilled. The
    // paper's MPL 72, run as it runs on 72 cores: event loops (one per core) whose workers are
    // never preempted by each other (72 threads on 2 cores would add a lock convoy the paper's
    // machine does not have; docs/BENCHMARKS.md, "Workers as event loops").
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let (keys, secs, targets) = if quick {
        (20_000, 0.15, vec![0.5, 0.99])
    } else {
        (100_000, 0.4, vec![0.5, 0.8, 0.9, 0.95, 0.98, 0.99])
    };
    let experiment = crate::closed_loop::Experiment {
        policies: CLOSED_LOOP_POLICIES.map(String::from).to_vec(),
        mpls: vec![MPL],
        backend: crate::closed_loop::parse_latency("100us")?,
        sizing: crate::closed_loop::Sizing::HitRatios(targets.clone()),
        keys,
        secs,
        spin: false,
        workers: crate::closed_loop::Workers::Loops,
        cores,
    };
    // Targets a cache cannot reach even holding every key (a set-associative cache's
    // conflicts: multi-step LRU at the top targets) are skipped by the sweep and named here.
    let mut out_of_reach = Vec::new();
    let measured = experiment.run(
        &mut |e| {
            if let crate::closed_loop::Event::OutOfReach { policy, target, .. } = e {
                out_of_reach.push((policy.to_string(), target));
            }
        },
        stop,
    )?;
    let top = targets.iter().copied().fold(0.0f64, f64::max);
    let mut closed_rows = Vec::new();
    let mut closed_json = Vec::new();
    let mut closed_series = Vec::new();
    let mut at_top = Vec::new();
    let mut top_x: Vec<(String, f64)> = Vec::new();
    for pol in &experiment.policies {
        let (mut meas, mut pred) = (Vec::new(), Vec::new());
        for r in measured.iter().filter(|r| &r.policy == pol) {
            let p = &r.point;
            closed_rows.push(vec![
                pol.clone(),
                r.target.map_or("-".into(), |t| format!("{t}")),
                format!("{:.4}", r.size),
                format!("{:.4}", p.measured.hit),
                format!("{:.3}", p.measured.x),
                format!("{:.3}", p.model),
                format!("{:+.1}%", r.error() * 100.0),
            ]);
            closed_json.push(serde_json::json!({"policy": pol, "target_hit": r.target, "size": r.size, "prefill_hit": p.measured.prefill_hit, "hit": p.measured.hit, "measured_mops": p.measured.x, "model_mops": p.model, "wait_us": p.wait_us, "workers_us": p.overhead_us, "replay_us": p.replay_us, "idle_gap_us": p.idle_gap_us, "busy": p.measured.busy, "model_busy": p.model_busy}));
            meas.push((p.measured.hit, p.measured.x));
            pred.push((p.measured.hit, p.model));
            if r.target == Some(top) {
                at_top.push(format!("{pol} {:.3}", p.measured.hit));
                top_x.push((pol.clone(), p.measured.x));
            }
        }
        closed_series.push((format!("{pol} measured"), meas));
        closed_series.push((format!("{pol} model"), pred));
    }
    let closed_header =
        ["policy", "target hit", "size", "hit ratio", "measured Mops/s", "model Mops/s", "error"];
    let axes = crate::plot::Axes {
        title: "This machine: measured vs calibrated model (Zipf, MPL 72, 100 µs backend)",
        xlabel: "hit ratio",
        ylabel: "Mops/s",
        log_y: false,
        x_names: None,
    };
    let closed_svg = plot_inline(&out.join("model-vs-measured"), &axes, &closed_series)?;
    let mut text = format!(
        "Measured on this machine, beside the calibrated model (MPL {MPL} on {cores} event loops, sleeping 100 µs backend)\n{}",
        table(&closed_header, &closed_rows)
    );
    if !out_of_reach.is_empty() {
        let list: Vec<String> = out_of_reach.iter().map(|(p, t)| format!("{p} at {t}")).collect();
        text.push_str(&format!(
            "Out of reach with all {keys} keys cached, so not measured: {}.\n",
            list.join(", ")
        ));
    }
    if !at_top.is_empty() {
        let t = format!(
            "Measured hit ratios at the {top} target (each cache prefilled to steady state): {}.",
            at_top.join(", ")
        );
        findings.push((format!("{} <a href=\"#model-vs-measured\">Measured</a>", esc(&t)), t));
    }
    // The paper's effect as measured here: throughput at the top target against LRU's, whose
    // hits all take its one lock.
    if let Some(&(_, lru)) = top_x.iter().find(|(p, _)| p == "lru") {
        let each: Vec<String> = top_x
            .iter()
            .filter(|(p, _)| p != "lru")
            .map(|(p, x)| format!("{p} {x:.1} ({:.1}×)", x / lru))
            .collect();
        let t = format!(
            "Measured throughput at the {top} target with {MPL} workers: lru {lru:.1} Mops/s (every hit takes its lock), {} (× lru's).",
            each.join(", ")
        );
        findings.push((format!("{} <a href=\"#model-vs-measured\">Measured</a>", esc(&t)), t));
    }
    let errs: Vec<f64> = closed_json
        .iter()
        .filter_map(|r| {
            let (m, p) = (r["measured_mops"].as_f64()?, r["model_mops"].as_f64()?);
            (m > 0.0).then(|| ((p - m) / m).abs())
        })
        .collect();
    if !errs.is_empty() {
        let mean = errs.iter().sum::<f64>() / errs.len() as f64;
        let worst = errs.iter().copied().fold(0.0f64, f64::max);
        let t = format!(
            "On this machine the calibrated model predicts the measured throughput within {:.1} % on average (worst {:.1} %) over {} points.",
            mean * 100.0,
            worst * 100.0,
            errs.len()
        );
        findings.push((
            format!("{} <a href=\"#model-vs-measured\">Measured vs predicted</a>", esc(&t)),
            t,
        ));
    }
    let mut h = format!(
        "<h2 id=\"throughput-model\">Throughput and hit ratio</h2>\
         <h3 id=\"model-vs-measured\">Measured on this machine, beside the model</h3><figure>{}\
         <figcaption>Throughput against hit ratio: measured (solid) and predicted by the \
         calibrated model (dashed).</figcaption></figure>",
        closed_svg
    );
    h.push_str(
        "<p>A cache is also a queueing system: every request does some work any core can do at \
         once (hashing, waiting for the backend on a miss) and some work on shared structures \
         that serve one request at a time (an LRU list lock, a queue's head pointer). When those \
         shared structures sit on the <em>hit</em> path — LRU moves every hit to the head — a \
         higher hit ratio sends more requests through them, and past a critical hit ratio \
         <em>p*</em> throughput falls; FIFO-like policies only touch shared structures on a miss. \
         Here 72 workers (the paper's multiprogramming level) replay a Zipf workload against \
         each of sifter's caches; every miss waits an emulated 100 µs backend before inserting. \
         As on the paper's 72 cores, no worker is preempted by another: each core runs an event \
         loop that runs its workers one at a time, each until its next miss, while the waiting \
         ones use no CPU (<code>sifter bench closed-loop --workers loops</code>; with 72 threads \
         on a few cores, a thread preempted while it holds LRU's lock stalls the others, which \
         <code>--workers threads</code> shows). Each point's cache size is chosen for a target \
         hit ratio (the steady-state \
         hit ratio of the simulator on the workers' own requests), and the cache is prefilled to \
         its steady state before the measurement, which goes on from where the prefill stopped. \
         The model beside it is calibrated with each policy's measured \
         cost of a hit and a miss at that cache size, on requests of the workers' kind replayed \
         on the workers' own cache, alone and with the cores busy, each miss followed by a spin \
         as long as a loop idles per miss in the model (a core's first requests after idling \
         are slower than back to back), and with the event loops' own cost per request; the \
         two cores are a load-dependent station, one per loop, a lock (where the policy has \
         one) a station of constant holds that a loop waits for and holds on its core, and the \
         backend the measured mean wait. A core held through a lock is not product-form, so \
         the model is solved by simulation.</p>",
    );
    h.push_str(&html_table(&closed_header, &closed_rows));
    // Then the extrapolation: the model alone, with the paper's service times.
    use sifter_model::policies::{build, Params};
    use sifter_model::solve::{bound, mva, pstar};
    let net = |pol: &str, hit: f64| {
        build(pol, &Params { hit, disk_us: 5.0, ..Params::default() }).map_err(anyhow::Error::msg)
    };
    let mut rows = Vec::new();
    let mut json_rows = Vec::new();
    for pol in MODEL_POLICIES {
        let mut row = vec![pol.to_string()];
        for cores in [16u32, 72, 144] {
            let (p, _) = pstar(|h| net(pol, h).map(|n| bound(&n, cores).x).unwrap_or(0.0), 2000);
            row.push(if p >= 1.0 { "never".into() } else { format!("{p:.3}") });
        }
        for cores in [16u32, 72, 144] {
            let x = mva(&net(pol, 0.95)?, cores).x;
            row.push(format!("{x:.2}"));
            json_rows.push(serde_json::json!({"policy": pol, "cores": cores, "disk_us": 5.0, "hit": 0.95, "mva_mops": x}));
        }
        rows.push(row);
    }
    let header = ["policy", "p* 16 cores", "p* 72", "p* 144", "Mops @95% 16 cores", "@72", "@144"];
    text = format!(
        "{text}\nExtrapolation, model only (5 µs SSD; service times from the paper's CacheLib measurements): p* is the hit ratio beyond which throughput falls\n{}",
        table(&header, &rows)
    );
    let mut series = Vec::new();
    for pol in ["lru", "problru", "fifo", "mobius"] {
        for (solver, name) in [(0, "bound"), (1, "MVA")] {
            let pts: Vec<(f64, f64)> = (0..=99)
                .map(|i| {
                    let h = i as f64 / 100.0;
                    let x = net(pol, h)
                        .map(|n| if solver == 0 { bound(&n, 72).x } else { mva(&n, 72).x })
                        .unwrap_or(0.0);
                    (h, x)
                })
                .collect();
            series.push((format!("{pol} {name}"), pts));
        }
    }
    // Log scale: LRU's peak and fall (~1.5 Mops/s) and FIFO's rise (to ~140) on one chart.
    let axes = crate::plot::Axes {
        title: "Extrapolation (model only): throughput vs hit ratio at 72 cores, 5 µs SSD",
        xlabel: "hit ratio",
        ylabel: "Mops/s (log scale)",
        log_y: true,
        x_names: None,
    };
    let svg = plot_inline(&out.join("model-throughput"), &axes, &series)?;
    {
        let falls: Vec<String> = rows
            .iter()
            .filter(|r| r[2] != "never")
            .map(|r| format!("{} at p* = {}", r[0], r[2]))
            .collect();
        let rises: Vec<&str> =
            rows.iter().filter(|r| r[2] == "never").map(|r| r[0].as_str()).collect();
        let t = format!(
            "Extrapolated by the queueing model (72 cores, 5 µs SSD, the paper's service times): throughput falls past a critical hit ratio for {}; it keeps rising up to 100 % hits for {}.",
            if falls.is_empty() { "no policy".to_string() } else { falls.join(", ") },
            if rises.is_empty() { "none".to_string() } else { rises.join(", ") }
        );
        findings
            .push((format!("{} <a href=\"#model-extrapolation\">Extrapolation</a>", esc(&t)), t));
    }
    let _ = write!(
        h,
        "<h3 id=\"model-extrapolation\">Extrapolation to larger machines (model only)</h3>\
         <figure>{}<figcaption>Not measured: throughput against hit ratio predicted for 72 \
         cores with a 5 µs SSD and the service times the paper measured in CacheLib — the \
         upper bound (the paper's analysis, dashed) and exact MVA (solid) for LRU, \
         probabilistic LRU (q = 0.5), FIFO and Mobius.</figcaption></figure>\
         <p>The same model (sifter-model: bounds and exact MVA, validated against the paper's \
         equations and simulator) extrapolated to machines larger than this one, where the \
         locks of LRU-style policies saturate before the cores do.</p>",
        svg
    );
    h.push_str(&html_table(&header, &rows));
    Ok(Section {
        text,
        html: h,
        findings,
        json: serde_json::json!({"disk_us": 5.0, "rows": json_rows, "closed_loop_100us_mpl72": closed_json, "closed_loop_workers": "loops", "closed_loop_out_of_reach": out_of_reach.iter().map(|(p, t)| serde_json::json!({"policy": p, "target_hit": t})).collect::<Vec<_>>()}),
    })
}

/// The miss-ratio section: per workload, a plot of the main policies against cache size, then
/// the full table (collapsed, shaded per column, best marked, footnoted); and the best policy
/// per workload and size for the findings.
fn miss_ratio_html(
    out: &std::path::Path,
    sections: &[Workload],
) -> Result<(String, String, String)> {
    const SHOWN: [&str; 7] = ["FIFO", "LRU", "CLOCK", "SIEVE", "S3-FIFO", "ARC", "Belady"];
    let mut h = String::from(
        "<h2 id=\"miss-ratios\">Miss ratios</h2><p>A cache's <em>miss ratio</em> is the share of \
         requests it could not serve; lower is better. Every eviction policy of the simulator runs \
         on each workload at three cache sizes (0.1 %, 1 % and 10 % of the distinct objects). Each \
         plot shows the classic policies; the full table of all policies is one click away. \
         <em>Belady</em> is the offline optimum, a bound no real policy can beat.</p>",
    );
    let mut best_rows = Vec::new();
    let mut sizes_hdr = Vec::new();
    let mut footnote_used = false;
    for (i, w) in sections.iter().enumerate() {
        let (name, rows) = (&w.name, &w.misses.rows);
        let labels: Vec<String> = w
            .misses
            .sizes
            .iter()
            .map(|s| match s {
                CacheSize::Fraction(f) => format!("{} %", crate::plot::tick(f * 100.0)),
                CacheSize::Absolute(n) => n.to_string(),
            })
            .collect();
        if sizes_hdr.is_empty() {
            sizes_hdr = labels.clone();
        }
        let shown = |p: &str| {
            SHOWN.iter().any(|n| p == *n || p.strip_prefix(n).is_some_and(|r| r.starts_with('(')))
        };
        let series: Vec<crate::plot::Series> = rows
            .iter()
            .filter(|(p, _)| shown(p))
            .map(|(p, cells)| {
                let pts = cells
                    .iter()
                    .enumerate()
                    .filter_map(|(j, m)| m.map(|m| ((j + 1) as f64, m.ratio)))
                    .collect();
                (p.clone(), pts)
            })
            .collect();
        let names: Vec<&str> = labels.iter().map(String::as_str).collect();
        let title = format!("Miss ratio vs cache size: {name}");
        let axes = crate::plot::Axes {
            title: &title,
            xlabel: "cache size (% of objects)",
            ylabel: "miss ratio",
            log_y: false,
            x_names: Some(&names),
        };
        let stem = out.join(format!("miss-ratio-{i}"));
        let svg = plot_inline(&stem, &axes, &series)?;
        let _ = write!(
            h,
            "<h3 id=\"miss-{i}\">{}</h3><p>{} — {} requests, {} objects.</p><figure>{}\
             <figcaption>Miss ratio of the classic policies against cache size (lower is \
             better).</figcaption></figure><details><summary>All {} policies</summary>",
            esc(name),
            esc(&w.about),
            w.requests,
            w.objects,
            svg,
            rows.len()
        );
        // Per column: the range of the real policies (for the shading) and the best.
        let cols = w.misses.sizes.len();
        let mut lo = vec![f64::MAX; cols];
        let mut hi = vec![f64::MIN; cols];
        let mut best: Vec<Option<(f64, String)>> = vec![None; cols];
        for (p, cells) in rows.iter().filter(|(p, _)| p != "Belady") {
            for (c, m) in cells.iter().enumerate() {
                if let Some(m) = m {
                    let v = m.ratio;
                    lo[c] = lo[c].min(v);
                    hi[c] = hi[c].max(v);
                    if best[c].as_ref().is_none_or(|b| v < b.0) {
                        best[c] = Some((v, p.clone()));
                    }
                }
            }
        }
        h.push_str("<table class=\"heat\"><tr><th>policy</th>");
        for c in w.misses.headers() {
            let _ = write!(h, "<th>{}</th>", esc(&c));
        }
        h.push_str("</tr>");
        for (p, cells) in rows {
            let _ = write!(h, "<tr><td>{}</td>", esc(p));
            for (c, m) in cells.iter().enumerate() {
                let Some(Miss { ratio: v, stored_nothing: nothing }) = *m else {
                    let _ = write!(h, "<td>{}</td>", esc(&MissTable::cell_text(None)));
                    continue;
                };
                let is_best = p != "Belady" && best[c].as_ref().is_some_and(|b| b.0 == v);
                // Darker blue = fewer misses within the column (one hue: colour-blind safe).
                let t = if hi[c] > lo[c] {
                    ((v - lo[c]) / (hi[c] - lo[c])).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let alpha = if p == "Belady" { 0.0 } else { 0.06 + 0.5 * (1.0 - t) };
                footnote_used |= nothing;
                let _ = write!(
                    h,
                    "<td style=\"background:rgba(0,114,178,{alpha:.2})\"{}>{v:.4}{}{}</td>",
                    if is_best { " class=\"best\" title=\"best real policy\"" } else { "" },
                    if is_best { " ★" } else { "" },
                    if nothing { "<sup>†</sup>" } else { "" }
                );
            }
            h.push_str("</tr>");
        }
        h.push_str("</table></details>");
        let mut row = vec![format!("<a href=\"#miss-{i}\">{}</a>", esc(name))];
        let mut text_row = vec![name.clone()];
        for b in &best {
            let (cell, t) = match b {
                Some((v, p)) => (format!("{} ({v:.4})", esc(p)), format!("{p} ({v:.4})")),
                None => ("-".into(), "-".into()),
            };
            row.push(cell);
            text_row.push(t);
        }
        best_rows.push((row, text_row));
    }
    if footnote_used {
        let _ = write!(
            h,
            "<p class=\"note\"><sup>†</sup> Not a broken policy: the run stored no object at all \
             (counted, not guessed from the miss ratio), so every request missed. {} The papers' \
             definition would admit them; <code>sifter sim -p 's3fifo(small=...)'</code> explores \
             other splits.</p>",
            esc(sifter_sim::runner::STORED_NOTHING_WHY)
        );
    }
    // The findings' table: best policy per workload and size.
    let mut f = String::from("<table class=\"findings\"><tr><th>workload</th>");
    for l in &sizes_hdr {
        let _ = write!(f, "<th>cache {}</th>", esc(l));
    }
    f.push_str("</tr>");
    let mut text = String::from("Best policy by miss ratio (Belady excluded):\n");
    for (row, text_row) in &best_rows {
        f.push_str("<tr>");
        for c in row {
            let _ = write!(f, "<td>{c}</td>");
        }
        f.push_str("</tr>");
        let _ = writeln!(text, "  {}: {}", text_row[0], text_row[1..].join(" | "));
    }
    f.push_str("</table>");
    Ok((h, f, text))
}

/// The page: findings first (each linking to its section), then the sections, each led by its
/// plot. Returns the page and the findings as text.
fn html(
    out: &std::path::Path,
    sections: &[Workload],
    bench: &Section,
    model: &Section,
) -> Result<(String, String)> {
    let (miss_html, best_table, best_text) = miss_ratio_html(out, sections)?;
    let mut h = String::from(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>sifter lab report</title>\
         <style>body{font-family:system-ui,sans-serif;max-width:64em;margin:2em auto;padding:0 1em;line-height:1.45;color:#222}\
         h1{margin-bottom:.2em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}\
         figure{margin:1em 0}figure svg{max-width:100%;height:auto}figcaption{color:#555;font-size:.92em}\
         table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}\
         td:first-child,th:first-child{text-align:left}.best{font-weight:bold}\
         .findings td,.findings th{text-align:left}ul.findings li{margin:.4em 0}\
         details{margin:.5em 0 1.5em}summary{cursor:pointer;color:#0072b2}.note{font-size:.9em;color:#444}\
         nav a{margin-right:1em}</style></head><body>\
         <h1>sifter lab report</h1>\
         <nav><a href=\"#findings\">Findings</a><a href=\"#throughput\">Throughput</a>\
         <a href=\"#latency\">Latency</a><a href=\"#miss-ratios\">Miss ratios</a>\
         <a href=\"#throughput-model\">Model</a></nav>\
         <h2 id=\"findings\">Findings of this run</h2><ul class=\"findings\">",
    );
    let mut text = String::from("Findings of this run\n");
    for (fh, ft) in bench.findings.iter().chain(&model.findings) {
        let _ = write!(h, "<li>{fh}</li>");
        let _ = writeln!(text, "* {ft}");
    }
    let _ = write!(
        h,
        "<li>Best eviction policy per workload and cache size by miss ratio (Belady, the offline \
         optimum, excluded). <a href=\"#miss-ratios\">Miss ratios</a>{best_table}</li></ul>"
    );
    text.push_str(&best_text);
    h.push_str(&bench.html);
    h.push_str(&miss_html);
    h.push_str(&model.html);
    h.push_str(
        "<p>Raw results: <code>results.json</code>, <code>sim.csv</code>, \
         <code>bench/results.csv</code> (and PNG copies of the plots in <code>bench/</code> and \
         beside this page).</p></body></html>\n",
    );
    Ok((h, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_stored_nothing_is_marked_in_the_miss_ratio_table() {
        let src = TraceSource::parse("zipf:alpha=1.0,n=1000,requests=5000,seed=1", None).unwrap();
        let t =
            sifter_sim::trace::LoadedTrace::load("z", src.requests().unwrap(), &|_| {}).unwrap();
        let sizes = [CacheSize::Absolute(10), CacheSize::Absolute(100)];
        let mut res: Vec<SimResult> = Vec::new();
        for p in ["s3fifo", "sieve"] {
            let spec = PolicySpec::parse(p).unwrap();
            for z in sizes {
                res.push(sifter_sim::runner::simulate(&t, &spec, z, false, 0, &|_| {}).unwrap());
            }
        }
        let t = MissTable::new(&res, &sizes);
        // S3-FIFO at 10 objects admits nothing (its small queue holds 1); nothing else is
        // marked.
        let (p, cells) = &t.rows[0];
        assert!(p.starts_with("S3-FIFO"), "{p}");
        assert_eq!(cells[0], Some(Miss { ratio: 1.0, stored_nothing: true }));
        assert!(matches!(cells[1], Some(Miss { ratio, stored_nothing: false }) if ratio < 1.0));
        assert!(t.rows[1].1.iter().all(|m| matches!(m, Some(Miss { stored_nothing: false, .. }))));
        // The terminal's table marks the cell, and shows a missing result as "-".
        let text = t.text();
        assert!(text.contains("1.0000 †"), "{text}");
        assert_eq!(text.matches('†').count(), 1, "{text}");
        assert_eq!(MissTable::cell_text(None), "-");
    }

    fn row(cache: &str, threads: usize, mops: f64, hit: f64) -> Row {
        Row {
            mode: sifter_bench::workload::Mode::Shared,
            size: 0.1,
            summary: sifter_bench::Summary {
                cache: cache.into(),
                threads,
                capacity: 1000,
                mops,
                mops_min: mops,
                mops_max: mops,
                mops_runs: vec![mops],
                transfer_ns_runs: vec![f64::NAN],
                hit_ratio: hit,
                hit_writes: f64::NAN,
                latency: Vec::new(),
                breakdown: Vec::new(),
                warmup_secs: 0.0,
                filled: 1.0,
                exhausted_runs: 0,
            },
        }
    }

    #[test]
    fn the_report_gives_the_hosts_transfer_times_and_notes_a_change_of_state() {
        let probed = |cache: &str, threads: usize, t: Vec<f64>| {
            let mut r = row(cache, threads, 10.0, 0.5);
            r.summary.transfer_ns_runs = t;
            r
        };
        // One thread only: nothing probed, no paragraph.
        assert_eq!(transfer_html(&[row("mobius", 1, 10.0, 0.5)]), None);
        let steady = [row("mobius", 1, 10.0, 0.5), probed("mobius", 2, vec![41.6, 55.0])];
        let p = transfer_html(&steady).expect("a paragraph");
        assert!(p.contains("in 42–55 ns"), "{p}");
        assert!(!p.contains("<strong>"), "{p}");
        let changed = [
            probed("mobius", 2, vec![41.6, 190.2]),
            probed("quick_cache", 2, vec![43.0, f64::NAN]),
        ];
        let p = transfer_html(&changed).expect("a paragraph");
        assert!(p.contains("in 42–190 ns"), "{p}");
        // The change of state said once, in bold, without the range again.
        assert!(p.contains("<strong>The host changed state during this lab: 1 of 3"), "{p}");
        assert!(p.contains("more than 2× the fastest run's time"), "{p}");
        assert_eq!(p.matches("190").count(), 1, "{p}");
    }

    #[test]
    fn the_fastest_cache_is_named_with_its_hit_ratio_and_the_fastest_at_the_best_hit_ratio() {
        let rows = [
            row("multistep", 1, 18.5, 0.717),
            row("quick_cache", 1, 13.6, 0.749),
            row("mobius", 1, 12.0, 0.746),
        ];
        let f = throughput_findings(&rows, 1);
        assert_eq!(f.len(), 1);
        let text = &f[0].1;
        assert!(
            text.contains("fastest cache is multistep with 18.5 Mops/s at hit ratio 0.717"),
            "{text}"
        );
        assert!(text.contains("1.36× quick_cache at 0.749"), "{text}");
        assert!(
            text.contains(
                "At the best hit ratio (0.749, within 0.5 points) the fastest is quick_cache"
            ),
            "{text}"
        );
        // When the fastest also has the best hit ratio, one sentence says it.
        let f = throughput_findings(&rows[1..], 1);
        assert!(!f[0].1.contains("At the best hit ratio"), "{}", f[0].1);
    }
}

//! `sifter lab`: the default experiment suite.
//!
//! Miss ratios of every simulator policy on built-in synthetic workloads (and on real traces
//! given with `--trace`) at three cache sizes; throughput, hit ratio and latency percentiles of
//! every concurrent sifter policy and the peer caches over 1–8 threads (`sifter bench`); the
//! queueing model's predictions and a measured-vs-predicted check. Written as tables, CSV, JSON
//! and one self-contained HTML page with the plots inline.

use crate::output::table;
use crate::sim::{load, machine, run_sweep, to_csv};
use anyhow::{Context, Result};
use sifter_sim::registry::{names, PolicySpec};
use sifter_sim::runner::{CacheSize, SimResult};
use sifter_trace::TraceSource;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `sifter lab`.
#[derive(clap::Args, Debug)]
pub struct LabArgs {
    /// Output directory.
    #[arg(short, long, default_value = "lab-report")]
    pub out: PathBuf,
    /// A smaller, faster suite (a few seconds).
    #[arg(long)]
    pub quick: bool,
    /// Also simulate these real traces (format detected; use `sifter sim` for explicit formats).
    #[arg(long)]
    pub trace: Vec<String>,
    /// No progress bars.
    #[arg(short, long)]
    pub quiet: bool,
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

/// `sifter lab`.
pub fn run(a: LabArgs) -> Result<()> {
    let t0 = Instant::now();
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let specs: Vec<PolicySpec> =
        names().into_iter().map(PolicySpec::parse).collect::<Result<_, _>>()?;
    let sizes = [CacheSize::Fraction(0.001), CacheSize::Fraction(0.01), CacheSize::Fraction(0.1)];
    let mut sources: Vec<(TraceSource, String)> = Vec::new();
    for (spec, about) in workloads(a.quick) {
        sources.push((TraceSource::parse(&spec, None)?, about.to_string()));
    }
    for t in &a.trace {
        sources.push((TraceSource::parse(t, None)?, "real trace".to_string()));
    }
    let mut all: Vec<SimResult> = Vec::new();
    let mut sections = Vec::new();
    for (i, (src, about)) in sources.iter().enumerate() {
        eprintln!("[{}/{}] {}", i + 1, sources.len(), src.name());
        let trace = load(src, a.quiet)?;
        let sizes: Vec<CacheSize> =
            sizes.iter().copied().filter(|s| s.resolve(&trace, false) > 0).collect();
        let (res, _) = run_sweep(&trace, &specs, &sizes, false, 0, a.quiet)?;
        let pivot = pivot(&res, &sizes);
        println!(
            "\n{} — {about} ({} requests, {} objects)",
            trace.name,
            trace.len(),
            trace.n_objects
        );
        print!("{}", table(&pivot.0.iter().map(String::as_str).collect::<Vec<_>>(), &pivot.1));
        sections.push((trace.name.clone(), about.clone(), trace.len(), trace.n_objects, pivot));
        all.extend(res);
    }
    std::fs::write(a.out.join("sim.csv"), to_csv(&all))?;
    eprintln!("throughput: concurrent caches over 1-8 threads");
    let bench = throughput_section(&a.out, a.quick, a.quiet)?;
    println!("\n{}", bench.text);
    eprintln!("queueing model: p* and extrapolation to 16/72/144 cores");
    let model = model_section(&a.out, a.quick)?;
    println!("\n{}", model.text);
    let json = serde_json::json!({
        "command": std::env::args().collect::<Vec<_>>().join(" "),
        "machine": machine(),
        "seconds": t0.elapsed().as_secs_f64(),
        "simulation": all,
        "throughput": bench.json,
        "model": model.json,
    });
    std::fs::write(a.out.join("results.json"), serde_json::to_string_pretty(&json)? + "\n")?;
    std::fs::write(a.out.join("index.html"), html(&sections, &bench.html, &model.html))?;
    eprintln!(
        "\nwrote {0}/index.html, {0}/results.json and {0}/sim.csv in {1:.1} s",
        a.out.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

type Pivot = (Vec<String>, Vec<Vec<String>>);

/// Rows: policies; columns: miss ratio at each size.
fn pivot(res: &[SimResult], sizes: &[CacheSize]) -> Pivot {
    let mut header = vec!["policy".to_string()];
    header.extend(sizes.iter().map(|s| format!("miss @ {}", s.label())));
    let mut policies: Vec<&str> = Vec::new();
    for r in res {
        if !policies.contains(&r.policy.as_str()) {
            policies.push(&r.policy);
        }
    }
    let rows = policies
        .iter()
        .map(|p| {
            let mut row = vec![p.to_string()];
            for s in sizes {
                let v = res
                    .iter()
                    .find(|r| r.policy == *p && r.size == *s)
                    .map(|r| format!("{:.4}", r.miss_ratio));
                row.push(v.unwrap_or_else(|| "-".into()));
            }
            row
        })
        .collect();
    (header, rows)
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
fn throughput_section(out: &std::path::Path, quick: bool, quiet: bool) -> Result<Section> {
    use crate::bench_cmd::{measure, plots, table_text, BenchArgs};
    let dir = out.join("bench");
    std::fs::create_dir_all(&dir)?;
    let args = BenchArgs {
        caches: if quick { LAB_CACHES_QUICK } else { LAB_CACHES }.into(),
        threads: if quick { "1,2,4" } else { "1,2,4,8" }.into(),
        workload: format!("zipf:alpha=1.0,keys={}", if quick { 100_000 } else { 1_000_000 }),
        mode: "shared".into(),
        size: "0.1".into(),
        requests: 1,
        duration: Some(if quick { "150ms" } else { "500ms" }.into()),
        sequence: if quick { 300_000 } else { 2_000_000 },
        repeat: if quick { 1 } else { 3 },
        sample_every: 256,
        fill: 0.98,
        warmup_limit: "5s".into(),
        hit_only: false,
        mem: false,
        out: dir.clone(),
        json: false,
        no_plots: false,
        list: false,
        quiet,
    };
    let report = measure(&args)?;
    std::fs::write(dir.join("results.csv"), crate::bench_cmd::csv_text(&report.rows))?;
    let files = plots(&dir, &report)?;
    let svg = |prefix: &str| -> Result<String> {
        let f = files
            .iter()
            .find(|f| {
                f.extension().is_some_and(|e| e == "svg")
                    && f.file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix))
            })
            .with_context(|| format!("no {prefix} plot"))?;
        let text = std::fs::read_to_string(f)?;
        Ok(text.trim_start_matches(|c| c != '<').to_string())
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
    let rows: Vec<Vec<String>> = ["mobius", "sieve", "lru", "quick_cache", "moka"]
        .iter()
        .filter(|c| find(c, 1).is_some())
        .map(|c| {
            let mut row = vec![c.to_string()];
            for &t in &head_threads {
                row.push(find(c, t).map_or("-".into(), |r| format!("{:.2}", r.summary.mops)));
            }
            row.push(find(c, max_t).map_or("-".into(), |r| format!("{:.4}", r.summary.hit_ratio)));
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
    let header_ref: Vec<&str> = header.iter().map(String::as_str).collect();
    let text = format!(
        "Throughput (Zipf 1.0 read-through, {} distinct keys, cache 10 %, shared keys; medians of {})\n{}\nHarness ceiling (null cache): {}\n\nAll caches and thread counts:\n{}",
        report.keys,
        args.repeat,
        table(&header_ref, &rows),
        ceiling_text.join("; "),
        table_text(&report.rows)
    );
    let mut h = String::from(
        "<h2 id=\"throughput\">Throughput of the concurrent caches</h2><p>Each cache serves a \
         read-through workload: every request looks a key up and, on a miss, inserts it (as an \
         application does in front of a database). Keys follow a Zipf(1.0) popularity, the cache \
         holds 10 % of them, and all threads share one key space, so popular keys are contended. \
         After a warm-up that fills the cache, each configuration is measured for a fixed time; \
         the figure is the median of the repetitions. This machine has two cores: at 4 and 8 \
         threads the threads are <em>oversubscribed</em>, which punishes caches whose locks are \
         held by a thread the operating system has paused. <em>null</em> is a cache that does \
         nothing: it shows the cost of the benchmark harness itself, which must be far below any \
         real cache's.</p>",
    );
    h.push_str(&html_table(&header, &rows));
    let _ = write!(
        h,
        "<p>Harness ceiling: {}.</p><figure>{}<figcaption>Throughput (million operations per second) \
         against the number of threads. Policies that only touch shared state on a miss (Mobius, \
         CLOCK, FIFO, and SIEVE's lock-free hits) keep their throughput as threads are added; LRU \
         takes a lock on every hit.</figcaption></figure><figure>{}<figcaption>Hit ratio at {max_t} \
         threads: what each cache's eviction policy keeps. A faster cache with a lower hit ratio \
         sends more requests to the backend.</figcaption></figure>",
        esc(&ceiling_text.join("; ")),
        svg("throughput-")?,
        svg("hit-ratio-")?
    );
    let _ = write!(
        h,
        "<h2 id=\"latency\">Latency percentiles</h2><p>One operation in 256 on average (at random gaps, so \
         the sampling cannot fall in step with a cache's periodic housekeeping) is timed; the plot \
         shows the median (P50) and the tail (P90, P99, P99.9) of lookups that hit and of inserts \
         (which include making room by evicting) at {max_t} threads. The times include the clock \
         reads themselves (about 20 ns). Tails grow when a thread waits for a lock whose holder \
         was preempted, or when a cache does batched maintenance inside a request.</p><figure>{}\
         <figcaption>Latency percentiles (nanoseconds, logarithmic scale).</figcaption></figure>",
        svg("latency-")?
    );
    Ok(Section {
        text,
        html: h,
        json: serde_json::json!({
            "workload": report.workload,
            "keys": report.keys,
            "config": report.config,
            "rows": report.rows,
        }),
    })
}

struct Section {
    text: String,
    html: String,
    json: serde_json::Value,
}

const MODEL_POLICIES: [&str; 7] = ["lru", "problru", "fifo", "clock", "s3fifo", "sieve", "mobius"];

/// p* per policy and core count, the predicted throughput at 16/72/144 cores with a 5 µs SSD,
/// and a plot of throughput against hit ratio (bound and MVA).
fn model_section(out: &std::path::Path, quick: bool) -> Result<Section> {
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
    let text = format!(
        "Queueing model (5 µs SSD; service times from the paper's CacheLib measurements): p* is the hit ratio beyond which throughput falls\n{}",
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
    let svg_path = out.join("model-throughput.svg");
    crate::plot::lines(
        &svg_path,
        "Predicted throughput vs hit ratio (72 cores, 5 µs SSD)",
        "hit ratio",
        "Mops/s",
        &series,
    )?;
    let svg = std::fs::read_to_string(&svg_path)?;
    let mut h = String::from(
        "<h2 id=\"throughput-model\">Throughput model</h2><p>A cache is also a queueing system: every request \
         does some work any core can do at once (hashing, waiting for the disk on a miss) and some work on \
         shared structures that serve one request at a time (an LRU list lock, a queue's head pointer). When \
         those shared structures sit on the <em>hit</em> path — LRU moves every hit to the head — a higher hit \
         ratio sends more requests through them, and past a critical hit ratio <em>p*</em> throughput falls. \
         FIFO-like policies (FIFO, CLOCK, SIEVE, Mobius) only touch shared structures on a miss, so their \
         throughput keeps rising. The model (sifter-model: bounds and exact MVA, validated against the \
         paper's equations and simulator) extrapolates this to machines larger than this one.</p>",
    );
    h.push_str(&html_table(&header, &rows));
    h.push_str("<figure>");
    h.push_str(svg.trim_start_matches(|c| c != '<'));
    h.push_str("<figcaption>Upper bound (the paper's analysis) and exact MVA for LRU, probabilistic LRU (q = 0.5), FIFO and Mobius.</figcaption></figure>");
    // Measured vs predicted on this machine: a closed loop with a sleeping 100 µs backend.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let (keys, secs, sizes) = if quick {
        (20_000, 0.15, vec![0.01, 0.2])
    } else {
        (100_000, 0.4, vec![0.001, 0.01, 0.05, 0.2, 0.5])
    };
    let seqs = crate::closed_loop::sequences(keys, 8);
    let backend = crate::closed_loop::parse_latency_arg("100us")?;
    let mut closed_rows = Vec::new();
    let mut closed_json = Vec::new();
    let mut closed_series = Vec::new();
    for pol in ["lru", "sieve", "mobius"] {
        let (mut meas, mut pred) = (Vec::new(), Vec::new());
        for &size in &sizes {
            let p = crate::closed_loop::point(pol, keys, size, &seqs, backend, false, secs, cores)?;
            let err = (p.model - p.measured.x) / p.measured.x;
            closed_rows.push(vec![
                pol.to_string(),
                format!("{size}"),
                format!("{:.4}", p.measured.hit),
                format!("{:.3}", p.measured.x),
                format!("{:.3}", p.model),
                format!("{:+.1}%", err * 100.0),
            ]);
            closed_json.push(serde_json::json!({"policy": pol, "size": size, "hit": p.measured.hit, "measured_mops": p.measured.x, "model_mops": p.model, "wait_us": p.wait_us}));
            meas.push((p.measured.hit, p.measured.x));
            pred.push((p.measured.hit, p.model));
        }
        closed_series.push((format!("{pol} measured"), meas));
        closed_series.push((format!("{pol} model"), pred));
    }
    let closed_header = ["policy", "size", "hit ratio", "measured Mops/s", "model Mops/s", "error"];
    let closed_svg_path = out.join("model-vs-measured.svg");
    crate::plot::lines(
        &closed_svg_path,
        "This machine: measured vs calibrated model (8 workers, 100 µs backend)",
        "hit ratio",
        "Mops/s",
        &closed_series,
    )?;
    let closed_svg = std::fs::read_to_string(&closed_svg_path)?;
    let text = format!("{text}\nMeasured vs calibrated model on this machine (8 workers, sleeping 100 µs backend)\n{}", table(&closed_header, &closed_rows));
    h.push_str(
        "<h3 id=\"model-vs-measured\">Measured vs predicted on this machine</h3><p>To check the model, 8 worker \
         threads replay a Zipf workload against sifter's caches; every miss waits an emulated 100 µs backend \
         (sleeping, so waiting requests use no CPU) before inserting. Growing the cache raises the hit ratio. \
         The model is calibrated with each policy's measured cost of a hit and a miss at that cache size, the \
         two cores as a 2-server station, and the measured mean backend wait.</p>",
    );
    h.push_str(&html_table(&closed_header, &closed_rows));
    h.push_str("<figure>");
    h.push_str(closed_svg.trim_start_matches(|c| c != '<'));
    h.push_str("<figcaption>Throughput against hit ratio: measured, and predicted by the calibrated model.</figcaption></figure>");
    Ok(Section {
        text,
        html: h,
        json: serde_json::json!({"disk_us": 5.0, "rows": json_rows, "closed_loop_100us_mpl8": closed_json}),
    })
}

fn html(
    sections: &[(String, String, usize, u32, Pivot)],
    bench_html: &str,
    model_html: &str,
) -> String {
    let mut h = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>sifter lab report</title>\
         <style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}\
         table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}\
         td:first-child,th:first-child{text-align:left}.best{font-weight:bold;background:#e6f4e6}</style></head><body>\
         <h1>sifter lab report</h1>",
    );
    h.push_str(
        "<h2 id=\"miss-ratios\">Miss ratios</h2><p>A cache's <em>miss ratio</em> is the share of requests it \
         could not serve; lower is better. Each table simulates every eviction policy on one workload at three \
         cache sizes (0.1 %, 1 % and 10 % of the distinct objects). The best real policy per column is \
         highlighted; <em>Belady</em> is the offline optimum, shown as a bound no real policy can beat.</p>",
    );
    for (name, about, reqs, objs, (header, rows)) in sections {
        let _ = write!(
            h,
            "<h3>{}</h3><p>{} — {reqs} requests, {objs} objects.</p><table><tr>",
            esc(name),
            esc(about)
        );
        for c in header {
            let _ = write!(h, "<th>{}</th>", esc(c));
        }
        h.push_str("</tr>");
        let best: Vec<Option<String>> = (1..header.len())
            .map(|c| {
                rows.iter()
                    .filter(|r| r[0] != "Belady")
                    .filter_map(|r| r[c].parse::<f64>().ok().map(|v| (v, r[c].clone())))
                    .min_by(|a, b| a.0.total_cmp(&b.0))
                    .map(|x| x.1)
            })
            .collect();
        for r in rows {
            h.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                let cls = if i > 0 && r[0] != "Belady" && best[i - 1].as_deref() == Some(c.as_str())
                {
                    " class=\"best\""
                } else {
                    ""
                };
                let _ = write!(h, "<td{cls}>{}</td>", esc(c));
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>");
    }
    h.push_str(bench_html);
    h.push_str(model_html);
    h.push_str(
        "<p>Raw results: <code>results.json</code>, <code>sim.csv</code>, <code>bench/results.csv</code> \
         (and PNG copies of the throughput plots in <code>bench/</code>), \
         <code>model-throughput.svg</code>.</p></body></html>\n",
    );
    h
}

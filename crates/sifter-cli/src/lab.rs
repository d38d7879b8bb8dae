//! `sifter lab`: the default experiment suite.
//!
//! For now: miss ratios of every simulator policy on built-in synthetic workloads (and on real
//! traces given with `--trace`), at three cache sizes, written as a table, CSV, JSON and a
//! self-contained HTML page. Later suites (throughput, the queueing model) add sections.

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
    eprintln!("queueing model: p* and extrapolation to 16/72/144 cores");
    let model = model_section(&a.out, a.quick)?;
    println!("\n{}", model.text);
    let json = serde_json::json!({
        "command": std::env::args().collect::<Vec<_>>().join(" "),
        "machine": machine(),
        "seconds": t0.elapsed().as_secs_f64(),
        "simulation": all,
        "model": model.json,
    });
    std::fs::write(a.out.join("results.json"), serde_json::to_string_pretty(&json)? + "\n")?;
    std::fs::write(a.out.join("index.html"), html(&sections, &model.html))?;
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

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

struct ModelSection {
    text: String,
    html: String,
    json: serde_json::Value,
}

const MODEL_POLICIES: [&str; 6] = ["lru", "problru", "fifo", "clock", "sieve", "mobius"];

/// p* per policy and core count, the predicted throughput at 16/72/144 cores with a 5 µs SSD,
/// and a plot of throughput against hit ratio (bound and MVA).
fn model_section(out: &std::path::Path, quick: bool) -> Result<ModelSection> {
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
                    (h, x.min(20.0))
                })
                .collect();
            series.push((format!("{pol} {name}"), pts));
        }
    }
    let svg_path = out.join("model-throughput.svg");
    crate::plot::lines(
        &svg_path,
        "Predicted throughput vs hit ratio (72 cores, 5 µs SSD; capped at 20 Mops/s)",
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
         paper's equations and simulator) extrapolates this to machines larger than this one.</p><table><tr>",
    );
    for c in header {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr>");
    for r in &rows {
        h.push_str("<tr>");
        for c in r {
            let _ = write!(h, "<td>{}</td>", esc(c));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table><figure>");
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
         two cores as a 2-server station, and the measured mean backend wait.</p><table><tr>",
    );
    for c in closed_header {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr>");
    for r in &closed_rows {
        h.push_str("<tr>");
        for c in r {
            let _ = write!(h, "<td>{}</td>", esc(c));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table><figure>");
    h.push_str(closed_svg.trim_start_matches(|c| c != '<'));
    h.push_str("<figcaption>Throughput against hit ratio: measured, and predicted by the calibrated model.</figcaption></figure>");
    Ok(ModelSection {
        text,
        html: h,
        json: serde_json::json!({"disk_us": 5.0, "rows": json_rows, "closed_loop_100us_mpl8": closed_json}),
    })
}

fn html(sections: &[(String, String, usize, u32, Pivot)], model_html: &str) -> String {
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
    h.push_str(model_html);
    h.push_str(
        "<p>Raw results: <code>results.json</code>, <code>sim.csv</code>, <code>model-throughput.svg</code>.</p></body></html>\n",
    );
    h
}

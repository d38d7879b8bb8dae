//! `sifter analyze`: miss-ratio curves, policy comparisons across many traces (the SIEVE
//! paper's Figs. 3 and 5), and miss ratio over time (Figs. 8–10).

use crate::output::{csv_line, table, write_to};
use crate::sim::{check_specs, load, parse_sizes, run_sweep};
use anyhow::{bail, Result};
use sifter_sim::analysis;
use sifter_sim::registry::{parse_policy_list, PolicySpec};
use sifter_sim::runner::CacheSize;
use sifter_sim::trace::LoadedTrace;
use sifter_trace::TraceSource;
use std::path::PathBuf;

/// `sifter analyze ...`
#[derive(clap::Subcommand, Debug)]
pub enum AnalyzeCmd {
    /// Miss ratio against cache size for each policy.
    Mrc {
        /// Trace file or synthetic workload.
        trace: String,
        /// Policies (comma-separated).
        #[arg(short, long, default_value = "fifo,lru,sieve,s3fifo,belady")]
        policy: String,
        /// Sizes: a list (`0.001,0.01,0.1`) or `from:to:points` spaced logarithmically.
        #[arg(short, long, default_value = "0.001:0.5:16")]
        size: String,
        /// Byte mode.
        #[arg(long)]
        bytes: bool,
        /// Format spec (default: detected).
        #[arg(short, long)]
        format: Option<String>,
        #[command(flatten)]
        io: Outputs,
    },
    /// Miss-ratio reduction from FIFO across traces: P10/P25/mean/P75/P90 and the share of
    /// traces on which each policy is best.
    Compare {
        /// Trace files (or synthetic workloads); a folder means every file in it (except
        /// README/LICENSE/.md files; files whose format cannot be detected are skipped with a
        /// message — pass --format for headerless binary ones).
        #[arg(required = true)]
        traces: Vec<String>,
        /// Policies (comma-separated; FIFO is the baseline).
        #[arg(short, long, default_value = "lru,clock,sieve,s3fifo,arc,lirs,twoq")]
        policy: String,
        /// Cache size (one value).
        #[arg(short, long, default_value = "0.1")]
        size: String,
        /// Format spec applied to every file (default: detected per file).
        #[arg(short, long)]
        format: Option<String>,
        /// CSV output of the per-trace results (`-` for stdout).
        #[arg(long)]
        csv: Option<PathBuf>,
        /// SVG plot of the percentiles.
        #[arg(long)]
        svg: Option<PathBuf>,
    },
    /// Miss ratio in consecutive windows of requests (how fast a policy adapts).
    Intervals {
        /// Trace file or synthetic workload (e.g. `twophase:...`).
        trace: String,
        /// Policies (comma-separated).
        #[arg(short, long, default_value = "fifo,lru,sieve,s3fifo")]
        policy: String,
        /// Cache size (one value).
        #[arg(short, long, default_value = "0.1")]
        size: String,
        /// Requests per window.
        #[arg(long, default_value_t = 100_000)]
        window: usize,
        /// Format spec (default: detected).
        #[arg(short, long)]
        format: Option<String>,
        #[command(flatten)]
        io: Outputs,
    },
    /// Ideal object ratio over time: the share of the cache holding the C most requested objects
    /// (C = cache size) of the whole trace, or of the current phase with `--phases` — the SIEVE
    /// paper's Figs. 8b–10b
    Ideal {
        /// Trace file or synthetic workload.
        trace: String,
        /// Policies (comma-separated; those that list their contents — an unsupported one is
        /// refused with the list).
        #[arg(short, long, default_value = "lru,lfu,arc,sieve")]
        policy: String,
        /// Cache size (one value).
        #[arg(short, long, default_value = "0.1")]
        size: String,
        /// Sample every this many requests (default: 200 samples over the trace).
        #[arg(long)]
        every: Option<usize>,
        /// Cut the trace into this many equal phases and take the ideal set of each phase from
        /// its own requests (e.g. 2 for a `twophase` workload: Fig. 10b).
        #[arg(long, default_value_t = 1)]
        phases: usize,
        /// Format spec (default: detected).
        #[arg(short, long)]
        format: Option<String>,
        #[command(flatten)]
        io: Outputs,
    },
    /// Multi-step LRU: the share of hits found in each vector of a set (vector 1 holds the most
    /// promoted items), per cache size — the multi-step LRU paper's Fig. 12
    Vectors {
        /// Trace file or synthetic workload.
        trace: String,
        /// Cache sizes: a list (`0.01,0.1`) or `from:to:points` spaced logarithmically.
        #[arg(short, long, default_value = "0.001,0.01,0.1")]
        size: String,
        /// Items per vector.
        #[arg(long, default_value_t = 4)]
        p: usize,
        /// Vectors per set.
        #[arg(long, default_value_t = 2)]
        m: usize,
        /// Format spec (default: detected).
        #[arg(short, long)]
        format: Option<String>,
        #[command(flatten)]
        io: Outputs,
    },
    /// Warm-up from a cache full of garbage: each policy first receives `capacity` requests to
    /// keys that never recur, then the trace; the hit ratio per window shows how fast the
    /// garbage leaves — the multi-step LRU paper's Fig. 15
    Warmup {
        /// Trace file or synthetic workload.
        trace: String,
        /// Policies (comma-separated).
        #[arg(short, long, default_value = "lru,gclock,multistep-lru")]
        policy: String,
        /// Cache size (one value).
        #[arg(short, long, default_value = "0.1")]
        size: String,
        /// Requests per window (default: 100 windows over the trace).
        #[arg(long)]
        window: Option<usize>,
        /// Format spec (default: detected).
        #[arg(short, long)]
        format: Option<String>,
        #[command(flatten)]
        io: Outputs,
    },
    /// SIEVE's hand position over time, as a share of the cache from the tail (0) to the head
    /// (1) — the SIEVE paper's Fig. 9c
    Hand {
        /// Trace file or synthetic workload (e.g. `zipf:alpha=1.0,n=100000,requests=2000000`).
        trace: String,
        /// Cache size (one value).
        #[arg(short, long, default_value = "0.1")]
        size: String,
        /// Sample every this many requests (default: 500 samples over the trace).
        #[arg(long)]
        every: Option<usize>,
        /// Format spec (default: detected).
        #[arg(short, long)]
        format: Option<String>,
        #[command(flatten)]
        io: Outputs,
    },
}

fn sizes_arg(s: &str) -> Result<Vec<CacheSize>> {
    Ok(sifter_sim::sweep::parse_size_grid(s)?)
}

fn expand(traces: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for t in traces {
        let p = std::path::Path::new(t);
        if p.is_dir() {
            let mut files: Vec<String> = std::fs::read_dir(p)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                // documentation that travels with trace collections
                .filter(|p| {
                    let n = p
                        .file_name()
                        .map(|n| n.to_string_lossy().to_lowercase())
                        .unwrap_or_default();
                    !(n.contains("readme") || n.contains("license") || n.ends_with(".md"))
                })
                .map(|p| p.display().to_string())
                .collect();
            files.sort();
            out.extend(files);
        } else {
            out.push(t.clone());
        }
    }
    out
}

/// Runs an `analyze` subcommand.
pub fn run(cmd: AnalyzeCmd) -> Result<()> {
    match cmd {
        AnalyzeCmd::Mrc { trace, policy, size, bytes, format, io } => {
            let specs = checked_specs(&policy)?;
            let sizes = sizes_arg(&size)?;
            let src = TraceSource::parse(&trace, format.as_deref())?;
            let t = load(&src, false)?;
            let (res, added) = run_sweep(&t, &specs, &sizes, bytes, 0, false)?;
            let mut out = String::from("policy,size,capacity,miss_ratio,byte_miss_ratio\n");
            let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
            for r in res.iter().filter(|r| !(added && r.spec == "fifo")) {
                out.push_str(&csv_line(&[
                    &r.policy,
                    &r.size.label(),
                    &r.capacity.to_string(),
                    &format!("{:.6}", r.miss_ratio),
                    &format!("{:.6}", r.byte_miss_ratio),
                ]));
                let x = (r.capacity as f64).log10();
                match series.iter_mut().find(|s| s.0 == r.policy) {
                    Some(s) => s.1.push((x, r.miss_ratio)),
                    None => series.push((r.policy.clone(), vec![(x, r.miss_ratio)])),
                }
            }
            for s in &mut series {
                s.1.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
            let title = format!("Miss-ratio curve: {}", t.name);
            io.emit(&out, &title, "log10(cache size)", "miss ratio", &series)?;
        }
        AnalyzeCmd::Compare { traces, policy, size, format, csv, svg } => {
            let specs = checked_specs(&policy)?;
            let sizes = parse_sizes(&size)?;
            if sizes.len() != 1 {
                bail!("compare takes one cache size");
            }
            let files = expand(&traces);
            if files.is_empty() {
                bail!("no traces");
            }
            let mut per_trace = Vec::new();
            let mut out = String::from("trace,policy,miss_ratio,fifo_miss_ratio,reduction\n");
            for f in &files {
                let src = match TraceSource::parse(f, format.as_deref()) {
                    Ok(s) => s,
                    Err(e) => {
                        eprintln!("skipping {f}: {e}");
                        continue;
                    }
                };
                let t = match load(&src, true) {
                    Ok(t) => t,
                    Err(e) => {
                        eprintln!("skipping {f}: {e:#}");
                        continue;
                    }
                };
                let (res, _) = run_sweep(&t, &specs, &sizes, false, 0, true)?;
                let fifo = res.iter().find(|r| r.spec == "fifo").map_or(f64::NAN, |r| r.miss_ratio);
                for r in res.iter().filter(|r| r.spec != "fifo") {
                    let red = if fifo > 0.0 { (fifo - r.miss_ratio) / fifo } else { 0.0 };
                    out.push_str(&csv_line(&[
                        &t.name,
                        &r.policy,
                        &format!("{:.6}", r.miss_ratio),
                        &format!("{fifo:.6}"),
                        &format!("{red:.6}"),
                    ]));
                }
                per_trace.push(res);
            }
            let mut rows = Vec::new();
            let mut series = Vec::new();
            for c in analysis::compare(&per_trace) {
                rows.push(vec![
                    c.policy.clone(),
                    format!("{:.4}", c.p10),
                    format!("{:.4}", c.p25),
                    format!("{:.4}", c.mean),
                    format!("{:.4}", c.p75),
                    format!("{:.4}", c.p90),
                    format!("{:.1}%", 100.0 * c.best_share),
                ]);
                series.push((
                    c.policy,
                    vec![
                        (10.0, c.p10),
                        (25.0, c.p25),
                        (50.0, c.mean),
                        (75.0, c.p75),
                        (90.0, c.p90),
                    ],
                ));
            }
            println!("{} traces; miss-ratio reduction from FIFO at size {}", per_trace.len(), size);
            print!("{}", table(&["policy", "P10", "P25", "mean", "P75", "P90", "best on"], &rows));
            if let Some(p) = &csv {
                write_to(p, &out)?;
            }
            if let Some(p) = &svg {
                sifter_lab::plot::lines(
                    p,
                    "Miss-ratio reduction from FIFO (P10, P25, mean, P75, P90)",
                    "percentile (50 = mean)",
                    "reduction",
                    &series,
                )?;
                eprintln!("wrote {}", p.display());
            }
        }
        AnalyzeCmd::Intervals { trace, policy, size, window, format, io } => {
            if window == 0 {
                bail!("--window must be at least 1");
            }
            let specs = checked_specs(&policy)?;
            let (t, cap) = trace_and_capacity(&trace, format.as_deref(), &size)?;
            let mut out = String::from("policy,window,start,miss_ratio\n");
            let mut series = Vec::new();
            for s in analysis::intervals(&t, &specs, cap, window)? {
                for (w, (start, mr)) in s.points.iter().enumerate() {
                    out.push_str(&csv_line(&[
                        &s.policy,
                        &w.to_string(),
                        &format!("{start}"),
                        &format!("{mr:.6}"),
                    ]));
                }
                series.push((s.policy, s.points));
            }
            let title = format!("Miss ratio per {window} requests: {}", t.name);
            io.emit(&out, &title, "request", "miss ratio", &series)?;
        }
        AnalyzeCmd::Ideal { trace, policy, size, every, phases, format, io } => {
            let specs = checked_specs(&policy)?;
            let (t, cap) = trace_and_capacity(&trace, format.as_deref(), &size)?;
            let every = every.unwrap_or((t.len() / 200).max(1));
            if every == 0 {
                bail!("--every must be at least 1");
            }
            if phases == 0 || phases > 1000 || phases > t.len().max(1) {
                bail!("--phases must be between 1 and min(1000, requests) (got {phases})");
            }
            let mut out = String::from("policy,request,ideal_object_ratio,miss_ratio_so_far\n");
            let mut series = Vec::new();
            for (name, pts) in analysis::ideal(&t, &specs, cap, Some(every), phases)? {
                for p in &pts {
                    out.push_str(&csv_line(&[
                        &name,
                        &p.request.to_string(),
                        &format!("{:.6}", p.ideal_object_ratio),
                        &format!("{:.6}", p.miss_ratio_so_far),
                    ]));
                }
                series.push((
                    name,
                    pts.iter().map(|p| (p.request as f64, p.ideal_object_ratio)).collect(),
                ));
            }
            let per = if phases > 1 {
                format!(", ideal set per phase of {}", t.len().div_ceil(phases).max(1))
            } else {
                String::new()
            };
            let title = format!("Ideal object ratio (cache size {cap}{per}): {}", t.name);
            io.emit(&out, &title, "request", "ideal object ratio", &series)?;
        }
        AnalyzeCmd::Vectors { trace, size, p, m, format, io } => {
            if !(1..=64).contains(&p) || !(1..=64).contains(&m) {
                bail!("--p and --m must be in 1..=64 (got {p} and {m})");
            }
            let sizes = parse_sizes(&size)?;
            let src = TraceSource::parse(&trace, format.as_deref())?;
            let t = load(&src, false)?;
            let mut out = String::from("size,capacity,vector,hits,share_of_hits,hit_ratio\n");
            let mut series: Vec<(String, Vec<(f64, f64)>)> =
                (1..=m).map(|v| (format!("vector {v}"), Vec::new())).collect();
            for r in analysis::vectors(&t, &sizes, p, m)? {
                out.push_str(&csv_line(&[
                    &r.size.label(),
                    &r.capacity.to_string(),
                    &r.vector.to_string(),
                    &r.hits.to_string(),
                    &format!("{:.6}", r.share_of_hits),
                    &format!("{:.6}", r.hit_ratio),
                ]));
                series[r.vector - 1].1.push(((r.capacity as f64).log10(), r.share_of_hits));
            }
            let title = format!("Multi-step LRU (P={p}, M={m}): hits by vector: {}", t.name);
            io.emit(&out, &title, "log10(cache size)", "share of hits", &series)?;
        }
        AnalyzeCmd::Warmup { trace, policy, size, window, format, io } => {
            let specs = checked_specs(&policy)?;
            let (t, cap) = trace_and_capacity(&trace, format.as_deref(), &size)?;
            let window = window.unwrap_or((t.len() / 100).max(1));
            if window == 0 {
                bail!("--window must be at least 1");
            }
            let mut out = String::from("policy,window,start,hit_ratio\n");
            let mut series = Vec::new();
            for s in analysis::warmup(&t, &specs, cap, Some(window))? {
                for &(start, hr) in &s.points {
                    let start = start as usize;
                    out.push_str(&csv_line(&[
                        &s.policy,
                        &(start / window).to_string(),
                        &start.to_string(),
                        &format!("{hr:.6}"),
                    ]));
                }
                series.push((s.policy, s.points));
            }
            let title = format!("Hit ratio from a cache full of garbage: {}", t.name);
            io.emit(&out, &title, "request", "hit ratio", &series)?;
        }
        AnalyzeCmd::Hand { trace, size, every, format, io } => {
            let (t, cap) = trace_and_capacity(&trace, format.as_deref(), &size)?;
            let every = every.unwrap_or((t.len() / 500).max(1));
            if every == 0 {
                bail!("--every must be at least 1");
            }
            let mut out = String::from("request,hand_from_tail,cached,position\n");
            let mut pts = Vec::new();
            for h in analysis::hand(&t, cap, Some(every))? {
                out.push_str(&csv_line(&[
                    &h.request.to_string(),
                    &h.hand_from_tail.to_string(),
                    &h.cached.to_string(),
                    &format!("{:.6}", h.position),
                ]));
                pts.push((h.request as f64, h.position));
            }
            let title = format!("SIEVE hand position (0 = tail, 1 = head): {}", t.name);
            let series = [("SIEVE".to_string(), pts)];
            io.emit(&out, &title, "request", "hand position", &series)?;
        }
    }
    Ok(())
}

/// Loads a trace for an analysis that takes exactly one cache size, and resolves that size.
fn trace_and_capacity(trace: &str, format: Option<&str>, size: &str) -> Result<(LoadedTrace, u64)> {
    let size = analysis::one_size(size)?;
    let t = load(&TraceSource::parse(trace, format)?, false)?;
    let cap = analysis::capacity_of(&t, size)?;
    Ok((t, cap))
}

/// Parses a policy list and checks every spec against the registry.
fn checked_specs(policy: &str) -> Result<Vec<PolicySpec>> {
    let specs = parse_policy_list(policy)?;
    check_specs(&specs)?;
    Ok(specs)
}

impl Outputs {
    /// Writes the CSV (or prints it) and the plot, if one was asked for.
    fn emit(
        &self,
        out: &str,
        title: &str,
        x_label: &str,
        y_label: &str,
        series: &[(String, Vec<(f64, f64)>)],
    ) -> Result<()> {
        match &self.csv {
            Some(p) => write_to(p, out)?,
            None => print!("{out}"),
        }
        if let Some(p) = &self.svg {
            sifter_lab::plot::lines(p, title, x_label, y_label, series)?;
            eprintln!("wrote {}", p.display());
        }
        Ok(())
    }
}

/// Where an analysis writes its results.
#[derive(Debug, clap::Args)]
pub struct Outputs {
    /// CSV output (`-` for stdout).
    #[arg(long)]
    csv: Option<PathBuf>,
    /// SVG plot.
    #[arg(long)]
    svg: Option<PathBuf>,
}

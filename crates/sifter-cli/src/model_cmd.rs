//! `sifter model`: queueing-model predictions of throughput from the hit ratio.

use crate::output::{table, write_to};
use anyhow::{bail, Context, Result};
use sifter_model::advise::advise;
use sifter_model::network::Network;
use sifter_model::policies::{build, Params, POLICIES};
use sifter_model::sim::{simulate, SimOptions};
use sifter_model::solve::{bound, mva, pstar};
use std::path::PathBuf;

/// Parameters shared by every `model` subcommand.
#[derive(clap::Args, Debug, Clone)]
pub struct NetArgs {
    /// Policies (comma-separated): lru, lru-global, problru, fifo, clock, slru, s3fifo, sieve, mobius.
    #[arg(short, long, default_value = "lru")]
    pub policy: String,
    /// Multiprogramming level: concurrent requests (threads); comma-separated for several.
    #[arg(long, default_value = "72")]
    pub mpl: String,
    /// Mean backend (disk) latency of a miss, µs (comma-separated in `sweep`).
    #[arg(long, default_value = "100")]
    pub disk_us: String,
    /// Lookup (hash) time, µs.
    #[arg(long, default_value_t = 0.51)]
    pub lookup_us: f64,
    /// Probabilistic LRU: probability a hit skips the list update.
    #[arg(long, default_value_t = 0.5)]
    pub q: f64,
    /// S3-FIFO: ghost-hit probability among misses.
    #[arg(long, default_value_t = 0.1)]
    pub p1: f64,
    /// S3-FIFO: probability of a re-access while in the small queue.
    #[arg(long, default_value_t = 0.3)]
    pub p2: f64,
    /// Override a station's mean service time: `--set delink=0.8` (repeatable).
    #[arg(long = "set")]
    pub set: Vec<String>,
    /// Model CPU work as a station with this many servers (cores) instead of unlimited.
    #[arg(long)]
    pub cpu_servers: Option<u32>,
}

impl NetArgs {
    fn params(&self, hit: f64, disk: f64) -> Result<Params> {
        let mut overrides = Vec::new();
        for s in &self.set {
            let (k, v) =
                s.split_once('=').with_context(|| format!("--set {s}: expected station=µs"))?;
            let v: f64 = v.parse().with_context(|| format!("--set {s}: '{v}' is not a number"))?;
            if !(v >= 0.0 && v.is_finite()) {
                bail!("--set {s}: service time must be a non-negative number");
            }
            overrides.push((k.trim().to_string(), v));
        }
        Ok(Params {
            hit,
            disk_us: disk,
            lookup_us: self.lookup_us,
            q: self.q,
            p1: self.p1,
            p2: self.p2,
            overrides,
            cpu_servers: self.cpu_servers,
            ..Params::default()
        })
    }

    fn policies(&self) -> Result<Vec<String>> {
        let v: Vec<String> = self
            .policy
            .split(',')
            .map(|s| s.trim().to_lowercase())
            .filter(|s| !s.is_empty())
            .collect();
        for p in &v {
            if !POLICIES.contains(&p.as_str()) {
                bail!("unknown policy '{p}' (known: {})", POLICIES.join(", "));
            }
        }
        if v.is_empty() {
            bail!("no policy given");
        }
        Ok(v)
    }

    fn mpls(&self) -> Result<Vec<u32>> {
        self.mpl
            .split(',')
            .map(|s| {
                s.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|v| *v >= 1)
                    .with_context(|| format!("--mpl: '{s}' is not a positive integer"))
            })
            .collect()
    }

    fn disks(&self) -> Result<Vec<f64>> {
        self.disk_us
            .split(',')
            .map(|s| {
                s.trim()
                    .trim_end_matches("us")
                    .parse::<f64>()
                    .ok()
                    .filter(|v| *v >= 0.0)
                    .with_context(|| format!("--disk-us: '{s}' is not a latency in µs"))
            })
            .collect()
    }
}

/// `sifter model ...`
#[derive(clap::Subcommand, Debug)]
pub enum ModelCmd {
    /// Throughput at one hit ratio by every solver, with the bottleneck and utilisations.
    Solve {
        #[command(flatten)]
        net: NetArgs,
        /// Hit ratio.
        #[arg(long)]
        hit: f64,
        /// Requests simulated (0 skips the simulation).
        #[arg(long, default_value_t = 200_000)]
        sim_requests: u64,
    },
    /// The critical hit ratio p*, beyond which throughput falls.
    Pstar {
        #[command(flatten)]
        net: NetArgs,
        /// `bound` (the paper's analysis) or `mva`.
        #[arg(long, default_value = "bound")]
        solver: String,
    },
    /// Measure the mean cost of a hit and of a miss of sifter's own caches on this machine.
    Calibrate {
        /// Policies (comma-separated): mobius, sieve, lru, problru (q = 0.5), problru-mpl
        /// (q = 1 − 1/threads), fifo, clock, s3fifo, nbq-clock, multistep (the multi-step LRU
        /// cache).
        #[arg(short, long, default_value = "mobius,sieve,lru,fifo,clock,s3fifo")]
        policy: String,
        /// Cache capacity used for the measurement.
        #[arg(long, default_value_t = 10_000)]
        capacity: u64,
        /// Threads running the operations at once (the cost then includes what they cost each
        /// other).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Hit ratio the misses are timed among (a miss costs more among hits than back to
        /// back: reference bits to clear, cold victims), 0 to 0.999: the stream is Zipf 1.0
        /// over as many keys as a cache of the capacity's most popular keys would hit at this
        /// ratio; the policy's own hit ratio on it is reported.
        #[arg(long, default_value_t = 0.9)]
        hit_ratio: f64,
        /// Write JSON here (`-` for stdout).
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// For your machine and backend: each policy's critical hit ratio p* and the throughput the
    /// model predicts at your hit ratio — whether more cache memory would help or hurt.
    Advise {
        /// Cores of the machine serving the cache (also the number of requests in flight,
        /// unless --mpl says otherwise).
        #[arg(long)]
        cores: u32,
        /// Mean backend latency of a miss (e.g. 5us, 100us, 2ms).
        #[arg(long)]
        backend_latency: String,
        /// Policies (comma-separated).
        #[arg(short, long, default_value = "lru,problru,fifo,clock,s3fifo,sieve,mobius")]
        policy: String,
        /// Your cache's hit ratio today.
        #[arg(long)]
        hit: Option<f64>,
        /// Requests in flight (default: --cores).
        #[arg(long)]
        mpl: Option<u32>,
        /// Write a plot of predicted throughput against hit ratio here (SVG and PNG; a path
        /// without extension).
        #[arg(long)]
        plot: Option<PathBuf>,
    },
    /// Throughput over a range of hit ratios, for each policy and disk latency.
    Sweep {
        #[command(flatten)]
        net: NetArgs,
        /// Hit ratios as `from:to:step`.
        #[arg(long, default_value = "0:0.99:0.01")]
        hit: String,
        /// Solvers (comma-separated): bound, mva, sim.
        #[arg(long, default_value = "bound,mva")]
        solver: String,
        /// Write CSV here (`-` for stdout).
        #[arg(long)]
        csv: Option<PathBuf>,
        /// Write an SVG plot here.
        #[arg(long)]
        svg: Option<PathBuf>,
    },
}

fn describe(net: &Network) -> String {
    net.stations
        .iter()
        .map(|s| format!("{} {:.3}µs", s.name, s.service))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs a `model` subcommand.
pub fn run(cmd: ModelCmd) -> Result<()> {
    match cmd {
        ModelCmd::Advise { cores, backend_latency, policy, hit, mpl, plot } => {
            if cores == 0 {
                bail!("--cores must be at least 1");
            }
            if let Some(h) = hit {
                if !(0.0..=1.0).contains(&h) {
                    bail!("--hit {h}: a hit ratio is in [0, 1]");
                }
            }
            let disk_us =
                sifter_lab::closed_loop::parse_latency(&backend_latency)?.as_secs_f64() * 1e6;
            let mpl = mpl.unwrap_or(cores).max(1);
            let net = NetArgs {
                policy,
                mpl: mpl.to_string(),
                disk_us: disk_us.to_string(),
                lookup_us: 0.51,
                q: 0.5,
                p1: 0.1,
                p2: 0.3,
                set: Vec::new(),
                cpu_servers: Some(cores),
            };
            let pols = net.policies()?;
            let advice = advise(&pols, cores, mpl, disk_us, hit).map_err(anyhow::Error::msg)?;
            println!(
                "{cores} cores, {mpl} requests in flight, backend {backend_latency} per miss \
                 (service times from the paper's CacheLib measurements; throughput in Mops/s)"
            );
            let mut header = vec!["policy", "p* (bound)", "peak Mops/s"];
            if hit.is_some() {
                header.push("Mops/s at your hit ratio (MVA)");
                header.push("advice");
            }
            let rows: Vec<Vec<String>> = advice
                .iter()
                .map(|a| {
                    let mut r = vec![
                        a.policy.clone(),
                        if a.pstar >= 1.0 {
                            "never falls".into()
                        } else {
                            format!("{:.3}", a.pstar)
                        },
                        format!("{:.3}", a.peak_mops),
                    ];
                    if let (Some(h), Some(x)) = (hit, a.at_hit_mops) {
                        r.push(format!("{x:.3}"));
                        r.push(if a.pstar >= 1.0 {
                            "more hits, more throughput".into()
                        } else if h > a.pstar {
                            format!(
                                "past p*: a larger cache lowers throughput (best at {:.2})",
                                a.pstar
                            )
                        } else {
                            format!("a larger cache helps up to a hit ratio of {:.2}", a.pstar)
                        });
                    }
                    r
                })
                .collect();
            print!("{}", table(&header, &rows));
            if let Some(stem) = plot {
                let mut series = Vec::new();
                for pol in &pols {
                    let pts: Vec<(f64, f64)> = (0..=99)
                        .map(|i| {
                            let h = i as f64 / 100.0;
                            let p = Params {
                                hit: h,
                                disk_us,
                                cpu_servers: Some(cores),
                                ..Params::default()
                            };
                            (h, build(pol, &p).map(|n| mva(&n, mpl).x).unwrap_or(0.0))
                        })
                        .collect();
                    series.push((pol.clone(), pts));
                }
                let title = format!(
                    "Predicted throughput vs hit ratio ({cores} cores, {mpl} in flight, {backend_latency} backend)"
                );
                let axes = sifter_lab::plot::Axes {
                    title: &title,
                    xlabel: "hit ratio",
                    ylabel: "Mops/s",
                    log_y: false,
                    x_names: None,
                };
                for f in sifter_lab::plot::lines_svg_png(&stem, &axes, &series)? {
                    eprintln!("wrote {}", f.display());
                }
            }
        }
        ModelCmd::Solve { net, hit, sim_requests } => {
            let mut rows = Vec::new();
            for pol in net.policies()? {
                for mpl in net.mpls()? {
                    for disk in net.disks()? {
                        let n = build(&pol, &net.params(hit, disk)?).map_err(anyhow::Error::msg)?;
                        let b = bound(&n, mpl);
                        let m = mva(&n, mpl);
                        let s = if sim_requests > 0 {
                            let r = simulate(
                                &n,
                                mpl,
                                &SimOptions { requests: sim_requests, ..SimOptions::default() },
                            )
                            .map_err(anyhow::Error::msg)?;
                            format!("{:.4} ± {:.4}", r.x, r.ci95)
                        } else {
                            "-".into()
                        };
                        let util: Vec<String> = n
                            .stations
                            .iter()
                            .zip(&m.u)
                            .map(|(st, u)| format!("{} {:.0}%", st.name, u * 100.0))
                            .collect();
                        rows.push(vec![
                            pol.clone(),
                            format!("{mpl}"),
                            format!("{disk}"),
                            format!("{:.4}", b.x),
                            b.bottleneck.clone(),
                            format!("{:.4}", m.x),
                            s,
                            util.join(" "),
                        ]);
                        eprintln!("{pol}: {}", describe(&n));
                    }
                }
            }
            println!("hit ratio {hit}; throughput in Mops/s (requests per µs)");
            print!(
                "{}",
                table(
                    &[
                        "policy",
                        "MPL",
                        "disk µs",
                        "bound",
                        "bottleneck",
                        "MVA",
                        "simulation (95% CI)",
                        "utilisation (MVA)"
                    ],
                    &rows
                )
            );
        }
        ModelCmd::Calibrate { policy, capacity, threads, hit_ratio, json } => {
            if capacity < 10 {
                bail!("--capacity must be at least 10");
            }
            if !(1..=1024).contains(&threads) {
                bail!("--threads must be between 1 and 1024");
            }
            if !(0.0..=0.999).contains(&hit_ratio) {
                bail!("--hit-ratio must be between 0 and 0.999, not {hit_ratio}");
            }
            let mut rows = Vec::new();
            let mut out = serde_json::Map::new();
            for name in policy.split(',').map(str::trim) {
                let (c, hit) =
                    sifter_lab::closed_loop::calibrate(name, capacity, threads, 3, hit_ratio)?;
                rows.push(vec![
                    name.to_string(),
                    format!("{hit:.4}"),
                    format!("{:.4}", c.hit_us),
                    format!("{:.4}", c.miss_us),
                ]);
                out.insert(
                    name.to_string(),
                    serde_json::json!({ "hit_us": c.hit_us, "miss_us": c.miss_us, "hit_ratio": hit }),
                );
            }
            let keys = sifter_lab::closed_loop::keys_for_hit(capacity, hit_ratio);
            println!(
                "mean CPU time per operation on this machine with {threads} thread(s) at once, \
                 misses among hits of a Zipf 1.0 stream over {keys} keys (a cache of the \
                 {capacity} most popular would hit {hit_ratio}; the policy's own hit ratio \
                 beside), median of 3 rounds, µs"
            );
            print!(
                "{}",
                table(
                    &["policy", "hit ratio", "hit (get)", "miss (get + insert + eviction)"],
                    &rows
                )
            );
            if let Some(p) = &json {
                write_to(p, &(serde_json::to_string_pretty(&out)? + "\n"))?;
            }
        }
        ModelCmd::Pstar { net, solver } => {
            let mut rows = Vec::new();
            for pol in net.policies()? {
                for mpl in net.mpls()? {
                    for disk in net.disks()? {
                        let x_of = |p: f64| -> f64 {
                            match net.params(p, disk).ok().and_then(|pp| build(&pol, &pp).ok()) {
                                Some(n) if solver == "mva" => mva(&n, mpl).x,
                                Some(n) => bound(&n, mpl).x,
                                None => 0.0,
                            }
                        };
                        if solver != "bound" && solver != "mva" {
                            bail!("--solver must be bound or mva");
                        }
                        build(&pol, &net.params(0.5, disk)?).map_err(anyhow::Error::msg)?;
                        let (p, x) = pstar(x_of, 2000);
                        let verdict =
                            if p >= 1.0 { "never falls".to_string() } else { format!("{p:.4}") };
                        rows.push(vec![
                            pol.clone(),
                            format!("{disk}"),
                            format!("{mpl}"),
                            verdict,
                            format!("{x:.4}"),
                        ]);
                    }
                }
            }
            print!("{}", table(&["policy", "disk µs", "MPL", "p*", "peak Mops/s"], &rows));
        }
        ModelCmd::Sweep { net, hit, solver, csv, svg } => {
            let parts: Vec<f64> = hit
                .split(':')
                .map(|s| s.parse::<f64>())
                .collect::<Result<_, _>>()
                .context("--hit: expected from:to:step")?;
            let [from, to, step] = parts[..] else { bail!("--hit: expected from:to:step") };
            if !(0.0..=1.0).contains(&from)
                || !(0.0..=1.0).contains(&to)
                || step <= 0.0
                || from > to
            {
                bail!("--hit: need 0 <= from <= to <= 1 and step > 0");
            }
            let solvers: Vec<&str> = solver.split(',').map(str::trim).collect();
            for s in &solvers {
                if !["bound", "mva", "sim"].contains(s) {
                    bail!("unknown solver '{s}' (bound, mva, sim)");
                }
            }
            let mut out = String::from("policy,disk_us,mpl,hit,solver,mops,ci95\n");
            let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
            let n_steps = ((to - from) / step).round() as usize;
            for pol in net.policies()? {
                for mpl in net.mpls()? {
                    for disk in net.disks()? {
                        for s in &solvers {
                            let mut pts = Vec::new();
                            for i in 0..=n_steps {
                                let h = (from + i as f64 * step).min(to);
                                let n = build(&pol, &net.params(h, disk)?)
                                    .map_err(anyhow::Error::msg)?;
                                let (x, ci) = match *s {
                                    "bound" => (bound(&n, mpl).x, 0.0),
                                    "mva" => (mva(&n, mpl).x, 0.0),
                                    _ => {
                                        let r = simulate(
                                            &n,
                                            mpl,
                                            &SimOptions {
                                                warmup: 5_000,
                                                requests: 50_000,
                                                batches: 10,
                                                seed: 1,
                                            },
                                        )
                                        .map_err(anyhow::Error::msg)?;
                                        (r.x, r.ci95)
                                    }
                                };
                                out.push_str(&format!(
                                    "{pol},{disk},{},{h:.4},{s},{x:.6},{ci:.6}\n",
                                    mpl
                                ));
                                pts.push((h, x));
                            }
                            series.push((format!("{pol} MPL {mpl} {disk}µs {s}"), pts));
                        }
                    }
                }
            }
            match &csv {
                Some(p) => write_to(p, &out)?,
                None if svg.is_none() => print!("{out}"),
                None => {}
            }
            if let Some(p) = &svg {
                sifter_lab::plot::lines(
                    p,
                    "Throughput vs hit ratio",
                    "hit ratio",
                    "Mops/s",
                    &series,
                )?;
                eprintln!("wrote {}", p.display());
            }
        }
    }
    Ok(())
}

//! `sifter bench closed-loop`: the CLI's face of [`sifter_lab::closed_loop`] (arguments in,
//! the table and the CSV out).

use crate::bench_cmd::list;
use crate::output::{table, write_to};
use crate::sim::STOP;
use anyhow::Result;
use sifter_lab::closed_loop::{parse_latency, rows_csv, Event, Experiment, Sizing};

/// Arguments of `sifter bench closed-loop`.
#[derive(clap::Args, Debug)]
pub struct ClosedLoopArgs {
    /// Policies (comma-separated): mobius, sieve, lru, problru (q = 0.5), problru-mpl
    /// (q = 1 − 1/MPL), fifo, clock, s3fifo, nbq-clock, multistep (the multi-step LRU cache,
    /// 2 vectors of 4 ways per set).
    #[arg(short, long, default_value = "lru,fifo,clock,s3fifo,sieve,mobius")]
    pub policy: String,
    /// Worker threads (multiprogramming level), comma-separated for a sweep (e.g. 1,8,72: a
    /// sleeping backend lets many more workers than cores share them).
    #[arg(long, default_value = "8")]
    pub mpl: String,
    /// Emulated backend latency per miss (e.g. 5us, 100us, 500us).
    #[arg(long, default_value = "100us")]
    pub backend_latency: String,
    /// Cache sizes as fractions of the keys (sweeps the hit ratio).
    #[arg(long, default_value = "0.001,0.01,0.05,0.2,0.5", conflicts_with = "hit_ratios")]
    pub sizes: String,
    /// Target hit ratios instead of sizes (e.g. 0.5,0.8,0.9,0.95,0.98,0.99,0.995): each
    /// policy's cache size for a target is found on the workers' own request stream by the
    /// simulator's twin of the policy (Mobius: SIEVE), at steady state (the stream's first
    /// half warms the cache, its second half is counted); the achieved hit ratio is reported
    /// beside it.
    #[arg(long)]
    pub hit_ratios: Option<String>,
    /// Distinct keys (Zipf 1.0).
    #[arg(long, default_value_t = 100_000)]
    pub keys: u64,
    /// Seconds measured per point.
    #[arg(long, default_value_t = 1.0)]
    pub secs: f64,
    /// Busy-wait the backend latency instead of sleeping.
    #[arg(long)]
    pub spin: bool,
    /// What runs the workers: `threads` (one OS thread each; with more workers than cores
    /// the kernel time-slices them and may preempt one holding a lock) or `loops` (one event
    /// loop per core, each running its workers one at a time: a worker runs until a miss, then
    /// waits on a timer while another runs — at most one per core at once, none preempted by
    /// another, as in the paper's MPL 72 on 72 cores). Loops need the sleeping backend.
    #[arg(long, default_value = "threads")]
    pub workers: sifter_lab::closed_loop::Workers,
    /// Cores for the model's CPU station (default: this machine's).
    #[arg(long)]
    pub cores: Option<u32>,
    /// Write CSV here (`-` for stdout).
    #[arg(long)]
    pub csv: Option<std::path::PathBuf>,
}

/// `sifter bench closed-loop`.
pub fn closed_loop(a: ClosedLoopArgs) -> Result<()> {
    let backend = parse_latency(&a.backend_latency)?;
    let mpls: Vec<usize> = list(&a.mpl, "--mpl (worker counts such as 1,8,72)")?;
    let cores = a
        .cores
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    let sizing = match &a.hit_ratios {
        Some(t) => Sizing::HitRatios(list(t, "--hit-ratios")?),
        None => Sizing::Fractions(list(&a.sizes, "--sizes")?),
    };
    let experiment = Experiment {
        policies: a.policy.split(',').map(|s| s.trim().to_lowercase()).collect(),
        mpls,
        backend,
        sizing,
        keys: a.keys,
        secs: a.secs,
        spin: a.spin,
        workers: a.workers,
        cores,
    };
    let rows = experiment.run(
        &mut |e| match e {
            Event::Sized { policy, target, entries, simulated } => {
                eprintln!(
                "{policy}: hit ratio {target} needs {entries} entries (simulated {simulated:.4})"
            )
            }
            Event::OutOfReach { policy, target, keys } => {
                eprintln!(
                "warning: {policy}: hit ratio {target} is out of reach with {keys} keys; skipped"
            )
            }
            Event::Measuring { .. } => eprintln!(
                "each point: prefilled to steady state, calibrated (hit and miss costs at its \
                 capacity, alone and with a thread per core, and the workers' own cost per \
                 request; event loops with several workers each: each miss followed by a spin \
                 as long as a loop idles per miss in the model), then measured"
            ),
            Event::Measured(_) => {}
        },
        &STOP,
    )?;
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let m = &r.point.measured;
            vec![
                r.policy.clone(),
                r.mpl.to_string(),
                r.target.map_or("-".to_string(), |t| format!("{t}")),
                format!("{:.4}", r.size),
                format!("{:.4}", m.prefill_hit),
                format!("{:.4}", m.hit),
                format!("{:.3}", m.x),
                format!("{:.3}", r.point.model),
                format!("{:+.1}%", r.error() * 100.0),
                format!("{:.1}", r.point.wait_us),
                format!("{:.3}", r.point.overhead_us),
                m.busy.map_or("-".to_string(), |b| format!("{b:.3}")),
                format!("{:.3}", r.point.model_busy),
                format!("{:.1}", r.point.idle_gap_us),
            ]
        })
        .collect();
    println!(
        "closed loop: MPL {} ({} workers), backend {:?} ({}), model CPU = {cores} {} (a lock's wait and hold on the core), simulated; Mops/s",
        a.mpl,
        a.workers,
        backend,
        if a.spin { "spin" } else { "sleep; model uses the measured mean wait" },
        if a.workers == sifter_lab::closed_loop::Workers::Loops { "cores, one per loop" } else { "shared cores" }
    );
    print!(
        "{}",
        table(
            &[
                "policy",
                "MPL",
                "target hit",
                "size",
                "prefill hit",
                "hit ratio",
                "measured",
                "model",
                "error",
                "mean wait µs",
                "workers µs/req",
                "cpu busy",
                "model busy",
                "idle gap µs"
            ],
            &cells
        )
    );
    println!(
        "workers µs/req: the workers' own CPU per request charged to the model (their loop, \
         timers and clock reads, run without a cache), less the calibration loop's, which the \
         calibrated costs hold already (CSV: overhead_us; replay_us is the part taken out); \
         idle gap µs: the calibrations' spin after each miss (CSV: idle_gap_us)"
    );
    if let Some(p) = &a.csv {
        write_to(p, &rows_csv(&rows))?;
    }
    Ok(())
}

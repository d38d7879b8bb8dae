//! `sifter`: the command-line front end of the sifter toolkit.
//!
//! Subcommands: `sim` (miss-ratio simulation), `trace` (stats, gen, convert), `policies` (list
//! the simulator's policies), `model` (queueing-model throughput predictions) and `lab` (the
//! default experiment suite and its report).

#[allow(unsafe_code)]
mod alloc_count;
mod analyze;
mod bench_cmd;
mod closed_loop;
mod lab;
mod model_cmd;
mod output;
mod plot;
mod progress;
mod sim;
mod trace_cmd;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "sifter", version, about = "Throughput-optimized caching: simulator, traces, lab")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Simulate eviction policies over traces or synthetic workloads.
    Sim(sim::SimArgs),
    /// Miss-ratio curves, comparisons across traces, miss ratio over time.
    #[command(subcommand)]
    Analyze(analyze::AnalyzeCmd),
    /// Inspect, generate and convert traces.
    #[command(subcommand)]
    Trace(trace_cmd::TraceCmd),
    /// List the simulator's policies and their parameters.
    Policies,
    /// Throughput, hit ratio and latency of concurrent caches side by side (sifter's policies
    /// and peers) over thread counts; `closed-loop` for the emulated-backend experiment.
    Bench(BenchTop),
    /// Queueing-model predictions of throughput from the hit ratio.
    #[command(subcommand)]
    Model(model_cmd::ModelCmd),
    /// Run the default experiment suite and write a report.
    Lab(lab::LabArgs),
}

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
struct BenchTop {
    #[command(subcommand)]
    cmd: Option<BenchCmd>,
    #[command(flatten)]
    args: bench_cmd::BenchArgs,
}

#[derive(Subcommand, Debug)]
enum BenchCmd {
    /// N workers against a cache whose misses wait an emulated backend; measured vs the
    /// calibrated queueing model over a sweep of cache sizes (hit ratios).
    ClosedLoop(closed_loop::ClosedLoopArgs),
}

#[global_allocator]
static ALLOC: alloc_count::Counting = alloc_count::Counting;

fn main() {
    let cli = Cli::parse();
    let res = match cli.cmd {
        Cmd::Sim(a) => sim::run(a),
        Cmd::Trace(t) => trace_cmd::run(t),
        Cmd::Analyze(a) => analyze::run(a),
        Cmd::Policies => {
            sim::print_policies();
            Ok(())
        }
        Cmd::Model(m) => model_cmd::run(m),
        Cmd::Bench(BenchTop { cmd: Some(BenchCmd::ClosedLoop(a)), .. }) => {
            closed_loop::closed_loop(a)
        }
        Cmd::Bench(BenchTop { cmd: None, args }) => bench_cmd::run_cmd(args),
        Cmd::Lab(a) => lab::run(a),
    };
    if let Err(e) = res {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

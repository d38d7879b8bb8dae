//! `sifter`: the command-line front end of the sifter toolkit.
//!
//! Subcommands: `sim` (miss-ratio simulation), `trace` (stats, gen, convert), `policies` (list
//! the simulator's policies), `model` (queueing-model throughput predictions) and `lab` (the
//! default experiment suite and its report), `serve` (a memcached-compatible server) and `kvtg`
//! (a traffic generator for such servers).

mod analyze;
mod bench_cmd;
mod closed_loop;
mod kvtg_cmd;
mod lab;
mod model_cmd;
mod output;
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
    /// A memcached-compatible server (text protocol) on the sifter cache.
    Serve(ServeArgs),
    /// Traffic generator for memcached-protocol servers (the NbQ-CLOCK report's KVTG): key,
    /// request-type, value-size distributions; closed or open loop; pipelining; latency
    /// percentiles per phase.
    Kvtg(kvtg_cmd::KvtgArgs),
}

/// Arguments of `sifter serve` (memcached's flag names where they exist).
#[derive(clap::Args, Debug)]
struct ServeArgs {
    /// TCP port.
    #[arg(short = 'p', long, default_value_t = 11211)]
    port: u16,
    /// Interface to listen on (127.0.0.1 unless told otherwise).
    #[arg(short = 'l', long, default_value = "127.0.0.1")]
    listen: std::net::IpAddr,
    /// Memory for items in MiB (keys, values and per-item overhead).
    #[arg(short = 'm', long, default_value_t = 64)]
    memory_limit: u64,
    /// Largest item, e.g. 1m, 512k, 2097152.
    #[arg(short = 'I', long, default_value = "1m")]
    max_item_size: String,
    /// Worker threads (1 to 1024; about the number of cores is best).
    #[arg(short = 't', long, default_value_t = 4)]
    threads: usize,
    /// Most simultaneous connections.
    #[arg(short = 'c', long, default_value_t = 1024)]
    conn_limit: usize,
    /// Eviction policy: mobius, s3fifo, nbq-clock, sieve, clock, fifo, lru, problru.
    #[arg(long, default_value = "mobius")]
    policy: String,
}

fn parse_size(s: &str) -> anyhow::Result<usize> {
    let t = s.trim().to_ascii_lowercase();
    let (num, mul) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1usize << 10),
        Some('m') => (&t[..t.len() - 1], 1 << 20),
        Some('g') => (&t[..t.len() - 1], 1 << 30),
        _ => (&t[..], 1),
    };
    let n: usize = num.parse().map_err(|_| anyhow::anyhow!("bad size {s:?} (e.g. 1m, 512k)"))?;
    n.checked_mul(mul).ok_or_else(|| anyhow::anyhow!("size {s:?} too large"))
}

/// The most worker threads `sifter serve -t` and `sifter sim -j` start: their runtime or pool
/// starts every worker before any work, and 100,000 of them kept either silent for longer
/// than a user waits.
pub(crate) const MAX_THREADS: usize = 1024;

fn serve(a: ServeArgs) -> anyhow::Result<()> {
    let item_max = parse_size(&a.max_item_size)?;
    if !(1024..=1 << 30).contains(&item_max) {
        anyhow::bail!("-I {}: the item size limit must be between 1k and 1g", a.max_item_size);
    }
    if a.memory_limit == 0 || a.threads == 0 || a.conn_limit == 0 {
        anyhow::bail!("-m, -t and -c must be at least 1");
    }
    if a.threads > MAX_THREADS {
        anyhow::bail!("-t {}: at most {MAX_THREADS} worker threads", a.threads);
    }
    let policy: sifter::Policy = a.policy.parse().map_err(anyhow::Error::msg)?;
    let config = sifter_server::Config {
        addr: std::net::SocketAddr::new(a.listen, a.port),
        memory: a
            .memory_limit
            .checked_mul(1 << 20)
            .ok_or_else(|| anyhow::anyhow!("-m too large"))?,
        item_max,
        threads: a.threads,
        max_conns: a.conn_limit,
        policy,
    };
    sifter_server::run(config).map_err(|e| anyhow::anyhow!("sifter serve: {e}"))
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
static ALLOC: sifter_lab::memory::Counting = sifter_lab::memory::Counting;

/// Output piped into a program that stopped reading (`sifter ... | head`) ends the process
/// quietly, as the default SIGPIPE action would (Rust ignores SIGPIPE, so `print!` panics
/// instead): exit status 141 (128 + SIGPIPE), no panic message.
fn quiet_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

fn main() {
    quiet_broken_pipe();
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
        Cmd::Serve(a) => serve(a),
        Cmd::Kvtg(a) => kvtg_cmd::run(a),
    };
    if let Err(e) = res {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

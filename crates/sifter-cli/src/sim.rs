//! `sifter sim`: policy × size sweeps over traces, and `--bench` for simulation speed.

use crate::output::{csv_field, machine, sim_csv, table, write_to};
use crate::progress::bar;
use anyhow::{bail, Context, Result};
use sifter_sim::registry::{parse_policy_list, PolicySpec, REGISTRY};
use sifter_sim::runner::{simulate, CacheSize, SimResult};
use sifter_sim::sweep::{self, sweep_source, Notice, Observer, Options};
pub use sifter_sim::sweep::{check_specs, parse_sizes};
use sifter_sim::trace::LoadedTrace;
use sifter_trace::TraceSource;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// How `sifter sim` holds a trace (see [`sweep::Mode`]).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Stream when the decoded trace would take more than 1 GiB.
    Auto,
    /// Decode the whole trace into memory once (16 B per request, 24 with Belady).
    Memory,
    /// Read the trace twice, holding only the id map and a few chunks.
    Stream,
}

impl From<Mode> for sweep::Mode {
    fn from(m: Mode) -> sweep::Mode {
        match m {
            Mode::Auto => sweep::Mode::Auto,
            Mode::Memory => sweep::Mode::Memory,
            Mode::Stream => sweep::Mode::Stream,
        }
    }
}

/// Raised by the first Ctrl-C: sweeps stop after the chunk (streaming) or the simulations
/// (in memory) in progress and the rows computed so far are written.
pub(crate) static STOP: AtomicBool = AtomicBool::new(false);

/// Arguments of `sifter sim`.
#[derive(clap::Args, Debug)]
pub struct SimArgs {
    /// Trace files, or synthetic workloads such as `zipf:alpha=1.0,n=1000000,requests=10000000,seed=1`
    /// (kinds: zipf, uniform, latest, scan, twophase).
    #[arg(required = true)]
    pub traces: Vec<String>,
    /// Policies, comma-separated, with parameters in parentheses: `sieve,lru,gclock(bits=3)`.
    /// See `sifter policies`.
    #[arg(short, long, default_value = "fifo,lru,clock,sieve,s3fifo")]
    pub policy: Vec<String>,
    /// Cache sizes, comma-separated: fractions of the footprint (`0.01`), counts (`1000`, `10k`)
    /// or bytes (`64MiB`).
    #[arg(short, long, default_value = "0.001,0.01,0.1")]
    pub size: String,
    /// Byte mode: capacity in bytes and object sizes from the trace (default: every object
    /// costs one slot).
    #[arg(long)]
    pub bytes: bool,
    /// Trace format spec (default: detected). E.g. `i32be`, `csv:obj-id-col=2,obj-size-col=3`.
    #[arg(short, long)]
    pub format: Option<String>,
    /// Also write the results as CSV (`-` for stdout).
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Also write the results as JSON (`-` for stdout).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Seed for randomized policies.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Worker threads, 1 to 1024 (default: all cores). Not with `--bench`, which times each
    /// run alone on one thread.
    #[arg(short = 'j', long, conflicts_with = "bench")]
    pub threads: Option<usize>,
    /// Measure simulation speed instead: each policy × size alone on one thread, `--repeat`
    /// times, reporting millions of requests per second (trace decoded beforehand).
    #[arg(long)]
    pub bench: bool,
    /// Repetitions per measurement in `--bench` mode (median and min–max are reported).
    #[arg(long, default_value_t = 3, requires = "bench")]
    pub repeat: usize,
    /// How traces are held: `memory` decodes each into memory once (fastest for small traces
    /// and many sizes; 16 B per request, 24 with Belady); `stream` reads it twice, keeping only
    /// the id map and a few chunks (memory O(objects), any number of requests; Belady's
    /// next-access positions go to a temporary file, 12 B per request on disk); `auto` streams
    /// when the decoded trace would take more than 1 GiB (estimated from the generator's
    /// request count or the file's size and format).
    #[arg(long, value_enum, default_value_t = Mode::Auto)]
    pub mode: Mode,
    /// No progress bars.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Prints the registry.
pub fn print_policies() {
    for e in REGISTRY {
        let alias = if e.names.len() > 1 {
            format!(" (also {})", e.names[1..].join(", "))
        } else {
            String::new()
        };
        println!("{}{alias}: {}", e.names[0], e.about);
        for p in e.params {
            println!("    {}={}  {}", p.name, p.default, p.doc);
        }
    }
}

/// The CLI's face of a sweep's [`Observer`]: notices to stderr, phases as progress bars.
pub struct Bars {
    quiet: bool,
    pb: std::sync::Mutex<Option<indicatif::ProgressBar>>,
}

impl Bars {
    pub fn new(quiet: bool) -> Bars {
        Bars { quiet, pb: std::sync::Mutex::new(None) }
    }

    fn with(&self, f: impl FnOnce(&indicatif::ProgressBar)) {
        if let Some(pb) = self.pb.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            f(pb)
        }
    }
}

impl Observer for Bars {
    fn notice(&self, n: &Notice) {
        eprintln!("{n}");
    }
    fn begin(&self, label: &str, total: u64) {
        *self.pb.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar(total, label, self.quiet));
    }
    fn relabel(&self, label: &str) {
        self.with(|pb| pb.set_message(label.to_string()));
    }
    fn position(&self, n: u64) {
        self.with(|pb| pb.set_position(n));
    }
    fn advance(&self, n: u64) {
        self.with(|pb| pb.inc(n));
    }
    fn end(&self) {
        if let Some(pb) = self.pb.lock().unwrap_or_else(|e| e.into_inner()).take() {
            pb.finish_and_clear();
        }
    }
}

/// The lab's steps to stderr and its tables to stdout, beside the bars.
impl sifter_lab::lab::LabObserver for Bars {
    fn step(&self, what: &str) {
        eprintln!("{what}");
    }
    fn table(&self, text: &str) {
        println!("{text}");
    }
}

/// Decodes a trace into memory with a progress spinner (see [`sweep::load`]).
pub fn load(src: &TraceSource, quiet: bool) -> Result<LoadedTrace> {
    Ok(sweep::load(src, &Bars::new(quiet))?)
}

/// Runs a sweep over a trace in memory with a progress bar; FIFO is added as the baseline when
/// missing. Returns the results (baseline rows included, flagged by `baseline_added`).
pub fn run_sweep(
    trace: &LoadedTrace,
    specs: &[PolicySpec],
    sizes: &[CacheSize],
    bytes: bool,
    seed: u64,
    quiet: bool,
) -> Result<(Vec<SimResult>, bool)> {
    let opt = Options { bytes, seed, mode: sweep::Mode::Memory };
    let out = sweep::sweep_loaded(trace, specs, sizes, &opt, &Bars::new(quiet), &STOP)?;
    Ok((out.results, out.baseline_added))
}

/// Installs the Ctrl-C handler: the first press stops the sweep (rows so far are written),
/// the second exits at once.
fn on_ctrl_c() {
    let r = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::Relaxed) {
            eprintln!("\ninterrupted again: exiting without results");
            std::process::exit(130);
        }
        eprintln!("\ninterrupted: finishing the work in progress and writing the rows done so far (Ctrl-C again to quit)");
    });
    if let Err(e) = r {
        eprintln!("note: Ctrl-C will not stop sweeps gracefully: {e}");
    }
}

/// Table rows with the miss-ratio reduction against FIFO at the same size.
pub fn result_rows(res: &[SimResult], skip_baseline: bool) -> Vec<Vec<String>> {
    let fifo = |r: &SimResult| {
        res.iter()
            .find(|b| b.spec == "fifo" && b.trace == r.trace && b.capacity == r.capacity)
            .map(|b| b.miss_ratio)
    };
    res.iter()
        .filter(|r| !(skip_baseline && r.spec == "fifo"))
        .map(|r| {
            let red = match fifo(r) {
                Some(f) if f > 0.0 => format!("{:.4}", (f - r.miss_ratio) / f),
                _ => "-".into(),
            };
            vec![
                r.trace.clone(),
                r.policy.clone(),
                r.size.label(),
                r.capacity.to_string(),
                format!("{:.4}", r.miss_ratio),
                format!("{:.4}", r.byte_miss_ratio),
                red,
            ]
        })
        .collect()
}

/// Header of [`result_rows`].
pub const RESULT_HEADER: [&str; 7] =
    ["trace", "policy", "size", "capacity", "miss ratio", "byte miss ratio", "reduction vs FIFO"];

fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

/// `sifter sim`.
pub fn run(a: SimArgs) -> Result<()> {
    if let Some(t) = a.threads {
        // (0 would mean rayon's default, which leaving `-j` out already says.)
        if !(1..=crate::MAX_THREADS).contains(&t) {
            anyhow::bail!("-j {t}: worker threads must be between 1 and {}", crate::MAX_THREADS);
        }
        // Fails only if the global pool exists already (a second `run` in one process): it
        // then keeps its size.
        rayon::ThreadPoolBuilder::new().num_threads(t).build_global().ok();
    }
    let specs = parse_policy_list(&a.policy.join(","))?;
    check_specs(&specs)?;
    let sizes = parse_sizes(&a.size)?;
    if a.bench && a.mode == Mode::Stream {
        bail!("--bench times the simulation loops over a trace decoded into memory; drop --mode stream");
    }
    if !a.bench {
        on_ctrl_c();
    }
    let mut all = Vec::new();
    let mut bench_rows = Vec::new();
    for arg in &a.traces {
        if STOP.load(Ordering::Relaxed) {
            eprintln!("warning: stopped (Ctrl-C): {arg} and the traces after it not simulated");
            break;
        }
        let src = TraceSource::parse(arg, a.format.as_deref())?;
        if !a.bench {
            let opt = Options { bytes: a.bytes, seed: a.seed, mode: a.mode.into() };
            let out = sweep_source(&src, &specs, &sizes, &opt, &Bars::new(a.quiet), &STOP)?;
            all.extend(out.results);
            continue;
        }
        let t0 = Instant::now();
        let (trace, map_secs) = load_timed(&src)?;
        if a.bytes && trace.summary().sizeless() {
            return Err(sweep::sizeless_error(&trace.name).into());
        }
        eprintln!(
            "{}",
            Notice::Decoded {
                trace: trace.name.clone(),
                requests: trace.len() as u64,
                objects: trace.n_objects,
                seconds: t0.elapsed().as_secs_f64(),
            }
        );
        eprintln!(
            "id mapping (one hash lookup per request, done once per trace and shared by every run): \
             {map_secs:.3} s = {:.1} Mreq/s",
            trace.len() as f64 / map_secs.max(1e-9) / 1e6
        );
        bench_rows.extend(bench(&trace, &specs, &sizes, &a, map_secs)?);
    }
    if a.bench {
        let header = [
            "trace",
            "policy",
            "size",
            "capacity",
            "miss ratio",
            "Mreq/s median",
            "min",
            "max",
            "Mreq/s incl. id mapping",
        ];
        let stdout_taken = a.csv.as_deref().is_some_and(|p| p.as_os_str() == "-")
            || a.json.as_deref().is_some_and(|p| p.as_os_str() == "-");
        if !stdout_taken {
            print!("{}", table(&header, &bench_rows));
        }
        if let Some(p) = &a.csv {
            let mut s = header.join(",") + "\n";
            for r in &bench_rows {
                s += &(r.iter().map(|c| csv_field(c)).collect::<Vec<_>>().join(",") + "\n");
            }
            write_to(p, &s)?;
        }
        if let Some(p) = &a.json {
            let v = serde_json::json!({
                "command": command_line(),
                "machine": machine(),
                "repeat": a.repeat.max(1),
                "results": bench_json(&bench_rows),
            });
            write_to(p, &(serde_json::to_string_pretty(&v)? + "\n"))?;
        }
        return Ok(());
    }
    let user_has_fifo = specs.iter().any(|s| s.name == "fifo" && s.params.is_empty());
    let shown: Vec<SimResult> =
        all.iter().filter(|r| user_has_fifo || r.spec != "fifo").cloned().collect();
    let stdout_taken = a.csv.as_deref().is_some_and(|p| p.as_os_str() == "-")
        || a.json.as_deref().is_some_and(|p| p.as_os_str() == "-");
    if !stdout_taken {
        print!("{}", table(&RESULT_HEADER, &result_rows(&all, !user_has_fifo)));
    }
    if let Some(note) = sifter_sim::runner::stored_nothing_note(&shown) {
        eprint!("{note}");
    }
    if let Some(p) = &a.csv {
        write_to(p, &sim_csv(&shown))?;
    }
    if let Some(p) = &a.json {
        let v = serde_json::json!({ "command": command_line(), "machine": machine(), "results": shown });
        write_to(p, &(serde_json::to_string_pretty(&v)? + "\n"))?;
    }
    Ok(())
}

/// `--bench` rows as JSON objects (numbers as numbers).
fn bench_json(rows: &[Vec<String>]) -> Vec<serde_json::Value> {
    const KEYS: [&str; 9] = [
        "trace",
        "policy",
        "size",
        "capacity",
        "miss_ratio",
        "mreqs_per_sec_median",
        "mreqs_per_sec_min",
        "mreqs_per_sec_max",
        "mreqs_per_sec_incl_id_mapping",
    ];
    rows.iter()
        .map(|r| {
            let m: serde_json::Map<String, serde_json::Value> = KEYS
                .iter()
                .zip(r)
                .enumerate()
                .map(|(i, (k, v))| {
                    let val = match v.parse::<f64>() {
                        Ok(x) if i == 3 => serde_json::json!(x as u64),
                        Ok(x) if i > 3 => serde_json::json!(x),
                        _ => serde_json::json!(v),
                    };
                    (k.to_string(), val)
                })
                .collect();
            serde_json::Value::Object(m)
        })
        .collect()
}

/// Decodes the whole trace into memory, then times the id-mapping pass alone.
fn load_timed(src: &TraceSource) -> Result<(LoadedTrace, f64)> {
    let reqs: Vec<sifter_trace::Request> = src.requests()?.collect::<Result<_, _>>()?;
    let t0 = Instant::now();
    let trace = LoadedTrace::load(src.name(), reqs.into_iter().map(Ok), &|_| {})?;
    let secs = t0.elapsed().as_secs_f64();
    if trace.is_empty() {
        bail!("{}: the trace has no requests", trace.name);
    }
    Ok((trace, secs))
}

/// Times each policy × size alone on this thread. The last column charges each run the id
/// mapping too, as if it had to hash every request itself (libCacheSim does, per run).
fn bench(
    trace: &LoadedTrace,
    specs: &[PolicySpec],
    sizes: &[CacheSize],
    a: &SimArgs,
    map_secs: f64,
) -> Result<Vec<Vec<String>>> {
    let mut rows = Vec::new();
    let repeat = a.repeat.max(1);
    let pb =
        bar((specs.len() * sizes.len() * repeat) as u64 * trace.len() as u64, "bench", a.quiet);
    for spec in specs {
        for &size in sizes {
            let mut speeds = Vec::new();
            let mut last = None;
            for _ in 0..repeat {
                let r = simulate(trace, spec, size, a.bytes, a.seed, &|n| pb.inc(n))?;
                speeds.push(r.mreqs_per_sec());
                last = Some(r);
            }
            speeds.sort_by(f64::total_cmp);
            let r = last.context("no run")?;
            rows.push(vec![
                trace.name.clone(),
                r.policy.clone(),
                size.label(),
                r.capacity.to_string(),
                format!("{:.4}", r.miss_ratio),
                format!("{:.2}", speeds[speeds.len() / 2]),
                format!("{:.2}", speeds[0]),
                format!("{:.2}", speeds[speeds.len() - 1]),
                format!("{:.2}", {
                    let loop_secs = trace.len() as f64 / (speeds[speeds.len() / 2] * 1e6);
                    trace.len() as f64 / (loop_secs + map_secs) / 1e6
                }),
            ]);
        }
    }
    pb.finish_and_clear();
    Ok(rows)
}

//! `sifter sim`: policy × size sweeps over traces, and `--bench` for simulation speed.

use crate::output::{table, write_to};
use crate::progress::bar;
use anyhow::{bail, Context, Result};
use sifter_sim::registry::{parse_policy_list, PolicySpec, REGISTRY};
use sifter_sim::runner::{simulate, sweep_until, CacheSize, SimResult};
use sifter_sim::stream::{Phase, Scan};
use sifter_sim::trace::{LoadedTrace, TraceSummary};
use sifter_sim::SimError;
use sifter_trace::{Format, TraceSource};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// How `sifter sim` holds a trace.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Stream when the decoded trace would take more than [`MEMORY_LIMIT`].
    Auto,
    /// Decode the whole trace into memory once (16 B per request, 24 with Belady).
    Memory,
    /// Read the trace twice, holding only the id map and a few chunks.
    Stream,
}

/// Above this estimated in-memory size, `--mode auto` streams.
pub const MEMORY_LIMIT: u64 = 1 << 30;

/// Raised by the first Ctrl-C: sweeps stop after the chunk (streaming) or the simulations
/// (in memory) in progress and the rows computed so far are written.
static STOP: AtomicBool = AtomicBool::new(false);

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
    /// Worker threads (default: all cores). Not with `--bench`, which times each run alone on
    /// one thread.
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

/// Decodes a trace into memory with a progress spinner.
pub fn load(src: &TraceSource, quiet: bool) -> Result<LoadedTrace> {
    let name = src.name();
    say_format(src)?;
    let pb = bar(0, &format!("reading {name}"), quiet);
    // Trace errors already name the file and the place in it.
    // Room for every request up front when the count is known without reading (no copies as
    // the columns grow).
    let expect = match estimated_requests(src)? {
        (n, true) => usize::try_from(n).unwrap_or(0),
        _ => 0,
    };
    let t = LoadedTrace::load_blocks(name.clone(), src.blocks(false)?, expect, &|n| {
        pb.set_position(n)
    })?;
    pb.finish_and_clear();
    if t.is_empty() {
        bail!("{name}: the trace has no requests");
    }
    if t.skipped_zero_size > 0 {
        eprintln!(
            "note: {name}: {} zero-size requests left out (as libCacheSim does)",
            t.skipped_zero_size
        );
    }
    Ok(t)
}

/// Parses a comma-separated size list.
pub fn parse_sizes(s: &str) -> Result<Vec<CacheSize>> {
    let v: Vec<CacheSize> = s
        .split(',')
        .filter(|x| !x.trim().is_empty())
        .map(CacheSize::parse)
        .collect::<Result<_, _>>()?;
    if v.is_empty() {
        bail!("no cache size given");
    }
    Ok(v)
}

/// Builds each policy once on a toy cache, so bad parameters fail before any trace is read.
pub fn check_specs(specs: &[PolicySpec]) -> Result<()> {
    for s in specs {
        s.build(&sifter_sim::policy::PolicyCtx { capacity: 1000, n_objects: 1, seed: 0 })?;
    }
    Ok(())
}

/// Runs a sweep with a progress bar; FIFO is added as the baseline when missing.
/// Returns the results (baseline rows included, flagged by `baseline_added`).
pub fn run_sweep(
    trace: &LoadedTrace,
    specs: &[PolicySpec],
    sizes: &[CacheSize],
    bytes: bool,
    seed: u64,
    quiet: bool,
) -> Result<(Vec<SimResult>, bool)> {
    let (specs, sizes, added) = sweep_plan(&trace.summary(), specs, sizes, bytes)?;
    let total = trace.len() as u64 * (specs.len() * sizes.len()) as u64;
    let pb = bar(total, &trace.name, quiet);
    let res = sweep_until(trace, &specs, &sizes, bytes, seed, &|n| pb.inc(n), &STOP);
    pb.finish_and_clear();
    let mut done = Vec::new();
    let mut unfinished = 0;
    for r in res {
        match r {
            Ok(r) => done.push(r),
            Err(SimError::Stopped(_)) => unfinished += 1,
            Err(e) => return Err(e.into()),
        }
    }
    if unfinished > 0 {
        eprintln!(
            "warning: {}: stopped (Ctrl-C): {unfinished} of {} simulations unfinished, their rows left out",
            trace.name,
            unfinished + done.len()
        );
    }
    Ok((done, added))
}

/// The simulations of a sweep over the trace `t` describes: the sizes that give a non-empty
/// cache (the others are skipped with a warning), and the specs with FIFO added as the
/// baseline when missing (the flag says so).
fn sweep_plan(
    t: &TraceSummary,
    specs: &[PolicySpec],
    sizes: &[CacheSize],
    bytes: bool,
) -> Result<(Vec<PolicySpec>, Vec<CacheSize>, bool)> {
    let sizes: Vec<CacheSize> = sizes
        .iter()
        .copied()
        .filter(|s| {
            let keep = s.resolve_summary(t, bytes) > 0;
            if !keep {
                eprintln!(
                    "warning: {}: size {} gives a cache of 0 {}; skipped",
                    t.name,
                    s.label(),
                    if bytes { "bytes" } else { "objects" }
                );
            }
            keep
        })
        .collect();
    if sizes.is_empty() {
        bail!("{}: every requested size gives an empty cache; use larger sizes", t.name);
    }
    let mut specs = specs.to_vec();
    let added = !specs.iter().any(|s| s.name == "fifo" && s.params.is_empty());
    if added {
        specs.push(PolicySpec::parse("fifo")?);
    }
    Ok((specs, sizes, added))
}

/// Checks what both modes check of a trace before simulating it.
fn check_trace(t: &TraceSummary, bytes: bool) -> Result<()> {
    if t.requests == 0 {
        bail!("{}: the trace has no requests", t.name);
    }
    if t.skipped_zero_size > 0 {
        eprintln!(
            "note: {}: {} zero-size requests left out (as libCacheSim does)",
            t.name, t.skipped_zero_size
        );
    }
    if bytes && t.sizeless() {
        bail!("{}: every request has size 1 (the trace carries no object sizes), so --bytes would equal object mode; drop --bytes", t.name);
    }
    Ok(())
}

/// Prints the detected format of a trace file (once per trace).
fn say_format(src: &TraceSource) -> Result<()> {
    if let TraceSource::File { format: None, .. } = src {
        if let Some(f) = src.resolved_format()? {
            eprintln!(
                "{}: format {} (detected from the name and content; --format overrides)",
                src.name(),
                f.name()
            );
        }
    }
    Ok(())
}

/// The requests `src` will give, estimated without reading it: the generator's count, or the
/// file's size over a record size (×5 for zstd; text formats at 8 bytes per request, which
/// overestimates: `auto` then streams, which is always correct).
///
/// Also says whether the figure is exact: a generator's count, or an uncompressed file of
/// fixed-size records (before zero-size requests are left out).
pub fn estimated_requests(src: &TraceSource) -> Result<(u64, bool)> {
    match src {
        TraceSource::Synthetic(s) => Ok((s.requests, true)),
        TraceSource::File { path, .. } => {
            let len = std::fs::metadata(path)
                .with_context(|| format!("{}: cannot read its size", path.display()))?
                .len();
            let zstd = sifter_trace::reader::is_zstd(path)?;
            let (per, fixed) = match src.resolved_format()? {
                Some(Format::OracleGeneral) => (24, true),
                Some(Format::Binary(b)) => (b.record_size().max(1) as u64, true),
                Some(Format::Vscsi) => (32, false), // v1 32 bytes, v2 40
                Some(Format::Lis) => (1, false),    // a line expands to many blocks
                _ => (8, false),
            };
            Ok((len.saturating_mul(if zstd { 5 } else { 1 }) / per, fixed && !zstd))
        }
    }
}

/// Whether to stream `src` (see [`Mode`]).
fn streams(mode: Mode, src: &TraceSource, specs: &[PolicySpec]) -> Result<bool> {
    Ok(match mode {
        Mode::Memory => false,
        Mode::Stream => true,
        Mode::Auto => {
            let belady = specs.iter().any(|s| s.name == "belady");
            let per_request = if belady { 24 } else { 16 };
            estimated_requests(src)?.0.saturating_mul(per_request) > MEMORY_LIMIT
        }
    })
}

/// A streaming sweep of `src` (see [`sifter_sim::stream`]) with progress bars; rows of a
/// sweep stopped by Ctrl-C cover the requests run so far (a warning says how many).
fn stream_sweep(
    src: &TraceSource,
    specs: &[PolicySpec],
    sizes: &[CacheSize],
    a: &SimArgs,
) -> Result<Vec<SimResult>> {
    let name = src.name();
    say_format(src)?;
    let t0 = Instant::now();
    let with_next = specs.iter().any(|s| s.name == "belady");
    // A bar with an ETA where the number of requests is known without reading the trace (a
    // generator, an uncompressed fixed-size binary file); a spinner with the rate otherwise.
    let known = match estimated_requests(src)? {
        (n, true) => n,
        (_, false) => 0,
    };
    let pb = bar(known, &format!("{name}: pass 1 of 2 (ids)"), a.quiet);
    let scan = Scan::run(
        &name,
        src.blocks(with_next)?,
        with_next,
        &|phase, n| {
            if phase == Phase::NextAccess && pb.message().contains("ids") {
                pb.set_message(format!("{name}: pass 1 of 2 (next accesses, backwards)"));
            }
            pb.set_position(n);
        },
        &STOP,
    );
    pb.finish_and_clear();
    let scan = scan.map_err(|e| match e {
        SimError::Stopped(_) => {
            anyhow::anyhow!("{name}: stopped (Ctrl-C) during the first pass: no results")
        }
        e => e.into(),
    })?;
    let t = scan.summary();
    check_trace(t, a.bytes)?;
    eprintln!(
        "{name}: {} requests, {} objects, scanned in {:.2} s (streaming: pass 2 of 2 runs every simulation)",
        t.requests,
        t.n_objects,
        t0.elapsed().as_secs_f64()
    );
    let (specs, sizes, _) = sweep_plan(t, specs, sizes, a.bytes)?;
    let pb = bar(t.requests, &format!("{name}: pass 2 of 2"), a.quiet);
    let out = scan.sweep(
        src.blocks(scan.next_access_from_trace())?,
        &specs,
        &sizes,
        a.bytes,
        a.seed,
        &|_, n| pb.set_position(n),
        &STOP,
    )?;
    pb.finish_and_clear();
    if let Some(n) = out.stopped_after {
        eprintln!(
            "warning: {name}: stopped (Ctrl-C) after {n} of {} requests: every row below covers those {n} requests only",
            t.requests
        );
    }
    Ok(out.results.into_iter().collect::<Result<_, _>>()?)
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

/// Results as CSV.
pub fn to_csv(res: &[SimResult]) -> String {
    let mut s = String::from("trace,policy,spec,size,capacity,bytes,requests,misses,miss_ratio,byte_miss_ratio,seconds\n");
    for r in res {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{:.6},{:.6},{:.4}\n",
            csv_field(&r.trace),
            csv_field(&r.policy),
            csv_field(&r.spec),
            r.size.label(),
            r.capacity,
            r.bytes,
            r.counts.requests,
            r.counts.misses,
            r.miss_ratio,
            r.byte_miss_ratio,
            r.seconds
        ));
    }
    s
}

/// Quotes a CSV field when it holds a comma or a quote.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The machine, for result files.
pub fn machine() -> serde_json::Value {
    serde_json::json!({
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "sifter": env!("CARGO_PKG_VERSION"),
    })
}

fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

/// `sifter sim`.
pub fn run(a: SimArgs) -> Result<()> {
    if let Some(t) = a.threads {
        rayon::ThreadPoolBuilder::new().num_threads(t.max(1)).build_global().ok();
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
        if !a.bench && streams(a.mode, &src, &specs)? {
            all.extend(stream_sweep(&src, &specs, &sizes, &a)?);
            continue;
        }
        let t0 = Instant::now();
        let (trace, map_secs) =
            if a.bench { load_timed(&src)? } else { (load(&src, a.quiet)?, 0.0) };
        if a.bytes && trace.summary().sizeless() {
            bail!("{}: every request has size 1 (the trace carries no object sizes), so --bytes would equal object mode; drop --bytes", trace.name);
        }
        eprintln!(
            "{}: {} requests, {} objects, decoded in {:.2} s",
            trace.name,
            trace.len(),
            trace.n_objects,
            t0.elapsed().as_secs_f64()
        );
        if a.bench {
            eprintln!(
                "id mapping (one hash lookup per request, done once per trace and shared by every run): \
                 {map_secs:.3} s = {:.1} Mreq/s",
                trace.len() as f64 / map_secs.max(1e-9) / 1e6
            );
            bench_rows.extend(bench(&trace, &specs, &sizes, &a, map_secs)?);
        } else {
            let (res, _) = run_sweep(&trace, &specs, &sizes, a.bytes, a.seed, a.quiet)?;
            all.extend(res);
        }
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
    if let Some(p) = &a.csv {
        write_to(p, &to_csv(&shown))?;
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

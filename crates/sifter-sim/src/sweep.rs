//! A whole sweep as one library call: a trace (a file or a generator spec) × policies × sizes,
//! decoded into memory or streamed in bounded memory, with progress and notes reported to an
//! [`Observer`] instead of printed. `sifter sim` and the Python package are two faces of this
//! module: arguments in, [`SimResult`]s out.
//!
//! ```
//! use sifter_sim::registry::parse_policy_list;
//! use sifter_sim::sweep::{parse_sizes, sweep_source, Options, Silent};
//! use sifter_trace::TraceSource;
//! use std::sync::atomic::AtomicBool;
//! let src = TraceSource::parse("zipf:alpha=1.0,n=1000,requests=20000,seed=1", None).unwrap();
//! let specs = parse_policy_list("lru,sieve").unwrap();
//! let sizes = parse_sizes("0.1").unwrap();
//! let out = sweep_source(&src, &specs, &sizes, &Options::default(), &Silent, &AtomicBool::new(false)).unwrap();
//! // FIFO is run as the baseline when the sweep lacks it; `asked` leaves it out again.
//! assert!(out.baseline_added);
//! let rows = out.asked();
//! assert_eq!(rows.len(), 2);
//! assert!(rows[1].miss_ratio < rows[0].miss_ratio); // SIEVE beats LRU on Zipf
//! ```

use crate::registry::PolicySpec;
use crate::runner::{sweep_until, CacheSize, SimResult};
use crate::stream::{Phase, Scan};
use crate::trace::{LoadedTrace, TraceSummary};
use crate::SimError;
use sifter_trace::{Format, TraceSource};
use std::fmt;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// How a sweep holds its trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Stream when the decoded trace would take more than [`MEMORY_LIMIT`].
    #[default]
    Auto,
    /// Decode the whole trace into memory once (16 B per request, 24 with Belady).
    Memory,
    /// Read the trace twice, holding only the id map and a few chunks.
    Stream,
}

impl std::str::FromStr for Mode {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Mode, SimError> {
        match s {
            "auto" => Ok(Mode::Auto),
            "memory" => Ok(Mode::Memory),
            "stream" => Ok(Mode::Stream),
            _ => {
                Err(SimError::Input(format!("unknown mode {s:?}: expected auto, memory or stream")))
            }
        }
    }
}

/// Above this estimated in-memory size, [`Mode::Auto`] streams.
pub const MEMORY_LIMIT: u64 = 1 << 30;

/// The settings of a sweep.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Byte mode: capacities in bytes, object sizes from the trace.
    pub bytes: bool,
    /// Seed of randomized policies.
    pub seed: u64,
    /// How the trace is held.
    pub mode: Mode,
}

/// Something a sweep tells its user on the way (the CLI prints these to stderr; the Python
/// package turns warnings into Python warnings).
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// The format of a file was detected, not given.
    FormatDetected { trace: String, format: String },
    /// Requests of size 0 were left out (as libCacheSim does).
    ZeroSizeSkipped { trace: String, requests: u64 },
    /// A size gave an empty cache on this trace and was skipped.
    EmptySizeSkipped { trace: String, size: String, bytes: bool },
    /// The trace was decoded into memory.
    Decoded { trace: String, requests: u64, objects: u32, seconds: f64 },
    /// A streaming sweep's first pass is done.
    Scanned { trace: String, requests: u64, objects: u32, seconds: f64 },
    /// The stop flag was raised during an in-memory sweep: some simulations did not finish and
    /// have no row.
    StoppedSimulations { trace: String, unfinished: usize, total: usize },
    /// The stop flag was raised during a streaming sweep: every row covers the first
    /// `after` requests only.
    StoppedStream { trace: String, after: u64, requests: u64 },
}

impl Notice {
    /// Whether this is a warning (results are missing or partial, or input was skipped) rather
    /// than information.
    pub fn is_warning(&self) -> bool {
        matches!(
            self,
            Notice::EmptySizeSkipped { .. }
                | Notice::StoppedSimulations { .. }
                | Notice::StoppedStream { .. }
        )
    }
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::FormatDetected { trace, format } => write!(
                f,
                "{trace}: format {format} (detected from the name and content; an explicit format overrides)"
            ),
            Notice::ZeroSizeSkipped { trace, requests } => write!(
                f,
                "note: {trace}: {requests} zero-size requests left out (as libCacheSim does)"
            ),
            Notice::EmptySizeSkipped { trace, size, bytes } => write!(
                f,
                "warning: {trace}: size {size} gives a cache of 0 {}; skipped",
                if *bytes { "bytes" } else { "objects" }
            ),
            Notice::Decoded { trace, requests, objects, seconds } => write!(
                f,
                "{trace}: {requests} requests, {objects} objects, decoded in {seconds:.2} s"
            ),
            Notice::Scanned { trace, requests, objects, seconds } => write!(
                f,
                "{trace}: {requests} requests, {objects} objects, scanned in {seconds:.2} s \
                 (streaming: pass 2 of 2 runs every simulation)"
            ),
            Notice::StoppedSimulations { trace, unfinished, total } => write!(
                f,
                "warning: {trace}: stopped (Ctrl-C): {unfinished} of {total} simulations unfinished, their rows left out"
            ),
            Notice::StoppedStream { trace, after, requests } => write!(
                f,
                "warning: {trace}: stopped (Ctrl-C) after {after} of {requests} requests: every row below covers those {after} requests only"
            ),
        }
    }
}

/// Where a sweep reports progress and notes. Every method has an empty default; the calls come
/// from the sweep's worker threads (hence `Sync`).
pub trait Observer: Sync {
    /// A note or warning.
    fn notice(&self, _notice: &Notice) {}
    /// A phase of work begins: `total` requests to go, or 0 when unknown (then count them).
    fn begin(&self, _label: &str, _total: u64) {}
    /// The running phase gets a new label.
    fn relabel(&self, _label: &str) {}
    /// Requests done in the running phase so far.
    fn position(&self, _done: u64) {}
    /// `n` more requests done in the running phase.
    fn advance(&self, _n: u64) {}
    /// The running phase is over.
    fn end(&self) {}
}

/// An observer that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Observer for Silent {}

/// The results of one trace's sweep.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// One row per policy × size (policies outer, sizes inner), FIFO's baseline rows included.
    pub results: Vec<SimResult>,
    /// FIFO was not among the policies asked for and was run as the baseline.
    pub baseline_added: bool,
}

impl Sweep {
    /// The rows of the policies asked for (the baseline FIFO left out when it was added).
    pub fn asked(&self) -> Vec<SimResult> {
        self.results
            .iter()
            .filter(|r| !(self.baseline_added && r.spec == "fifo"))
            .cloned()
            .collect()
    }
}

/// Parses a comma-separated size list (`0.01,10k,64MiB`).
pub fn parse_sizes(s: &str) -> Result<Vec<CacheSize>, SimError> {
    let v: Vec<CacheSize> = s
        .split(',')
        .filter(|x| !x.trim().is_empty())
        .map(CacheSize::parse)
        .collect::<Result<_, _>>()?;
    if v.is_empty() {
        return Err(SimError::Input("no cache size given".into()));
    }
    Ok(v)
}

/// Parses sizes as [`parse_sizes`] does, or `from:to:points`: `points` fractions of the
/// footprint spaced logarithmically from `from` to `to` (a miss-ratio curve's x-axis).
pub fn parse_size_grid(s: &str) -> Result<Vec<CacheSize>, SimError> {
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() != 3 {
        return parse_sizes(s);
    }
    let bad = || {
        SimError::Size(format!(
            "size grid {s:?}: from:to:points needs 0 < from < to <= 1 and points >= 2"
        ))
    };
    let from: f64 = parts[0].trim().parse().map_err(|_| bad())?;
    let to: f64 = parts[1].trim().parse().map_err(|_| bad())?;
    let n: usize = parts[2].trim().parse().map_err(|_| bad())?;
    if !(from > 0.0 && to <= 1.0 && from < to && n >= 2) {
        return Err(bad());
    }
    let r = (to / from).powf(1.0 / (n - 1) as f64);
    Ok((0..n).map(|i| CacheSize::Fraction(from * r.powi(i as i32))).collect())
}

/// Builds each policy once on a toy cache, so bad parameters fail before any trace is read.
pub fn check_specs(specs: &[PolicySpec]) -> Result<(), SimError> {
    for s in specs {
        s.build(&crate::policy::PolicyCtx { capacity: 1000, n_objects: 1, seed: 0 })?;
    }
    Ok(())
}

/// The detected format of a file whose format was not given, as a notice.
fn say_format(src: &TraceSource, obs: &dyn Observer) -> Result<(), SimError> {
    if let TraceSource::File { format: None, .. } = src {
        if let Some(f) = src.resolved_format()? {
            obs.notice(&Notice::FormatDetected { trace: src.name(), format: f.name().to_string() });
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
pub fn estimated_requests(src: &TraceSource) -> Result<(u64, bool), SimError> {
    match src {
        TraceSource::Synthetic(s) => Ok((s.requests, true)),
        TraceSource::File { path, .. } => {
            let len = std::fs::metadata(path)
                .map_err(|e| {
                    SimError::Io(format!("{}: cannot read its size: {e}", path.display()))
                })?
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

/// Decodes a trace into memory (a phase "reading NAME" with its count of requests).
pub fn load(src: &TraceSource, obs: &dyn Observer) -> Result<LoadedTrace, SimError> {
    let name = src.name();
    say_format(src, obs)?;
    obs.begin(&format!("reading {name}"), 0);
    // Room for every request up front when the count is known without reading (no copies as
    // the columns grow).
    let expect = match estimated_requests(src)? {
        (n, true) => usize::try_from(n).unwrap_or(0),
        _ => 0,
    };
    let t =
        LoadedTrace::load_blocks(name.clone(), src.blocks(false)?, expect, &|n| obs.position(n));
    obs.end();
    let t = t?;
    if t.is_empty() {
        return Err(SimError::Input(format!("{name}: the trace has no requests")));
    }
    if t.skipped_zero_size > 0 {
        obs.notice(&Notice::ZeroSizeSkipped { trace: name, requests: t.skipped_zero_size });
    }
    Ok(t)
}

/// The simulations of a sweep over the trace `t` describes: the sizes that give a non-empty
/// cache (the others are skipped with a notice), and the specs with FIFO added as the
/// baseline when missing (the flag says so).
fn sweep_plan(
    t: &TraceSummary,
    specs: &[PolicySpec],
    sizes: &[CacheSize],
    bytes: bool,
    obs: &dyn Observer,
) -> Result<(Vec<PolicySpec>, Vec<CacheSize>, bool), SimError> {
    let sizes: Vec<CacheSize> = sizes
        .iter()
        .copied()
        .filter(|s| {
            let keep = s.resolve_summary(t, bytes) > 0;
            if !keep {
                obs.notice(&Notice::EmptySizeSkipped {
                    trace: t.name.clone(),
                    size: s.label(),
                    bytes,
                });
            }
            keep
        })
        .collect();
    if sizes.is_empty() {
        return Err(SimError::Input(format!(
            "{}: every requested size gives an empty cache; use larger sizes",
            t.name
        )));
    }
    let mut specs = specs.to_vec();
    let added = !specs.iter().any(|s| s.name == "fifo" && s.params.is_empty());
    if added {
        specs.push(PolicySpec::parse("fifo")?);
    }
    Ok((specs, sizes, added))
}

/// The error for byte mode on a trace without sizes.
pub fn sizeless_error(name: &str) -> SimError {
    SimError::Input(format!(
        "{name}: every request has size 1 (the trace carries no object sizes), so byte mode would equal object mode; drop --bytes (bytes=True from Python)"
    ))
}

/// Checks what both modes check of a trace before simulating it.
fn check_trace(t: &TraceSummary, bytes: bool, obs: &dyn Observer) -> Result<(), SimError> {
    if t.requests == 0 {
        return Err(SimError::Input(format!("{}: the trace has no requests", t.name)));
    }
    if t.skipped_zero_size > 0 {
        obs.notice(&Notice::ZeroSizeSkipped {
            trace: t.name.clone(),
            requests: t.skipped_zero_size,
        });
    }
    if bytes && t.sizeless() {
        return Err(sizeless_error(&t.name));
    }
    Ok(())
}

/// Runs a sweep over a trace in memory, in parallel on the rayon pool (a phase labelled with
/// the trace's name over every simulation's requests). FIFO is added as the baseline when
/// missing. Once `stop` is raised, unfinished simulations are left out (with a notice).
pub fn sweep_loaded(
    trace: &LoadedTrace,
    specs: &[PolicySpec],
    sizes: &[CacheSize],
    opt: &Options,
    obs: &dyn Observer,
    stop: &AtomicBool,
) -> Result<Sweep, SimError> {
    let (specs, sizes, added) = sweep_plan(&trace.summary(), specs, sizes, opt.bytes, obs)?;
    let total = trace.len() as u64 * (specs.len() * sizes.len()) as u64;
    obs.begin(&trace.name, total);
    let res = sweep_until(trace, &specs, &sizes, opt.bytes, opt.seed, &|n| obs.advance(n), stop);
    obs.end();
    let mut done = Vec::new();
    let mut unfinished = 0;
    for r in res {
        match r {
            Ok(r) => done.push(r),
            Err(SimError::Stopped(_)) => unfinished += 1,
            Err(e) => return Err(e),
        }
    }
    if unfinished > 0 {
        obs.notice(&Notice::StoppedSimulations {
            trace: trace.name.clone(),
            unfinished,
            total: unfinished + done.len(),
        });
    }
    Ok(Sweep { results: done, baseline_added: added })
}

/// Whether `opt.mode` streams `src` (see [`Mode`]).
pub fn streams(mode: Mode, src: &TraceSource, specs: &[PolicySpec]) -> Result<bool, SimError> {
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

/// A streaming sweep of `src` (see [`crate::stream`]); rows of a sweep stopped by `stop`
/// cover the requests run so far (a notice says how many).
fn stream_sweep(
    src: &TraceSource,
    specs: &[PolicySpec],
    sizes: &[CacheSize],
    opt: &Options,
    obs: &dyn Observer,
    stop: &AtomicBool,
) -> Result<Sweep, SimError> {
    let name = src.name();
    say_format(src, obs)?;
    let t0 = Instant::now();
    let with_next = specs.iter().any(|s| s.name == "belady");
    // A bar with an ETA where the number of requests is known without reading the trace (a
    // generator, an uncompressed fixed-size binary file); a count otherwise.
    let known = match estimated_requests(src)? {
        (n, true) => n,
        (_, false) => 0,
    };
    obs.begin(&format!("{name}: pass 1 of 2 (ids)"), known);
    let backwards = AtomicBool::new(false);
    let scan = Scan::run(
        &name,
        src.blocks(with_next)?,
        with_next,
        &|phase, n| {
            if phase == Phase::NextAccess
                && !backwards.swap(true, std::sync::atomic::Ordering::Relaxed)
            {
                obs.relabel(&format!("{name}: pass 1 of 2 (next accesses, backwards)"));
            }
            obs.position(n);
        },
        stop,
    );
    obs.end();
    let scan = scan.map_err(|e| match e {
        SimError::Stopped(_) => {
            SimError::Stopped(format!("{name}: stopped (Ctrl-C) during the first pass: no results"))
        }
        e => e,
    })?;
    let t = scan.summary();
    check_trace(t, opt.bytes, obs)?;
    obs.notice(&Notice::Scanned {
        trace: name.clone(),
        requests: t.requests,
        objects: t.n_objects,
        seconds: t0.elapsed().as_secs_f64(),
    });
    let (specs, sizes, added) = sweep_plan(t, specs, sizes, opt.bytes, obs)?;
    obs.begin(&format!("{name}: pass 2 of 2"), t.requests);
    let out = scan.sweep(
        src.blocks(scan.next_access_from_trace())?,
        &specs,
        &sizes,
        opt.bytes,
        opt.seed,
        &|_, n| obs.position(n),
        stop,
    );
    obs.end();
    let out = out?;
    if let Some(n) = out.stopped_after {
        obs.notice(&Notice::StoppedStream { trace: name, after: n, requests: t.requests });
    }
    Ok(Sweep { results: out.results.into_iter().collect::<Result<_, _>>()?, baseline_added: added })
}

/// Sweeps one trace, in memory or streamed as `opt.mode` says; FIFO is added as the baseline
/// when missing ([`Sweep::asked`] leaves it out again).
pub fn sweep_source(
    src: &TraceSource,
    specs: &[PolicySpec],
    sizes: &[CacheSize],
    opt: &Options,
    obs: &dyn Observer,
    stop: &AtomicBool,
) -> Result<Sweep, SimError> {
    if streams(opt.mode, src, specs)? {
        return stream_sweep(src, specs, sizes, opt, obs, stop);
    }
    let t0 = Instant::now();
    let trace = load(src, obs)?;
    if opt.bytes && trace.summary().sizeless() {
        return Err(sizeless_error(&trace.name));
    }
    obs.notice(&Notice::Decoded {
        trace: trace.name.clone(),
        requests: trace.len() as u64,
        objects: trace.n_objects,
        seconds: t0.elapsed().as_secs_f64(),
    });
    sweep_loaded(&trace, specs, sizes, opt, obs, stop)
}

//! Running simulations: one policy over one decoded trace, and sweeps of policy × size in
//! parallel (rayon, all cores).

use crate::policy::{Policy, PolicyCtx, Req};
use crate::registry::PolicySpec;
use crate::trace::{Chunk, LoadedTrace, TraceSummary, NEVER};
use crate::SimError;
use rayon::prelude::*;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Counts of one simulation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Requests simulated.
    pub requests: u64,
    /// Missed requests.
    pub misses: u64,
    /// Bytes requested (each request with its own size).
    pub bytes: u64,
    /// Bytes of missed requests.
    pub miss_bytes: u64,
}

impl Counts {
    /// Adds the counts of a later run of requests.
    pub fn add(&mut self, o: Counts) {
        self.requests += o.requests;
        self.misses += o.misses;
        self.bytes += o.bytes;
        self.miss_bytes += o.miss_bytes;
    }

    /// misses / requests.
    pub fn miss_ratio(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.misses as f64 / self.requests as f64
        }
    }
    /// miss bytes / bytes.
    pub fn byte_miss_ratio(&self) -> f64 {
        if self.bytes == 0 {
            0.0
        } else {
            self.miss_bytes as f64 / self.bytes as f64
        }
    }
}

/// Runs a policy over a trace; object-safe so the registry can hand out boxed policies while
/// the request loop stays monomorphized per policy.
pub trait Simulate: Send {
    /// Display name.
    fn sim_name(&self) -> String;
    /// Simulates one run of requests, continuing from the state the previous runs left (both
    /// sweeps feed a trace this way, chunk by chunk). `bytes`: use request sizes (else every
    /// size is 1). A policy that needs next-access positions must be given them.
    fn run_chunk(&mut self, chunk: Chunk<'_>, bytes: bool) -> Counts;
    /// Simulates, calling `on_req(position, hit)` after each request (for analyses).
    fn run_observed(
        &mut self,
        trace: &LoadedTrace,
        bytes: bool,
        on_req: &mut dyn FnMut(usize, bool),
    ) -> Counts;
    /// The policy's invariant check.
    fn check(&self) -> Result<(), String>;
    /// One request (for tests that check invariants after every step).
    fn step(&mut self, req: &Req) -> bool;
    /// Whether requests need next-access positions.
    fn wants_next_access(&self) -> bool;
    /// The policy's debug state.
    fn state(&self) -> String;
    /// The ids now cached, where the policy lists them ([`Policy::resident`]).
    fn resident_ids(&self) -> Option<Vec<u32>>;
    /// How many objects are cached now ([`Policy::len`]).
    fn resident_len(&self) -> usize;
}

const CHUNK: usize = 1 << 16;

impl<P: Policy> Simulate for P {
    fn sim_name(&self) -> String {
        self.name()
    }

    fn run_chunk(&mut self, chunk: Chunk<'_>, bytes: bool) -> Counts {
        let next = if self.needs_next_access() {
            Some(chunk.next.expect("a policy needing next-access positions got a chunk without"))
        } else {
            None
        };
        let Chunk { ids, keys, sizes, .. } = chunk;
        let (mut misses, mut miss_bytes, mut all_bytes) = (0u64, 0u64, 0u64);
        for i in 0..ids.len() {
            let size = if bytes { sizes[i] } else { 1 };
            let req = Req { id: ids[i], key: keys[i], size, next: next.map_or(NEVER, |v| v[i]) };
            let hit = self.access(&req);
            misses += (!hit) as u64;
            miss_bytes += if hit { 0 } else { size as u64 };
            all_bytes += size as u64;
        }
        Counts { requests: ids.len() as u64, misses, bytes: all_bytes, miss_bytes }
    }

    fn run_observed(
        &mut self,
        trace: &LoadedTrace,
        bytes: bool,
        on_req: &mut dyn FnMut(usize, bool),
    ) -> Counts {
        let next = if self.needs_next_access() { Some(trace.next_access()) } else { None };
        let mut c = Counts::default();
        for i in 0..trace.len() {
            let size = if bytes { trace.sizes[i] } else { 1 };
            let req = Req {
                id: trace.ids[i],
                key: trace.keys[i],
                size,
                next: next.map_or(NEVER, |v| v[i]),
            };
            let hit = self.access(&req);
            c.requests += 1;
            c.bytes += size as u64;
            if !hit {
                c.misses += 1;
                c.miss_bytes += size as u64;
            }
            on_req(i, hit);
        }
        c
    }

    fn check(&self) -> Result<(), String> {
        self.validate()
    }

    fn step(&mut self, req: &Req) -> bool {
        self.access(req)
    }

    fn wants_next_access(&self) -> bool {
        self.needs_next_access()
    }

    fn state(&self) -> String {
        self.debug_state()
    }

    fn resident_ids(&self) -> Option<Vec<u32>> {
        self.resident()
    }

    fn resident_len(&self) -> usize {
        self.len()
    }
}

/// A cache size: a fraction of the trace's footprint, or an absolute count/byte size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum CacheSize {
    /// Fraction of distinct objects (object mode) or of the byte footprint (byte mode).
    Fraction(f64),
    /// Objects or bytes.
    Absolute(u64),
}

impl CacheSize {
    /// Parses `0.01` (a fraction: has a `.` or is below 1), `1000`, `10k`, `1M` (×1000 powers)
    /// or `64KiB`, `1MiB`, `2GiB` (×1024 powers).
    pub fn parse(s: &str) -> Result<CacheSize, SimError> {
        let t = s.trim();
        let bad = || {
            SimError::Size(format!("cache size '{t}': expected a fraction like 0.01, a count like 1000 or 10k, or bytes like 64MiB"))
        };
        let lower = t.to_ascii_lowercase();
        for (suf, mul) in [
            ("kib", 1u64 << 10),
            ("mib", 1 << 20),
            ("gib", 1 << 30),
            ("tib", 1 << 40),
            ("k", 1000),
            ("m", 1_000_000),
            ("g", 1_000_000_000),
        ] {
            if let Some(num) = lower.strip_suffix(suf) {
                let v: f64 = num.trim().parse().map_err(|_| bad())?;
                // A whole count (`1.5k`, not `1.2345k`): a fraction of an object is refused,
                // not truncated.
                let n = v * mul as f64;
                if !(v > 0.0 && n.is_finite() && n.fract() == 0.0) {
                    return Err(bad());
                }
                return Ok(CacheSize::Absolute(n as u64));
            }
        }
        if t.contains(['.', 'e', 'E']) {
            let v: f64 = t.parse().map_err(|_| bad())?;
            if !(v > 0.0 && v.is_finite()) {
                return Err(bad());
            }
            return Ok(if v.fract() == 0.0 && v >= 1.0 && !t.contains('.') {
                CacheSize::Absolute(v as u64)
            } else if v <= 1.0 {
                CacheSize::Fraction(v)
            } else {
                return Err(SimError::Size(format!(
                    "cache size '{t}': a fraction must be in (0, 1]"
                )));
            });
        }
        match t.parse::<u64>() {
            Ok(0) | Err(_) => Err(bad()),
            Ok(v) => Ok(CacheSize::Absolute(v)),
        }
    }

    /// The capacity for `trace` (libCacheSim: floor(footprint × fraction)).
    pub fn resolve(&self, trace: &LoadedTrace, bytes: bool) -> u64 {
        self.resolve_for(trace.n_objects, trace.footprint_bytes, bytes)
    }

    /// The capacity for the trace `summary` describes.
    pub fn resolve_summary(&self, summary: &TraceSummary, bytes: bool) -> u64 {
        self.resolve_for(summary.n_objects, summary.footprint_bytes, bytes)
    }

    fn resolve_for(&self, n_objects: u32, footprint_bytes: u64, bytes: bool) -> u64 {
        match *self {
            CacheSize::Absolute(v) => v,
            CacheSize::Fraction(f) => {
                let footprint = if bytes { footprint_bytes } else { n_objects as u64 };
                (footprint as f64 * f) as u64
            }
        }
    }

    /// Label for tables.
    pub fn label(&self) -> String {
        match self {
            CacheSize::Fraction(f) => format!("{f}"),
            CacheSize::Absolute(v) => v.to_string(),
        }
    }
}

/// One simulation's result.
#[derive(Debug, Clone, Serialize)]
pub struct SimResult {
    /// Trace name.
    pub trace: String,
    /// Policy spec as given.
    pub spec: String,
    /// Policy display name.
    pub policy: String,
    /// The size as given.
    pub size: CacheSize,
    /// Capacity in objects or bytes.
    pub capacity: u64,
    /// Byte mode?
    pub bytes: bool,
    /// Counts.
    pub counts: Counts,
    /// Miss ratio.
    pub miss_ratio: f64,
    /// Byte miss ratio.
    pub byte_miss_ratio: f64,
    /// Seconds spent in the request loop.
    pub seconds: f64,
    /// The most objects the cache held at the end of a chunk of the run (every 65,536
    /// requests, and at the end). 0 after any request: the policy stored no object at all
    /// ([`SimResult::stored_nothing`]).
    pub most_resident: u64,
}

impl SimResult {
    /// Whether the policy stored no object over the whole run (and so missed every request
    /// by construction): its admission refused every object at this capacity, as S3-FIFO's
    /// and QD-LP's do below 20 objects with their default small queue (libCacheSim's rule,
    /// reproduced: an object must be smaller than the small queue, ⌊small × capacity⌋), or
    /// (byte mode) every object was
    /// larger than the cache. Read at chunk ends: eviction only makes room for an insert, so
    /// a cache that stored anything holds something at the next chunk end (short of a
    /// contrived case: an insert that evicts everything and then refuses its object, at the
    /// end of every chunk).
    pub fn stored_nothing(&self) -> bool {
        self.most_resident == 0 && self.counts.requests > 0
    }

    /// Simulated requests per second (millions).
    pub fn mreqs_per_sec(&self) -> f64 {
        self.counts.requests as f64 / self.seconds.max(1e-9) / 1e6
    }
}

/// A note naming the results that stored no object over their whole run
/// ([`SimResult::stored_nothing`]): their miss ratio of 1 is the admission rule's, not a
/// broken policy. `None` when there are none.
pub fn stored_nothing_note(res: &[SimResult]) -> Option<String> {
    let nothing: Vec<&SimResult> = res.iter().filter(|r| r.stored_nothing()).collect();
    if nothing.is_empty() {
        return None;
    }
    let mut note = String::from(
        "note: these runs stored no object at all, so every request missed (their admission \
         refused every object at that capacity):\n",
    );
    for r in nothing {
        note.push_str(&format!(
            "  {} on {} at size {} (capacity {})\n",
            r.policy,
            r.trace,
            r.size.label(),
            r.capacity
        ));
    }
    note.push_str(&format!("  ({STORED_NOTHING_WHY})\n"));
    Some(note)
}

/// Why a run stores nothing ([`SimResult::stored_nothing`]), for every text that explains it
/// (the CLI's and Python's note, the lab page's footnote).
pub const STORED_NOTHING_WHY: &str = "S3-FIFO and QD-LP, as libCacheSim, whose figures sifter \
    reproduces, admit only objects smaller than their small queue, floor(small × capacity): with \
    the default small = 0.1, none below 20 objects. In byte mode, an object larger than the cache \
    is never stored.";

/// Runs one policy at one size. `progress` is called with the requests done since its last
/// call, every 2^16 requests.
pub fn simulate(
    trace: &LoadedTrace,
    spec: &PolicySpec,
    size: CacheSize,
    bytes: bool,
    seed: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SimResult, SimError> {
    simulate_until(trace, spec, size, bytes, seed, progress, &AtomicBool::new(false))
}

/// [`simulate`], giving up with [`SimError::Stopped`] between chunks once `stop` is raised.
pub fn simulate_until(
    trace: &LoadedTrace,
    spec: &PolicySpec,
    size: CacheSize,
    bytes: bool,
    seed: u64,
    progress: &(dyn Fn(u64) + Sync),
    stop: &AtomicBool,
) -> Result<SimResult, SimError> {
    run(trace, spec, size, bytes, seed, 0, progress, stop)
}

/// [`simulate`] that counts only the requests after the first `warmup`: those warm the cache
/// (the steady-state miss ratio, with the cold start left out). The result's counts and miss
/// ratios are of the counted requests.
pub fn simulate_after_warmup(
    trace: &LoadedTrace,
    spec: &PolicySpec,
    size: CacheSize,
    warmup: usize,
) -> Result<SimResult, SimError> {
    run(trace, spec, size, false, 0, warmup, &|_| {}, &AtomicBool::new(false))
}

#[allow(clippy::too_many_arguments)]
fn run(
    trace: &LoadedTrace,
    spec: &PolicySpec,
    size: CacheSize,
    bytes: bool,
    seed: u64,
    warmup: usize,
    progress: &(dyn Fn(u64) + Sync),
    stop: &AtomicBool,
) -> Result<SimResult, SimError> {
    let capacity = size.resolve(trace, bytes);
    if capacity == 0 {
        return Err(SimError::Size(format!(
            "size {} of {} gives a cache of 0 {}",
            size.label(),
            trace.name,
            if bytes { "bytes" } else { "objects" }
        )));
    }
    let ctx = PolicyCtx { capacity, n_objects: trace.n_objects, seed };
    let mut p = spec.build(&ctx)?;
    if p.sim_name() == "Belady" {
        trace.next_access(); // the pre-pass is not part of the timed loop
    }
    let with_next = p.wants_next_access();
    let t0 = Instant::now();
    let mut counts = Counts::default();
    let mut most_resident = 0;
    let n = trace.len();
    let mut start = 0;
    while start < n {
        if stop.load(Ordering::Relaxed) {
            return Err(SimError::Stopped(format!(
                "{spec} at {} stopped unfinished",
                size.label()
            )));
        }
        // A chunk ends at the warm-up's end, so the warm requests are never counted.
        let end = (start + CHUNK).min(n);
        let end = if start < warmup { end.min(warmup) } else { end };
        let c = p.run_chunk(trace.chunk(start..end, with_next), bytes);
        most_resident = most_resident.max(p.resident_len() as u64);
        if start >= warmup {
            counts.add(c);
        }
        progress((end - start) as u64);
        start = end;
    }
    let seconds = t0.elapsed().as_secs_f64();
    Ok(SimResult {
        trace: trace.name.clone(),
        spec: spec.to_string(),
        policy: p.sim_name(),
        size,
        capacity,
        bytes,
        miss_ratio: counts.miss_ratio(),
        byte_miss_ratio: counts.byte_miss_ratio(),
        counts,
        seconds,
        most_resident,
    })
}

/// Runs every policy × size in parallel on the rayon pool; results in input order
/// (policies outer, sizes inner).
pub fn sweep(
    trace: &LoadedTrace,
    specs: &[PolicySpec],
    sizes: &[CacheSize],
    bytes: bool,
    seed: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<Result<SimResult, SimError>> {
    sweep_until(trace, specs, sizes, bytes, seed, progress, &AtomicBool::new(false))
}

/// [`sweep`] that stops when `stop` is raised: simulations not finished by then give
/// [`SimError::Stopped`], the finished ones their results.
pub fn sweep_until(
    trace: &LoadedTrace,
    specs: &[PolicySpec],
    sizes: &[CacheSize],
    bytes: bool,
    seed: u64,
    progress: &(dyn Fn(u64) + Sync),
    stop: &AtomicBool,
) -> Vec<Result<SimResult, SimError>> {
    let jobs: Vec<(&PolicySpec, CacheSize)> =
        specs.iter().flat_map(|s| sizes.iter().map(move |z| (s, *z))).collect();
    if jobs.iter().any(|(s, _)| s.name == "belady") {
        trace.next_access();
    }
    jobs.par_iter()
        .map(|(s, z)| simulate_until(trace, s, *z, bytes, seed, progress, stop))
        .collect()
}

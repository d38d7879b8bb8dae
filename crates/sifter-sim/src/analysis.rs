//! The paper analyses as library calls: typed results, no printing (`sifter analyze` and the
//! Python package's `sifter.analyze` are their faces). Each takes a trace decoded into memory
//! and a cache size already resolved to a capacity (see [`one_size`], [`capacity_of`]).
//!
//! ```
//! use sifter_sim::analysis::{capacity_of, intervals, one_size};
//! use sifter_sim::registry::parse_policy_list;
//! use sifter_sim::sweep::{load, Silent};
//! use sifter_trace::TraceSource;
//! let src = TraceSource::parse("zipf:alpha=1.0,n=1000,requests=20000,seed=1", None).unwrap();
//! let t = load(&src, &Silent).unwrap();
//! let cap = capacity_of(&t, one_size("0.1").unwrap()).unwrap();
//! let s = intervals(&t, &parse_policy_list("lru,sieve").unwrap(), cap, 5000).unwrap();
//! assert_eq!(s.len(), 2);
//! assert_eq!(s[0].points.len(), 4); // four windows of 5,000 requests
//! ```

use crate::policies::multistep::MultiStep;
use crate::policies::sieve::Sieve;
use crate::policy::{Policy, PolicyCtx, Req};
use crate::registry::PolicySpec;
use crate::runner::{CacheSize, SimResult};
use crate::sweep::parse_sizes;
use crate::trace::LoadedTrace;
use crate::SimError;

fn input(msg: String) -> SimError {
    SimError::Input(msg)
}

/// The one cache size `size` names (an error for a list of sizes).
pub fn one_size(size: &str) -> Result<CacheSize, SimError> {
    let sizes = parse_sizes(size)?;
    if sizes.len() != 1 {
        return Err(input(format!(
            "this analysis takes one cache size, got {} ({size})",
            sizes.len()
        )));
    }
    Ok(sizes[0])
}

/// The capacity (objects) of `size` on `t`; an error for an empty cache.
pub fn capacity_of(t: &LoadedTrace, size: CacheSize) -> Result<u64, SimError> {
    let cap = size.resolve(t, false);
    if cap == 0 {
        return Err(input(format!("size {} gives an empty cache", size.label())));
    }
    Ok(cap)
}

/// One policy's curve: `(x, y)` points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The policy's display name.
    pub policy: String,
    /// The points, in request order.
    pub points: Vec<(f64, f64)>,
}

/// Miss ratio in consecutive windows of `window` requests: points `(first request of the
/// window, miss ratio)` per policy (how fast a policy adapts; the SIEVE paper's Fig. 10a).
pub fn intervals(
    t: &LoadedTrace,
    specs: &[PolicySpec],
    cap: u64,
    window: usize,
) -> Result<Vec<Series>, SimError> {
    if window == 0 {
        return Err(input("the window must be at least 1 request".into()));
    }
    let mut out = Vec::new();
    for spec in specs {
        let mut p = spec.build(&PolicyCtx { capacity: cap, n_objects: t.n_objects, seed: 0 })?;
        let mut misses = 0u64;
        let mut points = Vec::new();
        let policy = p.sim_name();
        p.run_observed(t, false, &mut |i, hit| {
            misses += (!hit) as u64;
            if (i + 1) % window == 0 {
                points.push(((i + 1 - window) as f64, misses as f64 / window as f64));
                misses = 0;
            }
        });
        out.push(Series { policy, points });
    }
    Ok(out)
}

/// One sample of [`ideal`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IdealPoint {
    /// Requests run so far.
    pub request: usize,
    /// Share of the cache holding ideal objects.
    pub ideal_object_ratio: f64,
    /// Miss ratio of the requests so far.
    pub miss_ratio_so_far: f64,
}

/// Registry names of the policies whose contents [`ideal`] can list.
pub fn listing_policies() -> Vec<&'static str> {
    let ctx = PolicyCtx { capacity: 4, n_objects: 4, seed: 0 };
    crate::registry::names()
        .into_iter()
        .filter(|n| {
            PolicySpec::parse(n)
                .ok()
                .and_then(|s| s.build(&ctx).ok())
                .is_some_and(|p| !p.wants_next_access() && p.resident_ids().is_some())
        })
        .collect()
}

/// The ideal set of a run of requests: the `cap` most requested ids among them (ties: smaller id
/// first), as a membership table over `0..n_objects`.
fn ideal_set(ids: &[u32], n_objects: u32, cap: u64) -> Vec<bool> {
    let mut counts = vec![0u64; n_objects as usize];
    for &id in ids {
        counts[id as usize] += 1;
    }
    let mut order: Vec<u32> = (0..n_objects).filter(|&i| counts[i as usize] > 0).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(counts[i as usize]), i));
    let mut ideal = vec![false; n_objects as usize];
    for &i in order.iter().take(cap as usize) {
        ideal[i as usize] = true;
    }
    ideal
}

/// Ideal object ratio over time, sampled every `every` requests (default: 200 samples over the
/// trace): the share of the cache holding
/// the `cap` most requested objects of the whole trace (`phases` = 1) or of the current phase
/// (the trace cut in `phases` equal parts) — the SIEVE paper's Figs. 8b–10b. Policies must list
/// their contents ([`listing_policies`]).
pub fn ideal(
    t: &LoadedTrace,
    specs: &[PolicySpec],
    cap: u64,
    every: Option<usize>,
    phases: usize,
) -> Result<Vec<(String, Vec<IdealPoint>)>, SimError> {
    let every = every.unwrap_or((t.len() / 200).max(1));
    if every == 0 {
        return Err(input("the sampling interval must be at least 1 request".into()));
    }
    if phases == 0 || phases > 1000 || phases > t.len().max(1) {
        return Err(input(format!(
            "phases must be between 1 and min(1000, requests) (got {phases})"
        )));
    }
    let phase_len = t.len().div_ceil(phases).max(1);
    let sets: Vec<Vec<bool>> =
        t.ids.chunks(phase_len).map(|ids| ideal_set(ids, t.n_objects, cap)).collect();
    let mut out = Vec::new();
    for spec in specs {
        let mut p = spec.build(&PolicyCtx { capacity: cap, n_objects: t.n_objects, seed: 0 })?;
        let name = p.sim_name();
        if p.wants_next_access() || p.resident_ids().is_none() {
            return Err(input(format!(
                "{name} does not list its contents; policies that do: {}",
                listing_policies().join(", ")
            )));
        }
        let (mut misses, mut pts) = (0u64, Vec::new());
        for i in 0..t.len() {
            let req = Req { id: t.ids[i], key: t.keys[i], size: 1, next: 0 };
            misses += (!p.step(&req)) as u64;
            if (i + 1) % every == 0 {
                let ids = p.resident_ids().unwrap_or_default();
                let set = &sets[i / phase_len];
                let hits = ids.iter().filter(|&&id| set[id as usize]).count();
                pts.push(IdealPoint {
                    request: i + 1,
                    ideal_object_ratio: hits as f64 / cap as f64,
                    miss_ratio_so_far: misses as f64 / (i + 1) as f64,
                });
            }
        }
        out.push((name, pts));
    }
    Ok(out)
}

/// One row of [`vectors`].
#[derive(Debug, Clone, PartialEq)]
pub struct VectorRow {
    pub size: CacheSize,
    pub capacity: u64,
    /// 1-based; vector 1 holds the most promoted items.
    pub vector: usize,
    pub hits: u64,
    pub share_of_hits: f64,
    /// The whole cache's hit ratio at this size.
    pub hit_ratio: f64,
}

/// Multi-step LRU (`p` keys per vector, `m` vectors per set): the share of hits found in each
/// vector, per cache size — the multi-step LRU paper's Fig. 12.
pub fn vectors(
    t: &LoadedTrace,
    sizes: &[CacheSize],
    p: usize,
    m: usize,
) -> Result<Vec<VectorRow>, SimError> {
    if !(1..=64).contains(&p) || !(1..=64).contains(&m) {
        return Err(input(format!("p and m must be in 1..=64 (got {p} and {m})")));
    }
    let mut out = Vec::new();
    for &size in sizes {
        let cap = size.resolve(t, false);
        if cap == 0 {
            return Err(input(format!("size {} gives an empty cache", size.label())));
        }
        let mut ms =
            MultiStep::new(&PolicyCtx { capacity: cap, n_objects: t.n_objects, seed: 0 }, p, m)?;
        for i in 0..t.len() {
            ms.access(&Req { id: t.ids[i], key: t.keys[i], size: 1, next: 0 });
        }
        let total: u64 = ms.hits_by_vector.iter().sum();
        for (v, &h) in ms.hits_by_vector.iter().enumerate() {
            out.push(VectorRow {
                size,
                capacity: cap,
                vector: v + 1,
                hits: h,
                share_of_hits: h as f64 / total.max(1) as f64,
                hit_ratio: total as f64 / t.len().max(1) as f64,
            });
        }
    }
    Ok(out)
}

/// Warm-up from a cache full of garbage: each policy first receives `cap` requests to keys that
/// never recur, then the trace; points `(first request of the window, hit ratio)` per window
/// of `window` requests (default: 100 windows over the trace) — the multi-step LRU paper's
/// Fig. 15.
pub fn warmup(
    t: &LoadedTrace,
    specs: &[PolicySpec],
    cap: u64,
    window: Option<usize>,
) -> Result<Vec<Series>, SimError> {
    let window = window.unwrap_or((t.len() / 100).max(1));
    if window == 0 {
        return Err(input("the window must be at least 1 request".into()));
    }
    let Some(n) = u32::try_from(cap).ok().and_then(|c| t.n_objects.checked_add(c)) else {
        return Err(input(format!("cache of {cap} objects is too large for the garbage fill")));
    };
    let max_key = t.keys.iter().copied().max().unwrap_or(0);
    let mut out = Vec::new();
    for spec in specs {
        let mut p = spec.build(&PolicyCtx { capacity: cap, n_objects: n, seed: 0 })?;
        let policy = p.sim_name();
        if p.wants_next_access() {
            return Err(input(format!(
                "{policy} needs each request's next use; warmup does not supply it"
            )));
        }
        // Garbage: ids and keys no request of the trace uses.
        for g in 0..cap as u32 {
            let key = max_key.wrapping_add(1 + g as u64);
            p.step(&Req { id: t.n_objects + g, key, size: 1, next: 0 });
        }
        let (mut hits, mut points) = (0u64, Vec::new());
        for i in 0..t.len() {
            hits += p.step(&Req { id: t.ids[i], key: t.keys[i], size: 1, next: 0 }) as u64;
            if (i + 1) % window == 0 {
                points.push(((i + 1 - window) as f64, hits as f64 / window as f64));
                hits = 0;
            }
        }
        out.push(Series { policy, points });
    }
    Ok(out)
}

/// One sample of [`hand`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HandPoint {
    /// Requests run so far.
    pub request: usize,
    /// The hand's distance from the tail, in entries.
    pub hand_from_tail: usize,
    /// Entries cached.
    pub cached: usize,
    /// `hand_from_tail / cached` (0 = tail, 1 = head).
    pub position: f64,
}

/// SIEVE's hand position over time, sampled every `every` requests (default: 500 samples over
/// the trace) — the SIEVE paper's Fig. 9c.
pub fn hand(t: &LoadedTrace, cap: u64, every: Option<usize>) -> Result<Vec<HandPoint>, SimError> {
    let every = every.unwrap_or((t.len() / 500).max(1));
    if every == 0 {
        return Err(input("the sampling interval must be at least 1 request".into()));
    }
    let mut sieve = Sieve::new(&PolicyCtx { capacity: cap, n_objects: t.n_objects, seed: 0 });
    let mut out = Vec::new();
    for i in 0..t.len() {
        sieve.access(&Req { id: t.ids[i], key: t.keys[i], size: 1, next: 0 });
        if (i + 1) % every == 0 {
            let (pos, len) = (sieve.hand_position(), sieve.len());
            out.push(HandPoint {
                request: i + 1,
                hand_from_tail: pos,
                cached: len,
                position: if len == 0 { 0.0 } else { pos as f64 / len as f64 },
            });
        }
    }
    Ok(out)
}

/// One policy's summary in [`compare`].
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    pub policy: String,
    /// Percentiles of the miss-ratio reduction from FIFO over the traces.
    pub p10: f64,
    pub p25: f64,
    pub mean: f64,
    pub p75: f64,
    pub p90: f64,
    /// Share of the traces on which this policy has the lowest miss ratio (ties count for each).
    pub best_share: f64,
}

/// Linear-interpolated percentile of sorted values (`q` in 0..=1).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Miss-ratio reduction from FIFO across traces (the SIEVE paper's Figs. 3 and 5): `per_trace`
/// holds each trace's sweep at one size with FIFO among the results; the policies are those of
/// the first trace, in its order. Traces whose FIFO miss ratio is 0 count for "best" only.
pub fn compare(per_trace: &[Vec<SimResult>]) -> Vec<CompareRow> {
    let rows: Vec<(Vec<(String, f64)>, f64)> = per_trace
        .iter()
        .map(|res| {
            let fifo = res.iter().find(|r| r.spec == "fifo").map_or(f64::NAN, |r| r.miss_ratio);
            let row = res
                .iter()
                .filter(|r| r.spec != "fifo")
                .map(|r| (r.policy.clone(), r.miss_ratio))
                .collect();
            (row, fifo)
        })
        .collect();
    let names: Vec<String> =
        rows.first().map(|p| p.0.iter().map(|x| x.0.clone()).collect()).unwrap_or_default();
    names
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let mut reds: Vec<f64> =
                rows.iter().filter(|p| p.1 > 0.0).map(|p| (p.1 - p.0[k].1) / p.1).collect();
            reds.sort_by(f64::total_cmp);
            let mean = reds.iter().sum::<f64>() / reds.len().max(1) as f64;
            let best = rows
                .iter()
                .filter(|p| {
                    let m = p.0.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
                    (p.0[k].1 - m).abs() < 1e-12
                })
                .count();
            CompareRow {
                policy: name.clone(),
                p10: percentile(&reds, 0.1),
                p25: percentile(&reds, 0.25),
                mean,
                p75: percentile(&reds, 0.75),
                p90: percentile(&reds, 0.9),
                best_share: best as f64 / rows.len().max(1) as f64,
            }
        })
        .collect()
}

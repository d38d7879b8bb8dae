//! A trace decoded once into memory, with keys mapped to dense ids.
//!
//! Every simulation of a sweep reads the same [`LoadedTrace`]. Loading maps each distinct key to
//! a dense id (`0..n_objects`, in order of first appearance), so policies keep per-object state
//! in flat arrays indexed by id instead of hashing on every request; the original 64-bit keys
//! are kept for policies that hash or sample by key. Requests of size 0 are skipped and
//! counted, as libCacheSim skips them.

use hashbrown::HashMap;
use sifter_trace::{Request, Result as TraceResult, TraceError};
use std::sync::OnceLock;

/// "No next access" in [`LoadedTrace::next_access`].
pub const NEVER: u32 = u32::MAX;

/// A decoded trace.
#[derive(Debug, Default)]
pub struct LoadedTrace {
    /// Display name.
    pub name: String,
    /// Dense object id of each request.
    pub ids: Vec<u32>,
    /// Original key of each request.
    pub keys: Vec<u64>,
    /// Size in bytes of each request.
    pub sizes: Vec<u32>,
    /// Distinct objects.
    pub n_objects: u32,
    /// Sum over objects of the size of each object's first request.
    pub footprint_bytes: u64,
    /// Sum of all request sizes.
    pub requested_bytes: u64,
    /// Zero-size requests left out.
    pub skipped_zero_size: u64,
    next: OnceLock<Vec<u32>>,
}

impl LoadedTrace {
    /// Decodes a request stream. `progress` is called with the number of requests read so far
    /// every 2^16 requests.
    pub fn load(
        name: impl Into<String>,
        reqs: impl Iterator<Item = TraceResult<Request>>,
        progress: &dyn Fn(u64),
    ) -> TraceResult<LoadedTrace> {
        let mut t = LoadedTrace { name: name.into(), ..Default::default() };
        let (lo, _) = reqs.size_hint();
        t.ids.reserve(lo);
        t.keys.reserve(lo);
        t.sizes.reserve(lo);
        let mut map: HashMap<u64, u32> = HashMap::new();
        for r in reqs {
            let r = r?;
            if r.size == 0 {
                t.skipped_zero_size += 1;
                continue;
            }
            if t.ids.len() >= (u32::MAX - 1) as usize {
                return Err(TraceError::Spec(format!(
                    "{}: more than {} requests: the simulator's positions are 32-bit",
                    t.name,
                    u32::MAX - 1
                )));
            }
            let next_id = map.len() as u32;
            let id = *map.entry(r.key).or_insert_with(|| {
                t.footprint_bytes += r.size as u64;
                next_id
            });
            t.ids.push(id);
            t.keys.push(r.key);
            t.sizes.push(r.size);
            t.requested_bytes += r.size as u64;
            if t.ids.len() & 0xffff == 0 {
                progress(t.ids.len() as u64);
            }
        }
        t.n_objects = map.len() as u32;
        Ok(t)
    }

    /// Number of requests.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the trace has no requests.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// For each request, the position of the next request to the same object ([`NEVER`] if
    /// none), computed from the request sequence on first use.
    pub fn next_access(&self) -> &[u32] {
        self.next.get_or_init(|| {
            let mut last = vec![NEVER; self.n_objects as usize];
            let mut next = vec![NEVER; self.ids.len()];
            for (i, &id) in self.ids.iter().enumerate().rev() {
                next[i] = last[id as usize];
                last[id as usize] = i as u32;
            }
            next
        })
    }
}

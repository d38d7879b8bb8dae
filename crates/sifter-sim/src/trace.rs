//! A trace decoded once into memory, with keys mapped to dense ids.
//!
//! Every simulation of a sweep reads the same [`LoadedTrace`]. Loading maps each distinct key to
//! a dense id (`0..n_objects`, in order of first appearance), so policies keep per-object state
//! in flat arrays indexed by id instead of hashing on every request; the original 64-bit keys
//! are kept for policies that hash or sample by key. Requests of size 0 are skipped and
//! counted, as libCacheSim skips them.

use crate::idmap::Densifier;
use sifter_trace::{Block, BlockSource, Request, RequestBlocks, Result as TraceResult};
use std::sync::OnceLock;

/// Requests per block of the loaders (ids are assigned a block at a time).
pub use sifter_trace::blocks::BLOCK;

/// "No next access" in [`LoadedTrace::next_access`] (and [`crate::policy::Req::next`]).
pub const NEVER: u64 = u64::MAX;

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
    next: OnceLock<Vec<u64>>,
}

impl LoadedTrace {
    /// Decodes a request stream. `progress` is called with the number of requests read so far
    /// every [`BLOCK`] requests.
    pub fn load(
        name: impl Into<String>,
        reqs: impl Iterator<Item = TraceResult<Request>>,
        progress: &dyn Fn(u64),
    ) -> TraceResult<LoadedTrace> {
        let (lo, _) = reqs.size_hint();
        Self::load_blocks(name, RequestBlocks::new(reqs, false), lo, progress)
    }

    /// Decodes a stream of blocks ([`sifter_trace::TraceSource::blocks`]: the fast path);
    /// `expect` requests are reserved for up front.
    pub fn load_blocks(
        name: impl Into<String>,
        mut src: impl BlockSource,
        expect: usize,
        progress: &dyn Fn(u64),
    ) -> TraceResult<LoadedTrace> {
        let mut t = LoadedTrace { name: name.into(), ..Default::default() };
        t.ids.reserve(expect);
        t.keys.reserve(expect);
        t.sizes.reserve(expect);
        let mut d = Densifier::default();
        let mut b = Block::default();
        while src.next_block(&mut b)? {
            t.skipped_zero_size += b.skipped_zero_size;
            t.requested_bytes += b.sizes.iter().map(|&s| s as u64).sum::<u64>();
            d.map_block(&b.keys, &b.sizes, &mut t.ids, &t.name)?;
            t.keys.extend_from_slice(&b.keys);
            t.sizes.extend_from_slice(&b.sizes);
            progress(t.ids.len() as u64);
        }
        t.n_objects = d.n_objects();
        t.footprint_bytes = d.footprint_bytes;
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
    pub fn next_access(&self) -> &[u64] {
        self.next.get_or_init(|| {
            let mut last = vec![NEVER; self.n_objects as usize];
            let mut next = vec![NEVER; self.ids.len()];
            next_positions(&self.ids, 0, &mut last, &mut next);
            next
        })
    }

    /// Requests `range` as the simulations see them (`with_next`: with next-access positions,
    /// computed on first use).
    pub fn chunk(&self, range: std::ops::Range<usize>, with_next: bool) -> Chunk<'_> {
        Chunk {
            ids: &self.ids[range.clone()],
            keys: &self.keys[range.clone()],
            sizes: &self.sizes[range.clone()],
            next: with_next.then(|| &self.next_access()[range]),
        }
    }

    /// What the sweep needs to know of the trace.
    pub fn summary(&self) -> TraceSummary {
        TraceSummary {
            name: self.name.clone(),
            requests: self.ids.len() as u64,
            n_objects: self.n_objects,
            footprint_bytes: self.footprint_bytes,
            requested_bytes: self.requested_bytes,
            skipped_zero_size: self.skipped_zero_size,
            max_size: self.sizes.iter().copied().max().unwrap_or(0),
        }
    }
}

/// Fills `next[i]` for requests `first + i` (walked backwards), given `last[id]`: the position
/// of the next request to `id` after this run (or [`NEVER`]); leaves `last` as it is before
/// the run. The one next-access computation of both modes.
pub fn next_positions(ids: &[u32], first: u64, last: &mut [u64], next: &mut [u64]) {
    for (i, &id) in ids.iter().enumerate().rev() {
        next[i] = last[id as usize];
        last[id as usize] = first + i as u64;
    }
}

/// A run of consecutive requests as the simulations see them: parallel slices.
#[derive(Debug, Clone, Copy)]
pub struct Chunk<'a> {
    /// Dense object ids.
    pub ids: &'a [u32],
    /// Original keys.
    pub keys: &'a [u64],
    /// Sizes in bytes.
    pub sizes: &'a [u32],
    /// Next-access positions (absolute), when a policy needs them.
    pub next: Option<&'a [u64]>,
}

impl Chunk<'_> {
    /// Requests in the run.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the run is empty.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// What a sweep needs to know of a trace: its totals (from [`LoadedTrace::summary`] or the
/// streaming sweep's first pass).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceSummary {
    /// Display name.
    pub name: String,
    /// Requests (zero-size ones left out).
    pub requests: u64,
    /// Distinct objects.
    pub n_objects: u32,
    /// Sum over objects of the size of each object's first request.
    pub footprint_bytes: u64,
    /// Sum of all request sizes.
    pub requested_bytes: u64,
    /// Zero-size requests left out.
    pub skipped_zero_size: u64,
    /// The largest request size (1 when the trace carries no sizes).
    pub max_size: u32,
}

impl TraceSummary {
    /// Whether every request has size 1 (the trace carries no object sizes).
    pub fn sizeless(&self) -> bool {
        self.max_size <= 1
    }
}

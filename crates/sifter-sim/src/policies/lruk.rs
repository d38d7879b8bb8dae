//! LRU-K (O'Neil, O'Neil and Weikum, "The LRU-K page replacement algorithm for database disk
//! buffering", SIGMOD'93): evict the object whose K-th most recent request is oldest; objects
//! requested fewer than K times have an infinite backward K-distance and go first (among them,
//! the least recently requested).
//!
//! ```text
//! history: the last K request times of every object, kept after eviction too
//! hit or miss: record now in the object's history
//! evict:  the resident object with the oldest K-th most recent request
//!         (fewer than K requests = oldest of all; ties: least recently requested)
//! ```
//!
//! Choices the paper leaves open: the history of evicted objects is retained for the whole run
//! (the paper's Retained Information Period taken as infinite; dense ids make it an array), and
//! there is no Correlated Reference Period (every request counts). K = 2 by default, as in the
//! paper's experiments. K = 1 is exactly LRU (tested). libCacheSim has no LRU-K.

use crate::policy::{Policy, PolicyCtx, Req};
use std::collections::BTreeSet;

/// LRU-K.
#[derive(Debug)]
pub struct LruK {
    cap: u64,
    used: u64,
    k: usize,
    now: u64,
    /// Last K request times of each id, newest first (0 = none); `k` entries per id.
    history: Vec<u64>,
    /// (K-th most recent request time, last request time, id) of resident objects.
    order: BTreeSet<(u64, u64, u32)>,
    resident: Vec<bool>,
    size: Vec<u32>,
}

impl LruK {
    /// An LRU-K cache.
    pub fn new(ctx: &PolicyCtx, k: usize) -> Self {
        let n = ctx.n_objects as usize;
        LruK {
            cap: ctx.capacity,
            used: 0,
            k,
            now: 0,
            history: vec![0; n * k],
            order: BTreeSet::new(),
            resident: vec![false; n],
            size: vec![0; n],
        }
    }

    fn rank(&self, id: u32) -> (u64, u64, u32) {
        let h = &self.history[id as usize * self.k..][..self.k];
        (h[self.k - 1], h[0], id)
    }

    fn record(&mut self, id: u32) {
        let h = &mut self.history[id as usize * self.k..][..self.k];
        h.rotate_right(1);
        h[0] = self.now;
    }
}

impl Policy for LruK {
    fn name(&self) -> String {
        format!("LRU-{}", self.k)
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.used
    }
    fn len(&self) -> usize {
        self.order.len()
    }
    fn lookup(&mut self, req: &Req) -> bool {
        self.now += 1;
        if !self.resident[req.id as usize] {
            return false;
        }
        let old = self.rank(req.id);
        self.order.remove(&old);
        self.record(req.id);
        self.order.insert(self.rank(req.id));
        true
    }
    fn evict(&mut self, _req: &Req) {
        let Some((_, _, id)) = self.order.pop_first() else { return };
        self.resident[id as usize] = false;
        self.used -= self.size[id as usize] as u64;
    }
    fn insert(&mut self, req: &Req) {
        self.record(req.id);
        self.resident[req.id as usize] = true;
        self.size[req.id as usize] = req.size;
        self.used += req.size as u64;
        self.order.insert(self.rank(req.id));
    }
    fn validate(&self) -> Result<(), String> {
        let used: u64 = self.order.iter().map(|&(_, _, id)| self.size[id as usize] as u64).sum();
        if used != self.used {
            return Err(format!("LRU-K: resident bytes {used} != used {}", self.used));
        }
        for &r in &self.order {
            if !self.resident[r.2 as usize] || self.rank(r.2) != r {
                return Err(format!("LRU-K: stale entry {r:?}"));
            }
        }
        Ok(())
    }
}

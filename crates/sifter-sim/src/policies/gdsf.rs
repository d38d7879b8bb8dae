//! GDSF, Greedy-Dual-Size-Frequency (Cherkasova, 1998): priority = L + frequency / size,
//! evict the lowest, and L rises to the priority of each evicted object ("inflation"), so
//! objects not requested for a while age out.
//!
//! ```text
//! hit:    freq += 1; priority = L + freq · 10^6 / size
//! insert: freq = 1; priority = L + 10^6 / size; then evict while over capacity
//!         (the new object itself can be the victim)
//! evict:  the lowest priority (ties: least recently prioritised); L = its priority
//! ```
//!
//! Source: libCacheSim `cache/eviction/cpp/GDSF.cpp` (insert first, then evict; same float
//! arithmetic), which this reproduces.

use crate::policy::{Policy, PolicyCtx, Req};
use std::collections::BTreeSet;

/// GDSF.
#[derive(Debug)]
pub struct Gdsf {
    cap: u64,
    used: u64,
    /// Inflation value: the priority of the last evicted object.
    l: f64,
    vtime: u64,
    /// (priority bits, vtime, id); positive floats order like their bit patterns.
    pq: BTreeSet<(u64, u64, u32)>,
    key: Vec<(u64, u64)>,
    freq: Vec<u32>,
    size: Vec<u32>,
}

impl Gdsf {
    /// A GDSF cache.
    pub fn new(ctx: &PolicyCtx) -> Self {
        let n = ctx.n_objects as usize;
        Gdsf {
            cap: ctx.capacity,
            used: 0,
            l: 0.0,
            vtime: 0,
            pq: BTreeSet::new(),
            key: vec![(0, 0); n],
            freq: vec![0; n],
            size: vec![0; n],
        }
    }

    fn set_priority(&mut self, id: u32) {
        let i = id as usize;
        let pri = self.l + (self.freq[i] as f64) * 1.0e6 / self.size[i] as f64;
        let k = (pri.to_bits(), self.vtime);
        self.key[i] = k;
        self.pq.insert((k.0, k.1, id));
    }
}

impl Policy for Gdsf {
    fn name(&self) -> String {
        "GDSF".into()
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.used
    }
    fn len(&self) -> usize {
        self.pq.len()
    }
    fn access(&mut self, req: &Req) -> bool {
        self.vtime += 1;
        if self.lookup(req) {
            return true;
        }
        if self.can_insert(req) {
            self.insert(req);
            while self.used > self.cap {
                self.evict(req);
            }
        }
        false
    }
    fn lookup(&mut self, req: &Req) -> bool {
        let i = req.id as usize;
        if self.freq[i] == 0 {
            return false;
        }
        let (p, v) = self.key[i];
        self.pq.remove(&(p, v, req.id));
        self.freq[i] += 1;
        self.set_priority(req.id);
        true
    }
    fn evict(&mut self, _req: &Req) {
        if let Some((p, _, id)) = self.pq.pop_first() {
            self.l = f64::from_bits(p);
            self.used -= self.size[id as usize] as u64;
            self.freq[id as usize] = 0;
        }
    }
    fn insert(&mut self, req: &Req) {
        let i = req.id as usize;
        self.freq[i] = 1;
        self.size[i] = req.size;
        self.used += req.size as u64;
        self.set_priority(req.id);
    }
    fn validate(&self) -> Result<(), String> {
        let used: u64 = self.pq.iter().map(|&(_, _, id)| self.size[id as usize] as u64).sum();
        if used != self.used || self.used > self.cap {
            return Err(format!("GDSF: used {} vs {used}", self.used));
        }
        Ok(())
    }
}

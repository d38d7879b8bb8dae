//! Hyperbolic caching (Blankstein, Sen and Freedman, USENIX ATC'17): each object's priority is
//! its request count divided by its time in the cache; evict the lowest priority among a random
//! sample.
//!
//! ```text
//! insert: freq = 1, enter = now;  hit: freq += 1
//! evict:  sample `samples` (64) resident objects uniformly with replacement; evict the one
//!         with the smallest freq / (now − enter)
//! ```
//!
//! Source: libCacheSim `cache/eviction/Hyperbolic.c`. It samples through its hash table with its
//! own generator, so figures agree statistically (within 0.01), not bit for bit. Seeded.

use crate::lists::SampleSet;
use crate::policy::{Policy, PolicyCtx, Req};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Hyperbolic.
#[derive(Debug)]
pub struct Hyperbolic {
    cap: u64,
    used: u64,
    samples: u32,
    now: u64,
    resident: SampleSet,
    size: Vec<u32>,
    freq: Vec<u32>,
    enter: Vec<u64>,
    rng: Xoshiro256PlusPlus,
}

impl Hyperbolic {
    /// A Hyperbolic cache sampling `samples` objects per eviction.
    pub fn new(ctx: &PolicyCtx, samples: u32) -> Self {
        let n = ctx.n_objects as usize;
        Hyperbolic {
            cap: ctx.capacity,
            used: 0,
            samples,
            now: 0,
            resident: SampleSet::new(ctx.n_objects),
            size: vec![0; n],
            freq: vec![0; n],
            enter: vec![0; n],
            rng: Xoshiro256PlusPlus::seed_from_u64(ctx.seed),
        }
    }
}

impl Policy for Hyperbolic {
    fn name(&self) -> String {
        "Hyperbolic".into()
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.used
    }
    fn len(&self) -> usize {
        self.resident.len()
    }
    fn access(&mut self, req: &Req) -> bool {
        self.now += 1;
        if self.lookup(req) {
            return true;
        }
        if self.can_insert(req) {
            while self.used + req.size as u64 > self.cap {
                self.evict(req);
            }
            self.insert(req);
        }
        false
    }
    fn lookup(&mut self, req: &Req) -> bool {
        if !self.resident.contains(req.id) {
            return false;
        }
        self.freq[req.id as usize] += 1;
        true
    }
    fn evict(&mut self, _req: &Req) {
        if self.resident.is_empty() {
            return;
        }
        let (mut best, mut best_score) = (0u32, f64::INFINITY);
        for _ in 0..self.samples.max(1) {
            let i = self.rng.random_range(0..self.resident.len());
            let id = self.resident.get(i) as usize;
            let age = (self.now - self.enter[id]) as f64;
            let score = 1.0e8 * self.freq[id] as f64 / age;
            if score < best_score {
                best = id as u32;
                best_score = score;
            }
        }
        let id = best;
        self.resident.remove(id);
        self.used -= self.size[id as usize] as u64;
    }
    fn insert(&mut self, req: &Req) {
        let id = req.id as usize;
        self.resident.insert(req.id);
        self.size[id] = req.size;
        self.freq[id] = 1;
        self.enter[id] = self.now;
        self.used += req.size as u64;
    }
    fn resident(&self) -> Option<Vec<u32>> {
        Some(self.resident.ids().to_vec())
    }
}

//! Random: evict a uniformly random resident object.
//!
//! ```text
//! hit:    nothing
//! insert: add to the resident set
//! evict:  remove a resident object chosen uniformly at random (seeded, reproducible)
//! ```
//!
//! Source: the classic baseline (libCacheSim `cache/eviction/Random.c`; its RNG differs, so
//! numbers match only statistically).

use crate::lists::SampleSet;
use crate::policy::{Policy, PolicyCtx, Req};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Random eviction.
#[derive(Debug)]
pub struct Random {
    cap: u64,
    used: u64,
    resident: SampleSet,
    size: Vec<u32>,
    rng: Xoshiro256PlusPlus,
}

impl Random {
    /// A random-eviction cache.
    pub fn new(ctx: &PolicyCtx) -> Self {
        Random {
            cap: ctx.capacity,
            used: 0,
            resident: SampleSet::new(ctx.n_objects),
            size: vec![0; ctx.n_objects as usize],
            rng: Xoshiro256PlusPlus::seed_from_u64(ctx.seed),
        }
    }
}

impl Policy for Random {
    fn name(&self) -> String {
        "Random".into()
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
    fn lookup(&mut self, req: &Req) -> bool {
        self.resident.contains(req.id)
    }
    fn evict(&mut self, _req: &Req) {
        if self.resident.is_empty() {
            return;
        }
        let id = self.resident.get(self.rng.random_range(0..self.resident.len()));
        self.resident.remove(id);
        self.used -= self.size[id as usize] as u64;
    }
    fn insert(&mut self, req: &Req) {
        self.resident.insert(req.id);
        self.size[req.id as usize] = req.size;
        self.used += req.size as u64;
    }
    fn resident(&self) -> Option<Vec<u32>> {
        Some(self.resident.ids().to_vec())
    }
    fn validate(&self) -> Result<(), String> {
        self.resident.validate().map_err(|e| format!("Random: {e}"))
    }
}

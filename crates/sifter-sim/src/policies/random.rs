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

use crate::policy::{Policy, PolicyCtx, Req};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const ABSENT: u32 = u32::MAX;

/// Random eviction.
#[derive(Debug)]
pub struct Random {
    cap: u64,
    used: u64,
    /// Resident ids, in no order.
    resident: Vec<u32>,
    /// Index of each id in `resident`, or ABSENT.
    pos: Vec<u32>,
    size: Vec<u32>,
    rng: Xoshiro256PlusPlus,
}

impl Random {
    /// A random-eviction cache.
    pub fn new(ctx: &PolicyCtx) -> Self {
        Random {
            cap: ctx.capacity,
            used: 0,
            resident: Vec::new(),
            pos: vec![ABSENT; ctx.n_objects as usize],
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
        self.pos[req.id as usize] != ABSENT
    }
    fn evict(&mut self, _req: &Req) {
        if self.resident.is_empty() {
            return;
        }
        let i = self.rng.random_range(0..self.resident.len());
        let id = self.resident.swap_remove(i);
        if let Some(&moved) = self.resident.get(i) {
            self.pos[moved as usize] = i as u32;
        }
        self.pos[id as usize] = ABSENT;
        self.used -= self.size[id as usize] as u64;
    }
    fn insert(&mut self, req: &Req) {
        self.pos[req.id as usize] = self.resident.len() as u32;
        self.resident.push(req.id);
        self.size[req.id as usize] = req.size;
        self.used += req.size as u64;
    }
    fn validate(&self) -> Result<(), String> {
        for (i, &id) in self.resident.iter().enumerate() {
            if self.pos[id as usize] != i as u32 {
                return Err(format!(
                    "Random: id {id} at {i} but pos says {}",
                    self.pos[id as usize]
                ));
            }
        }
        Ok(())
    }
}

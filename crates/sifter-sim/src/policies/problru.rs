//! Probabilistic LRU: LRU that promotes a hit to the head only with probability 1 − q, so most
//! hits skip the list update (the throughput fix studied in "Can increasing the hit ratio hurt
//! cache throughput?", and libCacheSim's `LRU_Prob`). q = 0 is LRU; q = 1 is FIFO.
//!
//! ```text
//! hit:    with probability 1 − q move to the head, else nothing
//! insert: at the head;  evict: the tail
//! ```
//!
//! Seeded (`seed` parameter plus the run's seed).

use crate::list::{DList, NIL};
use crate::policy::{Policy, PolicyCtx, Req};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Probabilistic LRU.
#[derive(Debug)]
pub struct ProbLru {
    cap: u64,
    used: u64,
    q: f64,
    list: DList<u32>,
    rng: Xoshiro256PlusPlus,
}

impl ProbLru {
    /// A probabilistic LRU skipping a hit's promotion with probability `q`.
    pub fn new(ctx: &PolicyCtx, q: f64) -> Self {
        ProbLru {
            cap: ctx.capacity,
            used: 0,
            q,
            list: DList::new(ctx.n_objects),
            rng: Xoshiro256PlusPlus::seed_from_u64(ctx.seed),
        }
    }
}

impl Policy for ProbLru {
    fn name(&self) -> String {
        format!("ProbLRU({})", self.q)
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.used
    }
    fn len(&self) -> usize {
        self.list.len
    }
    fn lookup(&mut self, req: &Req) -> bool {
        if self.list.nodes[req.id as usize].data == 0 {
            return false;
        }
        if self.q < 1.0 && self.rng.random::<f64>() >= self.q {
            self.list.move_to_head(req.id);
        }
        true
    }
    fn evict(&mut self, _req: &Req) {
        let t = self.list.tail;
        if t != NIL {
            self.list.unlink(t);
            let n = &mut self.list.nodes[t as usize];
            self.used -= n.data as u64;
            n.data = 0;
        }
    }
    fn insert(&mut self, req: &Req) {
        self.list.nodes[req.id as usize].data = req.size;
        self.list.push_head(req.id);
        self.used += req.size as u64;
    }
    fn validate(&self) -> Result<(), String> {
        self.list.validate()
    }
}

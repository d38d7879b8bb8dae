//! LFU with dynamic aging (LFU-DA; Arlitt, Cherkasova, Dilley, Friedrich and Jin, "Evaluating
//! content management techniques for Web proxy caches", 2000): LFU whose keys include an age L
//! that rises to the key of each evicted object, so once-popular objects eventually leave.
//!
//! ```text
//! each object: count C (requests while cached), key K = C + L (L as of its last request)
//! insert: C = 1, K = 1 + L;   hit: C += 1, K = C + L
//! evict:  the smallest K (ties: the one keyed earliest); L = its K
//! ```
//!
//! Difference from libCacheSim `cache/eviction/LFUDA.c`, on purpose: there a hit adds L to the
//! key (`freq += min_freq`) instead of setting it to C + L, so a hit before the first eviction
//! (L = 0) changes nothing and later hits add the age instead of one request; this file follows
//! the paper. (The reference figures in `../shared/reference/` have no LFU-DA rows.)

use crate::policy::{Policy, PolicyCtx, Req};
use std::collections::BTreeSet;

/// LFU-DA.
#[derive(Debug)]
pub struct Lfuda {
    cap: u64,
    used: u64,
    /// The age: the key of the last evicted object.
    age: u64,
    /// Orders keys that tie: the time each key was set.
    clock: u64,
    /// (key, set at, id) of every resident object.
    order: BTreeSet<(u64, u64, u32)>,
    /// Per id: (key, set at), count (0 = not resident), size.
    key: Vec<(u64, u64)>,
    count: Vec<u64>,
    size: Vec<u32>,
}

impl Lfuda {
    /// An LFU-DA cache.
    pub fn new(ctx: &PolicyCtx) -> Self {
        let n = ctx.n_objects as usize;
        Lfuda {
            cap: ctx.capacity,
            used: 0,
            age: 0,
            clock: 0,
            order: BTreeSet::new(),
            key: vec![(0, 0); n],
            count: vec![0; n],
            size: vec![0; n],
        }
    }

    fn set_key(&mut self, id: u32) {
        self.clock += 1;
        let k = (self.count[id as usize] + self.age, self.clock);
        self.key[id as usize] = k;
        self.order.insert((k.0, k.1, id));
    }
}

impl Policy for Lfuda {
    fn name(&self) -> String {
        "LFUDA".into()
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
        let i = req.id as usize;
        if self.count[i] == 0 {
            return false;
        }
        let (k, at) = self.key[i];
        self.order.remove(&(k, at, req.id));
        self.count[i] += 1;
        self.set_key(req.id);
        true
    }
    fn evict(&mut self, _req: &Req) {
        let Some((k, _, id)) = self.order.pop_first() else { return };
        self.age = k;
        self.count[id as usize] = 0;
        self.used -= self.size[id as usize] as u64;
    }
    fn insert(&mut self, req: &Req) {
        let i = req.id as usize;
        self.count[i] = 1;
        self.size[i] = req.size;
        self.used += req.size as u64;
        self.set_key(req.id);
    }
    fn validate(&self) -> Result<(), String> {
        let used: u64 = self.order.iter().map(|&(_, _, id)| self.size[id as usize] as u64).sum();
        if used != self.used {
            return Err(format!("LFUDA: resident bytes {used} != used {}", self.used));
        }
        for &(k, at, id) in &self.order {
            let c = self.count[id as usize];
            if c == 0 || self.key[id as usize] != (k, at) || k < c || k > c + self.age {
                return Err(format!("LFUDA: id {id} key {k} count {c} age {}", self.age));
            }
        }
        Ok(())
    }
}

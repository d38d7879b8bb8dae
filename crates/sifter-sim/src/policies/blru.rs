//! B-LRU: LRU behind a Bloom-filter admission test ("cache on second hit", as in Maggs and
//! Sitaraman, "Algorithmic nuggets in content delivery", SIGCOMM CCR 2015): an object is
//! admitted only if it was requested before, so one-hit wonders never displace cached objects.
//!
//! ```text
//! hit:  LRU hit
//! miss: if the key is in the filter: admit into the LRU (evicting its tail as needed)
//!       else: add the key to the filter; do not admit
//! the filter is cleared after `items` keys have been added (a fresh generation)
//! ```
//!
//! The filter is the `bloomfilter` crate's, sized for `items` keys (default: the cache's capacity
//! in objects, bounded by the trace's object count) at false-positive rate `fp` (0.01), seeded
//! from the run's seed, so runs are reproducible. The crate derives its k bit positions by double
//! hashing, so very small filters (tens of bits) have a higher false-positive rate than asked
//! for. libCacheSim has no B-LRU.

use crate::policies::lru::Lru;
use crate::policy::{Policy, PolicyCtx, Req};
use bloomfilter::Bloom;

/// B-LRU.
pub struct BLru {
    lru: Lru,
    filter: Bloom<u64>,
    items: u64,
    added: u64,
}

impl std::fmt::Debug for BLru {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BLru").field("lru", &self.lru).field("items", &self.items).finish()
    }
}

impl BLru {
    /// A B-LRU cache whose filter holds `items` keys (0: the capacity) at false-positive rate
    /// `fp`.
    pub fn new(ctx: &PolicyCtx, items: u64, fp: f64) -> Result<Self, String> {
        let items = if items == 0 { ctx.capacity.min(ctx.n_objects as u64).max(1) } else { items };
        let filter = Self::filter(items, fp, ctx.seed)?;
        Ok(BLru { lru: Lru::new(ctx), filter, items, added: 0 })
    }

    /// The filter a B-LRU built with this run seed uses (public so tests can model B-LRU with
    /// the very same filter and check the policy logic apart from false positives).
    pub fn filter(items: u64, fp: f64, seed: u64) -> Result<Bloom<u64>, String> {
        let mut bytes = [0u8; 32];
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let word = seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        Bloom::new_for_fp_rate_with_seed(items as usize, fp, &bytes)
            .map_err(|e| format!("B-LRU filter for {items} keys at fp {fp}: {e}"))
    }
}

impl Policy for BLru {
    fn name(&self) -> String {
        "B-LRU".into()
    }
    fn capacity(&self) -> u64 {
        self.lru.capacity()
    }
    fn occupied(&self) -> u64 {
        self.lru.occupied()
    }
    fn len(&self) -> usize {
        self.lru.len()
    }
    fn lookup(&mut self, req: &Req) -> bool {
        self.lru.lookup(req)
    }
    fn evict(&mut self, req: &Req) {
        self.lru.evict(req)
    }
    fn insert(&mut self, req: &Req) {
        self.lru.insert(req)
    }
    fn access(&mut self, req: &Req) -> bool {
        if self.lru.lookup(req) {
            return true;
        }
        if !self.filter.check(&req.key) {
            if self.added == self.items {
                self.filter.clear();
                self.added = 0;
            }
            self.filter.set(&req.key);
            self.added += 1;
            return false;
        }
        // Admitted: LRU's own miss path (its lookup repeats ours; cheap, and only on misses).
        self.lru.access(req)
    }
    fn validate(&self) -> Result<(), String> {
        if self.added > self.items {
            return Err(format!("B-LRU: {} keys in a filter for {}", self.added, self.items));
        }
        self.lru.validate()
    }
}

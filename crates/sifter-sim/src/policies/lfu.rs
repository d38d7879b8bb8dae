//! LFU: evict the least frequently used object; among equals, the one that reached that
//! frequency first. Frequencies count hits while cached and are forgotten on eviction.
//!
//! ```text
//! insert: freq = 1, append to the freq-1 list
//! hit:    move from the list of freq f to the back of the list of f + 1
//! evict:  the front of the non-empty list with the smallest frequency
//! ```
//!
//! Source: libCacheSim `cache/eviction/LFU.c` (frequency lists in a hash map, min-frequency
//! tracking), which this reproduces exactly.

use crate::lists::{FreqLists, NIL};
use crate::policy::{Policy, PolicyCtx, Req};

/// LFU.
#[derive(Debug)]
pub struct Lfu {
    cap: u64,
    used: u64,
    lists: FreqLists,
    size: Vec<u32>,
}

impl Lfu {
    /// An LFU cache.
    pub fn new(ctx: &PolicyCtx) -> Self {
        Lfu {
            cap: ctx.capacity,
            used: 0,
            lists: FreqLists::new(ctx.n_objects),
            size: vec![0; ctx.n_objects as usize],
        }
    }
}

impl Policy for Lfu {
    fn name(&self) -> String {
        "LFU".into()
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.used
    }
    fn len(&self) -> usize {
        self.lists.len()
    }
    fn lookup(&mut self, req: &Req) -> bool {
        if self.lists.freq(req.id) == 0 {
            return false;
        }
        self.lists.bump(req.id);
        true
    }
    fn evict(&mut self, _req: &Req) {
        let id = self.lists.min_front();
        if id == NIL {
            return;
        }
        self.lists.remove(id);
        self.used -= self.size[id as usize] as u64;
    }
    fn insert(&mut self, req: &Req) {
        self.lists.insert(req.id);
        self.size[req.id as usize] = req.size;
        self.used += req.size as u64;
    }
    fn resident(&self) -> Option<Vec<u32>> {
        Some((0..self.size.len() as u32).filter(|&id| self.lists.freq(id) > 0).collect())
    }
    fn validate(&self) -> Result<(), String> {
        self.lists.validate().map_err(|e| format!("LFU: {e}"))
    }
}

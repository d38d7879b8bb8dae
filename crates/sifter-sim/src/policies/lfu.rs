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

use crate::lists::{Ends, Links, NIL};
use crate::policy::{Policy, PolicyCtx, Req};
use hashbrown::HashMap;

/// LFU.
#[derive(Debug)]
pub struct Lfu {
    cap: u64,
    used: u64,
    len: usize,
    links: Links,
    /// Frequency of each id; 0 = not resident.
    freq: Vec<u32>,
    size: Vec<u32>,
    lists: HashMap<u32, Ends>,
    min_freq: u32,
    max_freq: u32,
}

impl Lfu {
    /// An LFU cache.
    pub fn new(ctx: &PolicyCtx) -> Self {
        let mut lists = HashMap::new();
        lists.insert(1, Ends::default());
        Lfu {
            cap: ctx.capacity,
            used: 0,
            len: 0,
            links: Links::new(ctx.n_objects),
            freq: vec![0; ctx.n_objects as usize],
            size: vec![0; ctx.n_objects as usize],
            lists,
            min_freq: 1,
            max_freq: 1,
        }
    }

    fn update_min_freq(&mut self) {
        for f in self.min_freq + 1..=self.max_freq {
            if self.lists.get(&f).is_some_and(|e| e.len > 0) {
                self.min_freq = f;
                return;
            }
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
        self.len
    }
    fn lookup(&mut self, req: &Req) -> bool {
        let f = self.freq[req.id as usize];
        if f == 0 {
            return false;
        }
        let nf = f + 1;
        self.freq[req.id as usize] = nf;
        self.max_freq = self.max_freq.max(nf);
        let mut old = self.lists.remove(&f).unwrap_or_default();
        self.links.unlink(&mut old, req.id, 0);
        let mut new = self.lists.remove(&nf).unwrap_or_default();
        self.links.push_back(&mut new, req.id, 0);
        self.lists.insert(nf, new);
        let emptied = old.len == 0;
        if !emptied || f == 1 {
            self.lists.insert(f, old);
        }
        if emptied && self.min_freq == f {
            self.update_min_freq();
        }
        true
    }
    fn evict(&mut self, _req: &Req) {
        if self.len == 0 {
            return;
        }
        if self.min_freq == 0 {
            self.update_min_freq();
        }
        let f = self.min_freq;
        let Some(e) = self.lists.get_mut(&f) else { return };
        let id = e.front;
        if id == NIL {
            return;
        }
        self.links.unlink(e, id, 0);
        if e.len == 0 {
            self.min_freq = 0;
        }
        self.used -= self.size[id as usize] as u64;
        self.freq[id as usize] = 0;
        self.len -= 1;
    }
    fn insert(&mut self, req: &Req) {
        self.min_freq = 1;
        let e = self.lists.entry(1).or_default();
        self.links.push_back(e, req.id, 0);
        self.freq[req.id as usize] = 1;
        self.size[req.id as usize] = req.size;
        self.used += req.size as u64;
        self.len += 1;
    }
    fn resident(&self) -> Option<Vec<u32>> {
        Some(self.lists.values().flat_map(|e| self.links.ids(e)).collect())
    }
    fn validate(&self) -> Result<(), String> {
        let n: usize = self.lists.values().map(|e| e.len).sum();
        if n != self.len {
            return Err(format!("LFU: lists hold {n}, len {}", self.len));
        }
        for (f, e) in &self.lists {
            for id in self.links.ids(e) {
                if self.freq[id as usize] != *f {
                    return Err(format!(
                        "LFU: id {id} on list {f} has freq {}",
                        self.freq[id as usize]
                    ));
                }
            }
        }
        Ok(())
    }
}

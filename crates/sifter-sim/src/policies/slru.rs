//! Segmented LRU with `n` equal segments (default 4: libCacheSim's `S4LRU(25:25:25:25)`), as
//! libCacheSim's `cache/eviction/SLRU.c`:
//!
//! ```text
//! segments 0 (lowest) .. n-1 (highest), each an LRU of cache/n
//! insert: at the MRU end of the lowest segment with room (else evict until the object fits
//!         and insert into segment 0)
//! hit in segment i < n-1: move to the MRU end of segment i+1; while it is over its size, move
//!         its LRU object down to the MRU end of the segment below (cascading; an overflow of
//!         segment 0 is an eviction)
//! hit in segment n-1: move to its MRU end
//! evict:  the LRU object of the lowest non-empty segment
//! ```
//!
//! Objects larger than one segment are not admitted. Parameter `segments` (4).

use crate::lists::{Ends, Links, NIL};
use crate::policy::{Policy, PolicyCtx, Req};

const NONE: u8 = u8::MAX;

/// SLRU.
#[derive(Debug)]
pub struct Slru {
    cap: u64,
    /// Capacity of each segment.
    seg_caps: Vec<u64>,
    used: u64,
    links: Links,
    /// MRU at the front, LRU at the back.
    segs: Vec<Ends>,
    seg: Vec<u8>,
    size: Vec<u32>,
}

impl Slru {
    /// An SLRU cache with `n` segments (1..=16).
    pub fn new(ctx: &PolicyCtx, n: usize) -> Self {
        Self::with_segments(ctx.capacity, ctx.n_objects, vec![ctx.capacity / n as u64; n])
    }

    /// An SLRU of total capacity `cap` whose segments (lowest first) have the given sizes
    /// (libCacheSim's `seg-size=a:b:...`, sizes `floor(a / sum · cap)`).
    pub fn with_weights(cap: u64, n_objects: u32, weights: &[u64]) -> Self {
        let sum: u64 = weights.iter().sum();
        let caps = weights.iter().map(|&w| (w as f64 / sum as f64 * cap as f64) as u64).collect();
        Self::with_segments(cap, n_objects, caps)
    }

    fn with_segments(cap: u64, n_objects: u32, seg_caps: Vec<u64>) -> Self {
        Slru {
            cap,
            used: 0,
            links: Links::new(n_objects),
            segs: vec![Ends::default(); seg_caps.len()],
            seg_caps,
            seg: vec![NONE; n_objects as usize],
            size: vec![0; n_objects as usize],
        }
    }

    /// Whether `id` is cached.
    pub fn contains(&self, id: u32) -> bool {
        self.seg[id as usize] != NONE
    }

    /// The next victim (the LRU object of the lowest non-empty segment).
    pub fn victim(&self) -> Option<u32> {
        self.segs.iter().find(|e| e.bytes > 0).map(|e| e.back)
    }

    /// Stored size of a cached id.
    pub fn size_of(&self, id: u32) -> u32 {
        self.size[id as usize]
    }

    fn evict_from(&mut self, i: usize) {
        let id = self.segs[i].back;
        let s = self.size[id as usize] as u64;
        self.links.unlink(&mut self.segs[i], id, s);
        self.seg[id as usize] = NONE;
        self.used -= s;
    }

    /// Moves segment `i`'s LRU object down, cascading; segment 0 evicts.
    fn cool(&mut self, i: usize) {
        if i == 0 {
            self.evict_lowest();
            return;
        }
        let id = self.segs[i].back;
        let s = self.size[id as usize] as u64;
        self.links.unlink(&mut self.segs[i], id, s);
        self.links.push_front(&mut self.segs[i - 1], id, s);
        self.seg[id as usize] = (i - 1) as u8;
        while self.segs[i - 1].bytes > self.seg_caps[i - 1] {
            self.cool(i - 1);
        }
    }

    /// Evicts the LRU object of the lowest non-empty segment.
    pub fn evict_lowest(&mut self) {
        if let Some(i) = self.segs.iter().position(|e| e.bytes > 0) {
            self.evict_from(i);
        }
    }
}

impl Policy for Slru {
    fn name(&self) -> String {
        format!("S{}LRU", self.segs.len())
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.used
    }
    fn len(&self) -> usize {
        self.segs.iter().map(|e| e.len).sum()
    }
    fn lookup(&mut self, req: &Req) -> bool {
        let id = req.id;
        let i = self.seg[id as usize];
        if i == NONE {
            return false;
        }
        let (i, s) = (i as usize, self.size[id as usize] as u64);
        let top = self.segs.len() - 1;
        self.links.unlink(&mut self.segs[i], id, s);
        if i == top {
            self.links.push_front(&mut self.segs[i], id, s);
        } else {
            self.links.push_front(&mut self.segs[i + 1], id, s);
            self.seg[id as usize] = (i + 1) as u8;
            while self.segs[i + 1].bytes > self.seg_caps[i + 1] {
                self.cool(i + 1);
            }
        }
        true
    }
    fn can_insert(&self, req: &Req) -> bool {
        req.size as u64 <= self.cap && req.size as u64 <= self.seg_caps[0]
    }
    fn evict(&mut self, _req: &Req) {
        self.evict_lowest();
    }
    fn insert(&mut self, req: &Req) {
        let s = req.size as u64;
        let i = match (0..self.segs.len()).find(|&i| self.segs[i].bytes + s <= self.seg_caps[i]) {
            Some(i) => i,
            None => {
                while self.used + s > self.cap && self.used > 0 {
                    self.evict_lowest();
                }
                0
            }
        };
        self.links.push_front(&mut self.segs[i], req.id, s);
        self.seg[req.id as usize] = i as u8;
        self.size[req.id as usize] = req.size;
        self.used += s;
    }
    fn validate(&self) -> Result<(), String> {
        let mut total = 0;
        for (i, e) in self.segs.iter().enumerate() {
            let ids = self.links.ids(e);
            if ids.len() != e.len || ids.iter().any(|&id| self.seg[id as usize] as usize != i) {
                return Err(format!("SLRU: segment {i} inconsistent"));
            }
            total += e.bytes;
        }
        if total != self.used || self.used > self.cap {
            return Err(format!("SLRU: used {} vs segments {total}", self.used));
        }
        let _ = NIL;
        Ok(())
    }
}

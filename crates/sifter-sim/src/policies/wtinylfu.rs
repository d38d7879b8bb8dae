//! W-TinyLFU (Einziger, Friedman and Manes, "TinyLFU: A Highly Efficient Cache Admission
//! Policy", ACM ToS 2017), as libCacheSim's `cache/eviction/WTinyLFU.c` builds it:
//!
//! ```text
//! window: LRU of 1 % of the cache; main: SLRU of the rest, segments 1:4 (probation, protected)
//! frequency sketch: a counting Bloom filter (10 hashes for 0.1 % error over the main cache's
//!   size; estimate = the smallest counter); halved every 32 × |main| hits in main
//! hit in window: LRU update;  hit in main: SLRU promotion, count the key
//! miss: insert into the window, count the key
//! evict: take the window's LRU object w; if main has room, move w there (and go on);
//!        else compare w with main's victim m: if f(w) > f(m) evict m and move w to main,
//!        else evict w; count w's key each time. An empty window evicts from main.
//! ```
//!
//! libCacheSim's sketch increments every counter of a key (its "minimal increment" test has
//! no effect) and hashes the 8-byte id with XXH64 under two seeds, double hashing in 32-bit
//! arithmetic; this reproduces that, and matches libcachesim 0.3.5's figures exactly (checked
//! by running it). Its 1 % window rounds to 0 below 100 objects, which admits nothing (miss
//! ratio 1.0): a libCacheSim defect we do not copy — the window keeps at least one slot.
//! Objects larger than the window are not admitted.

use crate::lists::{Ends, Links, NIL};
use crate::policies::slru::Slru;
use crate::policy::{Policy, PolicyCtx, Req};
use xxhash_rust::xxh64::xxh64;

const SEED0: u64 = 0x12345678;
const SEED1: u64 = 0x12344321;

/// W-TinyLFU.
#[derive(Debug)]
pub struct WTinyLfu {
    cap: u64,
    window_share: f64,
    window_cap: u64,
    main_cap: u64,
    links: Links,
    /// MRU at the front.
    window: Ends,
    in_window: Vec<bool>,
    size: Vec<u32>,
    keys: Vec<u64>,
    main: Slru,
    cbf: Vec<u32>,
    hashes: u32,
    hits_in_main: u64,
    decay_every: u64,
}

impl WTinyLfu {
    /// A W-TinyLFU cache whose window is `window` of the capacity.
    // libCacheSim's literal ln(2) (0.693147180559945), not f64's LN_2, so the sketch has the
    // same number of hashes and counters.
    #[allow(clippy::approx_constant)]
    pub fn new(ctx: &PolicyCtx, window: f64) -> Self {
        let cap = ctx.capacity;
        // libCacheSim truncates, so below 100 objects its 1 % window is empty and nothing is
        // ever admitted (a defect: miss ratio 1.0). We keep at least one slot.
        let window_cap = ((cap as f64 * window) as u64).max(1).min(cap);
        let main_cap = cap - window_cap;
        let bpe = -(0.001f64.ln()) / 0.480453013918201;
        let hashes = (0.693147180559945 * bpe).ceil() as u32;
        let counters = (bpe * main_cap as f64).ceil().min(i32::MAX as f64) as u32;
        let counters = if counters < hashes { hashes * 2 } else { counters };
        WTinyLfu {
            cap,
            window_share: window,
            window_cap,
            main_cap,
            links: Links::new(ctx.n_objects),
            window: Ends::default(),
            in_window: vec![false; ctx.n_objects as usize],
            size: vec![0; ctx.n_objects as usize],
            keys: vec![0; ctx.n_objects as usize],
            main: Slru::with_weights(main_cap, ctx.n_objects, &[1, 4]),
            cbf: vec![0; counters as usize],
            hashes,
            hits_in_main: 0,
            decay_every: 32 * main_cap,
        }
    }

    fn slots(&self, key: u64) -> impl Iterator<Item = usize> + '_ {
        let bytes = key.to_le_bytes();
        let a = xxh64(&bytes, SEED0) as u32;
        let b = xxh64(&bytes, SEED1) as u32;
        let n = self.cbf.len() as u32;
        (0..self.hashes).map(move |i| (a.wrapping_add(i.wrapping_mul(b)) % n) as usize)
    }

    fn count(&mut self, key: u64) {
        let slots: Vec<usize> = self.slots(key).collect();
        for x in slots {
            self.cbf[x] = self.cbf[x].wrapping_add(1);
        }
    }

    fn estimate(&self, key: u64) -> u32 {
        self.slots(key).map(|x| self.cbf[x]).min().unwrap_or(0)
    }

    fn main_req(&self, id: u32) -> Req {
        Req { id, key: self.keys[id as usize], size: self.size[id as usize], next: 0 }
    }
}

impl Policy for WTinyLfu {
    fn name(&self) -> String {
        format!("WTinyLFU-w{}-SLRU", self.window_share)
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.window.bytes + self.main.occupied()
    }
    fn len(&self) -> usize {
        self.window.len + self.main.len()
    }
    fn lookup(&mut self, req: &Req) -> bool {
        let id = req.id;
        if self.in_window[id as usize] {
            let s = self.size[id as usize] as u64;
            self.links.unlink(&mut self.window, id, s);
            self.links.push_front(&mut self.window, id, s);
            return true;
        }
        if self.main.lookup(req) {
            self.count(req.key);
            self.hits_in_main += 1;
            if self.hits_in_main >= self.decay_every {
                self.hits_in_main = 0;
                for c in &mut self.cbf {
                    *c >>= 1;
                }
            }
            return true;
        }
        false
    }
    fn can_insert(&self, req: &Req) -> bool {
        let s = req.size as u64;
        s <= self.cap && s <= self.window_cap && self.main.can_insert(req)
    }
    fn evict(&mut self, _req: &Req) {
        loop {
            let w = self.window.back;
            if w == NIL {
                self.main.evict_lowest();
                return;
            }
            let (ws, wkey) = (self.size[w as usize] as u64, self.keys[w as usize]);
            let wreq = self.main_req(w);
            let mut evicted = false;
            if self.main.occupied() + ws <= self.main_cap {
                self.links.unlink(&mut self.window, w, ws);
                self.in_window[w as usize] = false;
                self.main.insert(&wreq);
            } else {
                let m = self.main.victim().unwrap_or(NIL);
                let admit = m != NIL && self.estimate(wkey) > self.estimate(self.keys[m as usize]);
                self.links.unlink(&mut self.window, w, ws);
                self.in_window[w as usize] = false;
                if admit {
                    self.main.evict_lowest();
                    self.main.insert(&wreq);
                }
                evicted = true;
            }
            self.count(wkey);
            if evicted {
                return;
            }
        }
    }
    fn insert(&mut self, req: &Req) {
        let id = req.id;
        self.size[id as usize] = req.size;
        self.keys[id as usize] = req.key;
        self.in_window[id as usize] = true;
        self.links.push_front(&mut self.window, id, req.size as u64);
        self.count(req.key);
    }
    fn validate(&self) -> Result<(), String> {
        self.main.validate()?;
        let ids = self.links.ids(&self.window);
        if ids.len() != self.window.len
            || ids.iter().any(|&i| !self.in_window[i as usize] || self.main.contains(i))
        {
            return Err("W-TinyLFU: window inconsistent".into());
        }
        Ok(())
    }
}

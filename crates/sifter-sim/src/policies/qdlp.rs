//! QD-LP (Yang et al., "FIFO can be better than LRU: the power of lazy promotion and quick
//! demotion", HotOS'23), with libCacheSim's defaults (`cache/eviction/QDLP.c`:
//! `QDLP-0.1000-0.9000-Clock2-1`):
//!
//! ```text
//! probation: FIFO, 10 % of the cache;  ghost: FIFO of ids, 90 %;  main: CLOCK with 2-bit
//! counters, the rest of the cache, evicting by its own size
//! hit in probation: count it;  hit in main: counter + 1 (max 3)
//! miss: if the id is in the ghost: drop it there and insert into main (main evicts as needed)
//!       else if size >= |probation|: not admitted, else insert into probation
//! evict: if probation is empty: main evicts (CLOCK: reinsert counted objects, counter − 1)
//!        else take probation's oldest: if it was hit (>= threshold, 1) insert it into main,
//!        else put its id in the ghost; remove it from probation
//! ```

use crate::ghost::GhostFifo;
use crate::policy::{Policy, PolicyCtx, Req};
use std::collections::VecDeque;

const NOWHERE: u8 = 0;
const SMALL: u8 = 1;
const MAIN: u8 = 2;

#[derive(Debug, Clone, Copy, Default)]
struct Meta {
    size: u32,
    at: u8,
    /// Hits while in probation (libCacheSim's generic per-object frequency).
    freq: u32,
    /// Main's CLOCK counter.
    clock: u8,
}

/// QD-LP with a CLOCK main cache.
#[derive(Debug)]
pub struct Qdlp {
    cap: u64,
    small_cap: u64,
    main_cap: u64,
    small_used: u64,
    main_used: u64,
    threshold: u32,
    max_clock: u8,
    small: VecDeque<u32>,
    main: VecDeque<u32>,
    ghost: GhostFifo,
    meta: Vec<Meta>,
    hit_on_ghost: bool,
}

impl Qdlp {
    /// A QD-LP cache.
    pub fn new(ctx: &PolicyCtx, small: f64, ghost: f64, clock_bits: u32, threshold: u32) -> Self {
        let cap = ctx.capacity;
        let small_cap = (cap as f64 * small) as u64;
        Qdlp {
            cap,
            small_cap,
            main_cap: cap - small_cap,
            small_used: 0,
            main_used: 0,
            threshold,
            max_clock: ((1u32 << clock_bits) - 1) as u8,
            small: VecDeque::new(),
            main: VecDeque::new(),
            ghost: GhostFifo::new((cap as f64 * ghost) as u64, ctx.n_objects),
            meta: vec![Meta::default(); ctx.n_objects as usize],
            hit_on_ghost: false,
        }
    }

    fn main_evict(&mut self) {
        while let Some(id) = self.main.pop_front() {
            let m = &mut self.meta[id as usize];
            if m.clock >= 1 {
                m.clock -= 1;
                self.main.push_back(id);
            } else {
                self.main_used -= m.size as u64;
                m.at = NOWHERE;
                return;
            }
        }
    }

    /// libCacheSim's `main_cache->get`: main is a cache of its own size.
    fn main_insert(&mut self, id: u32, size: u32) {
        if size as u64 > self.main_cap {
            return;
        }
        while self.main_used + size as u64 > self.main_cap {
            self.main_evict();
        }
        self.meta[id as usize] = Meta { size, at: MAIN, freq: 0, clock: 0 };
        self.main.push_back(id);
        self.main_used += size as u64;
    }
}

impl Policy for Qdlp {
    fn name(&self) -> String {
        "QDLP".into()
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.small_used + self.main_used
    }
    fn len(&self) -> usize {
        self.small.len() + self.main.len()
    }
    fn lookup(&mut self, req: &Req) -> bool {
        self.hit_on_ghost = false;
        let max_clock = self.max_clock;
        let m = &mut self.meta[req.id as usize];
        match m.at {
            SMALL => {
                m.freq += 1;
                true
            }
            MAIN => {
                m.clock = (m.clock + 1).min(max_clock);
                true
            }
            _ => {
                self.hit_on_ghost = self.ghost.remove(req.id);
                false
            }
        }
    }
    fn can_insert(&self, req: &Req) -> bool {
        req.size as u64 <= self.small_cap && req.size as u64 <= self.cap
    }
    fn evict(&mut self, _req: &Req) {
        if self.small_used == 0 {
            self.main_evict();
            return;
        }
        let Some(id) = self.small.pop_front() else { return };
        let m = self.meta[id as usize];
        self.small_used -= m.size as u64;
        self.meta[id as usize].at = NOWHERE;
        if m.freq >= self.threshold {
            self.main_insert(id, m.size);
        } else {
            self.ghost.insert(id, m.size);
        }
    }
    fn insert(&mut self, req: &Req) {
        if self.hit_on_ghost {
            self.hit_on_ghost = false;
            self.main_insert(req.id, req.size);
        } else if (req.size as u64) < self.small_cap {
            self.meta[req.id as usize] = Meta { size: req.size, at: SMALL, freq: 0, clock: 0 };
            self.small.push_back(req.id);
            self.small_used += req.size as u64;
        }
    }
    fn validate(&self) -> Result<(), String> {
        self.ghost.validate()?;
        let sum = |q: &VecDeque<u32>, tag| -> Result<u64, String> {
            q.iter().try_fold(0, |acc, &id| {
                if self.meta[id as usize].at != tag {
                    return Err(format!("QDLP: id {id} on queue {tag} tagged otherwise"));
                }
                Ok(acc + self.meta[id as usize].size as u64)
            })
        };
        if sum(&self.small, SMALL)? != self.small_used || sum(&self.main, MAIN)? != self.main_used {
            return Err("QDLP: byte counters disagree".into());
        }
        if self.main_used > self.main_cap || self.occupied() > self.cap {
            return Err("QDLP: over capacity".into());
        }
        Ok(())
    }
}

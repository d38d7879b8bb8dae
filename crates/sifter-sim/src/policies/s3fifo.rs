//! S3-FIFO (Yang et al., "FIFO queues are all you need for cache eviction", SOSP'23).
//!
//! Three FIFO queues: a small queue S (10 % of the cache), a main queue M (the rest) and a ghost
//! queue G of recently evicted ids (capacity 90 % of the cache, each entry charged the object's
//! size). With libCacheSim's defaults (`cache/eviction/S3FIFO.c`), which this reproduces:
//!
//! ```text
//! hit in S or M:   freq += 1                         (capped at 3 when reinserted in M)
//! miss:            if id in G: remove it from G; insert into M with freq 0
//!                  else if size >= |S|: not admitted (evictions still made room first)
//!                  else insert into S with freq 0
//! evict:           if M is over its size or S is empty: evict from M, else from S
//!   from S, until an object is evicted:
//!                  t = tail(S); if freq(t) >= threshold (2): move t to M with freq 0
//!                  else: put id(t) in G (G drops its oldest entries to fit); evict t
//!   from M, until an object is evicted:
//!                  t = tail(M); if freq(t) >= 1: reinsert t at M's head, freq = min(freq, 3) - 1
//!                  else: evict t (not put in G)
//! ```
//!
//! Parameters: `small` (0.10), `ghost` (0.90), `threshold` (move-to-main threshold, 2), and
//! `warmup-to-main` (default false). With `true`, a miss arriving before the first eviction
//! while S is full goes straight to M: a rule of libCacheSim's *later* `S3FIFO.c` (Dec. 2024).
//! The reference figures in `../shared/reference/` (libCacheSim commit aa0fc40, Oct. 2024) are
//! reproduced exactly only without it (checked: with it, 30 of the reference rows move by up
//! to 0.026), so the default follows the paper's Algorithm 1 and the reference.
//! Sizes are truncated as libCacheSim does: |S| = floor(cap × small), |M| = cap − |S|,
//! |G| = floor(cap × ghost).

use crate::ghost::GhostFifo;
use crate::policy::{Policy, PolicyCtx, Req};
use std::collections::VecDeque;

const NOWHERE: u8 = 0;
const SMALL: u8 = 1;
const MAIN: u8 = 2;

#[derive(Debug, Clone, Copy, Default)]
struct Meta {
    size: u32,
    freq: u8,
    queue: u8,
}

/// S3-FIFO.
#[derive(Debug)]
pub struct S3Fifo {
    cap: u64,
    small_cap: u64,
    main_cap: u64,
    small_used: u64,
    main_used: u64,
    threshold: u8,
    warmup_to_main: bool,
    has_evicted: bool,
    hit_on_ghost: bool,
    small: VecDeque<u32>,
    main: VecDeque<u32>,
    ghost: GhostFifo,
    meta: Vec<Meta>,
    small_ratio: f64,
}

impl S3Fifo {
    /// An S3-FIFO cache.
    pub fn new(
        ctx: &PolicyCtx,
        small: f64,
        ghost: f64,
        threshold: u8,
        warmup_to_main: bool,
    ) -> Self {
        let cap = ctx.capacity;
        // libCacheSim: (int64_t)cache_size * ratio, truncated.
        let small_cap = (cap as f64 * small) as u64;
        S3Fifo {
            cap,
            small_cap,
            main_cap: cap - small_cap,
            small_used: 0,
            main_used: 0,
            threshold,
            warmup_to_main,
            has_evicted: false,
            hit_on_ghost: false,
            small: VecDeque::new(),
            main: VecDeque::new(),
            ghost: GhostFifo::new((cap as f64 * ghost) as u64, ctx.n_objects),
            meta: vec![Meta::default(); ctx.n_objects as usize],
            small_ratio: small,
        }
    }

    fn evict_small(&mut self) {
        while let Some(id) = self.small.pop_front() {
            let m = self.meta[id as usize];
            self.small_used -= m.size as u64;
            if m.freq >= self.threshold {
                self.meta[id as usize].queue = MAIN;
                self.meta[id as usize].freq = 0;
                self.main.push_back(id);
                self.main_used += m.size as u64;
            } else {
                self.meta[id as usize].queue = NOWHERE;
                self.meta[id as usize].freq = 0;
                self.ghost.insert(id, m.size);
                return;
            }
        }
    }

    fn evict_main(&mut self) {
        while let Some(id) = self.main.pop_front() {
            let m = &mut self.meta[id as usize];
            if m.freq >= 1 {
                m.freq = m.freq.min(3) - 1;
                self.main.push_back(id);
            } else {
                self.main_used -= m.size as u64;
                m.queue = NOWHERE;
                return;
            }
        }
    }
}

impl Policy for S3Fifo {
    fn name(&self) -> String {
        let w2m = if self.warmup_to_main { ",w2m" } else { "" };
        format!("S3-FIFO({:.2},{}{w2m})", self.small_ratio, self.threshold)
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
    #[inline]
    fn lookup(&mut self, req: &Req) -> bool {
        self.hit_on_ghost = false;
        let m = &mut self.meta[req.id as usize];
        if m.queue != NOWHERE {
            m.freq = m.freq.saturating_add(1);
            return true;
        }
        self.hit_on_ghost = self.ghost.remove(req.id);
        false
    }
    fn can_insert(&self, req: &Req) -> bool {
        req.size as u64 <= self.small_cap && req.size as u64 <= self.cap
    }
    #[inline]
    fn evict(&mut self, _req: &Req) {
        self.has_evicted = true;
        if self.main_used > self.main_cap || self.small_used == 0 {
            self.evict_main();
        } else {
            self.evict_small();
        }
    }
    #[inline]
    fn insert(&mut self, req: &Req) {
        let to_main = if self.hit_on_ghost {
            self.hit_on_ghost = false;
            true
        } else if req.size as u64 >= self.small_cap {
            return;
        } else {
            self.warmup_to_main && !self.has_evicted && self.small_used >= self.small_cap
        };
        let m = &mut self.meta[req.id as usize];
        m.size = req.size;
        m.freq = 0;
        if to_main {
            m.queue = MAIN;
            self.main.push_back(req.id);
            self.main_used += req.size as u64;
        } else {
            m.queue = SMALL;
            self.small.push_back(req.id);
            self.small_used += req.size as u64;
        }
    }
    fn validate(&self) -> Result<(), String> {
        let sum = |q: &VecDeque<u32>, tag: u8| -> Result<u64, String> {
            let mut s = 0;
            for &id in q {
                if self.meta[id as usize].queue != tag {
                    return Err(format!(
                        "S3-FIFO: id {id} on queue {tag} tagged {}",
                        self.meta[id as usize].queue
                    ));
                }
                s += self.meta[id as usize].size as u64;
            }
            Ok(s)
        };
        if sum(&self.small, SMALL)? != self.small_used || sum(&self.main, MAIN)? != self.main_used {
            return Err("S3-FIFO: queue byte counters disagree with the queues".into());
        }
        self.ghost.validate()?;
        if self.occupied() > self.cap {
            return Err("S3-FIFO: over capacity".into());
        }
        Ok(())
    }
}

//! CLOCK (FIFO-Reinsertion, second chance) and GCLOCK (n-bit counters).
//!
//! ```text
//! hit:    freq = min(freq + 1, 2^bits - 1)
//! insert: push at the head with freq = 0
//! evict:  loop { t = tail; if freq(t) >= 1 { freq(t) -= 1; move t to the head } else { evict t; break } }
//! ```
//!
//! `bits = 1` is CLOCK; larger counters give Generalized CLOCK (Smith 1978; Nishikawa et al.),
//! which the multi-step LRU paper compares against. Source: libCacheSim
//! `cache/eviction/Clock.c` (`n-bit-counter`), which this reproduces exactly.

use crate::policy::{Policy, PolicyCtx, Req};
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, Default)]
struct Meta {
    /// Stored size; 0 = not resident.
    size: u32,
    freq: u32,
}

/// CLOCK / GCLOCK.
#[derive(Debug)]
pub struct Clock {
    cap: u64,
    used: u64,
    bits: u32,
    max_freq: u32,
    /// Resident ids, oldest (the hand) at the front.
    queue: VecDeque<u32>,
    meta: Vec<Meta>,
}

impl Clock {
    /// A CLOCK with `bits`-bit counters (1..=16).
    pub fn new(ctx: &PolicyCtx, bits: u32) -> Self {
        assert!((1..=16).contains(&bits), "validated by the registry");
        Clock {
            cap: ctx.capacity,
            used: 0,
            bits,
            max_freq: (1 << bits) - 1,
            queue: VecDeque::new(),
            meta: vec![Meta::default(); ctx.n_objects as usize],
        }
    }
}

impl Policy for Clock {
    fn name(&self) -> String {
        if self.bits == 1 {
            "CLOCK".into()
        } else {
            format!("GCLOCK-{}", self.bits)
        }
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.used
    }
    fn len(&self) -> usize {
        self.queue.len()
    }
    #[inline]
    fn lookup(&mut self, req: &Req) -> bool {
        let m = &mut self.meta[req.id as usize];
        if m.size == 0 {
            return false;
        }
        if m.freq < self.max_freq {
            m.freq += 1;
        }
        true
    }
    #[inline]
    fn evict(&mut self, _req: &Req) {
        while let Some(id) = self.queue.pop_front() {
            let m = &mut self.meta[id as usize];
            if m.freq >= 1 {
                m.freq -= 1;
                self.queue.push_back(id);
            } else {
                self.used -= m.size as u64;
                m.size = 0;
                return;
            }
        }
    }
    #[inline]
    fn insert(&mut self, req: &Req) {
        self.meta[req.id as usize] = Meta { size: req.size, freq: 0 };
        self.queue.push_back(req.id);
        self.used += req.size as u64;
    }
    fn resident(&self) -> Option<Vec<u32>> {
        Some(self.queue.iter().copied().collect())
    }
    fn validate(&self) -> Result<(), String> {
        let sum: u64 = self.queue.iter().map(|&id| self.meta[id as usize].size as u64).sum();
        if sum != self.used || self.used > self.cap {
            return Err(format!("CLOCK: used {} but queue sums {sum}", self.used));
        }
        if self.queue.iter().any(|&id| self.meta[id as usize].freq > self.max_freq) {
            return Err("CLOCK: counter above its maximum".into());
        }
        Ok(())
    }
}

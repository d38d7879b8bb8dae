//! FIFO: evict the object inserted longest ago; hits change nothing.
//!
//! ```text
//! hit:    nothing
//! insert: push at the head of the queue
//! evict:  pop the tail
//! ```
//!
//! Source: the classic policy; libCacheSim `cache/eviction/FIFO.c`.

use crate::policy::{Policy, PolicyCtx, Req};
use std::collections::VecDeque;

/// FIFO.
#[derive(Debug)]
pub struct Fifo {
    cap: u64,
    used: u64,
    /// Resident ids, oldest at the front.
    queue: VecDeque<u32>,
    /// Stored size of each id; 0 = not resident.
    size: Vec<u32>,
}

impl Fifo {
    /// A FIFO cache.
    pub fn new(ctx: &PolicyCtx) -> Self {
        Fifo {
            cap: ctx.capacity,
            used: 0,
            queue: VecDeque::new(),
            size: vec![0; ctx.n_objects as usize],
        }
    }
}

impl Policy for Fifo {
    fn name(&self) -> String {
        "FIFO".into()
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
        self.size[req.id as usize] != 0
    }
    #[inline]
    fn evict(&mut self, _req: &Req) {
        if let Some(id) = self.queue.pop_front() {
            self.used -= self.size[id as usize] as u64;
            self.size[id as usize] = 0;
        }
    }
    #[inline]
    fn insert(&mut self, req: &Req) {
        self.queue.push_back(req.id);
        self.size[req.id as usize] = req.size;
        self.used += req.size as u64;
    }
    fn resident(&self) -> Option<Vec<u32>> {
        Some(self.queue.iter().copied().collect())
    }
    fn validate(&self) -> Result<(), String> {
        let sum: u64 = self.queue.iter().map(|&id| self.size[id as usize] as u64).sum();
        let resident = self.size.iter().filter(|&&s| s != 0).count();
        if sum != self.used || resident != self.queue.len() || self.used > self.cap {
            return Err(format!(
                "FIFO: used {} (queue sums {sum}), {resident} resident vs {} queued",
                self.used,
                self.queue.len()
            ));
        }
        Ok(())
    }
}

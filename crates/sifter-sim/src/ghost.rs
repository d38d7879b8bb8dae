//! A ghost FIFO: ids (with the size they are charged) of recently evicted objects, bounded by a
//! capacity in the cache's unit. libCacheSim builds these from a FIFO cache ("`ghost->get`":
//! insert unless present, dropping the oldest entries to fit; an entry larger than the ghost is
//! not inserted). Removal from the middle (a ghost hit) is lazy: entries carry a stamp and stale
//! ones are skipped and compacted away.

use std::collections::VecDeque;

/// The ghost FIFO.
#[derive(Debug)]
pub struct GhostFifo {
    cap: u64,
    used: u64,
    live: usize,
    stamp: u32,
    /// (id, stamp); live iff `stamps[id] == stamp`.
    queue: VecDeque<(u32, u32)>,
    /// Stamp of each id's live entry, 0 = absent.
    stamps: Vec<u32>,
    sizes: Vec<u32>,
}

impl GhostFifo {
    /// A ghost of capacity `cap` for ids `0..n`.
    pub fn new(cap: u64, n: u32) -> Self {
        GhostFifo {
            cap,
            used: 0,
            live: 0,
            stamp: 0,
            queue: VecDeque::new(),
            stamps: vec![0; n as usize],
            sizes: vec![0; n as usize],
        }
    }

    /// Whether `id` is in the ghost.
    pub fn contains(&self, id: u32) -> bool {
        self.stamps[id as usize] != 0
    }

    /// Removes `id`; true if it was there.
    pub fn remove(&mut self, id: u32) -> bool {
        if self.stamps[id as usize] == 0 {
            return false;
        }
        self.stamps[id as usize] = 0;
        self.used -= self.sizes[id as usize] as u64;
        self.live -= 1;
        if self.queue.len() > 2 * self.live + 1024 {
            let stamps = &self.stamps;
            self.queue.retain(|&(g, s)| stamps[g as usize] == s);
        }
        true
    }

    /// Inserts `id` charged `size`, unless present or larger than the ghost.
    pub fn insert(&mut self, id: u32, size: u32) {
        if self.stamps[id as usize] != 0 || size as u64 > self.cap {
            return;
        }
        while self.used + size as u64 > self.cap {
            let Some((g, s)) = self.queue.pop_front() else { break };
            if self.stamps[g as usize] == s {
                self.stamps[g as usize] = 0;
                self.used -= self.sizes[g as usize] as u64;
                self.live -= 1;
            }
        }
        self.stamp = self.stamp.wrapping_add(1).max(1);
        self.stamps[id as usize] = self.stamp;
        self.sizes[id as usize] = size;
        self.queue.push_back((id, self.stamp));
        self.used += size as u64;
        self.live += 1;
    }

    /// Checks the counters against the queue.
    pub fn validate(&self) -> Result<(), String> {
        let live = self.queue.iter().filter(|&&(g, s)| self.stamps[g as usize] == s).count();
        let used: u64 = self
            .queue
            .iter()
            .filter(|&&(g, s)| self.stamps[g as usize] == s)
            .map(|&(g, _)| self.sizes[g as usize] as u64)
            .sum();
        if live != self.live || used != self.used || (self.cap > 0 && self.used > self.cap) {
            return Err(format!(
                "ghost: {live} live / {used} bytes, counters {} / {}",
                self.live, self.used
            ));
        }
        Ok(())
    }
}

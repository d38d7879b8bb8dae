//! Belady's MIN (optimal in object mode): evict the object whose next request is furthest in
//! the future; objects never requested again go first.
//!
//! ```text
//! hit:    update the object's next-access position
//! insert: record its next-access position
//! evict:  remove the object with the largest next-access position
//! ```
//!
//! Source: Belady, "A study of replacement algorithms for a virtual-storage computer", IBM
//! Systems Journal 1966; libCacheSim `cache/eviction/Belady.c` (a max-heap on next access).
//! Next-access positions come from a pre-pass over the decoded trace
//! ([`crate::trace::LoadedTrace::next_access`], or the streaming sweep's reverse pass in
//! [`crate::stream`]), never from the trace file's own field. In byte
//! mode it still ignores sizes (as libCacheSim's `belady`), so it is not byte-optimal.

use crate::policy::{Policy, PolicyCtx, Req};
use std::collections::BinaryHeap;

/// Belady.
#[derive(Debug)]
pub struct Belady {
    cap: u64,
    used: u64,
    len: usize,
    /// Max-heap of (next access, id); an entry is live iff the id is resident and its
    /// `next` equals the entry's (positions are unique, so a stale entry never matches).
    heap: BinaryHeap<(u64, u32)>,
    next: Vec<u64>,
    size: Vec<u32>,
}

impl Belady {
    /// A Belady cache.
    pub fn new(ctx: &PolicyCtx) -> Self {
        Belady {
            cap: ctx.capacity,
            used: 0,
            len: 0,
            heap: BinaryHeap::new(),
            next: vec![0; ctx.n_objects as usize],
            size: vec![0; ctx.n_objects as usize],
        }
    }

    fn compact(&mut self) {
        if self.heap.len() > 4 * self.len + 4096 {
            let (next, size) = (&self.next, &self.size);
            self.heap.retain(|&(n, id)| size[id as usize] != 0 && next[id as usize] == n);
        }
    }
}

impl Policy for Belady {
    fn name(&self) -> String {
        "Belady".into()
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
    fn needs_next_access(&self) -> bool {
        true
    }
    fn lookup(&mut self, req: &Req) -> bool {
        if self.size[req.id as usize] == 0 {
            return false;
        }
        self.next[req.id as usize] = req.next;
        self.heap.push((req.next, req.id));
        self.compact();
        true
    }
    fn evict(&mut self, _req: &Req) {
        while let Some((n, id)) = self.heap.pop() {
            if self.size[id as usize] != 0 && self.next[id as usize] == n {
                self.used -= self.size[id as usize] as u64;
                self.size[id as usize] = 0;
                self.len -= 1;
                return;
            }
        }
    }
    fn insert(&mut self, req: &Req) {
        self.size[req.id as usize] = req.size;
        self.next[req.id as usize] = req.next;
        self.heap.push((req.next, req.id));
        self.used += req.size as u64;
        self.len += 1;
        self.compact();
    }
}

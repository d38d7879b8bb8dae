//! SIEVE (Zhang et al., "SIEVE is Simpler than LRU", NSDI'24, Algorithm 1).
//!
//! ```text
//! hit:    visited = 1                         (no list change)
//! insert: push at the head, visited = 0
//! evict:  o = hand, or the tail if hand is null
//!         while visited(o): visited(o) = 0; o = o.prev (towards the head), wrapping to the tail
//!         hand = o.prev; remove o
//! ```
//!
//! The hand keeps its position between evictions; new objects enter at the head, so the hand
//! sweeps from old to new and "sifts" out unpopular objects without moving survivors. This is
//! libCacheSim's `cache/eviction/Sieve.c`, which the paper's results come from: when the evicted
//! object was the head, the hand becomes null and the next eviction starts at the tail.

use crate::list::{DList, NIL};
use crate::policy::{Policy, PolicyCtx, Req};

#[derive(Debug, Clone, Copy, Default)]
struct Meta {
    /// Stored size; 0 = not resident.
    size: u32,
    visited: bool,
}

/// SIEVE.
#[derive(Debug)]
pub struct Sieve {
    cap: u64,
    used: u64,
    list: DList<Meta>,
    /// The hand: next object to examine, or NIL (start at the tail).
    hand: u32,
}

impl Sieve {
    /// A SIEVE cache.
    pub fn new(ctx: &PolicyCtx) -> Self {
        Sieve { cap: ctx.capacity, used: 0, list: DList::new(ctx.n_objects), hand: NIL }
    }

    /// The id the hand rests on (None: the next eviction starts at the tail).
    pub fn hand(&self) -> Option<u32> {
        (self.hand != NIL).then_some(self.hand)
    }

    /// The hand's position counted in objects from the tail (0 = at the tail, as when it rests
    /// nowhere), for the SIEVE paper's hand-position analysis (Fig. 9c). Walks the list: O(len).
    pub fn hand_position(&self) -> usize {
        if self.hand == NIL {
            return 0;
        }
        let (mut o, mut pos) = (self.list.tail, 0);
        while o != NIL && o != self.hand {
            o = self.list.nodes[o as usize].prev;
            pos += 1;
        }
        pos
    }
}

impl Policy for Sieve {
    fn name(&self) -> String {
        "SIEVE".into()
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.used
    }
    fn len(&self) -> usize {
        self.list.len
    }
    #[inline]
    fn lookup(&mut self, req: &Req) -> bool {
        let m = &mut self.list.nodes[req.id as usize].data;
        if m.size == 0 {
            return false;
        }
        m.visited = true;
        true
    }
    #[inline]
    fn evict(&mut self, _req: &Req) {
        if self.list.tail == NIL {
            return;
        }
        let mut o = if self.hand == NIL { self.list.tail } else { self.hand };
        loop {
            let node = &mut self.list.nodes[o as usize];
            if !node.data.visited {
                break;
            }
            node.data.visited = false;
            o = if node.prev == NIL { self.list.tail } else { node.prev };
        }
        self.hand = self.list.nodes[o as usize].prev;
        self.list.unlink(o);
        let m = &mut self.list.nodes[o as usize].data;
        self.used -= m.size as u64;
        *m = Meta::default();
    }
    #[inline]
    fn insert(&mut self, req: &Req) {
        self.list.nodes[req.id as usize].data = Meta { size: req.size, visited: false };
        self.list.push_head(req.id);
        self.used += req.size as u64;
    }
    fn resident(&self) -> Option<Vec<u32>> {
        Some(self.list.ids())
    }
    fn validate(&self) -> Result<(), String> {
        self.list.validate()?;
        let ids = self.list.ids();
        let sum: u64 = ids.iter().map(|&i| self.list.nodes[i as usize].data.size as u64).sum();
        if sum != self.used || self.used > self.cap {
            return Err(format!("SIEVE: used {} but list sums {sum}", self.used));
        }
        if self.hand != NIL && !ids.contains(&self.hand) {
            return Err("SIEVE: hand points at an object not in the list".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_position_counts_from_the_tail() {
        let mut s = Sieve::new(&PolicyCtx { capacity: 3, n_objects: 8, seed: 0 });
        let req = |id: u32| Req { id, key: id as u64, size: 1, next: 0 };
        for id in [0, 1, 2] {
            s.access(&req(id)); // list, head to tail: 2 1 0
        }
        assert_eq!(s.hand_position(), 0);
        s.access(&req(0)); // visited
        s.access(&req(3)); // the hand clears 0, evicts 1, rests on 2: list 3 2 0
        assert_eq!(s.hand(), Some(2));
        assert_eq!(s.hand_position(), 1);
        s.access(&req(4)); // evicts 2 (unvisited), rests on 3: list 4 3 0
        assert_eq!((s.hand(), s.hand_position()), (Some(3), 1));
    }
}

//! LRU: evict the least recently used object.
//!
//! ```text
//! hit:    move the object to the head
//! insert: push at the head
//! evict:  remove the tail
//! ```
//!
//! Source: the classic policy; libCacheSim `cache/eviction/LRU.c`.

use crate::list::DList;
use crate::policy::{Policy, PolicyCtx, Req};

/// LRU.
#[derive(Debug)]
pub struct Lru {
    cap: u64,
    used: u64,
    /// Node data: stored size, 0 = not resident.
    list: DList<u32>,
}

impl Lru {
    /// An LRU cache.
    pub fn new(ctx: &PolicyCtx) -> Self {
        Lru { cap: ctx.capacity, used: 0, list: DList::new(ctx.n_objects) }
    }
}

impl Policy for Lru {
    fn name(&self) -> String {
        "LRU".into()
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
        if self.list.nodes[req.id as usize].data == 0 {
            return false;
        }
        self.list.move_to_head(req.id);
        true
    }
    #[inline]
    fn evict(&mut self, _req: &Req) {
        let t = self.list.tail;
        if t != crate::list::NIL {
            self.list.unlink(t);
            let n = &mut self.list.nodes[t as usize];
            self.used -= n.data as u64;
            n.data = 0;
        }
    }
    #[inline]
    fn insert(&mut self, req: &Req) {
        self.list.nodes[req.id as usize].data = req.size;
        self.list.push_head(req.id);
        self.used += req.size as u64;
    }
    fn resident(&self) -> Option<Vec<u32>> {
        Some(self.list.ids())
    }
    fn validate(&self) -> Result<(), String> {
        self.list.validate()?;
        let sum: u64 =
            self.list.ids().iter().map(|&i| self.list.nodes[i as usize].data as u64).sum();
        if sum != self.used || self.used > self.cap {
            return Err(format!("LRU: used {} but list sums {sum}", self.used));
        }
        Ok(())
    }
}

//! Lock-based baselines on the same slots and index: SIEVE as in the SIEVE paper's CacheLib
//! prototype, and LRU with one global lock.
//!
//! Both keep a doubly linked list of slot numbers under one mutex (the links live inside the
//! mutex, one pair per slot of the arena).
//!
//! **SIEVE** (Zhang et al., NSDI'24, Alg. 1; CacheLib `MMSieve`): insert links at the head under
//! the lock; a hit sets the visited bit *without* the lock; eviction runs the hand under the
//! lock — from the tail towards the head, clearing visited bits and wrapping, evicting the first
//! unvisited (or removed) slot and leaving the hand at its newer neighbour — exactly the
//! simulator's SIEVE.
//!
//! **LRU**: every hit takes the lock and moves the slot to the head; eviction takes the tail.
//! This is the classic baseline whose per-hit lock the papers show does not scale.
//!
//! A removed slot is unlinked at once (under the lock), so these policies hold no removed
//! entries once `remove` returns.

use crate::policy::queues::Nodes;
use crate::raw::table::{AllocError, Table};
use crate::sync::Mutex;
use crate::sync::Ordering;
use crossbeam_utils::CachePadded;

const NIL: u32 = u32::MAX;
/// `prev` of a slot not in the list.
const OUT: u32 = u32::MAX - 1;

/// Per slot: towards the head (newer, or NIL; OUT for a slot not in the list), towards the
/// tail (older, or NIL). Stored as `[prev ^ OUT, next ^ NIL]`, so that zero bytes are a slot
/// not in the list and a large list is allocated zeroed, its pages committed as it is
/// written (as the arena's, `raw/table.rs`, "Large tables").
#[derive(Debug)]
struct Links(Table<[u32; 2]>);

impl Links {
    /// Links for `slots` slots, none in the list; an error if the allocator refuses them.
    fn new(slots: usize) -> Result<Self, AllocError> {
        // SAFETY: `[0, 0]` is all zero bytes, and `[u32; 2]` has no drop glue.
        Ok(Links(unsafe { Table::zeroed(slots, || [0; 2]) }?))
    }

    #[inline]
    fn get(&self, i: u32) -> [u32; 2] {
        let [p, n] = self.0[i as usize];
        [p ^ OUT, n ^ NIL]
    }

    #[inline]
    fn prev(&self, i: u32) -> u32 {
        self.0[i as usize][0] ^ OUT
    }

    #[inline]
    fn next(&self, i: u32) -> u32 {
        self.0[i as usize][1] ^ NIL
    }

    #[inline]
    fn set(&mut self, i: u32, [p, n]: [u32; 2]) {
        self.0[i as usize] = [p ^ OUT, n ^ NIL];
    }

    #[inline]
    fn set_prev(&mut self, i: u32, p: u32) {
        self.0[i as usize][0] = p ^ OUT;
    }

    #[inline]
    fn set_next(&mut self, i: u32, n: u32) {
        self.0[i as usize][1] = n ^ NIL;
    }
}

#[derive(Debug)]
struct List {
    /// Per slot: towards the head (newer), towards the tail (older).
    links: Links,
    /// Newest.
    head: u32,
    /// Oldest.
    tail: u32,
    /// SIEVE's hand, or NIL (start at the tail).
    hand: u32,
    len: usize,
}

/// Which discipline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Sieve,
    Lru,
}

/// SIEVE or LRU under one lock.
#[derive(Debug)]
pub(crate) struct Locked {
    /// On lines of its own: every promotion and insert writes the lock word and the list's
    /// ends, and the lines beside them in the cache hold fields every lookup reads.
    list: CachePadded<Mutex<List>>,
    kind: Kind,
}

impl List {
    fn push_head(&mut self, i: u32) {
        self.links.set(i, [NIL, self.head]);
        if self.head != NIL {
            self.links.set_prev(self.head, i);
        } else {
            self.tail = i;
        }
        self.head = i;
        self.len += 1;
    }

    fn unlink(&mut self, i: u32) {
        let [prev, next] = self.links.get(i);
        if prev != NIL {
            self.links.set_next(prev, next);
        } else {
            self.head = next;
        }
        if next != NIL {
            self.links.set_prev(next, prev);
        } else {
            self.tail = prev;
        }
        if self.hand == i {
            self.hand = prev;
        }
        self.links.set(i, [OUT, NIL]);
        self.len -= 1;
    }
}

impl Locked {
    /// A list for `slots` slots; an error if the allocator refuses its links.
    pub fn new(kind: Kind, slots: usize) -> Result<Self, AllocError> {
        let links = Links::new(slots)?;
        Ok(Locked {
            list: CachePadded::new(Mutex::new(List {
                links,
                head: NIL,
                tail: NIL,
                hand: NIL,
                len: 0,
            })),
            kind,
        })
    }

    /// Links slot `i` (in no list) at the head.
    pub fn insert(&self, i: u32) {
        self.list.lock().push_head(i);
    }

    /// A hit on slot `i`: LRU moves it to the head under the lock; SIEVE only sets the bit
    /// (done by the caller, lock-free).
    #[inline]
    pub fn on_hit_lru(&self, i: u32) {
        let mut l = self.list.lock();
        if l.links.prev(i) != OUT && l.head != i {
            l.unlink(i);
            l.push_head(i);
        }
    }

    /// Unlinks slot `i` if the list still holds it; true if it did (the caller now owns it).
    pub fn remove(&self, i: u32) -> bool {
        let mut l = self.list.lock();
        if l.links.prev(i) == OUT {
            return false;
        }
        l.unlink(i);
        true
    }

    /// Picks and unlinks a victim.
    pub fn evict<N: Nodes>(&self, n: &N) -> Option<u32> {
        let mut l = self.list.lock();
        if l.tail == NIL {
            return None;
        }
        let victim = match self.kind {
            Kind::Lru => l.tail,
            Kind::Sieve => {
                let mut o = if l.hand == NIL { l.tail } else { l.hand };
                // Relaxed: hint bits (see `Cache::get`).
                while n.marked(o, 1) {
                    n.visited(o).store(0, Ordering::Relaxed);
                    let prev = l.links.prev(o);
                    o = if prev == NIL { l.tail } else { prev };
                }
                o
            }
        };
        let newer = l.links.prev(victim);
        l.unlink(victim);
        if self.kind == Kind::Sieve {
            l.hand = newer;
        }
        Some(victim)
    }

    /// Slots head to tail (quiescent validation).
    pub fn items(&self) -> Result<Vec<u32>, String> {
        let l = self.list.lock();
        let mut out = Vec::with_capacity(l.len);
        let (mut c, mut prev) = (l.head, NIL);
        while c != NIL {
            if out.len() > l.len {
                return Err("list longer than its length: a cycle?".into());
            }
            if l.links.prev(c) != prev {
                return Err(format!("slot {c}: broken prev link"));
            }
            out.push(c);
            prev = c;
            c = l.links.next(c);
        }
        if out.len() != l.len || l.tail != prev {
            return Err(format!("list walks {} slots, len says {}", out.len(), l.len));
        }
        if l.hand != NIL && !out.contains(&l.hand) {
            return Err("SIEVE hand points outside the list".into());
        }
        Ok(out)
    }
}

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
use crate::raw::table::AllocError;
use crate::sync::Mutex;
use crate::sync::Ordering;
use crossbeam_utils::CachePadded;

const NIL: u32 = u32::MAX;
/// `prev` of a slot not in the list.
const OUT: u32 = u32::MAX - 1;

#[derive(Debug)]
struct List {
    /// Per slot: towards the head (newer), towards the tail (older).
    links: Vec<[u32; 2]>,
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
        self.links[i as usize] = [NIL, self.head];
        if self.head != NIL {
            self.links[self.head as usize][0] = i;
        } else {
            self.tail = i;
        }
        self.head = i;
        self.len += 1;
    }

    fn unlink(&mut self, i: u32) {
        let [prev, next] = self.links[i as usize];
        if prev != NIL {
            self.links[prev as usize][1] = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.links[next as usize][0] = prev;
        } else {
            self.tail = prev;
        }
        if self.hand == i {
            self.hand = prev;
        }
        self.links[i as usize] = [OUT, NIL];
        self.len -= 1;
    }
}

impl Locked {
    /// A list for `slots` slots; an error if the allocator refuses its links.
    pub fn new(kind: Kind, slots: usize) -> Result<Self, AllocError> {
        let mut links = Vec::new();
        links.try_reserve_exact(slots).map_err(|_| AllocError {
            bytes: slots.saturating_mul(std::mem::size_of::<[u32; 2]>()),
        })?;
        links.resize(slots, [OUT, NIL]);
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
        if l.links[i as usize][0] != OUT && l.head != i {
            l.unlink(i);
            l.push_head(i);
        }
    }

    /// Unlinks slot `i` if the list still holds it; true if it did (the caller now owns it).
    pub fn remove(&self, i: u32) -> bool {
        let mut l = self.list.lock();
        if l.links[i as usize][0] == OUT {
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
                    let prev = l.links[o as usize][0];
                    o = if prev == NIL { l.tail } else { prev };
                }
                o
            }
        };
        let newer = l.links[victim as usize][0];
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
            if l.links[c as usize][0] != prev {
                return Err(format!("slot {c}: broken prev link"));
            }
            out.push(c);
            prev = c;
            c = l.links[c as usize][1];
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

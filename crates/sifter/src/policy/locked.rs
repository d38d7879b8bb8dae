//! Lock-based baselines: SIEVE as in the SIEVE paper's CacheLib prototype, and LRU with one
//! global lock.
//!
//! Both keep a doubly linked list of slots (a slab indexed by `u32`) under one mutex; each entry
//! remembers its slot (`Entry::slot`, accessed only under that mutex).
//!
//! **SIEVE** (Zhang et al., NSDI'24, Alg. 1; CacheLib `MMSieve`): insert links at the head under
//! the lock; a hit sets the visited bit *without* the lock; eviction runs the hand under the
//! lock — from the tail towards the head, clearing visited bits and wrapping, evicting the first
//! unvisited entry and leaving the hand at its newer neighbour — exactly the simulator's SIEVE.
//!
//! **LRU**: every hit takes the lock and moves the entry to the head; eviction takes the tail.
//! This is the classic baseline whose per-hit lock the papers show does not scale.
//!
//! Removing an entry unlinks it at once (under the lock), so these policies hold no removed
//! entries.

use crate::raw::entry::{Entry, NO_SLOT};
use crate::sync::Ordering;
use parking_lot::Mutex;

const NIL: u32 = u32::MAX;

#[derive(Debug)]
struct Slot<K, V> {
    entry: *const Entry<K, V>,
    /// Towards the head (newer).
    prev: u32,
    /// Towards the tail (older).
    next: u32,
}

impl<K, V> Clone for Slot<K, V> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K, V> Copy for Slot<K, V> {}

#[derive(Debug)]
struct List<K, V> {
    slots: Vec<Slot<K, V>>,
    free: Vec<u32>,
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
pub(crate) struct Locked<K, V> {
    list: Mutex<List<K, V>>,
    kind: Kind,
}

// SAFETY: the raw entry pointers are only dereferenced while the cache keeps the entries alive
// (the policy link); the list itself is behind a mutex.
unsafe impl<K: Send + Sync, V: Send + Sync> Send for Locked<K, V> {}
// SAFETY: as above.
unsafe impl<K: Send + Sync, V: Send + Sync> Sync for Locked<K, V> {}

impl<K, V> List<K, V> {
    fn push_head(&mut self, entry: *const Entry<K, V>) -> u32 {
        let s = Slot { entry, prev: NIL, next: self.head };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = s;
                i
            }
            None => {
                self.slots.push(s);
                (self.slots.len() - 1) as u32
            }
        };
        if self.head != NIL {
            self.slots[self.head as usize].prev = i;
        } else {
            self.tail = i;
        }
        self.head = i;
        self.len += 1;
        i
    }

    fn unlink(&mut self, i: u32) {
        let Slot { prev, next, .. } = self.slots[i as usize];
        if prev != NIL {
            self.slots[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.slots[next as usize].prev = prev;
        } else {
            self.tail = prev;
        }
        self.len -= 1;
    }

    fn free(&mut self, i: u32) {
        self.unlink(i);
        self.slots[i as usize].entry = std::ptr::null();
        self.free.push(i);
    }
}

impl<K, V> Locked<K, V> {
    pub fn new(kind: Kind) -> Self {
        Locked {
            list: Mutex::new(List {
                slots: Vec::new(),
                free: Vec::new(),
                head: NIL,
                tail: NIL,
                hand: NIL,
                len: 0,
            }),
            kind,
        }
    }

    /// Links a new entry at the head. `e` keeps the provenance of the original allocation
    /// (the list may be where it is eventually freed from).
    ///
    /// # Safety
    /// `e` is a live entry whose policy link this list now holds.
    pub unsafe fn insert(&self, e: *const Entry<K, V>) {
        let mut l = self.list.lock();
        let i = l.push_head(e);
        // Relaxed: `slot` is only accessed under this lock.
        // SAFETY: live entry per the contract.
        unsafe { (*e).slot.store(i, Ordering::Relaxed) };
    }

    /// A hit: LRU moves the entry to the head under the lock; SIEVE only sets the bit.
    #[inline]
    pub fn on_hit(&self, e: &Entry<K, V>) {
        match self.kind {
            Kind::Sieve => e.touch(),
            Kind::Lru => {
                let mut l = self.list.lock();
                let i = e.slot.load(Ordering::Relaxed);
                if i != NO_SLOT && l.head != i {
                    l.unlink(i);
                    // re-link the same slot at the head
                    let old = l.head;
                    l.slots[i as usize].prev = NIL;
                    l.slots[i as usize].next = old;
                    if old != NIL {
                        l.slots[old as usize].prev = i;
                    } else {
                        l.tail = i;
                    }
                    l.head = i;
                    l.len += 1;
                }
            }
        }
    }

    /// Unlinks a removed entry; true if it was in the list (its policy link is then dropped).
    pub fn on_remove(&self, e: &Entry<K, V>) -> bool {
        let mut l = self.list.lock();
        let i = e.slot.load(Ordering::Relaxed);
        if i == NO_SLOT {
            return false;
        }
        if l.hand == i {
            l.hand = l.slots[i as usize].prev;
        }
        l.free(i);
        e.slot.store(NO_SLOT, Ordering::Relaxed);
        true
    }

    /// Picks and unlinks a victim.
    pub fn evict(&self) -> Option<*const Entry<K, V>> {
        let mut l = self.list.lock();
        if l.tail == NIL {
            return None;
        }
        let victim = match self.kind {
            Kind::Lru => l.tail,
            Kind::Sieve => {
                let mut o = if l.hand == NIL { l.tail } else { l.hand };
                loop {
                    let s = l.slots[o as usize];
                    // SAFETY: an entry in the list is kept alive by its policy link.
                    let e = unsafe { &*s.entry };
                    let live = e.state.load(Ordering::Relaxed) == crate::raw::entry::LIVE;
                    // Relaxed: hint bit (see Entry::touch).
                    if !(live && e.visited.load(Ordering::Relaxed)) {
                        break;
                    }
                    e.visited.store(false, Ordering::Relaxed);
                    o = if s.prev == NIL { l.tail } else { s.prev };
                }
                l.hand = l.slots[o as usize].prev;
                o
            }
        };
        let e = l.slots[victim as usize].entry;
        l.free(victim);
        // SAFETY: as above.
        unsafe { (*e).slot.store(NO_SLOT, Ordering::Relaxed) };
        Some(e)
    }

    /// Entries head to tail (quiescent validation).
    pub fn items(&self) -> Result<Vec<*const Entry<K, V>>, String> {
        let l = self.list.lock();
        let mut out = Vec::with_capacity(l.len);
        let (mut c, mut prev) = (l.head, NIL);
        while c != NIL {
            if out.len() > l.len {
                return Err("list longer than its length: a cycle?".into());
            }
            let s = l.slots[c as usize];
            if s.prev != prev {
                return Err(format!("slot {c}: broken prev link"));
            }
            // SAFETY: listed entries are alive (policy link).
            if unsafe { (*s.entry).slot.load(Ordering::Relaxed) } != c {
                return Err(format!("slot {c}: the entry records another slot"));
            }
            out.push(s.entry);
            prev = c;
            c = s.next;
        }
        if out.len() != l.len || l.tail != prev {
            return Err(format!("list walks {} entries, len says {}", out.len(), l.len));
        }
        if l.hand != NIL && !out.iter().any(|&e| std::ptr::eq(e, l.slots[l.hand as usize].entry)) {
            return Err("SIEVE hand points outside the list".into());
        }
        Ok(out)
    }

    /// Unlinks everything (exclusive access) and returns the entries.
    pub fn drain(&mut self) -> Vec<*const Entry<K, V>> {
        let l = self.list.get_mut();
        let mut out = Vec::new();
        let mut c = l.head;
        while c != NIL {
            out.push(l.slots[c as usize].entry);
            c = l.slots[c as usize].next;
        }
        *l = List { slots: Vec::new(), free: Vec::new(), head: NIL, tail: NIL, hand: NIL, len: 0 };
        out
    }
}

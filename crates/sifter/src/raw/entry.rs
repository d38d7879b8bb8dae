//! A cache entry: key, value and the metadata every policy shares.
//!
//! # Lifetime
//!
//! An entry is heap-allocated at insert and linked from two places: the index (its bucket
//! chain) and the policy structure (a queue node or a list slot). `links` starts at 2; the
//! index unlink (remove, replace, or eviction) and the policy unlink (eviction, or a locked
//! policy's eager removal) each drop one. Whoever drops the last link retires the entry to the
//! epoch collector, which frees it once no thread that might still read it is pinned.

use crate::policy::queues::QueueItem;
use crate::raw::queue::QNode;
use crate::sync::{AtomicBool, AtomicPtr, Ordering};
use std::sync::atomic::{AtomicU32, AtomicU8};

/// `state`: reachable from the index.
pub(crate) const LIVE: u8 = 0;
/// `state`: unlinked from the index by `remove`, `clear` or a replacing `insert`.
pub(crate) const REMOVED: u8 = 1;
/// `state`: unlinked from the index by an eviction.
pub(crate) const EVICTED: u8 = 2;
/// `slot`: not in a locked policy's list.
pub(crate) const NO_SLOT: u32 = u32::MAX;

#[derive(Debug)]
pub(crate) struct Entry<K, V> {
    /// The entry's first queue position (queue policies), so inserting allocates nothing more.
    pub node: QNode<Entry<K, V>>,
    pub key: K,
    pub value: V,
    pub hash: u64,
    /// Weight charged against the capacity (1 for count-bounded caches).
    pub weight: u64,
    /// The SIEVE/CLOCK reference bit. Hits store `true` only when it is `false` (no RMW, and
    /// no write at all on a hot entry); evictors clear it.
    pub visited: AtomicBool,
    /// LIVE, REMOVED or EVICTED. Changed only under the index stripe lock of `hash`.
    pub state: AtomicU8,
    /// Remaining links (index + policy), see the module docs.
    pub links: AtomicU8,
    /// Next entry in the index bucket chain. Written under the stripe lock (Release), read
    /// lock-free (Acquire).
    pub chain: AtomicPtr<Entry<K, V>>,
    /// Locked policies (SIEVE, LRU): this entry's list slot, or NO_SLOT. Read and written
    /// only under that policy's lock.
    pub slot: AtomicU32,
}

impl<K, V> Entry<K, V> {
    /// A boxed entry whose embedded node points back at it.
    pub fn boxed(key: K, value: V, hash: u64, weight: u64) -> *mut Self {
        let p = Box::into_raw(Box::new(Entry {
            node: QNode::embedded(),
            key,
            value,
            hash,
            weight,
            visited: AtomicBool::new(false),
            state: AtomicU8::new(LIVE),
            links: AtomicU8::new(2),
            chain: AtomicPtr::new(std::ptr::null_mut()),
            slot: AtomicU32::new(NO_SLOT),
        }));
        // SAFETY: `p` is fresh and not shared yet.
        unsafe { (*p).node.item = p };
        p
    }

    /// Marks a hit: sets the reference bit if it is clear.
    #[inline]
    pub fn touch(&self) {
        // Relaxed: the bit is a hint read by evictors; checking first avoids dirtying the
        // cache line of hot entries (Mobius's published code wrote a timestamp on every hit).
        if !self.visited.load(Ordering::Relaxed) {
            self.visited.store(true, Ordering::Relaxed);
        }
    }

    /// Drops one link; true if it was the last (the caller must then retire the entry).
    pub fn unlink_one(&self) -> bool {
        // AcqRel: the thread that drops the last link must see every write the other link
        // holder made before dropping its own (so freeing happens after all uses).
        self.links.fetch_sub(1, Ordering::AcqRel) == 1
    }
}

impl<K, V> QueueItem for Entry<K, V> {
    unsafe fn embedded_node(this: *const Self) -> *mut QNode<Self> {
        // SAFETY: valid entry per the contract; no reference is created.
        unsafe { std::ptr::addr_of!((*this).node).cast_mut() }
    }
    fn visited(&self) -> &AtomicBool {
        &self.visited
    }
    fn is_live(&self) -> bool {
        // Relaxed: a stale LIVE only gives a removed entry one more pass.
        self.state.load(Ordering::Relaxed) == LIVE
    }
}

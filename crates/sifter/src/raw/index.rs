//! The index: key → entry. A fixed array of buckets, each a singly linked chain of entries.
//!
//! * **Lookups take no lock and perform no atomic read-modify-write**: under an epoch guard
//!   they load the bucket head and follow `chain` links with Acquire loads, comparing the stored
//!   hash and then the key.
//! * **Writes** (insert, replace, remove, the index half of an eviction) take one of a fixed set
//!   of striped mutexes (bucket `b` uses stripe `b % stripes`), so chain updates are simple
//!   pointer stores published with Release. Critical sections are a chain walk and two stores;
//!   no user code runs under them (keys are compared, values are never touched).
//! * An unlinked entry keeps its `chain` pointer, so a reader standing on it can still walk on;
//!   it is freed only through the epoch collector after both its links are gone.
//! * The bucket count is fixed at build time (a cache's size is bounded); chains stay short at
//!   the default load factor of at most one entry per bucket.

use crate::raw::entry::{Entry, LIVE, REMOVED};
use crate::sync::{AtomicPtr, Ordering};
use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, MutexGuard};
use std::borrow::Borrow;
use std::ptr;

pub(crate) struct Index<K, V> {
    buckets: Box<[AtomicPtr<Entry<K, V>>]>,
    locks: Box<[CachePadded<Mutex<()>>]>,
    mask: usize,
}

impl<K, V> std::fmt::Debug for Index<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("buckets", &self.buckets.len())
            .field("stripes", &self.locks.len())
            .finish()
    }
}

/// Result of [`Index::insert`].
pub(crate) enum Inserted<K, V> {
    /// The key was new.
    New,
    /// The key existed: this entry was replaced (now REMOVED, its index link is the caller's).
    Replaced(*const Entry<K, V>),
}

impl<K, V> Index<K, V> {
    /// Every linked entry (quiescent use: validation).
    ///
    /// # Safety
    /// No concurrent writers; caller pinned.
    pub unsafe fn entries(&self) -> Vec<*const Entry<K, V>> {
        let mut out = Vec::new();
        for b in self.buckets.iter() {
            let mut p = b.load(Ordering::Acquire);
            while !p.is_null() {
                out.push(p as *const _);
                // SAFETY: quiescent, linked entries are allocated.
                p = unsafe { (*p).chain.load(Ordering::Acquire) };
            }
        }
        out
    }

    /// Every linked entry, with exclusive access (drop).
    ///
    /// # Safety
    /// No other thread uses the index.
    pub unsafe fn entries_exclusive(&mut self) -> Vec<*const Entry<K, V>> {
        // SAFETY: exclusive access implies quiescence.
        unsafe { self.entries() }
    }
}

impl<K: Eq, V> Index<K, V> {
    /// An index sized for about `entries` entries.
    pub fn new(entries: usize) -> Self {
        let n = entries.max(16).next_power_of_two();
        let stripes = (n / 8).clamp(16, 4096).next_power_of_two();
        Index {
            buckets: (0..n).map(|_| AtomicPtr::new(ptr::null_mut())).collect(),
            locks: (0..stripes).map(|_| CachePadded::new(Mutex::new(()))).collect(),
            mask: n - 1,
        }
    }

    fn bucket(&self, hash: u64) -> usize {
        (hash as usize) & self.mask
    }

    pub fn lock(&self, hash: u64) -> MutexGuard<'_, ()> {
        self.locks[self.bucket(hash) & (self.locks.len() - 1)].lock()
    }

    /// Finds the entry for `key`.
    ///
    /// # Safety
    /// The caller is pinned for as long as it uses the returned reference.
    #[inline]
    pub unsafe fn find<'g, Q>(&self, hash: u64, key: &Q) -> Option<&'g Entry<K, V>>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        // SAFETY: forwarded; the pointer is valid while the caller is pinned.
        unsafe { self.find_ptr(hash, key).map(|p| &*p) }
    }

    /// As [`Index::find`], returning the raw pointer as loaded (with the allocation's full
    /// provenance, so it may later be used to free the entry).
    ///
    /// # Safety
    /// As [`Index::find`].
    #[inline]
    pub unsafe fn find_ptr<Q>(&self, hash: u64, key: &Q) -> Option<*const Entry<K, V>>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        // Acquire: pairs with the Release stores in insert/unlink, so the entry's fields
        // (key, value, hash) are visible before we read them.
        let mut p = self.buckets[self.bucket(hash)].load(Ordering::Acquire);
        while !p.is_null() {
            // SAFETY: reachable entries are freed only via the epoch after being unlinked, and
            // the caller is pinned.
            let e = unsafe { &*p };
            if e.hash == hash && e.key.borrow() == key {
                return Some(p);
            }
            // Acquire: as above.
            p = e.chain.load(Ordering::Acquire);
        }
        None
    }

    /// Links `new` (LIVE, unlinked), replacing an entry with an equal key if there is one.
    ///
    /// # Safety
    /// `new` is a valid fresh entry; the caller is pinned.
    pub unsafe fn insert(&self, new: *mut Entry<K, V>) -> Inserted<K, V> {
        // SAFETY: valid fresh entry.
        let n = unsafe { &*new };
        let _g = self.lock(n.hash);
        let head = &self.buckets[self.bucket(n.hash)];
        let mut link: &AtomicPtr<Entry<K, V>> = head;
        // Relaxed: we hold the stripe lock, chain writes are serialised by it.
        let mut p = link.load(Ordering::Relaxed);
        while !p.is_null() {
            // SAFETY: linked entries are allocated; we hold the lock so none is unlinked now.
            let e = unsafe { &*p };
            if e.hash == n.hash && e.key == n.key {
                n.chain.store(e.chain.load(Ordering::Relaxed), Ordering::Relaxed);
                // Relaxed: only read under this stripe lock or as a hint.
                e.state.store(REMOVED, Ordering::Relaxed);
                // Release: publishes `new`'s fields to lock-free readers (Acquire in `find`).
                link.store(new, Ordering::Release);
                return Inserted::Replaced(p);
            }
            link = &e.chain;
            p = link.load(Ordering::Relaxed);
        }
        n.chain.store(head.load(Ordering::Relaxed), Ordering::Relaxed);
        // Release: as above.
        head.store(new, Ordering::Release);
        Inserted::New
    }

    /// Unlinks `target` if it is still LIVE and linked, setting its state to `to`; returns
    /// whether it did (the entry's index link is then the caller's to drop).
    ///
    /// # Safety
    /// `target` is allocated (the caller holds a link or is pinned).
    pub unsafe fn unlink(&self, target: *const Entry<K, V>, to: u8) -> bool {
        // SAFETY: per the contract.
        let t = unsafe { &*target };
        let _g = self.lock(t.hash);
        if t.state.load(Ordering::Relaxed) != LIVE {
            return false;
        }
        // SAFETY: we hold the stripe lock.
        unsafe { self.unlink_locked(target, to) }
    }

    /// Finds `key` and unlinks it with state REMOVED; returns the entry.
    ///
    /// # Safety
    /// The caller is pinned.
    pub unsafe fn remove<Q>(&self, hash: u64, key: &Q) -> Option<*const Entry<K, V>>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        let _g = self.lock(hash);
        // SAFETY: pinned; and under the lock nothing in this chain is unlinked concurrently.
        let e = unsafe { self.find_ptr(hash, key) }?;
        // SAFETY: we hold the stripe lock.
        unsafe { self.unlink_locked(e, REMOVED) }.then_some(e)
    }

    /// # Safety
    /// The stripe lock of `target.hash` is held; `target` is allocated.
    unsafe fn unlink_locked(&self, target: *const Entry<K, V>, to: u8) -> bool {
        // SAFETY: per the contract.
        let t = unsafe { &*target };
        let mut link = &self.buckets[self.bucket(t.hash)];
        loop {
            let p = link.load(Ordering::Relaxed);
            if p.is_null() {
                return false;
            }
            if ptr::eq(p, target) {
                // Release: readers that load the new link see a consistent successor.
                link.store(t.chain.load(Ordering::Relaxed), Ordering::Release);
                t.state.store(to, Ordering::Relaxed);
                return true;
            }
            // SAFETY: linked and allocated (lock held).
            link = unsafe { &(*p).chain };
        }
    }

    /// Unlinks every entry (state REMOVED), calling `f` on each.
    ///
    /// # Safety
    /// The caller is pinned.
    pub unsafe fn drain(&self, mut f: impl FnMut(*const Entry<K, V>)) {
        for b in 0..self.buckets.len() {
            let _g = self.locks[b & (self.locks.len() - 1)].lock();
            let mut p = self.buckets[b].swap(ptr::null_mut(), Ordering::AcqRel);
            while !p.is_null() {
                // SAFETY: was linked; lock held; pinned.
                let e = unsafe { &*p };
                let next = e.chain.load(Ordering::Relaxed);
                e.state.store(REMOVED, Ordering::Relaxed);
                f(p);
                p = next;
            }
        }
    }

    /// Which bucket a hash maps to (validation).
    pub fn bucket_of(&self, hash: u64) -> usize {
        self.bucket(hash)
    }

    /// Bucket heads (validation).
    pub fn bucket_count(&self) -> usize {
        self.buckets.len()
    }
}

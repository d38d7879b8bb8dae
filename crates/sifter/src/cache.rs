//! `Cache<K, V>`: the index, a policy, and exact accounting.

use crate::counter::Striped;
use crate::policy::locked::{Kind, Locked};
use crate::policy::queues::{Mode, Queues};
use crate::raw::entry::{Entry, EVICTED};
use crate::raw::index::{Index, Inserted};
use crate::{BuildError, Policy};
use crossbeam_epoch::{self as epoch, Guard};
use crossbeam_utils::CachePadded;
use std::borrow::Borrow;
use std::collections::HashSet;
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU64, Ordering};

type Weigher<K, V> = Box<dyn Fn(&K, &V) -> u64 + Send + Sync>;

// The queue variant is large because its heads and tails are cache-padded, on purpose; a
// cache has exactly one of these, so boxing would only add an indirection on every operation.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Structure<K, V> {
    Queues(Queues<Entry<K, V>>),
    Locked(Locked<K, V>),
}

/// A concurrent cache. See the [crate docs](crate) for the consistency model and costs.
pub struct Cache<K, V, S = foldhash::fast::RandomState> {
    index: Index<K, V>,
    structure: Structure<K, V>,
    policy: Policy,
    consecutive: bool,
    hasher: S,
    weigher: Option<Weigher<K, V>>,
    /// Capacity in weight units (entries when there is no weigher).
    capacity: u64,
    /// Weight of the entries the policy holds (live, plus removed ones a lock-free queue has not
    /// reached yet). Eviction keeps it at or below `capacity`.
    held: CachePadded<AtomicU64>,
    /// Entries reachable from the index.
    len: Striped,
    /// Weight of the entries reachable from the index.
    live_weight: Striped,
}

// SAFETY: entries are shared between threads (values are cloned from any thread: V: Sync,
// and dropped on any thread: V: Send; same for keys). All shared state is atomics or behind
// locks; raw pointers are dereferenced only under the epoch protocol described in `raw/`.
unsafe impl<K: Send + Sync, V: Send + Sync, S: Send> Send for Cache<K, V, S> {}
// SAFETY: as above; `S` is only used through `&S` (BuildHasher::hash_one).
unsafe impl<K: Send + Sync, V: Send + Sync, S: Sync> Sync for Cache<K, V, S> {}

impl<K, V, S> std::fmt::Debug for Cache<K, V, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("policy", &self.policy)
            .field("capacity", &self.capacity)
            .field("len", &self.len.sum())
            .field("weight", &self.live_weight.sum())
            .finish_non_exhaustive()
    }
}

/// Frees an entry once no pinned thread can still see it.
///
/// # Safety
/// Both links of `e` are gone (it is unreachable from the index and the policy) and it is
/// retired exactly once.
unsafe fn retire<K, V>(guard: &Guard, e: *const Entry<K, V>) {
    let e = e as *mut Entry<K, V>;
    // SAFETY: per the contract; the deferred drop runs after every guard that could hold `e`.
    unsafe { guard.defer_unchecked(move || drop(Box::from_raw(e))) };
}

impl<K, V, S> Cache<K, V, S>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Send + Sync + 'static,
    S: BuildHasher,
{
    pub(crate) fn from_parts(
        policy: Policy,
        consecutive: bool,
        capacity: u64,
        estimated_entries: usize,
        weigher: Option<Weigher<K, V>>,
        hasher: S,
    ) -> Result<Self, BuildError> {
        let structure = match policy {
            Policy::Mobius => Structure::Queues(Queues::new(Mode::Mobius { consecutive })),
            Policy::Clock => Structure::Queues(Queues::new(Mode::Clock)),
            Policy::Fifo => Structure::Queues(Queues::new(Mode::Fifo)),
            Policy::Sieve => Structure::Locked(Locked::new(Kind::Sieve)),
            Policy::Lru => Structure::Locked(Locked::new(Kind::Lru)),
        };
        Ok(Cache {
            index: Index::new(estimated_entries),
            structure,
            policy,
            consecutive,
            hasher,
            weigher,
            capacity,
            held: CachePadded::new(AtomicU64::new(0)),
            len: Striped::new(),
            live_weight: Striped::new(),
        })
    }

    fn hash<Q: Hash + ?Sized>(&self, key: &Q) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Returns a clone of the value for `key`, marking the entry as recently used.
    ///
    /// Takes no lock and makes no atomic read-modify-write for every policy except LRU (whose
    /// hits take its global lock by design). At most one plain store: the reference bit, only
    /// if it was clear.
    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
        V: Clone,
    {
        let hash = self.hash(key);
        let guard = epoch::pin();
        // SAFETY: pinned for the lifetime of `e`.
        let e = unsafe { self.index.find(hash, key) }?;
        match &self.structure {
            Structure::Queues(_) => {
                if self.policy != Policy::Fifo {
                    e.touch();
                }
            }
            Structure::Locked(l) => l.on_hit(e),
        }
        let v = e.value.clone();
        drop(guard);
        Some(v)
    }

    /// Whether `key` is cached (does not count as a use).
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hash(key);
        let _guard = epoch::pin();
        // SAFETY: pinned.
        unsafe { self.index.find(hash, key) }.is_some()
    }

    /// Inserts or replaces the value for `key`, evicting as needed to stay within capacity.
    ///
    /// An entry heavier than the whole capacity is not stored (and any previous value for the
    /// key is removed), like libCacheSim and most caches.
    pub fn insert(&self, key: K, value: V) {
        let weight = match &self.weigher {
            Some(w) => w(&key, &value),
            None => 1,
        };
        if weight > self.capacity {
            self.remove_entry(&key);
            return;
        }
        let hash = self.hash(&key);
        let guard = epoch::pin();
        // Make room first, then link (libCacheSim's order: the new entry is never its own
        // victim, and a one-thread run matches the simulator exactly). The weight is reserved
        // before evicting so concurrent inserters see each other's demand.
        // Relaxed (all counters): statistics; exactness comes from every change being one
        // RMW, not from ordering with other memory.
        let reserved = self.held.fetch_add(weight, Ordering::Relaxed) + weight;
        if reserved > self.capacity {
            #[cfg(feature = "profile")]
            let t0 = crate::profile::start();
            while self.held.load(Ordering::Relaxed) > self.capacity {
                if !self.evict_one(&guard) {
                    break;
                }
            }
            #[cfg(feature = "profile")]
            crate::profile::stop(t0);
        }
        let p = Entry::boxed(key, value, hash, weight);
        self.len.add(1);
        self.live_weight.add(weight as i64);
        // SAFETY: fresh valid entry; pinned.
        if let Inserted::Replaced(old) = unsafe { self.index.insert(p) } {
            // SAFETY: we own old's index link; pinned. This subtracts old's len and weight.
            unsafe { self.drop_removed(old, &guard) };
        }
        match &self.structure {
            // SAFETY: `p` stays allocated while the policy holds its link; pinned.
            Structure::Queues(q) => unsafe { q.insert(p) },
            // SAFETY: as above.
            Structure::Locked(l) => unsafe { l.insert(p) },
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
        V: Clone,
    {
        let hash = self.hash(key);
        let guard = epoch::pin();
        // SAFETY: pinned.
        let e = unsafe { self.index.remove(hash, key) }?;
        // SAFETY: pinned; `e` was just unlinked by us.
        let v = unsafe { &*e }.value.clone();
        // SAFETY: we own e's index link.
        unsafe { self.drop_removed(e, &guard) };
        Some(v)
    }

    fn remove_entry<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hash(key);
        let guard = epoch::pin();
        // SAFETY: pinned.
        if let Some(e) = unsafe { self.index.remove(hash, key) } {
            // SAFETY: we own e's index link.
            unsafe { self.drop_removed(e, &guard) };
        }
    }

    /// Accounting after `e` left the index (removed or replaced): drops the index link, lets a
    /// locked policy unlink it at once, and retires it if that was the last link.
    ///
    /// # Safety
    /// The caller owns `e`'s index link and is pinned with `guard`.
    unsafe fn drop_removed(&self, e: *const Entry<K, V>, guard: &Guard) {
        // SAFETY: allocated while we hold a link.
        let r = unsafe { &*e };
        self.len.add(-1);
        self.live_weight.add(-(r.weight as i64));
        if let Structure::Locked(l) = &self.structure {
            if l.on_remove(r) {
                self.held.fetch_sub(r.weight, Ordering::Relaxed);
                if r.unlink_one() {
                    // SAFETY: both links gone.
                    unsafe { retire(guard, e) };
                }
            }
        }
        if r.unlink_one() {
            // SAFETY: both links gone.
            unsafe { retire(guard, e) };
        }
    }

    /// Evicts one entry; false if nothing could be evicted.
    fn evict_one(&self, guard: &Guard) -> bool {
        let victim = match &self.structure {
            // SAFETY: `guard` is pinned for the call.
            Structure::Queues(q) => unsafe { q.evict(guard) },
            Structure::Locked(l) => l.evict(),
        };
        let Some(e) = victim else { return false };
        // SAFETY: we now own the policy link, so `e` is allocated.
        let r = unsafe { &*e };
        self.held.fetch_sub(r.weight, Ordering::Relaxed);
        // SAFETY: allocated (we hold a link).
        if unsafe { self.index.unlink(e, EVICTED) } {
            self.len.add(-1);
            self.live_weight.add(-(r.weight as i64));
            if r.unlink_one() {
                // SAFETY: both links gone.
                unsafe { retire(guard, e) };
            }
        }
        if r.unlink_one() {
            // SAFETY: both links gone.
            unsafe { retire(guard, e) };
        }
        true
    }

    /// Removes every entry. Entries inserted concurrently with `clear` may or may not remain.
    /// Values are dropped once no reader can still be cloning them (epoch reclamation).
    pub fn clear(&self) {
        let guard = epoch::pin();
        let mut removed = Vec::new();
        // SAFETY: pinned.
        unsafe { self.index.drain(|e| removed.push(e)) };
        for e in removed {
            // SAFETY: drain handed us each entry's index link.
            unsafe { self.drop_removed(e, &guard) };
        }
        // Lock-free queues still hold the removed entries: reclaim them now.
        if let Structure::Queues(_) = self.structure {
            while self.held.load(Ordering::Relaxed) > 0 && self.evict_one(&guard) {}
        }
    }

    /// Entries in the cache (reachable by `get`).
    ///
    /// Exact when no operation is in flight. During concurrent modification it is approximate:
    /// it sums per-stripe counters one after another (no snapshot), so changes made while it
    /// reads may be half-counted — a reader preempted mid-sum can see a figure above the
    /// capacity although no more than `capacity` + (inserting threads) entries were ever linked.
    pub fn len(&self) -> usize {
        self.len.sum() as usize
    }

    /// Whether the cache holds no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total weight of the entries in the cache (equals `len` without a weigher).
    pub fn weight(&self) -> u64 {
        self.live_weight.sum()
    }

    /// The capacity, in entries (or in weight units with a weigher).
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The eviction policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// Whether Mobius uses consecutive detection.
    pub fn consecutive_detection(&self) -> bool {
        self.consecutive
    }

    /// Bytes of memory per entry beyond the key and value (the entry header, one queue node or
    /// list slot, and the index bucket share at the default sizing).
    pub fn overhead_per_entry() -> usize {
        // The header (with its embedded queue node), allocator rounding aside, plus one bucket.
        std::mem::size_of::<Entry<(), ()>>() + std::mem::size_of::<usize>()
    }

    /// Checks every invariant; call only when no other thread is using the cache (tests).
    ///
    /// Checks: every indexed entry is LIVE, in its own bucket, with a unique key, held by the
    /// policy exactly once, and has both links; every entry the policy holds but the index does
    /// not is a removed one awaiting the eviction scan, with one link; `len`, `weight` and the
    /// policy-held weight equal what the structures contain; the held weight is within capacity.
    pub fn validate(&self) -> Result<(), String> {
        let _guard = epoch::pin();
        // SAFETY: quiescent by contract; pinned.
        let indexed = unsafe { self.index.entries() };
        let held: Vec<*const Entry<K, V>> = match &self.structure {
            // SAFETY: quiescent by contract.
            Structure::Queues(q) => unsafe { q.items(self.len() * 4 + 1_000_000)? },
            Structure::Locked(l) => l.items()?,
        };
        let held_set: HashSet<*const Entry<K, V>> = held.iter().copied().collect();
        if held_set.len() != held.len() {
            return Err(format!(
                "the policy holds {} entries, {} distinct: a duplicate",
                held.len(),
                held_set.len()
            ));
        }
        let mut live_w = 0u64;
        for &p in &indexed {
            // SAFETY: quiescent, linked entries are allocated.
            let e = unsafe { &*p };
            if e.state.load(Ordering::Relaxed) != crate::raw::entry::LIVE {
                return Err("an indexed entry is not LIVE".into());
            }
            if self.index.bucket_of(e.hash) >= self.index.bucket_count()
                || self.hash(&e.key) != e.hash
            {
                return Err("an entry's stored hash does not match its key".into());
            }
            if !held_set.contains(&p) {
                return Err(
                    "an indexed entry is not held by the policy (it could never be evicted)".into(),
                );
            }
            if e.links.load(Ordering::Relaxed) != 2 {
                return Err(format!(
                    "an indexed entry has {} links, expected 2",
                    e.links.load(Ordering::Relaxed)
                ));
            }
            live_w += e.weight;
        }
        let indexed_set: HashSet<*const Entry<K, V>> = indexed.iter().copied().collect();
        if indexed_set.len() != indexed.len() {
            return Err("an entry is linked twice in the index".into());
        }
        // Unique keys: entries with equal keys have equal hashes, so compare within hashes.
        let mut by_hash: std::collections::HashMap<u64, Vec<*const Entry<K, V>>> =
            Default::default();
        for &p in &indexed {
            // SAFETY: as above.
            by_hash.entry(unsafe { (*p).hash }).or_default().push(p);
        }
        for group in by_hash.values().filter(|g| g.len() > 1) {
            for (i, &a) in group.iter().enumerate() {
                for &b in &group[i + 1..] {
                    // SAFETY: as above.
                    if unsafe { (*a).key == (*b).key } {
                        return Err("two indexed entries have the same key".into());
                    }
                }
            }
        }
        let mut held_w = 0u64;
        for &p in &held {
            // SAFETY: held entries are allocated (policy link).
            let e = unsafe { &*p };
            held_w += e.weight;
            if !indexed_set.contains(&p) {
                if e.state.load(Ordering::Relaxed) == crate::raw::entry::LIVE {
                    return Err("a LIVE entry is held by the policy but not indexed".into());
                }
                if e.links.load(Ordering::Relaxed) != 1 {
                    return Err(
                        "a removed entry awaiting eviction does not have exactly 1 link".into()
                    );
                }
            }
        }
        let (len, w, h) = (self.len(), self.weight(), self.held.load(Ordering::Relaxed));
        if len != indexed.len() || w != live_w || h != held_w {
            return Err(format!(
                "counters disagree: len {len} vs {} indexed, weight {w} vs {live_w}, held {h} vs {held_w}",
                indexed.len()
            ));
        }
        if h > self.capacity {
            return Err(format!("held weight {h} exceeds the capacity {}", self.capacity));
        }
        Ok(())
    }
}

impl<K, V, S> Drop for Cache<K, V, S> {
    fn drop(&mut self) {
        // Exclusive access: free every entry still linked from the index or the policy, each
        // once. Entries already retired are freed by the epoch collector.
        let mut all: HashSet<*const Entry<K, V>> = HashSet::new();
        let held = match &mut self.structure {
            Structure::Queues(q) => q.drain(),
            Structure::Locked(l) => l.drain(),
        };
        all.extend(held);
        // SAFETY: exclusive access.
        for p in unsafe { self.index.entries_exclusive() } {
            all.insert(p);
        }
        for p in all {
            // SAFETY: each entry was allocated by Box::into_raw, is linked from the index or the
            // policy (so not retired), and appears once in the set.
            drop(unsafe { Box::from_raw(p.cast_mut()) });
        }
    }
}

//! Multi-step LRU (Inoue, "Multi-step LRU: SIMD-based Cache Replacement for Lower Overhead and
//! Higher Precision", IEEE BigData 2021, §III) as a concurrent set-associative cache.
//!
//! The key's hash picks a set of `M` vectors of `P` ways; a vector is kept in LRU order (way 0
//! the most recent), filled from way 0:
//!
//! ```text
//! hit at way i > 0 of vector v:   rotate ways 0..=i (the item to way 0)
//! hit at way 0 of vector v > 0:   swap it with the last item of vector v − 1 (an upgrade)
//! miss:  the first vector with a free way takes the item (at its first free way, rotated to
//!        way 0); if none, the LRU item of the last vector is evicted and the new item goes to
//!        that vector's way 0
//! ```
//!
//! So a new item needs 2M − 1 hits to reach the set's most recent way: frequently used items
//! climb, one-time items leave from the last vector. There is no per-item metadata beyond a
//! 32-bit tag (a mix of the key's hash) per way, kept in its own array so a lookup compares
//! the `M × P` tags of a set — a vector at a time on x86-64: four ways with SSE2 (always
//! there), eight with AVX2 (runtime detection), a portable loop otherwise, with identical
//! results — and reads a key only on a tag match (the key decides; the tag only filters). Keys
//! and values of a set are stored contiguously next to its tags: with `u64` keys and values,
//! 24 bytes per way (tag 4, key 8, value 8) and the set's one-byte spin lock (its first byte),
//! 21 bytes per entry for `M = 2, P = 4`. Operations on different sets never contend; a hit
//! writes only its own set.
//!
//! This is a sibling type of [`Cache`](crate::Cache) rather than a `Policy`: the structure is
//! the storage (no arena, index or queue), and its capacity is a whole number of sets.

use crate::raw::table;
use crate::sync::Backoff;
use crate::BuildError;
use std::borrow::Borrow;
use std::cell::UnsafeCell;
use std::hash::{BuildHasher, Hash};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};

/// The set of a hash: the simulator's `multistep-lru` mix (SplitMix64's finaliser).
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

/// An empty way's tag (a real tag of 0 is stored as 1).
const EMPTY: u32 = 0;

/// The tag of `hash`: the upper half of a multiplicative mix (every bit of the hash counts,
/// so keys that differ in either half — an identity hash — spread over the tags), never
/// [`EMPTY`].
#[inline]
fn tag_of(hash: u64) -> u32 {
    ((hash.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as u32).max(1)
}

/// One set: `M × P` ways, vector-major.
struct Set<K, V, const M: usize, const P: usize> {
    lock: AtomicBool,
    /// How many ways hold an entry: changed only by the lock's holder, read without the lock
    /// by [`MultiStepCache::len`], so that counting neither locks a set nor writes its page (a
    /// fresh large cache's sets are not committed until written). In the set's padding, beside
    /// the lock byte: no bytes added (checked by `sifter bench --mem`: 21.0 bytes per entry).
    filled: AtomicU16,
    tags: UnsafeCell<[[u32; P]; M]>,
    keys: UnsafeCell<[[MaybeUninit<K>; P]; M]>,
    values: UnsafeCell<[[MaybeUninit<V>; P]; M]>,
}

/// Holds a set's lock.
struct Locked<'a, K, V, const M: usize, const P: usize> {
    set: &'a Set<K, V, M, P>,
}

impl<K, V, const M: usize, const P: usize> Drop for Locked<'_, K, V, M, P> {
    fn drop(&mut self) {
        // Release: our changes to the set happen before the next holder's reads.
        self.set.lock.store(false, Ordering::Release);
    }
}

impl<K, V, const M: usize, const P: usize> Set<K, V, M, P> {
    fn new() -> Self {
        Set {
            lock: AtomicBool::new(false),
            filled: AtomicU16::new(0),
            tags: UnsafeCell::new([[EMPTY; P]; M]),
            keys: UnsafeCell::new(std::array::from_fn(|_| {
                std::array::from_fn(|_| MaybeUninit::uninit())
            })),
            values: UnsafeCell::new(std::array::from_fn(|_| {
                std::array::from_fn(|_| MaybeUninit::uninit())
            })),
        }
    }

    fn lock(&self) -> Locked<'_, K, V, M, P> {
        let mut backoff = Backoff::default();
        loop {
            // Acquire: pairs with the Release unlock.
            if !self.lock.swap(true, Ordering::Acquire) {
                return Locked { set: self };
            }
            // Relaxed: wait until it looks free before trying the RMW again.
            while self.lock.load(Ordering::Relaxed) {
                backoff.snooze();
            }
        }
    }
}

/// The ways of a locked set, for the operations.
struct Ways<'a, K, V, const M: usize, const P: usize> {
    tags: &'a mut [[u32; P]; M],
    keys: &'a mut [[MaybeUninit<K>; P]; M],
    values: &'a mut [[MaybeUninit<V>; P]; M],
}

/// Adds `by` (wrapping: -1 is `u16::MAX`) to a locked set's count of filled ways.
fn count(filled: &AtomicU16, by: u16) {
    // Relaxed: only the lock's holder writes the count (so this load sees the last holder's
    // store, ordered by the lock's Acquire/Release); `len` reads it unordered, a count that
    // may be a moment old.
    let n = filled.load(Ordering::Relaxed).wrapping_add(by);
    filled.store(n, Ordering::Relaxed);
}

impl<K, V, const M: usize, const P: usize> Ways<'_, K, V, M, P> {
    /// Rotates ways `0..=i` of vector `v` so way `i` becomes way 0.
    fn rotate_to_front(&mut self, v: usize, i: usize) {
        self.tags[v][..=i].rotate_right(1);
        self.keys[v][..=i].rotate_right(1);
        self.values[v][..=i].rotate_right(1);
    }

    /// Swaps way `(v, i)` with way `(w, j)`.
    fn swap(&mut self, (v, i): (usize, usize), (w, j): (usize, usize)) {
        let t = self.tags[v][i];
        self.tags[v][i] = self.tags[w][j];
        self.tags[w][j] = t;
        // `MaybeUninit` swaps move bits only (no drop, no read of uninitialised data).
        let k = std::mem::replace(&mut self.keys[v][i], MaybeUninit::uninit());
        self.keys[v][i] = std::mem::replace(&mut self.keys[w][j], k);
        let x = std::mem::replace(&mut self.values[v][i], MaybeUninit::uninit());
        self.values[v][i] = std::mem::replace(&mut self.values[w][j], x);
    }

    /// A hit at `(v, i)`: the multi-step move. Returns the item's new position.
    fn promote(&mut self, v: usize, i: usize) -> (usize, usize) {
        if i > 0 {
            self.rotate_to_front(v, i);
            return (v, 0);
        }
        if v == 0 {
            return (0, 0);
        }
        // Upgrade: swap with the last item of the previous vector (or move into its first
        // free way... which a vector filled from way 0 only has if it is empty).
        let prev = v - 1;
        let last = (0..P).rev().find(|&j| self.tags[prev][j] != EMPTY).unwrap_or(0);
        if self.tags[prev][last] == EMPTY {
            // The previous vector is empty: move there (vector `v` shifts to close the gap).
            self.swap((v, 0), (prev, last));
            self.close_gap(v, 0);
        } else {
            self.swap((v, 0), (prev, last));
        }
        (prev, last)
    }

    /// Way `(v, i)` was emptied: shift the later ways of vector `v` forward (no holes).
    fn close_gap(&mut self, v: usize, i: usize) {
        let n = (i..P).take_while(|&j| j == i || self.tags[v][j] != EMPTY).count();
        self.tags[v][i..i + n].rotate_left(1);
        self.keys[v][i..i + n].rotate_left(1);
        self.values[v][i..i + n].rotate_left(1);
    }
}

/// The first way (vector, way) whose tag is `tag` and which `accept` accepts (the full key
/// check), scanning vectors in order.
#[inline]
fn find_tag<const M: usize, const P: usize>(
    tags: &[[u32; P]; M],
    tag: u32,
    // (Mutable only for the SIMD path, compiled out on other targets and under Miri.)
    #[cfg_attr(not(all(target_arch = "x86_64", not(miri))), allow(unused_mut))]
    mut accept: impl FnMut(usize, usize) -> bool,
) -> Option<(usize, usize)> {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if P == 4 || (P == 8 && std::arch::is_x86_feature_detected!("avx2")) {
        for (v, vec) in tags.iter().enumerate() {
            let mut mask = match <&[u32; 4]>::try_from(&vec[..]) {
                Ok(four) => simd::eq4(four, tag),
                // SAFETY: P is not 4, so P == 8 and AVX2 is available (checked above); `vec`
                // is 8 u32 = 32 readable bytes.
                Err(_) => unsafe { simd::eq8(vec.as_ptr(), tag) },
            };
            while mask != 0 {
                let i = mask.trailing_zeros() as usize;
                if accept(v, i) {
                    return Some((v, i));
                }
                mask &= mask - 1;
            }
        }
        return None;
    }
    find_tag_portable(tags, tag, accept)
}

/// [`find_tag`] without SIMD (other targets, Miri, P other than 4 and 8).
fn find_tag_portable<const M: usize, const P: usize>(
    tags: &[[u32; P]; M],
    tag: u32,
    mut accept: impl FnMut(usize, usize) -> bool,
) -> Option<(usize, usize)> {
    for (v, vec) in tags.iter().enumerate() {
        for (i, &t) in vec.iter().enumerate() {
            if t == tag && accept(v, i) {
                return Some((v, i));
            }
        }
    }
    None
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod simd {
    use std::arch::x86_64::*;

    /// Bit `i` set where `p[i] == tag`, for the four u32 of `p` (SSE2, part of the x86-64
    /// baseline: no detection needed).
    #[inline]
    pub fn eq4(p: &[u32; 4], tag: u32) -> u32 {
        // SAFETY: SSE2 is enabled on every x86-64 target; `p` is 16 readable bytes (unaligned
        // load).
        unsafe {
            let v = _mm_loadu_si128(p.as_ptr() as *const __m128i);
            let eq = _mm_cmpeq_epi32(v, _mm_set1_epi32(tag as i32));
            _mm_movemask_ps(_mm_castsi128_ps(eq)) as u32
        }
    }

    /// Bit `i` set where `p[i] == tag`, for the eight u32 at `p`.
    ///
    /// # Safety
    /// AVX2 is available and `p` points to 32 readable bytes.
    #[target_feature(enable = "avx2")]
    pub unsafe fn eq8(p: *const u32, tag: u32) -> u32 {
        // SAFETY: per the contract (unaligned load).
        let v = unsafe { _mm256_loadu_si256(p as *const __m256i) };
        let eq = _mm256_cmpeq_epi32(v, _mm256_set1_epi32(tag as i32));
        _mm256_movemask_ps(_mm256_castsi256_ps(eq)) as u32
    }
}

/// A concurrent multi-step LRU cache of `M` vectors of `P` ways per set (the paper: `M = 2`,
/// `P = 4`). `M = 1` is in-vector LRU (a `P`-way set-associative LRU).
///
/// ```
/// use sifter::MultiStepCache;
/// let c: MultiStepCache<u64, &str, 2, 4> = MultiStepCache::new(1024);
/// c.insert(1, "one");
/// assert_eq!(c.get(&1), Some("one"));
/// assert_eq!(c.capacity(), 1024);
/// ```
pub struct MultiStepCache<
    K,
    V,
    const M: usize = 2,
    const P: usize = 4,
    S = foldhash::fast::RandomState,
> {
    /// On huge pages when large (`raw/table.rs`): a hit's one line is then no page walk. From
    /// 32 MiB on allocated zeroed and committed as the sets are first written (`raw/table.rs`,
    /// "Large tables"), so a large cache is built at once.
    sets: table::Table<Set<K, V, M, P>>,
    hasher: S,
}

// SAFETY: a set's ways are only touched under its lock (mutual exclusion), keys and values
// move between threads (Send) and are cloned/compared from any thread under the lock.
unsafe impl<K: Send, V: Send, S: Send, const M: usize, const P: usize> Send
    for MultiStepCache<K, V, M, P, S>
{
}
// SAFETY: as above: `&self` methods reach the ways only under the set's lock, so K and V are
// never accessed from two threads at once (Send suffices, as for `Mutex<T>`).
unsafe impl<K: Send, V: Send, S: Sync, const M: usize, const P: usize> Sync
    for MultiStepCache<K, V, M, P, S>
{
}

impl<K, V, const M: usize, const P: usize, S> std::fmt::Debug for MultiStepCache<K, V, M, P, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiStepCache")
            .field("sets", &self.sets.len())
            .field("vectors", &M)
            .field("ways", &P)
            .finish()
    }
}

impl<K: Hash + Eq, V, const M: usize, const P: usize> MultiStepCache<K, V, M, P> {
    /// A cache of `⌊capacity / (M·P)⌋` sets (at least one), foldhash-hashed.
    ///
    /// # Panics
    /// As [`MultiStepCache::with_hasher`].
    pub fn new(capacity: u64) -> Self {
        Self::with_hasher(capacity, foldhash::fast::RandomState::default())
    }

    /// As [`MultiStepCache::new`], or an error for a capacity the sets cannot be allocated
    /// for ([`BuildError::OutOfMemory`]).
    pub fn try_new(capacity: u64) -> Result<Self, BuildError> {
        Self::try_with_hasher(capacity, foldhash::fast::RandomState::default())
    }
}

impl<K: Hash + Eq, V, const M: usize, const P: usize, S: BuildHasher>
    MultiStepCache<K, V, M, P, S>
{
    /// As [`MultiStepCache::new`] with the hasher `hasher`.
    ///
    /// # Panics
    /// If `M` or `P` is 0, `P` above 64 or `M × P` above 65,535; if the sets cannot be
    /// allocated (see [`MultiStepCache::try_with_hasher`]).
    pub fn with_hasher(capacity: u64, hasher: S) -> Self {
        match Self::try_with_hasher(capacity, hasher) {
            Ok(c) => c,
            Err(e) => panic!("MultiStepCache: {e}"),
        }
    }

    /// As [`MultiStepCache::with_hasher`], or an error for a capacity the sets cannot be
    /// allocated for ([`BuildError::OutOfMemory`]).
    ///
    /// # Panics
    /// If `M` or `P` is 0, `P` above 64 (a vector's ways), or `M × P` above 65,535 (a set's
    /// count of filled ways is 16 bits).
    pub fn try_with_hasher(capacity: u64, hasher: S) -> Result<Self, BuildError> {
        assert!(
            M >= 1 && (1..=64).contains(&P) && M * P <= usize::from(u16::MAX),
            "MultiStepCache needs M ≥ 1, 1 ≤ P ≤ 64 and M × P ≤ 65,535"
        );
        let sets = (capacity / (M * P) as u64).max(1);
        let no_memory = |bytes| BuildError::OutOfMemory { capacity, bytes };
        let sets = usize::try_from(sets).map_err(|_| no_memory(usize::MAX))?;
        // SAFETY: an empty set is all zero bytes (an unlocked lock, EMPTY tags, keys and
        // values uninitialised), and a set has no drop glue (its `Drop` is the cache's).
        let sets =
            unsafe { table::Table::zeroed(sets, Set::new) }.map_err(|e| no_memory(e.bytes))?;
        Ok(MultiStepCache { sets, hasher })
    }

    /// Entries the cache can hold: sets × M × P.
    pub fn capacity(&self) -> u64 {
        (self.sets.len() * M * P) as u64
    }

    fn set_of(&self, hash: u64) -> &Set<K, V, M, P> {
        &self.sets[(mix(hash) % self.sets.len() as u64) as usize]
    }

    /// Runs `f` on the ways of `hash`'s set under its lock; `f` returns its result and how
    /// many ways it filled (1), emptied (`u16::MAX`, wrapping) or neither (0), which is added
    /// to the set's count of filled ways before the unlock (see [`count`]).
    fn with_set<R>(&self, hash: u64, f: impl FnOnce(&mut Ways<'_, K, V, M, P>) -> (R, u16)) -> R {
        let set = self.set_of(hash);
        let _g = set.lock();
        // SAFETY: we hold the set's lock: no other reference to its ways exists.
        let mut ways = unsafe {
            Ways {
                tags: &mut *set.tags.get(),
                keys: &mut *set.keys.get(),
                values: &mut *set.values.get(),
            }
        };
        let (r, filled) = f(&mut ways);
        if filled != 0 {
            count(&set.filled, filled);
        }
        r
    }

    /// The way holding `key` (tag `tag`), if any.
    fn find<Q>(ways: &Ways<'_, K, V, M, P>, tag: u32, key: &Q) -> Option<(usize, usize)>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        find_tag(ways.tags, tag, |v, i| {
            // SAFETY: a way with a non-empty tag holds an initialised key.
            unsafe { ways.keys[v][i].assume_init_ref() }.borrow() == key
        })
    }

    /// Returns a clone of `key`'s value and applies the multi-step move (a hit writes only its
    /// own set, under its lock).
    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
        V: Clone,
    {
        let hash = self.hasher.hash_one(key);
        self.with_set(hash, |w| {
            let Some((v, i)) = Self::find(w, tag_of(hash), key) else {
                return (None, 0);
            };
            let (v, i) = w.promote(v, i);
            // SAFETY: the way holds an initialised value (non-empty tag).
            (Some(unsafe { w.values[v][i].assume_init_ref() }.clone()), 0)
        })
    }

    /// Inserts or replaces `key`'s value. A new key may evict the least recent item of its
    /// set's last vector (dropped after the lock is released); a replaced value is dropped too.
    pub fn insert(&self, key: K, value: V) {
        let hash = self.hasher.hash_one(&key);
        let tag = tag_of(hash);
        let dropped: Option<(Option<K>, V)> = self.with_set(hash, |w| {
            if let Some((v, i)) = Self::find(w, tag, &key) {
                let old = std::mem::replace(&mut w.values[v][i], MaybeUninit::new(value));
                w.promote(v, i);
                // SAFETY: the way held an initialised value.
                return (Some((None, unsafe { old.assume_init() })), 0);
            }
            let free = (0..M).find(|&v| w.tags[v][P - 1] == EMPTY);
            let (v, evicted) = match free {
                Some(v) => (v, None),
                None => {
                    let v = M - 1;
                    w.tags[v][P - 1] = EMPTY;
                    let k = std::mem::replace(&mut w.keys[v][P - 1], MaybeUninit::uninit());
                    let x = std::mem::replace(&mut w.values[v][P - 1], MaybeUninit::uninit());
                    // SAFETY: the way was full (non-empty tag before we cleared it).
                    (v, Some(unsafe { (Some(k.assume_init()), x.assume_init()) }))
                }
            };
            let i = (0..P).find(|&j| w.tags[v][j] == EMPTY).unwrap_or(P - 1);
            w.tags[v][i] = tag;
            w.keys[v][i] = MaybeUninit::new(key);
            w.values[v][i] = MaybeUninit::new(value);
            w.rotate_to_front(v, i);
            (evicted, u16::from(free.is_some()))
        });
        drop(dropped);
    }

    /// Removes `key`, returning its value.
    pub fn remove<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hasher.hash_one(key);
        let (k, v) = self.with_set(hash, |w| {
            let Some((v, i)) = Self::find(w, tag_of(hash), key) else {
                return (None, 0);
            };
            w.tags[v][i] = EMPTY;
            let k = std::mem::replace(&mut w.keys[v][i], MaybeUninit::uninit());
            let x = std::mem::replace(&mut w.values[v][i], MaybeUninit::uninit());
            w.close_gap(v, i);
            // SAFETY: the way was full.
            (Some(unsafe { (k.assume_init(), x.assume_init()) }), u16::MAX)
        })?;
        drop(k);
        Some(v)
    }

    /// Entries held now: a walk over every set's count of filled ways, without taking any
    /// lock or writing anything (so it commits none of a fresh large cache's memory). Exact
    /// when quiescent; while others write, each set's count is read once, so the sum is never
    /// more than the capacity.
    pub fn len(&self) -> usize {
        // Relaxed: a count (see [`count`]).
        self.sets.iter().map(|set| usize::from(set.filled.load(Ordering::Relaxed))).sum()
    }

    /// Whether the cache holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks that every vector is filled from way 0 (no holes), that each set's count of
    /// filled ways is right, and that no lock is held (quiescent use, tests).
    pub fn validate(&self) -> Result<(), String> {
        for (s, set) in self.sets.iter().enumerate() {
            if set.lock.load(Ordering::Relaxed) {
                return Err(format!("set {s} is still locked"));
            }
            // SAFETY: quiescent by contract.
            let tags = unsafe { &*set.tags.get() };
            for (v, vec) in tags.iter().enumerate() {
                if let Some(e) = vec.iter().position(|&t| t == EMPTY) {
                    if vec[e..].iter().any(|&t| t != EMPTY) {
                        return Err(format!("set {s} vector {v} has a hole"));
                    }
                }
            }
            let filled = tags.iter().flatten().filter(|&&t| t != EMPTY).count();
            let counted = usize::from(set.filled.load(Ordering::Relaxed));
            if counted != filled {
                return Err(format!("set {s} counts {counted} filled ways, holds {filled}"));
            }
        }
        Ok(())
    }
}

impl<K, V, const M: usize, const P: usize, S> Drop for MultiStepCache<K, V, M, P, S> {
    fn drop(&mut self) {
        if !std::mem::needs_drop::<K>() && !std::mem::needs_drop::<V>() {
            return; // nothing to drop: leave the sets never written uncommitted
        }
        for set in self.sets.iter_mut() {
            let tags = set.tags.get_mut();
            let keys = set.keys.get_mut();
            let values = set.values.get_mut();
            for v in 0..M {
                for i in 0..P {
                    if tags[v][i] != EMPTY {
                        tags[v][i] = EMPTY;
                        // SAFETY: a way with a non-empty tag holds an initialised key and
                        // value, dropped once here (`&mut self`; the tag is cleared first).
                        unsafe {
                            keys[v][i].assume_init_drop();
                            values[v][i].assume_init_drop();
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SIMD scans and the portable loop find the same way, for P = 4 and 8, with tags
    /// from a small alphabet (many matches per set) and an `accept` that rejects some.
    fn same_as_portable<const M: usize, const P: usize>(seed: u64) {
        let mut x = seed;
        let mut next = || {
            x = mix(x.wrapping_add(0x9e3779b97f4a7c15));
            x
        };
        for _ in 0..2000 {
            let tags: [[u32; P]; M] =
                std::array::from_fn(|_| std::array::from_fn(|_| (next() % 5) as u32));
            let tag = (next() % 5) as u32;
            let reject = next() as usize % (M * P + 1);
            let accept = |v: usize, i: usize| v * P + i != reject;
            assert_eq!(
                find_tag(&tags, tag, accept),
                find_tag_portable(&tags, tag, accept),
                "tags {tags:?}, tag {tag}"
            );
        }
    }

    #[test]
    fn simd_scans_match_the_portable_loop() {
        same_as_portable::<1, 4>(1);
        same_as_portable::<2, 4>(2);
        same_as_portable::<4, 4>(3);
        same_as_portable::<2, 8>(4);
        same_as_portable::<1, 8>(5);
        same_as_portable::<2, 2>(6);
    }

    #[test]
    fn tags_fold_both_halves_and_are_never_empty() {
        assert_ne!(tag_of(1), tag_of(1 << 32), "upper-half-only differences count");
        assert_ne!(tag_of(0), EMPTY);
        assert_ne!(tag_of(0x1_0000_0001), EMPTY);
    }
}

//! The concurrent multi-step LRU: the multi-step moves, replacement, removal, and many threads
//! on tiny and larger caches with drop accounting. (Equality with the simulator at one thread:
//! `crates/sifter-sim/tests/concurrent_equivalence.rs`.)

#![allow(clippy::unwrap_used)] // tests

use sifter::MultiStepCache;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

#[test]
fn a_new_item_climbs_one_step_per_hit() {
    // One set of 2 vectors × 2 ways.
    let c: MultiStepCache<u32, u32, 2, 2> = MultiStepCache::new(4);
    assert_eq!(c.capacity(), 4);
    for k in 0..4 {
        c.insert(k, k);
    }
    // A fifth item evicts the LRU item of the last vector.
    c.insert(9, 9);
    assert_eq!(c.len(), 4);
    let resident: Vec<u32> = (0..10).filter(|k| c.get(k).is_some()).collect();
    assert_eq!(resident.len(), 4);
    assert!(resident.contains(&9));
    assert_eq!(c.remove(&9), Some(9));
    assert_eq!(c.get(&9), None);
    assert_eq!(c.len(), 3);
    c.insert(1, 100);
    assert_eq!(c.get(&1), Some(100));
    c.validate().unwrap();
}

#[derive(Debug)]
struct Val(u64, Arc<AtomicUsize>);
impl Drop for Val {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::Relaxed);
    }
}

/// `threads` threads of random gets, inserts and removals on a cache of `cap` entries, keys
/// made by `key` from numbers (with the family's live-key count, for heap keys); then every
/// value created was dropped exactly once (evicted, replaced, removed, or with the cache;
/// `get` returns `Arc` clones, which drop no value) and, if the keys count themselves, every
/// key too.
fn stress<K, const M: usize, const P: usize>(
    cap: u64,
    threads: usize,
    key: fn(u64, &Arc<AtomicUsize>) -> K,
) where
    K: std::hash::Hash + Eq + Send + Sync + 'static,
{
    let drops = Arc::new(AtomicUsize::new(0));
    let created = Arc::new(AtomicUsize::new(0));
    let keys = Arc::new(AtomicUsize::new(0));
    {
        let c: Arc<MultiStepCache<K, Arc<Val>, M, P>> = Arc::new(MultiStepCache::new(cap));
        let barrier = Arc::new(Barrier::new(threads));
        let hs: Vec<_> = (0..threads as u64)
            .map(|t| {
                let (c, drops, created, keys, barrier) =
                    (c.clone(), drops.clone(), created.clone(), keys.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let mut x = t * 7919 + 1;
                    for _ in 0..if cfg!(miri) { 40 } else { 20_000 } {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let k = x % (cap * 3 + 1);
                        let kk = key(k, &keys);
                        match x % 10 {
                            0 => {
                                if let Some(v) = c.remove(&kk) {
                                    assert_eq!(v.0, k, "another key's value removed");
                                }
                                // Counted while others write: never beyond the capacity.
                                assert!(c.len() as u64 <= c.capacity(), "len {}", c.len());
                            }
                            1..=5 => {
                                if let Some(v) = c.get(&kk) {
                                    assert_eq!(v.0, k, "another key's value");
                                }
                            }
                            _ => {
                                created.fetch_add(1, Ordering::Relaxed);
                                c.insert(kk, Arc::new(Val(k, drops.clone())));
                            }
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        c.validate().unwrap();
        assert!(c.len() as u64 <= c.capacity());
        let alive = created.load(Ordering::Relaxed) - drops.load(Ordering::Relaxed);
        assert_eq!(c.len(), alive, "cap {cap}: len against the values alive");
    }
    assert_eq!(drops.load(Ordering::Relaxed), created.load(Ordering::Relaxed), "cap {cap}");
    assert_eq!(keys.load(Ordering::Relaxed), 0, "cap {cap}: keys left alive or dropped twice");
}

fn number(k: u64, _: &Arc<AtomicUsize>) -> u64 {
    k
}

#[test]
fn many_threads_tiny_and_larger_caches() {
    let threads = if cfg!(miri) { 2 } else { 16 };
    stress::<_, 2, 4>(8, threads, number);
    stress::<_, 1, 4>(4, threads, number);
    if !cfg!(miri) {
        stress::<_, 2, 4>(1000, threads, number);
        stress::<_, 4, 4>(64, threads, number);
        stress::<_, 2, 8>(1000, threads, number);
    }
}

/// Exact drop accounting without clones: every value inserted is dropped once — evicted,
/// replaced, removed or with the cache.
#[test]
fn every_value_is_dropped_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let n = if cfg!(miri) { 40 } else { 5000 };
    {
        let c: MultiStepCache<u64, Val, 2, 4> = MultiStepCache::new(16);
        for i in 0..n as u64 {
            c.insert(i % 37, Val(i % 37, drops.clone()));
            if i % 5 == 0 {
                drop(c.remove(&(i % 11)));
            }
        }
        c.validate().unwrap();
    }
    assert_eq!(drops.load(Ordering::Relaxed), n);
}

/// A key that owns heap memory and counts its live instances: the sets move keys between
/// ways (each step of a hit, each replacement), so a key moved twice or never dropped shows.
#[derive(Debug)]
struct Key(Box<u64>, Arc<AtomicUsize>);
impl Key {
    fn new(k: u64, live: &Arc<AtomicUsize>) -> Self {
        live.fetch_add(1, Ordering::Relaxed);
        Key(Box::new(k), live.clone())
    }
}
impl Drop for Key {
    fn drop(&mut self) {
        self.1.fetch_sub(1, Ordering::Relaxed);
    }
}
impl PartialEq for Key {
    fn eq(&self, o: &Self) -> bool {
        *self.0 == *o.0
    }
}
impl Eq for Key {}
impl std::hash::Hash for Key {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.hash(h)
    }
}

/// Keys with heap memory, many threads: every key and value the cache took is dropped exactly
/// once (moved through the ways by hits, replaced, removed, evicted, or with the cache).
#[test]
fn heap_keys_are_moved_and_dropped_once() {
    let threads = if cfg!(miri) { 2 } else { 16 };
    stress::<_, 2, 4>(8, threads, Key::new);
    stress::<_, 2, 4>(64, threads, Key::new);
}

//! Single-threaded behaviour of every policy.

use sifter::{BuildError, Cache, Policy};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn each_policy() -> Vec<(Policy, bool)> {
    let mut v: Vec<(Policy, bool)> = Policy::ALL.iter().map(|&p| (p, true)).collect();
    v.push((Policy::Mobius, false));
    v
}

fn cache(p: Policy, cd: bool, cap: u64) -> Cache<u64, u64> {
    Cache::builder().capacity(cap).policy(p).consecutive_detection(cd).build()
}

#[test]
fn get_insert_remove_replace() {
    for (p, cd) in each_policy() {
        let c = cache(p, cd, 100);
        assert!(c.get(&1).is_none());
        c.insert(1, 10);
        c.insert(2, 20);
        assert_eq!(c.get(&1), Some(10), "{p:?}");
        c.insert(1, 11);
        assert_eq!(c.get(&1), Some(11), "{p:?} replace");
        assert_eq!(c.len(), 2);
        assert!(c.contains_key(&2));
        assert_eq!(c.remove(&2), Some(20));
        assert_eq!(c.remove(&2), None);
        assert!(!c.contains_key(&2));
        assert_eq!(c.len(), 1);
        c.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
        c.clear();
        assert!(c.is_empty());
        c.validate().unwrap_or_else(|e| panic!("{p:?} after clear: {e}"));
    }
}

#[test]
fn capacity_is_respected_at_every_size() {
    for (p, cd) in each_policy() {
        let caps: &[u64] = if cfg!(miri) { &[0, 1, 3] } else { &[0, 1, 2, 3, 8, 100] };
        for &cap in caps {
            let c = cache(p, cd, cap);
            for i in 0..if cfg!(miri) { 60u64 } else { 1000 } {
                c.insert(i % 337, i);
                if i % 3 == 0 {
                    let _ = c.get(&(i % 17));
                }
                if i % 11 == 0 {
                    let _ = c.remove(&(i % 13));
                }
                assert!(c.len() as u64 <= cap, "{p:?} cap {cap}: len {}", c.len());
            }
            c.validate().unwrap_or_else(|e| panic!("{p:?} cap {cap}: {e}"));
        }
    }
}

#[test]
fn sieve_semantics_keep_hot_entries() {
    // A hot key touched between inserts survives a stream of one-hit wonders.
    for (p, cd) in each_policy() {
        // (Prob-LRU promotes a hit only half the time: ten unpromoted hits in a row, likely
        // over 1,000 rounds, let the hot key reach the tail.)
        if p == Policy::Fifo || p == Policy::Lru || p == Policy::ProbLru {
            continue;
        }
        let c = cache(p, cd, 10);
        c.insert(0, 0);
        for i in 1..if cfg!(miri) { 100u64 } else { 1000 } {
            assert_eq!(c.get(&0), Some(0), "{p:?} cd={cd}: hot key evicted at {i}");
            c.insert(i, i);
        }
    }
}

#[test]
fn weighted_caches() {
    for (p, cd) in each_policy() {
        let c: Cache<u64, Vec<u8>> = Cache::builder()
            .weight_capacity(1000)
            .weigher(|_, v: &Vec<u8>| v.len() as u64)
            .policy(p)
            .consecutive_detection(cd)
            .build();
        for i in 0..200u64 {
            c.insert(i, vec![0; (i % 50 + 1) as usize]);
            assert!(c.weight() <= 1000);
        }
        c.insert(7, vec![0; 2000]); // heavier than the cache: not stored, old value gone
        assert!(c.get(&7).is_none());
        // `compute` likewise, and it returns what the key has afterwards: nothing.
        c.insert(8, vec![0; 5]);
        let heavy = |_: Option<&Vec<u8>>| sifter::Op::Put(vec![0; 2000]);
        assert!(c.compute(8, heavy).is_none(), "{p:?}: a value too heavy to store");
        assert!(c.get(&8).is_none(), "{p:?}: the old value of a key computed too heavy");
        assert!(c.compute(9_999, heavy).is_none(), "{p:?}: an absent key computed too heavy");
        c.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
    }
}

#[test]
fn builder_errors() {
    let e = Cache::<u64, u64>::builder().try_build().unwrap_err();
    assert_eq!(e, BuildError::NoCapacity);
    let e = Cache::<u64, u64>::builder().capacity(1).weight_capacity(2).try_build().unwrap_err();
    assert_eq!(e, BuildError::BothCapacities);
    let e = Cache::<u64, u64>::builder().weight_capacity(2).try_build().unwrap_err();
    assert_eq!(e, BuildError::WeigherMismatch);
    assert!("mobius".parse::<Policy>().is_ok() && "nope".parse::<Policy>().is_err());
    let e = Cache::<u64, u64>::builder().capacity(1 << 33).try_build().unwrap_err();
    assert_eq!(e, BuildError::TooLarge(1 << 33));
}

/// A capacity whose tables the machine cannot hold is an error naming it, not an abort (the
/// tables are allocated whole when the cache is built). With 256 KiB values, 10^9 slots need
/// about 2.8 × 10^14 bytes: more than a 47-bit address space (and than any machine's memory,
/// which the kernel's default overcommit heuristic checks).
#[test]
#[cfg_attr(miri, ignore = "Miri's allocator would try to give the bytes")]
fn capacities_beyond_memory_are_errors() {
    type Big = [u64; 1 << 15];
    for (p, _) in each_policy() {
        let e = Cache::<u64, Big>::builder().capacity(1_000_000_000).policy(p).try_build();
        let Err(BuildError::OutOfMemory { capacity, bytes }) = e else {
            panic!("{p:?}: {:?}", e.map(|_| "built"))
        };
        assert_eq!(capacity, 1_000_000_000);
        assert!(bytes > 1 << 47, "{p:?}: {bytes}");
        let msg = BuildError::OutOfMemory { capacity, bytes }.to_string();
        assert!(msg.contains("capacity 1000000000") && msg.contains("bytes failed"), "{msg}");
    }
    // Multi-step LRU's sets: beyond the address space.
    let e = sifter::MultiStepCache::<u64, u64, 2, 4>::try_new(u64::MAX).unwrap_err();
    assert!(matches!(e, BuildError::OutOfMemory { capacity: u64::MAX, .. }), "{e:?}");
    assert!(e.to_string().contains(&format!("capacity {}", u64::MAX)), "{e}");
}

/// Counts drops, to check nothing leaks.
#[derive(Debug)]
struct Tracked(Arc<AtomicUsize>);
impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn values_are_dropped_exactly_once() {
    for (p, cd) in each_policy() {
        let drops = Arc::new(AtomicUsize::new(0));
        let c: Cache<u64, Arc<Tracked>> =
            Cache::builder().capacity(50).policy(p).consecutive_detection(cd).build();
        let n = if cfg!(miri) { 200 } else { 5000 };
        for i in 0..n {
            c.insert(i % 300, Arc::new(Tracked(drops.clone())));
            if i % 7 == 0 {
                let _ = c.remove(&(i % 300));
            }
        }
        c.clear();
        // With no other thread inside the cache, `clear` drops every value before it returns.
        assert_eq!(drops.load(Ordering::Relaxed), n as usize, "{p:?}: values left after clear");
        drop(c);
        assert_eq!(drops.load(Ordering::Relaxed), n as usize, "{p:?}: dropped twice");
    }
}

#[test]
fn drop_releases_live_values_exactly_once() {
    for (p, cd) in each_policy() {
        let drops = Arc::new(AtomicUsize::new(0));
        let c: Cache<u64, Arc<Tracked>> =
            Cache::builder().capacity(20).policy(p).consecutive_detection(cd).build();
        let n = if cfg!(miri) { 100 } else { 3000 };
        for i in 0..n {
            c.insert(i % 97, Arc::new(Tracked(drops.clone())));
            if i % 5 == 0 {
                let _ = c.remove(&(i % 31));
            }
        }
        c.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
        drop(c);
        assert_eq!(drops.load(Ordering::Relaxed), n as usize, "{p:?}: leaked or double drop");
    }
}

#[test]
fn weighted_arena_grows_past_its_estimate() {
    for (p, cd) in each_policy() {
        let c: Cache<u64, u64> = Cache::builder()
            .weight_capacity(10_000)
            .weigher(|_, _| 1)
            .estimated_entries(100)
            .policy(p)
            .consecutive_detection(cd)
            .build();
        let n = if cfg!(miri) { 40 } else { 500 };
        for k in 0..n {
            c.insert(k, k);
        }
        assert_eq!(c.len() as u64, n, "{p:?}: entries evicted while weight remained");
        assert_eq!(c.rejected(), 0);
        c.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
    }
}

/// S3-FIFO's ghost is sized by entries, not by the weight budget: a weight-bounded S3-FIFO
/// cache with a terabyte budget builds with memory for its estimated entries (its ghost once
/// took a table of 16 bytes per unit of weight, and the allocation aborted).
#[test]
fn a_weighted_s3fifo_cache_with_a_huge_budget_builds_small() {
    let c: Cache<u64, u64> = Cache::builder()
        .weight_capacity(1 << 40)
        .weigher(|_, _| 4096)
        .estimated_entries(10_000)
        .policy(Policy::S3Fifo)
        .build();
    for k in 0..20_000u64 {
        c.insert(k, k);
    }
    assert_eq!(c.len(), 20_000);
    assert_eq!(c.get(&7), Some(7));
    c.validate().expect("valid");
}

/// S3-FIFO's ghost at work: a key evicted from the small queue and inserted again soon after
/// is a ghost hit and goes to main, where a flood of new keys (each evicting from small) does
/// not reach it; without the ghost it would go to small and be flooded out.
#[test]
fn s3fifo_ghost_hit_sends_a_returning_key_to_main() {
    let c: Cache<u64, u64> = Cache::builder().capacity(100).policy(Policy::S3Fifo).build();
    for k in 0..100 {
        c.insert(k, k);
    }
    // Full, main empty: key 100 evicts small's head, key 0 (never hit), into the ghost.
    c.insert(100, 100);
    assert!(!c.contains_key(&0));
    c.insert(0, 0);
    for k in 1000..1300 {
        c.insert(k, k);
    }
    assert_eq!(c.get(&0), Some(0), "the returning key was flooded out of small");
    assert!(!c.contains_key(&1), "the flood did not evict from small");
    c.validate().expect("valid");
}

/// S3-FIFO: an update of an entry of main keeps it in main, as the one-at-a-time algorithm
/// does (an update is a hit: the entry stays in its queue). Before, the new version went to
/// small with frequency 1 and a flood of new keys (each evicting from small, main being under
/// its size) evicted it. Unweighted, the update writes in place; weighted (every weight 1),
/// it makes a new version, which inherits the old one's place.
#[test]
fn s3fifo_an_updated_entry_of_main_stays_in_main() {
    let plain: Cache<u64, u64> = Cache::builder().capacity(100).policy(Policy::S3Fifo).build();
    let weighted: Cache<u64, u64> =
        Cache::builder().weight_capacity(100).weigher(|_, _| 1).policy(Policy::S3Fifo).build();
    updated_entry_of_main_stays(plain);
    updated_entry_of_main_stays(weighted);
}

fn updated_entry_of_main_stays(c: Cache<u64, u64>) {
    c.insert(0, 0);
    assert_eq!(c.get(&0), Some(0));
    assert_eq!(c.get(&0), Some(0));
    // Small (10) overflows: key 0, at its head with frequency 2, moves to main; the others
    // (never hit) leave through the ghost.
    for k in 1000..1300 {
        c.insert(k, k);
    }
    // (Not a use: a hit here would raise its frequency, and the update's new version would
    // pass small's threshold on its own.)
    assert!(c.contains_key(&0), "a twice-hit key did not reach main");
    c.insert(0, 1);
    for k in 2000..2300 {
        c.insert(k, k);
    }
    assert_eq!(c.get(&0), Some(1), "the updated entry of main was flooded out of small");
    assert!(!c.contains_key(&2000), "the flood did not evict from small");
    c.validate().expect("valid");
}

/// S3-FIFO under churn at tiny to moderate capacities: mostly new keys and some repeats (ghost
/// hits, which send entries to main), and the bound and the invariants hold throughout.
#[test]
fn s3fifo_churn_with_ghost_hits_keeps_the_bound() {
    for cap in [1u64, 2, 16, 100, 1000] {
        let c: Cache<u64, u64> = Cache::builder().capacity(cap).policy(Policy::S3Fifo).build();
        let mut x = 1u64;
        for i in 0..200_000u64 {
            // Mostly new keys, some repeats (ghost hits), in a scrambled order.
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let k = if i % 4 == 0 { x % 64 } else { x };
            c.insert(k, i);
        }
        assert!(c.len() as u64 <= cap);
        c.validate().unwrap_or_else(|e| panic!("capacity {cap}: {e}"));
    }
}

/// Gives every key one of three hashes: each group of keys shares its whole hash, so a lookup
/// meets words with its tag that name other keys first, and a group of ten overflows its home
/// bucket (seven words). Lookups must still find each key, count each hit and miss once, and
/// keep the policy's state (the read path decides most reads in the home bucket's first
/// tagged word and leaves the rest to the full probe).
#[derive(Clone, Default)]
struct Crowded(u64);

impl std::hash::Hasher for Crowded {
    fn finish(&self) -> u64 {
        0x1555_0000_1234_5678 | ((self.0 % 3) << 62)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.wrapping_mul(31).wrapping_add(u64::from(b));
        }
    }
    fn write_u64(&mut self, k: u64) {
        self.0 = k;
    }
}

#[test]
fn keys_sharing_a_bucket_and_a_tag_are_told_apart() {
    let build = std::hash::BuildHasherDefault::<Crowded>::default();
    for (p, cd) in each_policy() {
        let c: Cache<u64, u64, _> = Cache::builder()
            .capacity(64)
            .policy(p)
            .consecutive_detection(cd)
            .hasher(build.clone())
            .build();
        for k in 0..30 {
            c.insert(k, k * 10);
        }
        for k in 0..30 {
            assert_eq!(c.get(&k), Some(k * 10), "{p:?}: key {k}");
            assert_eq!(c.peek(&k), Some(k * 10), "{p:?}: peek {k}");
        }
        for k in (0..30).step_by(3) {
            assert_eq!(c.remove(&k), Some(k * 10), "{p:?}: remove {k}");
        }
        for k in (1..30).step_by(3) {
            c.insert(k, k * 100);
        }
        let (mut hits, mut misses) = (0, 0);
        for k in 0..40 {
            let want = match k {
                30.. => None,
                _ if k % 3 == 0 => None,
                _ if k % 3 == 1 => Some(k * 100),
                _ => Some(k * 10),
            };
            assert_eq!(c.get(&k), want, "{p:?}: key {k} after removals and replacements");
            if want.is_some() {
                hits += 1;
            } else {
                misses += 1;
            }
        }
        let s = c.stats();
        assert_eq!((s.hits, s.misses), (30 + hits, misses), "{p:?}: hits and misses counted once");
        c.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
    }
}

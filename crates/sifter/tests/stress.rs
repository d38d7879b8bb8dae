//! Concurrent stress: many threads (oversubscribed on a small machine) run random mixes of
//! get/insert/remove on caches from 8 to 10,000 entries; afterwards `validate()` checks every
//! invariant, every value read must belong to its key, every value stored was reported to the
//! eviction listener exactly once (counted against the statistics), and after `clear` + drop
//! every value created has been dropped exactly once.
//!
//! Short by default. Long run: `cargo test -p sifter --release --test stress -- --ignored`
//! (or set `SIFTER_STRESS_SECS`).

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use sifter::{Cache, Policy};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// A value that knows its key and counts its drops.
#[derive(Debug)]
struct Val {
    key: u64,
    drops: Arc<AtomicUsize>,
}
impl Drop for Val {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

fn configs() -> Vec<(Policy, bool)> {
    let mut v: Vec<(Policy, bool)> = Policy::ALL.iter().map(|&p| (p, true)).collect();
    v.push((Policy::Mobius, false));
    v
}

/// With `weighted`, the cache is bounded by weight (1–3 per entry, by key): updates replace
/// their entry's slot (no update in place), so removed slots wait in the queues and hollowing
/// (`raw/slot.rs`) runs on every update.
#[allow(clippy::too_many_arguments)]
fn run(
    policy: Policy,
    cd: bool,
    weighted: bool,
    cap: u64,
    keys: u64,
    threads: usize,
    dur: Duration,
    seed: u64,
) {
    let drops = Arc::new(AtomicUsize::new(0));
    let created = Arc::new(AtomicUsize::new(0));
    let reported = Arc::new(AtomicUsize::new(0));
    let r = reported.clone();
    let b = Cache::builder().policy(policy).consecutive_detection(cd).eviction_listener(
        move |k: &u64, v: &Arc<Val>, _| {
            assert_eq!(*k, v.key, "listener given another key's value");
            r.fetch_add(1, Ordering::Relaxed);
        },
    );
    let cache: Arc<Cache<u64, Arc<Val>>> = Arc::new(if weighted {
        b.weight_capacity(cap).weigher(|k: &u64, _: &Arc<Val>| k % 3 + 1).build()
    } else {
        b.capacity(cap).build()
    });
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (cache, drops, created, barrier) =
                (cache.clone(), drops.clone(), created.clone(), barrier.clone());
            std::thread::spawn(move || {
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed * 1000 + t as u64);
                barrier.wait();
                let end = Instant::now() + dur;
                let mut ops = 0u64;
                while !ops.is_multiple_of(256) || Instant::now() < end {
                    ops += 1;
                    // skewed keys so hot keys are contended
                    let k = (rng.random::<f64>().powi(3) * keys as f64) as u64;
                    match rng.random_range(0..100) {
                        0..60 => {
                            if let Some(v) = cache.get(&k) {
                                assert_eq!(v.key, k, "value of another key returned");
                            } else {
                                created.fetch_add(1, Ordering::Relaxed);
                                cache.insert(k, Arc::new(Val { key: k, drops: drops.clone() }));
                            }
                        }
                        60..85 => {
                            created.fetch_add(1, Ordering::Relaxed);
                            cache.insert(k, Arc::new(Val { key: k, drops: drops.clone() }));
                        }
                        85..95 => {
                            if let Some(v) = cache.remove(&k) {
                                assert_eq!(v.key, k);
                            }
                        }
                        _ => {
                            let _ = cache.contains_key(&k);
                        }
                    }
                }
                ops
            })
        })
        .collect();
    let ops: u64 = handles.into_iter().map(|h| h.join().expect("worker panicked")).sum();
    let tag =
        format!("{policy:?} cd={cd} weighted={weighted} cap={cap} keys={keys} threads={threads}");
    cache.validate().unwrap_or_else(|e| panic!("{tag}: {e}"));
    assert!(cache.len() as u64 <= cap, "{tag}: len {} over capacity at rest", cache.len());
    let s = cache.stats();
    cache.clear();
    cache.validate().unwrap_or_else(|e| panic!("{tag} after clear: {e}"));
    assert_eq!(cache.len(), 0);
    let want = created.load(Ordering::Relaxed);
    // Every value stored left exactly once, reported to the listener; the statistics agree.
    let stored = want - cache.rejected() as usize;
    assert_eq!(reported.load(Ordering::Relaxed), stored, "{tag}: listener reports");
    assert_eq!((s.inserts + s.updates) as usize, stored, "{tag}: stats of writes");
    let cleared = cache.stats().removals - s.removals;
    assert_eq!(
        (s.evictions + s.removals + s.updates + cleared) as usize,
        stored,
        "{tag}: stats of departures"
    );
    // No other thread is inside the cache: `clear` has dropped every value it held.
    assert_eq!(drops.load(Ordering::Relaxed), want, "{tag}: {ops} ops, values left after clear");
    drop(cache);
    assert_eq!(drops.load(Ordering::Relaxed), want, "{tag}: values double-dropped");
}

fn secs(default: f64) -> Duration {
    let s =
        std::env::var("SIFTER_STRESS_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(default);
    Duration::from_secs_f64(s)
}

#[test]
fn stress_small_caches_oversubscribed() {
    for (i, (p, cd)) in configs().into_iter().enumerate() {
        // 300: chains and evictions in batches of 2 on 2 cores (16 stripes).
        for cap in [8u64, 64, 300] {
            for weighted in [false, true] {
                run(p, cd, weighted, cap, cap * 4, 16, secs(0.15), i as u64 + cap);
            }
        }
    }
}

#[test]
fn stress_larger_caches() {
    for (i, (p, cd)) in configs().into_iter().enumerate() {
        run(p, cd, false, 10_000, 40_000, 8, secs(0.6), i as u64);
        run(p, cd, false, 1_000, 4_000, 16, secs(0.4), 50 + i as u64);
        run(p, cd, true, 10_000, 40_000, 8, secs(0.3), 70 + i as u64);
        // 50k entries: 1.6 MB of slots, so the queue policies' inserts read ahead of the
        // eviction scans (`READ_AHEAD_FROM`).
        run(p, cd, false, 50_000, 200_000, 8, secs(0.3), 90 + i as u64);
    }
}

#[test]
#[ignore = "long soak: cargo test -p sifter --release --test stress -- --ignored"]
fn stress_long() {
    for (i, (p, cd)) in configs().into_iter().enumerate() {
        for cap in [8u64, 100, 10_000] {
            for weighted in [false, true] {
                run(p, cd, weighted, cap, cap * 4, 16, secs(5.0), 100 + i as u64 + cap);
            }
        }
    }
}

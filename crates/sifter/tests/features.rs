//! The user features on every policy: statistics, the eviction listener, expiry.

#![allow(clippy::unwrap_used)] // tests: a poisoned lock or a failed join is a failure

use sifter::{Cache, CacheStats, Expiry, ManualClock, Policy, RemovalCause};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn configs() -> Vec<(Policy, bool)> {
    let mut v: Vec<(Policy, bool)> = Policy::ALL.iter().map(|&p| (p, true)).collect();
    v.push((Policy::Mobius, false));
    v
}

type Log = Arc<Mutex<Vec<(u64, u64, RemovalCause)>>>;

fn logged(p: Policy, cd: bool, cap: u64) -> (Cache<u64, u64>, Log) {
    let log: Log = Arc::default();
    let l = log.clone();
    let c = Cache::builder()
        .capacity(cap)
        .policy(p)
        .consecutive_detection(cd)
        .eviction_listener(move |k: &u64, v: &u64, cause| l.lock().unwrap().push((*k, *v, cause)))
        .build();
    (c, log)
}

fn count(log: &Log, cause: RemovalCause) -> u64 {
    log.lock().unwrap().iter().filter(|e| e.2 == cause).count() as u64
}

#[test]
fn stats_count_every_operation_exactly() {
    for (p, cd) in configs() {
        let (c, log) = logged(p, cd, 100);
        for k in 0..150u64 {
            c.insert(k, k);
        }
        for k in 0..10u64 {
            c.insert(149 - k, 0); // updates of resident keys
        }
        // An update takes its capacity before it finds the old value (whose capacity then
        // stays free): in a full cache the first one evicts once more.
        let resident = c.len() as u64;
        assert!(resident == 99 || resident == 100, "{p:?}: {resident}");
        let mut hits = 0;
        for k in 0..150u64 {
            hits += c.get(&k).is_some() as u64;
        }
        let _ = c.peek(&1); // not counted
        let removed = (0..150u64).filter(|k| c.remove(k).is_some()).count() as u64;
        let s = c.stats();
        let tag = format!("{p:?} cd={cd}");
        assert_eq!(s.hits, hits, "{tag}");
        assert_eq!(s.misses, 150 - hits, "{tag}");
        assert_eq!(s.inserts, 150, "{tag}");
        assert_eq!(s.updates, 10, "{tag}");
        assert_eq!(s.evictions, 150 - resident, "{tag}");
        assert_eq!(s.removals, removed, "{tag}");
        assert_eq!(removed, resident, "{tag}");
        assert_eq!(count(&log, RemovalCause::Evicted), 150 - resident, "{tag}");
        assert_eq!(count(&log, RemovalCause::Replaced), 10, "{tag}");
        assert_eq!(count(&log, RemovalCause::Removed), resident, "{tag}");
        assert!((s.hit_ratio() - hits as f64 / 150.0).abs() < 1e-12);
        c.validate().unwrap();
    }
}

#[test]
fn hits_that_write_the_policys_state_are_counted() {
    // Ten entries, no eviction; key 0 hit 300 times, keys 1..10 once each: 309 hits.
    for (p, cd) in configs() {
        let c: Cache<u64, u64> =
            Cache::builder().capacity(100).policy(p).consecutive_detection(cd).build();
        for k in 0..10u64 {
            c.insert(k, k);
        }
        for _ in 0..300 {
            assert_eq!(c.get(&0), Some(0));
        }
        for k in 1..10u64 {
            assert_eq!(c.get(&k), Some(k));
        }
        let _ = c.peek(&5); // not a hit
        c.insert(3, 33); // an update is a use, but not a lookup's hit
        c.validate().unwrap();
        let s = c.stats();
        assert_eq!(s.hits, 309, "{p:?}");
        // Reference bits are set once each; frequencies rise to their caps (S3-FIFO's 3,
        // NbQ-CLOCK's 255); FIFO writes nothing; LRU takes its lock on every hit.
        let want = match p {
            Policy::Mobius | Policy::Sieve | Policy::Clock => 10,
            Policy::Fifo => 0,
            Policy::S3Fifo => 3 + 9,
            Policy::NbqClock => 255 + 9,
            Policy::Lru => 309,
            Policy::ProbLru => {
                // The coin (q = 0.5 by default): well inside the binomial's spread.
                assert!((100..=209).contains(&s.hit_writes), "Prob-LRU: {}", s.hit_writes);
                continue;
            }
        };
        assert_eq!(s.hit_writes, want, "{p:?} cd={cd}");
    }
    // Prob-LRU at its ends: q = 1 is FIFO, q = 0 is LRU.
    for (q, want) in [(1.0, 0), (0.0, 20)] {
        let c: Cache<u64, u64> =
            Cache::builder().capacity(10).policy(Policy::ProbLru).promotion_skip(q).build();
        c.insert(1, 1);
        for _ in 0..20 {
            c.get(&1);
        }
        assert_eq!(c.stats().hit_writes, want, "q = {q}");
    }
}

#[test]
fn listener_reports_values_and_causes() {
    for (p, cd) in configs() {
        let (c, log) = logged(p, cd, 4);
        c.insert(1, 10);
        c.insert(1, 11);
        assert_eq!(log.lock().unwrap().as_slice(), &[(1, 10, RemovalCause::Replaced)]);
        assert_eq!(c.remove(&1), Some(11));
        assert_eq!(log.lock().unwrap()[1], (1, 11, RemovalCause::Removed));
        c.insert(2, 20);
        c.insert(3, 30);
        c.clear();
        let mut cleared: Vec<_> =
            log.lock().unwrap()[2..].iter().map(|e| (e.0, e.1, e.2)).collect();
        cleared.sort();
        assert_eq!(cleared, vec![(2, 20, RemovalCause::Cleared), (3, 30, RemovalCause::Cleared)]);
        assert_eq!(c.stats().removals, 3);
        c.validate().unwrap();
    }
}

#[test]
fn a_panicking_listener_leaves_the_cache_consistent() {
    for (p, cd) in configs() {
        let c: Cache<u64, u64> = Cache::builder()
            .capacity(8)
            .policy(p)
            .consecutive_detection(cd)
            .eviction_listener(|k: &u64, _: &u64, _| {
                if k.is_multiple_of(3) {
                    panic!("listener panic for {k}");
                }
            })
            .build();
        let mut panics = 0;
        for k in 0..100u64 {
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c.insert(k, k))).is_err() {
                panics += 1;
            }
            assert!(c.len() <= 8);
        }
        assert!(panics > 0);
        // Every insert completed despite the panics: the last 8 keys include the newest.
        assert_eq!(c.get(&99), Some(99));
        c.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
        assert_eq!(c.stats().evictions, 92);
    }
}

/// Under oversubscription every value that leaves is reported exactly once, and reported
/// values plus resident ones are every value stored.
/// A listener that inserts into its own full cache: the nested insert cannot get tokens (the
/// insert whose eviction called the listener holds them) and is refused at once, not after
/// waiting for other threads (`WAIT`, 200 ms each: 20 inserts took 3.8 s before); the outer
/// inserts are stored.
#[test]
fn listener_inserting_into_its_full_cache_does_not_wait() {
    for (p, cd) in configs() {
        let me: Arc<std::sync::OnceLock<std::sync::Weak<Cache<u64, u64>>>> = Arc::default();
        let m2 = me.clone();
        let c = Arc::new(
            Cache::builder()
                .capacity(1)
                .policy(p)
                .consecutive_detection(cd)
                .eviction_listener(move |k: &u64, _: &u64, _| {
                    if let Some(c) = m2.get().and_then(std::sync::Weak::upgrade) {
                        if *k < 1000 {
                            c.insert(*k + 1000, 0);
                        }
                    }
                })
                .build(),
        );
        me.set(Arc::downgrade(&c)).unwrap();
        let t = std::time::Instant::now();
        for k in 0..20 {
            c.insert(k, k);
        }
        let took = t.elapsed();
        assert!(took < Duration::from_secs(2), "{p:?} cd={cd}: 20 inserts took {took:?}");
        assert_eq!((c.rejected(), c.len(), c.get(&19)), (19, 1, Some(19)), "{p:?} cd={cd}");
        c.validate().unwrap();
    }
}

#[test]
fn listener_exactly_once_under_concurrency() {
    let threads = 8;
    for (p, cd) in configs() {
        for cap in [1u64, 8, 64, 1000] {
            let reported = Arc::new(Mutex::new(HashSet::new()));
            let dup = Arc::new(AtomicU64::new(0));
            let (r, d) = (reported.clone(), dup.clone());
            let c: Arc<Cache<u64, u64>> = Arc::new(
                Cache::builder()
                    .capacity(cap)
                    .policy(p)
                    .consecutive_detection(cd)
                    .eviction_listener(move |_: &u64, v: &u64, _| {
                        if !r.lock().unwrap().insert(*v) {
                            d.fetch_add(1, Ordering::Relaxed);
                        }
                    })
                    .build(),
            );
            let next = Arc::new(AtomicU64::new(0));
            let hs: Vec<_> = (0..threads)
                .map(|t| {
                    let (c, next) = (c.clone(), next.clone());
                    std::thread::spawn(move || {
                        let mut x = t as u64 * 7919 + 1;
                        for _ in 0..3000 {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            let k = x % (cap * 3 + 5);
                            match x % 10 {
                                0 => {
                                    c.remove(&k);
                                }
                                1..=4 => {
                                    c.get(&k);
                                }
                                _ => {
                                    let v = next.fetch_add(1, Ordering::Relaxed);
                                    c.insert(k, v);
                                }
                            }
                        }
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            let tag = format!("{p:?} cd={cd} cap={cap}");
            c.validate().unwrap_or_else(|e| panic!("{tag}: {e}"));
            assert_eq!(dup.load(Ordering::Relaxed), 0, "{tag}: a value was reported twice");
            let stored = next.load(Ordering::Relaxed) - c.rejected();
            let resident = c.len() as u64;
            let n_reported = reported.lock().unwrap().len() as u64;
            assert_eq!(n_reported + resident, stored, "{tag}");
            let s = c.stats();
            assert_eq!(s.inserts + s.updates, stored, "{tag}");
            assert_eq!(s.evictions + s.removals + s.updates, n_reported, "{tag}");
            c.clear();
            assert_eq!(reported.lock().unwrap().len() as u64, stored, "{tag}: after clear");
        }
    }
}

fn expiring(p: Policy, ttl: Option<u64>, tti: Option<u64>) -> (Cache<u64, u64>, ManualClock, Log) {
    let clock = ManualClock::new();
    let log: Log = Arc::default();
    let l = log.clone();
    let mut b = Cache::builder()
        .capacity(100)
        .policy(p)
        .clock(clock.clone())
        .per_entry_expiry()
        .eviction_listener(move |k: &u64, v: &u64, cause| l.lock().unwrap().push((*k, *v, cause)));
    if let Some(t) = ttl {
        b = b.time_to_live(Duration::from_secs(t));
    }
    if let Some(t) = tti {
        b = b.time_to_idle(Duration::from_secs(t));
    }
    (b.build(), clock, log)
}

const S: Duration = Duration::from_secs(1);

#[test]
fn time_to_live() {
    for p in Policy::ALL {
        let (c, clock, log) = expiring(p, Some(10), None);
        c.insert(1, 1);
        clock.advance(9 * S);
        assert_eq!(c.get(&1), Some(1));
        c.insert(2, 2);
        clock.advance(S);
        assert_eq!(c.get(&1), None, "{p:?}: expired at exactly its deadline");
        assert!(!c.contains_key(&1));
        assert_eq!(c.peek(&2), Some(2));
        assert_eq!(log.lock().unwrap().as_slice(), &[(1, 1, RemovalCause::Expired)]);
        // A replacement restarts the time to live.
        clock.advance(5 * S);
        c.insert(2, 3);
        clock.advance(9 * S);
        assert_eq!(c.get(&2), Some(3));
        let s = c.stats();
        assert_eq!(s.expirations, 1);
        assert_eq!(s.misses, 1);
        c.validate().unwrap();
    }
}

#[test]
fn time_to_idle_and_both() {
    for p in Policy::ALL {
        let (c, clock, _) = expiring(p, None, Some(10));
        c.insert(1, 1);
        for _ in 0..5 {
            clock.advance(8 * S);
            assert_eq!(c.get(&1), Some(1), "{p:?}: reads keep it alive");
        }
        clock.advance(8 * S);
        let _ = c.peek(&1); // not a read for time-to-idle
        clock.advance(2 * S);
        assert_eq!(c.get(&1), None, "{p:?}: idle for 10 s");

        let (c, clock, _) = expiring(p, Some(30), Some(10));
        c.insert(1, 1);
        for _ in 0..3 {
            clock.advance(9 * S);
            assert_eq!(c.get(&1), Some(1));
        }
        clock.advance(3 * S);
        assert_eq!(c.get(&1), None, "{p:?}: the time to live caps the idle extensions");
    }
}

#[test]
fn per_entry_ttl_and_custom_expiry() {
    for p in Policy::ALL {
        let (c, clock, _) = expiring(p, Some(100), None);
        c.insert_with_ttl(1, 1, Some(S));
        c.insert_with_ttl(2, 2, None);
        c.insert(3, 3);
        clock.advance(2 * S);
        assert_eq!(c.get(&1), None);
        clock.advance(1000 * S);
        assert_eq!(c.get(&2), Some(2), "{p:?}: never expires");
        assert_eq!(c.get(&3), None);
    }

    /// Lifetime = value seconds; reads add one second; updates keep what was left.
    struct Custom;
    impl Expiry<u64, u64> for Custom {
        fn expire_after_create(&self, _: &u64, v: &u64) -> Option<Duration> {
            Some(Duration::from_secs(*v))
        }
        fn expire_after_update(
            &self,
            _: &u64,
            _: &u64,
            left: Option<Duration>,
        ) -> Option<Duration> {
            left
        }
        fn expire_after_read(&self, _: &u64, _: &u64, left: Option<Duration>) -> Option<Duration> {
            left.map(|l| l + S)
        }
        fn reads_change_expiry(&self) -> bool {
            true
        }
    }
    let clock = ManualClock::new();
    let c: Cache<u64, u64> =
        Cache::builder().capacity(10).expiry(Custom).clock(clock.clone()).build();
    c.insert(1, 5);
    clock.advance(4 * S);
    assert_eq!(c.get(&1), Some(5)); // 1 s left, +1 → 2 s
    c.insert(1, 100); // update keeps the 2 s
    clock.advance(S);
    assert_eq!(c.peek(&1), Some(100));
    clock.advance(S);
    assert_eq!(c.get(&1), None);
}

#[test]
#[should_panic(expected = "insert_with_ttl on a cache built without expiry")]
fn insert_with_ttl_needs_expiry() {
    let c: Cache<u64, u64> = Cache::builder().capacity(10).build();
    c.insert_with_ttl(1, 1, None);
}

/// The sweep takes expired entries before live ones, whatever their reference bits.
#[test]
fn eviction_takes_expired_entries_first() {
    for p in [Policy::Mobius, Policy::Clock, Policy::Sieve] {
        let (c, clock, log) = expiring(p, None, None);
        for k in 0..100u64 {
            if k % 2 == 0 {
                c.insert_with_ttl(k, k, Some(S));
            } else {
                c.insert(k, k);
            }
            c.get(&k);
        }
        clock.advance(2 * S);
        for k in 100..150u64 {
            c.insert(k, k);
        }
        let log = log.lock().unwrap();
        assert_eq!(log.len(), 50, "{p:?}");
        assert!(
            log.iter().all(|e| e.2 == RemovalCause::Expired && e.0 % 2 == 0),
            "{p:?}: only the expired entries left, as expired: {log:?}"
        );
        for k in (1..100u64).step_by(2) {
            assert_eq!(c.peek(&k), Some(k), "{p:?}");
        }
    }
}

/// A churny workload with a time to live shorter than most reuse distances: the bound holds
/// at every sample and expired entries are reported as such. Midway each thread moves the
/// clock past the time to live at once, so every entry cached then has expired when the next
/// inserts evict it, whatever the interleaving (with the small steps alone, whether any entry
/// outlived 50 ms depended on the threads' schedule: 2–4 runs in 16 saw none).
#[test]
fn churn_with_expiry_stays_bounded() {
    let clock = ManualClock::new();
    let causes: Arc<Mutex<HashMap<RemovalCause, u64>>> = Arc::default();
    let cs = causes.clone();
    let c: Arc<Cache<u64, u64>> = Arc::new(
        Cache::builder()
            .capacity(256)
            .time_to_live(Duration::from_millis(50))
            .clock(clock.clone())
            .eviction_listener(move |_: &u64, _: &u64, cause| {
                *cs.lock().unwrap().entry(cause).or_default() += 1
            })
            .build(),
    );
    let hs: Vec<_> = (0..4u64)
        .map(|t| {
            let (c, clock) = (c.clone(), clock.clone());
            std::thread::spawn(move || {
                for i in 0..20_000u64 {
                    let k = (i * 31 + t * 7) % 2000;
                    if c.get(&k).is_none() {
                        c.insert(k, i);
                    }
                    if i % 100 == 0 {
                        clock.advance(Duration::from_millis(1));
                    }
                    if i == 10_000 {
                        clock.advance(Duration::from_millis(60));
                    }
                    assert!(c.len() <= 256);
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    c.validate().unwrap();
    let causes = causes.lock().unwrap();
    assert!(causes.get(&RemovalCause::Expired).copied().unwrap_or(0) > 0, "{causes:?}");
    let s: CacheStats = c.stats();
    assert_eq!(s.expirations, causes[&RemovalCause::Expired]);
}

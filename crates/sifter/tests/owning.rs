//! Owning a cache (`CacheBuilder::owner_bias`): a thread that uses a cache alone claims it and
//! skips the barriers; another thread's first operation takes it back. These tests check who
//! owns when, that the features that run user code inside operations rule owning out, and
//! that nothing waits forever. (`tests/loom.rs` model-checks the protocol itself;
//! `tests/stress.rs` `stress_owning_oversubscribed` runs it under oversubscription.)

#![allow(clippy::unwrap_used)] // tests

use sifter::{Cache, Policy};
use std::sync::Arc;
use std::time::Duration;

fn work(c: &Cache<u64, u64>, n: u64, salt: u64) {
    for i in 0..n {
        let k = (i * 7 + salt) % 3000;
        if c.get(&k).is_none() {
            c.insert(k, k);
        }
    }
}

#[test]
fn a_lone_thread_owns_and_another_takes_over() {
    if !sifter::owner_bias_available() {
        eprintln!("skipped: no membarrier here, nobody owns a cache");
        return;
    }
    for p in Policy::ALL {
        let c: Arc<Cache<u64, u64>> = Arc::new(Cache::builder().capacity(1000).policy(p).build());
        work(&c, 20_000, 0);
        assert!(c.owned_by_current_thread(), "{p:?}: a lone thread did not claim the cache");
        let c2 = c.clone();
        std::thread::spawn(move || {
            work(&c2, 20_000, 1);
            assert!(c2.owned_by_current_thread(), "{p:?}: the second thread did not claim it");
        })
        .join()
        .unwrap();
        assert!(!c.owned_by_current_thread(), "{p:?}: two owners");
        // Its first operation takes the cache back (a revocation), and it claims again later.
        work(&c, 20_000, 2);
        assert!(c.owned_by_current_thread(), "{p:?}: the first thread did not claim it again");
        c.validate().unwrap();
        assert!(c.len() <= 1000);
    }
}

#[test]
fn owning_is_ruled_out_by_a_listener_a_custom_expiry_or_the_builder() {
    struct Forever;
    impl sifter::Expiry<u64, u64> for Forever {
        fn expire_after_create(&self, _: &u64, _: &u64) -> Option<Duration> {
            None
        }
    }
    let caches: Vec<(&str, Cache<u64, u64>)> = vec![
        ("listener", Cache::builder().capacity(1000).eviction_listener(|_, _, _| {}).build()),
        ("custom expiry", Cache::builder().capacity(1000).expiry(Forever).build()),
        ("owner_bias(false)", Cache::builder().capacity(1000).owner_bias(false).build()),
    ];
    for (what, c) in caches {
        work(&c, 50_000, 0);
        assert!(!c.owned_by_current_thread(), "{what}: owned");
    }
}

/// A listener that waits for another thread's `get` of the same cache: the cache is never
/// owned, so the other thread does not wait for the listener's operation (which would never
/// end).
#[test]
fn a_listener_may_wait_for_another_threads_operation() {
    let c: Arc<std::sync::OnceLock<Cache<u64, u64>>> = Arc::new(std::sync::OnceLock::new());
    let c2 = c.clone();
    let cache = Cache::builder()
        .capacity(100)
        .eviction_listener(move |k: &u64, _: &u64, _| {
            if k.is_multiple_of(500) {
                let c3 = c2.clone();
                std::thread::spawn(move || {
                    let _ = c3.get().unwrap().get(&1);
                })
                .join()
                .unwrap();
            }
        })
        .build();
    assert!(c.set(cache).is_ok());
    let (tx, rx) = std::sync::mpsc::channel();
    let c4 = c.clone();
    std::thread::spawn(move || {
        let cache = c4.get().unwrap();
        for k in 0..20_000u64 {
            cache.insert(k, k);
        }
        tx.send(()).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(60)).expect("stuck: a listener waited for an owner");
}

/// Values whose clone and drop take time: an owner preempted or slow in an operation delays a
/// second thread's first operation (its revocation waits for the owner's operation to end),
/// and only that one.
#[test]
fn revocation_waits_only_for_the_owners_current_operation() {
    let c: Arc<Cache<u64, u64>> = Arc::new(Cache::builder().capacity(1000).build());
    let c2 = c.clone();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s2 = stop.clone();
    let owner = std::thread::spawn(move || {
        let mut i = 0;
        while !s2.load(std::sync::atomic::Ordering::Relaxed) {
            work(&c2, 1000, i);
            i += 1;
        }
    });
    // Let the owner claim, then come in many times.
    std::thread::sleep(Duration::from_millis(50));
    for round in 0..200u64 {
        work(&c, 100, round);
        std::thread::sleep(Duration::from_micros(200));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    owner.join().unwrap();
    c.validate().unwrap();
}

//! Small single- and multi-threaded runs sized for Miri (`scripts/miri.sh`), which checks the
//! unsafe core for undefined behaviour: use-after-free, data races, invalid pointers, leaks.
//! (They also run as ordinary tests.)

use sifter::{Cache, Policy};
use std::sync::Arc;

fn configs() -> Vec<(Policy, bool)> {
    let mut v: Vec<(Policy, bool)> = Policy::ALL.iter().map(|&p| (p, true)).collect();
    v.push((Policy::Mobius, false));
    v
}

#[test]
fn single_thread_all_operations() {
    for (p, cd) in configs() {
        let c: Cache<u32, String> =
            Cache::builder().capacity(4).policy(p).consecutive_detection(cd).build();
        for i in 0..40u32 {
            c.insert(i % 9, format!("v{i}"));
            if let Some(v) = c.get(&(i % 5)) {
                assert!(v.starts_with('v'));
            }
            if i % 4 == 0 {
                let _ = c.remove(&(i % 7));
            }
        }
        c.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
        c.clear();
    }
}

#[test]
fn two_threads_contend() {
    for (p, cd) in configs() {
        let c: Arc<Cache<u32, Arc<String>>> =
            Arc::new(Cache::builder().capacity(3).policy(p).consecutive_detection(cd).build());
        let hs: Vec<_> = (0..2u32)
            .map(|t| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for i in 0..30u32 {
                        let k = (i * (t + 1)) % 6;
                        match c.get(&k) {
                            Some(v) => assert_eq!(*v, format!("{k}"), "another key's value"),
                            None => c.insert(k, Arc::new(format!("{k}"))),
                        }
                        if i % 3 == 0 {
                            // An update of a resident key (in place when nobody reads it).
                            c.insert(k, Arc::new(format!("{k}")));
                        }
                        if i % 5 == 0 {
                            let _ = c.remove(&k);
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().expect("thread");
        }
        c.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
    }
}

/// The user features over the unsafe core: expiry times stored after each slot, listener
/// reads of departing entries, walks, loaders, and `Drop`s that panic.
#[test]
fn features_single_thread() {
    use sifter::{ManualClock, Op};
    use std::time::Duration;
    for p in Policy::ALL {
        let clock = ManualClock::new();
        let left = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let l = left.clone();
        let c: Cache<u32, String> = Cache::builder()
            .capacity(4)
            .policy(p)
            .time_to_live(Duration::from_secs(5))
            .clock(clock.clone())
            .eviction_listener(move |_: &u32, v: &String, _| {
                assert!(v.starts_with('v'));
                l.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            })
            .build();
        for i in 0..30u32 {
            c.insert(i % 7, format!("v{i}"));
            let _ = c.get_with(i % 5, || format!("v{i}"));
            if i % 6 == 0 {
                clock.advance(Duration::from_secs(3));
            }
            if i % 5 == 0 {
                c.compute(i % 3, |v| match v {
                    Some(_) => Op::Remove,
                    None => Op::Put(format!("v{i}")),
                });
            }
        }
        let _ = c.iter().count();
        c.retain(|k, _| k % 2 == 0);
        c.purge_expired();
        c.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
        c.clear();
        assert!(left.load(std::sync::atomic::Ordering::Relaxed) > 0);
    }
}

/// The multi-step LRU's unsafe ways (moves of uninitialised-or-not keys and values) on two
/// threads, and its drops.
#[test]
fn multistep_two_threads() {
    let c: Arc<sifter::MultiStepCache<u32, String, 2, 2>> =
        Arc::new(sifter::MultiStepCache::new(4));
    let c2 = c.clone();
    let t = std::thread::spawn(move || {
        for i in 0..30u32 {
            c2.insert(i % 7, format!("a{i}"));
            let _ = c2.get(&(i % 5));
        }
    });
    for i in 0..30u32 {
        c.insert(i % 6, format!("b{i}"));
        let _ = c.remove(&(i % 4));
        let _ = c.get(&(i % 3));
    }
    t.join().expect("thread");
    c.validate().expect("invariants");
}

/// Updates in place never write a value their own thread is reading: inside `retain`'s
/// closure (the thread holding the entry's slot with its hazard, and `&V`; its nested insert
/// has no hazard left and pins), an insert of the same key makes a new version
/// instead, and the `&V` still reads the old value (Miri would report the write under a live
/// shared borrow). Outside, with nobody reading, the update writes in place: the old value
/// is released at once (a new version would hold its slot, and the value, until the slot's
/// reuse), and no capacity is taken for it.
#[test]
fn updates_in_place_leave_values_being_read_alone() {
    for (p, cd) in configs() {
        let c: Cache<u64, Arc<String>> =
            Cache::builder().capacity(4).policy(p).consecutive_detection(cd).build();
        c.insert(1, Arc::new("old".to_string()));
        c.retain(|k, v| {
            if *k == 1 {
                c.insert(1, Arc::new("new".to_string()));
                assert_eq!(**v, "old", "{p:?}: the value being read was overwritten");
            }
            true
        });
        assert_eq!(c.get(&1).as_deref().map(String::as_str), Some("new"), "{p:?}");
        for k in 2..=4 {
            c.insert(k, Arc::new(k.to_string()));
        }
        c.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
        let before = c.stats();
        for round in 0..3 {
            for k in 1..=4 {
                let old = c.get(&k).expect("resident");
                c.insert(k, Arc::new(format!("{k}.{round}")));
                assert_eq!(Arc::strong_count(&old), 1, "{p:?}: the old value was kept");
            }
        }
        let s = c.stats();
        assert_eq!(s.updates - before.updates, 12, "{p:?}");
        assert_eq!(s.evictions, before.evictions, "{p:?}: an update evicted");
        assert_eq!(c.len(), 4, "{p:?}");
        for k in 1..=4 {
            assert_eq!(*c.get(&k).expect("resident"), format!("{k}.2"), "{p:?}");
        }
        c.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
    }
}

//! User code that panics — a key's `Hash` or `Eq`, a value's `Clone` or `Drop`, the weigher, an
//! expiry function — leaves the cache consistent (`validate`), holding no lock, leaking
//! nothing, and serving other threads.

#![allow(clippy::unwrap_used)] // tests

use sifter::{Cache, Expiry, ManualClock, Policy};
use std::hash::{Hash, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Which user code panics now (one test at a time: the tests share these switches).
static HASH: AtomicBool = AtomicBool::new(false);
static EQ: AtomicBool = AtomicBool::new(false);
static CLONE: AtomicBool = AtomicBool::new(false);
static DROP: AtomicBool = AtomicBool::new(false);
static SERIAL: Mutex<()> = Mutex::new(());

/// A key whose `Hash`/`Eq` panic for odd keys while switched on.
#[derive(Debug, Clone)]
struct Key(u64);
impl Hash for Key {
    fn hash<H: Hasher>(&self, h: &mut H) {
        if HASH.load(Ordering::SeqCst) && self.0 % 2 == 1 {
            panic!("Hash of {}", self.0);
        }
        self.0.hash(h)
    }
}
impl PartialEq for Key {
    fn eq(&self, o: &Self) -> bool {
        if EQ.load(Ordering::SeqCst) && self.0 % 2 == 1 {
            panic!("Eq of {}", self.0);
        }
        self.0 == o.0
    }
}
impl Eq for Key {}

/// A value counting its live instances, whose `Clone`/`Drop` panic while switched on.
#[derive(Debug)]
struct Val(u64, Arc<AtomicU64>);
impl Val {
    fn new(v: u64, live: &Arc<AtomicU64>) -> Self {
        live.fetch_add(1, Ordering::SeqCst);
        Val(v, live.clone())
    }
}
impl Clone for Val {
    fn clone(&self) -> Self {
        if CLONE.load(Ordering::SeqCst) {
            panic!("Clone of {}", self.0);
        }
        Val::new(self.0, &self.1)
    }
}
impl Drop for Val {
    fn drop(&mut self) {
        self.1.fetch_sub(1, Ordering::SeqCst);
        if DROP.load(Ordering::SeqCst) && self.0.is_multiple_of(7) && !std::thread::panicking() {
            panic!("Drop of {}", self.0);
        }
    }
}

fn off() {
    for s in [&HASH, &EQ, &CLONE, &DROP] {
        s.store(false, Ordering::SeqCst);
    }
}

/// Runs `ops` on a cache of every policy with switch `on` set, then checks the cache: valid,
/// usable from another thread, and every value dropped once it is cleared and dropped.
fn check(on: &AtomicBool, ops: impl Fn(&Cache<Key, Val>, &Arc<AtomicU64>, u64)) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for p in Policy::ALL {
        let live = Arc::new(AtomicU64::new(0));
        {
            let c: Arc<Cache<Key, Val>> = Arc::new(Cache::builder().capacity(16).policy(p).build());
            for k in 0..16 {
                c.insert(Key(k), Val::new(k, &live));
            }
            on.store(true, Ordering::SeqCst);
            let mut panics = 0;
            for i in 0..200u64 {
                if catch_unwind(AssertUnwindSafe(|| ops(&c, &live, i))).is_err() {
                    panics += 1;
                }
            }
            off();
            assert!(panics > 0, "{p:?}: the user code never panicked");
            c.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
            assert!(c.len() <= 16);
            // Another thread uses it (no lock left held).
            let c2 = c.clone();
            let l2 = live.clone();
            std::thread::spawn(move || {
                for k in 100..200 {
                    c2.insert(Key(k), Val::new(k, &l2));
                    assert!(c2.get(&Key(k)).is_some() || c2.rejected() > 0);
                }
            })
            .join()
            .unwrap();
            c.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
            c.clear();
        }
        assert_eq!(live.load(Ordering::SeqCst), 0, "{p:?}: values leaked");
    }
}

#[test]
fn panicking_hash() {
    check(&HASH, |c, live, i| {
        c.insert(Key(i), Val::new(i, live));
        let _ = c.get(&Key(i / 2));
        let _ = c.remove(&Key(i / 3));
    });
}

#[test]
fn panicking_eq() {
    check(&EQ, |c, live, i| {
        c.insert(Key(i % 40), Val::new(i, live));
        let _ = c.get(&Key(i % 40));
        let _ = c.remove(&Key(i % 13));
    });
}

#[test]
fn panicking_clone() {
    check(&CLONE, |c, live, i| {
        c.insert(Key(i % 40), Val::new(i, live));
        let _ = c.get(&Key(i % 40));
        let _ = c.remove(&Key(i % 13));
        let _ = c.iter().count();
    });
}

#[test]
fn panicking_drop() {
    check(&DROP, |c, live, i| {
        c.insert(Key(i % 40), Val::new(i, live));
        let _ = c.remove(&Key(i % 13));
        if i % 50 == 0 {
            c.clear();
        }
    });
}

#[test]
fn panicking_weigher_and_expiry() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    struct Bad;
    impl Expiry<u64, u64> for Bad {
        fn expire_after_create(&self, k: &u64, _: &u64) -> Option<Duration> {
            assert!(!k.is_multiple_of(5), "expiry of {k}");
            Some(Duration::from_secs(10))
        }
        fn expire_after_update(&self, k: &u64, _: &u64, _: Option<Duration>) -> Option<Duration> {
            assert!(!k.is_multiple_of(3), "update expiry of {k}");
            Some(Duration::from_secs(10))
        }
    }
    for p in Policy::ALL {
        let clock = ManualClock::new();
        let c: Cache<u64, u64> =
            Cache::builder().capacity(16).policy(p).expiry(Bad).clock(clock.clone()).build();
        let w: Cache<u64, u64> = Cache::builder()
            .weight_capacity(100)
            .policy(p)
            .weigher(|k: &u64, _: &u64| {
                assert!(!k.is_multiple_of(4), "weigher of {k}");
                5
            })
            .build();
        for i in 0..200u64 {
            let _ = catch_unwind(AssertUnwindSafe(|| c.insert(i % 30, i)));
            let _ = catch_unwind(AssertUnwindSafe(|| w.insert(i % 30, i)));
            if i % 20 == 0 {
                clock.advance(Duration::from_secs(3));
            }
        }
        c.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
        w.validate().unwrap_or_else(|e| panic!("{p:?}: {e}"));
        assert!(w.weight() <= 100);
        c.insert(1, 1);
        assert_eq!(c.get(&1), Some(1));
    }
}

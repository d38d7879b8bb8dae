//! Loaders: one load per key among concurrent misses, failures, panics, re-entrance, async.

#![allow(clippy::unwrap_used)] // tests: a failed join is a failure

use sifter::{Cache, Policy};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

const THREADS: usize = 12;

/// Runs `f` on `THREADS` threads released together; their results in thread order.
fn race<R: Send + 'static>(f: impl Fn() -> R + Send + Sync + 'static) -> Vec<R> {
    let f = Arc::new(f);
    let barrier = Arc::new(Barrier::new(THREADS));
    let hs: Vec<_> = (0..THREADS)
        .map(|_| {
            let (f, barrier) = (f.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                f()
            })
        })
        .collect();
    hs.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn concurrent_misses_run_the_loader_once() {
    for p in Policy::ALL {
        let c: Arc<Cache<u64, u64>> = Arc::new(Cache::builder().capacity(1000).policy(p).build());
        let calls = Arc::new(AtomicU64::new(0));
        for round in 0..20u64 {
            let (c2, calls2) = (c.clone(), calls.clone());
            let got = race(move || {
                c2.get_with(round, || {
                    calls2.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(2));
                    round * 10
                })
            });
            assert!(got.iter().all(|&v| v == round * 10));
            assert_eq!(calls.load(Ordering::SeqCst), round + 1, "{p:?}: one load per key");
        }
        let s = c.stats();
        assert_eq!(s.load_successes, 20);
        assert_eq!(s.load_failures, 0);
        assert!(s.load_time >= Duration::from_millis(40));
        c.validate().unwrap();
    }
}

#[test]
fn a_panicking_loader_wakes_the_waiters_and_one_retries() {
    let c: Arc<Cache<u64, u64>> = Arc::new(Cache::builder().capacity(100).build());
    let first = Arc::new(AtomicBool::new(true));
    let calls = Arc::new(AtomicU64::new(0));
    let (c2, calls2) = (c.clone(), calls.clone());
    let results = race(move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            c2.get_with(1, || {
                calls2.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(5));
                if first.swap(false, Ordering::SeqCst) {
                    panic!("loader failed");
                }
                42
            })
        }))
    });
    let panicked = results.iter().filter(|r| r.is_err()).count();
    assert_eq!(panicked, 1, "only the panicking loader's caller sees the panic");
    assert!(results.iter().flatten().all(|&v| v == 42));
    // The panicking load and then one successful load (waiters that arrived during the
    // first load retried; one led).
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    let s = c.stats();
    assert_eq!((s.load_successes, s.load_failures), (1, 1));
    c.validate().unwrap();
}

#[test]
fn a_failed_load_is_shared_with_its_waiters_and_not_cached() {
    let c: Arc<Cache<u64, u64>> = Arc::new(Cache::builder().capacity(100).build());
    let calls = Arc::new(AtomicU64::new(0));
    let (c2, calls2) = (c.clone(), calls.clone());
    let results = race(move || {
        c2.try_get_with(5, || {
            calls2.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(20));
            Err::<u64, String>("backend down".into())
        })
    });
    for r in results {
        assert_eq!(r.unwrap_err().as_str(), "backend down");
    }
    // Waiters that joined the load got its error; at most a few late arrivals loaded again.
    assert!(calls.load(Ordering::SeqCst) < THREADS as u64);
    assert!(c.peek(&5).is_none());
    assert_eq!(c.try_get_with(5, || Ok::<u64, String>(6)).unwrap(), 6);
    assert_eq!(c.peek(&5), Some(6));
}

#[test]
fn a_loader_may_load_other_keys_through_the_cache() {
    let c: Cache<u64, u64> = Cache::builder().capacity(100).build();
    let v = c.get_with(3, || c.get_with(2, || c.get_with(1, || 1) + 1) + 1);
    assert_eq!(v, 3);
    assert_eq!((c.peek(&1), c.peek(&2), c.peek(&3)), (Some(1), Some(2), Some(3)));
    assert_eq!(c.stats().load_successes, 3);
}

/// A value inserted while the key loads is newer than what the loader read: it stays, and the
/// loaded value goes only to the callers of the load (Caffeine's order, where such an insert
/// waits for the load and then replaces its value).
#[test]
fn an_insert_during_the_load_is_not_overwritten_by_it() {
    let c: Cache<u64, u64> = Cache::builder().capacity(100).build();
    let v = c.get_with(1, || {
        c.insert(1, 200); // say, a write-through of a fresher value
        100 // what the loader read before that write
    });
    assert_eq!(v, 100, "the loader's callers get its value");
    assert_eq!(c.peek(&1), Some(200), "the fresher value stays cached");
    assert_eq!(c.stats().load_successes, 1);
    c.validate().unwrap();
}

/// `remove` or `clear` of the key while it loads (an invalidation: the source changed) means
/// the loaded value, read before, is stale: it goes to the load's callers but is not cached.
#[test]
fn a_removal_during_the_load_keeps_its_value_out() {
    type Remover = fn(&Cache<u64, u64>);
    let removers: [(&str, Remover); 3] = [
        ("remove", |c| {
            c.remove(&1);
        }),
        ("clear", |c| c.clear()),
        ("remove of another key", |c| {
            c.remove(&2);
        }),
    ];
    for (what, remove) in removers {
        let c: Cache<u64, u64> = Cache::builder().capacity(100).build();
        let v = c.get_with(1, || {
            remove(&c);
            100
        });
        assert_eq!(v, 100, "{what}: the loader's callers get its value");
        let cached = c.peek(&1);
        if what == "remove of another key" {
            assert_eq!(cached, Some(100), "{what}: only the key's own removal invalidates");
        } else {
            assert_eq!(cached, None, "{what}: a value loaded before the removal was cached");
        }
        c.validate().unwrap();
    }
}

/// Loaders reading a source while other threads change it and invalidate the key (the
/// source's version goes up, then `remove`): a `get_with` that begins after an invalidation
/// returned never gets a value read before it — from the cache, or by joining a load.
#[test]
fn invalidations_racing_loads_leave_nothing_stale() {
    const KEYS: usize = 8;
    let (threads, ops) = if cfg!(miri) { (3, 30) } else { (8, 10_000) };
    for round in 0..if cfg!(miri) { 1 } else { 10 } {
        let c: Arc<Cache<usize, u64>> = Arc::new(Cache::builder().capacity(64).build());
        let source: Arc<Vec<AtomicU64>> = Arc::new((0..KEYS).map(|_| AtomicU64::new(0)).collect());
        // The latest version whose invalidation has returned, per key.
        let done: Arc<Vec<AtomicU64>> = Arc::new((0..KEYS).map(|_| AtomicU64::new(0)).collect());
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let (c, source, done) = (c.clone(), source.clone(), done.clone());
                std::thread::spawn(move || {
                    let mut x = (round * 131 + t * 7919 + 1) as u64;
                    for _ in 0..ops {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let k = (x % KEYS as u64) as usize;
                        if x % 10 < 7 {
                            let after = done[k].load(Ordering::SeqCst);
                            let v = c.get_with(k, || {
                                let v = source[k].load(Ordering::SeqCst);
                                // Give a writer the chance to come between read and insert.
                                std::thread::yield_now();
                                v
                            });
                            assert!(
                                v >= after,
                                "round {round}, key {k}: version {v} after the invalidation of \
                                 version {after} returned"
                            );
                        } else {
                            let n = source[k].fetch_add(1, Ordering::SeqCst) + 1;
                            c.remove(&k);
                            done[k].fetch_max(n, Ordering::SeqCst);
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        c.validate().unwrap();
    }
}

#[test]
fn a_loader_reentering_its_own_key_panics_instead_of_hanging() {
    let c: Cache<u64, u64> = Cache::builder().capacity(100).build();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        c.get_with(1, || c.get_with(1, || 1))
    }));
    let msg = r.unwrap_err();
    let msg = msg
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| msg.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(msg.contains("its own key"), "{msg}");
    // The cache still works and the key can be loaded.
    assert_eq!(c.get_with(1, || 7), 7);
    c.validate().unwrap();
}

/// A minimal executor: polls on the calling thread, parking until woken.
fn block_on<F: Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut f = std::pin::pin!(f);
    loop {
        match f.as_mut().poll(&mut Context::from_waker(&waker)) {
            Poll::Ready(v) => return v,
            Poll::Pending => std::thread::park_timeout(Duration::from_millis(50)),
        }
    }
}

/// A future that is pending until a flag is set (polled by `block_on`, woken by the setter).
fn sleep_then(ms: u64, v: u64) -> impl Future<Output = u64> {
    let done = Arc::new(AtomicBool::new(false));
    let mut started = false;
    std::future::poll_fn(move |cx| {
        if done.load(Ordering::SeqCst) {
            return Poll::Ready(v);
        }
        if !started {
            started = true;
            let (done, waker) = (done.clone(), cx.waker().clone());
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(ms));
                done.store(true, Ordering::SeqCst);
                waker.wake();
            });
        }
        Poll::Pending
    })
}

#[test]
fn async_loads_are_coalesced_too() {
    let c: Arc<Cache<u64, u64>> = Arc::new(Cache::builder().capacity(100).build());
    let calls = Arc::new(AtomicU64::new(0));
    let (c2, calls2) = (c.clone(), calls.clone());
    let got = race(move || {
        block_on(c2.get_with_async(9, async {
            calls2.fetch_add(1, Ordering::SeqCst);
            sleep_then(20, 81).await
        }))
    });
    assert!(got.iter().all(|&v| v == 81));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_dropped_async_loader_lets_a_waiter_load() {
    let c: Arc<Cache<u64, u64>> = Arc::new(Cache::builder().capacity(100).build());
    // Start a load and drop it half way.
    {
        let mut f = Box::pin(c.get_with_async(4, sleep_then(10_000, 1)));
        let waker = Waker::from(Arc::new(NoWake));
        assert!(f.as_mut().poll(&mut Context::from_waker(&waker)).is_pending());
        let c2 = c.clone();
        let waiter = std::thread::spawn(move || block_on(c2.get_with_async(4, async { 2 })));
        std::thread::sleep(Duration::from_millis(20));
        drop(f);
        assert_eq!(waiter.join().unwrap(), 2);
    }
    assert_eq!(c.peek(&4), Some(2));
    assert_eq!(c.stats().load_failures, 1);

    struct NoWake;
    impl Wake for NoWake {
        fn wake(self: Arc<Self>) {}
    }
}

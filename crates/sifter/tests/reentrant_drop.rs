//! A value's `Drop` may use the cache it was in: values are dropped outside the cache's locks
//! (at a slot's reuse, or when a removed entry's grace period is over), so a `Drop` that
//! inserts into the same cache never waits for a lock its own thread holds.

#![allow(clippy::unwrap_used)] // tests

use sifter::{Cache, Policy};
use std::cell::Cell;
use std::sync::OnceLock;
use std::time::Duration;

static CACHE: OnceLock<Cache<u64, Reenter>> = OnceLock::new();

thread_local! {
    /// Inside a `Reenter`'s drop: the values it inserts do not insert again when dropped there.
    static DROPPING: Cell<bool> = const { Cell::new(false) };
}

/// A value whose drop inserts a neighbouring key into the cache.
struct Reenter(u64);

impl Drop for Reenter {
    fn drop(&mut self) {
        if DROPPING.get() {
            return;
        }
        DROPPING.set(true);
        if let Some(c) = CACHE.get() {
            c.insert(self.0 ^ 1, Reenter(self.0 ^ 1));
        }
        DROPPING.set(false);
    }
}

#[test]
fn a_values_drop_may_insert_into_its_cache() {
    // Weighted: every update replaces its entry's slot, so removed slots (and their values)
    // pass through the queues' hollowing; the evictions reuse slots (drops at reuse).
    let c = CACHE.get_or_init(|| {
        Cache::builder()
            .policy(Policy::Mobius)
            .weight_capacity(200)
            .weigher(|_: &u64, _: &Reenter| 1)
            .build()
    });
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for round in 0..200u64 {
            for k in 0..300u64 {
                c.insert(k, Reenter(k + round));
            }
        }
        c.validate().unwrap();
        tx.send(()).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the inserting thread is stuck (a value dropped under a lock its drop needs?)");
}

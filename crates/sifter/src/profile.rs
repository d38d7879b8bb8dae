//! Sampled timing of eviction, for the benchmark harness (feature `profile`).
//!
//! The Mobius paper splits a cache's time into access, insert and evict. Eviction runs inside
//! [`Cache::insert`](crate::Cache::insert), so a harness timing `insert` from outside sees both.
//! With this feature, a thread that calls [`sample_evictions`]`(true)` before an insert gets the
//! time that insert spent evicting from [`take_evict_nanos`]; threads that never turn sampling
//! on pay one thread-local read per insert that has to evict, and nothing else.

use std::cell::Cell;
use std::time::Instant;

thread_local! {
    static SAMPLING: Cell<bool> = const { Cell::new(false) };
    static EVICT_NANOS: Cell<u64> = const { Cell::new(0) };
}

/// Turns eviction timing on or off for this thread's following inserts.
pub fn sample_evictions(on: bool) {
    SAMPLING.with(|s| s.set(on));
}

/// Nanoseconds spent evicting by this thread's sampled inserts since the last call; resets.
pub fn take_evict_nanos() -> u64 {
    EVICT_NANOS.with(|n| n.replace(0))
}

/// Starts timing an eviction if this thread samples.
#[inline]
pub(crate) fn start() -> Option<Instant> {
    if SAMPLING.with(Cell::get) {
        Some(Instant::now())
    } else {
        None
    }
}

/// Adds the time since `start` to this thread's total.
#[inline]
pub(crate) fn stop(start: Option<Instant>) {
    if let Some(t0) = start {
        let ns = t0.elapsed().as_nanos() as u64;
        EVICT_NANOS.with(|n| n.set(n.get() + ns));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cache, Policy};

    /// Sampled inserts that evict report time; unsampled ones and inserts into a cache with
    /// room report none.
    #[test]
    fn evictions_are_timed_only_when_sampled() {
        for policy in Policy::ALL {
            let c: Cache<u64, u64> = Cache::builder().capacity(10).policy(policy).build();
            sample_evictions(true);
            c.insert(0, 0);
            assert_eq!(take_evict_nanos(), 0, "{policy:?}: no eviction yet");
            for k in 1..100 {
                c.insert(k, k);
            }
            assert!(take_evict_nanos() > 0, "{policy:?}: evictions not timed");
            sample_evictions(false);
            for k in 100..200 {
                c.insert(k, k);
            }
            assert_eq!(take_evict_nanos(), 0, "{policy:?}: timed while not sampling");
        }
    }
}

//! Large caches (`raw/table.rs`, "Large tables"): an arena and an index of 32 MiB or more are
//! allocated zeroed and committed as they are written (multi-step LRU's sets too), so building
//! one is quick and touches little memory, and such a cache works as any other: every policy
//! fills, serves, evicts, removes and validates, and every value is dropped exactly once. One test in its own
//! process, so that the resident memory it reads is its own.

use sifter::{Cache, MultiStepCache, Policy};
use std::sync::atomic::{AtomicUsize, Ordering};

static LIVE: AtomicUsize = AtomicUsize::new(0);

/// A value that counts how many of it are alive.
#[derive(Debug)]
struct Counted(u64);

impl Counted {
    fn new(v: u64) -> Self {
        LIVE.fetch_add(1, Ordering::Relaxed);
        Counted(v)
    }
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        Counted::new(self.0)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The process's resident memory in bytes (Linux), or `None`.
fn resident() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[test]
fn large_caches_build_without_touching_their_tables_and_work() {
    // 2M entries: an arena of 2M slots of 40 bytes or more and an index of 32 MiB or more,
    // both past the lazy threshold; written at construction they would be ~130 MB.
    const CAPACITY: u64 = 2_000_000;
    const ENTRIES: u64 = 50_000;
    for policy in [Policy::Mobius, Policy::S3Fifo, Policy::NbqClock, Policy::Lru] {
        let before = resident();
        let c: Cache<u64, Counted> = Cache::builder().capacity(CAPACITY).policy(policy).build();
        assert_eq!((c.len(), c.weight()), (0, 0), "{policy:?}");
        if let (Some(a), Some(b)) = (before, resident()) {
            let grew = b.saturating_sub(a);
            assert!(grew < 24 << 20, "{policy:?}: building took {grew} resident bytes");
        }
        for k in 0..ENTRIES {
            c.insert(k, Counted::new(k));
        }
        assert_eq!(c.len() as u64, ENTRIES, "{policy:?}");
        for k in (0..ENTRIES).step_by(7) {
            assert_eq!(c.get(&k).map(|v| v.0), Some(k), "{policy:?}: key {k}");
        }
        for k in (0..ENTRIES).step_by(3) {
            assert_eq!(c.remove(&k).map(|v| v.0), Some(k), "{policy:?}: key {k}");
        }
        c.validate().unwrap_or_else(|e| panic!("{policy:?}: {e}"));
        // Shrunk below what it holds, it evicts down to the new capacity.
        c.set_capacity(1_000).unwrap();
        assert!(c.len() <= 1_000, "{policy:?}: {} entries", c.len());
        c.validate().unwrap_or_else(|e| panic!("{policy:?}: {e}"));
        drop(c);
        assert_eq!(LIVE.load(Ordering::Relaxed), 0, "{policy:?}: values not dropped once");
    }
    large_multistep_cache();
}

/// Multi-step LRU's sets, as the other caches' tables (called by the one test: the live count
/// and the resident memory are the process's).
fn large_multistep_cache() {
    // 2M entries in sets of 24 bytes per way with `u64` keys and values: 48 MB of sets, past
    // the lazy threshold.
    const CAPACITY: u64 = 2_000_000;
    const ENTRIES: u64 = 50_000;
    let before = resident();
    let c: MultiStepCache<u64, Counted> = MultiStepCache::new(CAPACITY);
    // Counting reads each set's count without locking (writing) the set.
    assert_eq!(c.len(), 0);
    assert!(c.is_empty());
    if let (Some(a), Some(b)) = (before, resident()) {
        let grew = b.saturating_sub(a);
        assert!(grew < 24 << 20, "building and counting took {grew} resident bytes");
    }
    for k in 0..ENTRIES {
        c.insert(k, Counted::new(k));
    }
    // Sets of eight ways hold 50k keys spread over 250k sets: a few may overflow a set and
    // evict, most stay.
    let held = (0..ENTRIES).filter(|k| c.get(k).is_some()).count() as u64;
    assert!(held > ENTRIES * 99 / 100, "only {held} of {ENTRIES} keys held");
    assert_eq!(c.len() as u64, held);
    for k in (0..ENTRIES).step_by(3) {
        if let Some(v) = c.remove(&k) {
            assert_eq!(v.0, k);
        }
    }
    c.validate().unwrap_or_else(|e| panic!("multi-step: {e}"));
    assert_eq!(LIVE.load(Ordering::Relaxed), c.len(), "values alive beyond those held");
    drop(c);
    assert_eq!(LIVE.load(Ordering::Relaxed), 0, "values not dropped once");
}

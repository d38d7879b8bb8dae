//! `compute` checks shared by `capacity.rs` and `beyond_records.rs`: its decision gap, and
//! many threads computing at once.

use sifter::{hooks, Cache, Op};
use std::sync::{Arc, Barrier};

/// `compute(1, +1)` on `c` (holding 1 → 1) with `hook` run in its decision gap (between the
/// closure's decision and the store); the hook must set the key to 100 from another thread.
/// The closure must then run again on 100, and 101 be stored.
pub fn compute_sees_the_update_in_its_gap(c: &Cache<u64, u64>, hook: fn(), tag: &str) {
    hooks::on_decided(Some(hook));
    let mut seen = Vec::new();
    let out = c.compute(1, |cur| {
        seen.push(cur.copied());
        Op::Put(cur.map_or(0, |v| v + 1))
    });
    hooks::on_decided(None);
    assert_eq!(seen, vec![Some(1), Some(100)], "{tag}: the values the closure saw");
    assert_eq!((out, c.get(&1)), (Some(101), Some(101)), "{tag}");
    c.validate().unwrap_or_else(|e| panic!("{tag}: {e}"));
}

/// `threads` threads, started together, each `ops` computes (+1) over 10,000 keys on `c`;
/// then: none refused, and the invariants hold.
pub fn computes_reject_nothing(c: &Arc<Cache<u64, u64>>, threads: u64, ops: u64, tag: &str) {
    let start = Arc::new(Barrier::new(threads as usize));
    let hs: Vec<_> = (0..threads)
        .map(|t| {
            let (c, start) = (c.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let mut x = 12_345 + t;
                for _ in 0..ops {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    c.compute(x % 10_000, |v| Op::Put(v.map_or(1, |n| n + 1)));
                }
            })
        })
        .collect();
    for h in hs {
        h.join().expect("computing thread");
    }
    assert_eq!(c.rejected(), 0, "{tag}: computes refused");
    c.validate().unwrap_or_else(|e| panic!("{tag}: {e}"));
}

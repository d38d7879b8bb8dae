//! `compute`'s decision gap, shared by `capacity.rs` and `beyond_records.rs`.

use sifter::{hooks, Cache, Op};

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

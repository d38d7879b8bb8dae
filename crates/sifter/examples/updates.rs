//! Random updates of a full cache: every key resident, no new key ever. Per policy: the time
//! for 2 M updates, the entries left (all 10,000 should be), the heap overhead per entry, the
//! evictions and the rejected inserts. (docs/BENCHMARKS.md, "Updates".)
//!
//! `cargo run --release -p sifter --example updates`
use sifter::{Cache, Policy};
use std::time::Instant;

fn main() {
    let (n, updates) = (10_000u64, 2_000_000u64);
    println!("policy     ms       entries  overhead B  evictions  rejected");
    for policy in Policy::ALL {
        let c: Cache<u64, u64> = Cache::builder().capacity(n).policy(policy).build();
        for k in 0..n {
            c.insert(k, k);
        }
        let t = Instant::now();
        let mut x = 1u64;
        for i in 0..updates {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            c.insert((x >> 33) % n, i);
        }
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let kept = (0..n).filter(|k| c.peek(k).is_some()).count();
        println!(
            "{:<10} {ms:>7.1}  {kept:>7}  {:>10.1}  {:>9}  {:>8}",
            format!("{policy:?}"),
            c.overhead_per_entry(),
            c.stats().evictions,
            c.rejected()
        );
    }
}

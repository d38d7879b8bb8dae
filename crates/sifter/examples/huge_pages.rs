//! Hits on a cache whose tables are on huge pages against the same cache on 4 KiB pages, in one
//! process: two caches of `N` u64 → u64 entries (Mobius), one built with `SIFTER_HUGE_PAGES=off`,
//! then rounds of the same random lookups on each in turn (the order alternating), so the
//! host's drift hits both alike. Prints each size's quartiles of the per-round ratio.
//!
//! ```sh
//! cargo run --release -p sifter --example huge_pages -- 100000,1000000,4000000 60
//! ```
//! (sizes, comma-separated; rounds per size). Where the kernel has transparent huge pages off,
//! both caches are on 4 KiB pages and the ratio is 1 up to noise.

use sifter::{Cache, Policy};
use std::hint::black_box;
use std::time::Instant;

/// Lookups per round.
const LOOKUPS: usize = 200_000;

fn build(n: u64, huge: bool) -> Cache<u64, u64> {
    // Single-threaded here: nothing reads the environment concurrently.
    std::env::set_var("SIFTER_HUGE_PAGES", if huge { "on" } else { "off" });
    let c: Cache<u64, u64> = Cache::builder().capacity(n).policy(Policy::Mobius).build();
    for k in 0..n {
        c.insert(k, k);
    }
    std::env::remove_var("SIFTER_HUGE_PAGES");
    c
}

/// Nanoseconds per lookup of `keys` in `c`.
fn time(c: &Cache<u64, u64>, keys: &[u64]) -> f64 {
    let t = Instant::now();
    let mut sum = 0u64;
    for k in keys {
        sum = sum.wrapping_add(c.get(k).unwrap_or(0));
    }
    black_box(sum);
    t.elapsed().as_nanos() as f64 / keys.len() as f64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let sizes: Vec<u64> = args
        .next()
        .unwrap_or_else(|| "100000,1000000,4000000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("sizes: comma-separated entry counts"))
        .collect();
    let rounds: usize = args.next().map_or(40, |s| s.parse().expect("rounds: a count"));
    assert!(rounds > 0, "rounds: at least one");
    println!("entries     4K ns/hit  huge ns/hit  4K ÷ huge: q25   median   q75");
    for n in sizes {
        let small = build(n, false);
        let huge = build(n, true);
        // xorshift64: uniform keys, all resident.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let keys: Vec<u64> = (0..LOOKUPS)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % n
            })
            .collect();
        let (mut ratios, mut t4k, mut th) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..rounds {
            let (a, b) = if r % 2 == 0 {
                let a = time(&small, &keys);
                (a, time(&huge, &keys))
            } else {
                let b = time(&huge, &keys);
                (time(&small, &keys), b)
            };
            ratios.push(a / b);
            t4k.push(a);
            th.push(b);
        }
        for v in [&mut ratios, &mut t4k, &mut th] {
            v.sort_by(f64::total_cmp);
        }
        let q = |v: &[f64], f: f64| v[((v.len() - 1) as f64 * f).round() as usize];
        println!(
            "{n:<10} {:>10.1} {:>12.1}         {:>7.3} {:>8.3} {:>7.3}",
            q(&t4k, 0.5),
            q(&th, 0.5),
            q(&ratios, 0.25),
            q(&ratios, 0.5),
            q(&ratios, 0.75)
        );
    }
}

//! How long building a cache takes and how much resident memory it commits, then the same for
//! its first inserts and for dropping it: one cache of u64 → u64 per capacity given, Mobius or
//! multi-step LRU (`raw/table.rs`, "Large tables": tables of 32 MiB or more are committed as
//! they fill).
//!
//! ```sh
//! cargo run --release -p sifter --example build_time -- 1000000,10000000,100000000 1000
//! cargo run --release -p sifter --example build_time -- 1000000,100000000 1000 multistep
//! ```
//! (capacities, comma-separated; inserts after the build; `mobius`, the default, or
//! `multistep`). Resident memory is read from `/proc/self/statm` (Linux; elsewhere it prints
//! `?`).

use sifter::{Cache, MultiStepCache, Policy};
use std::time::Instant;

/// The process's resident memory in MB, if known.
fn resident_mb() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096 / 1_000_000)
}

/// `b − a` in MB, or `?`.
fn grew(a: Option<u64>, b: Option<u64>) -> String {
    a.zip(b).map_or("?".into(), |(a, b)| b.saturating_sub(a).to_string())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let sizes: Vec<u64> = args
        .next()
        .unwrap_or_else(|| "1000000,10000000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("capacities: numbers, comma-separated"))
        .collect();
    let inserts: u64 = args.next().map_or(1000, |s| s.parse().expect("inserts: a number"));
    let kind = args.next().unwrap_or_else(|| "mobius".into());
    println!("{kind}\ncapacity     build ms  +MB   {inserts} inserts ms  +MB   drop ms");
    for n in sizes {
        match kind.as_str() {
            "mobius" => measure(
                n,
                inserts,
                |n| Cache::<u64, u64>::builder().capacity(n).policy(Policy::Mobius).build(),
                |c, k, v| c.insert(k, v),
            ),
            "multistep" => {
                measure(n, inserts, MultiStepCache::<u64, u64>::new, |c, k, v| c.insert(k, v))
            }
            other => panic!("cache: mobius or multistep, not {other}"),
        }
    }
}

/// Builds a cache of capacity `n`, makes `inserts` inserts, drops it, and prints the times
/// and the resident memory each step took.
fn measure<C>(n: u64, inserts: u64, build: impl Fn(u64) -> C, insert: impl Fn(&C, u64, u64)) {
    let r0 = resident_mb();
    let t = Instant::now();
    let c = build(n);
    let build = t.elapsed();
    let r1 = resident_mb();
    let t = Instant::now();
    for k in 0..inserts.min(n) {
        insert(&c, k.wrapping_mul(0x9e37_79b9_7f4a_7c15), k);
    }
    let fill = t.elapsed();
    let r2 = resident_mb();
    let t = Instant::now();
    drop(c);
    let gone = t.elapsed();
    println!(
        "{n:<12} {:>8.1} {:>5}   {:>14.1} {:>5}   {:>7.1}",
        build.as_secs_f64() * 1e3,
        grew(r0, r1),
        fill.as_secs_f64() * 1e3,
        grew(r1, r2),
        gone.as_secs_f64() * 1e3
    );
}

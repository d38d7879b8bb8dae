//! How long building a cache takes and how much resident memory it commits, then the same for
//! its first inserts and for dropping it: one Mobius cache of u64 → u64 per capacity given
//! (`raw/table.rs`, "Large tables": tables of 32 MiB or more are committed as they fill).
//!
//! ```sh
//! cargo run --release -p sifter --example build_time -- 1000000,10000000,100000000 1000
//! ```
//! (capacities, comma-separated; inserts after the build). Resident memory is read from
//! `/proc/self/statm` (Linux; elsewhere it prints `?`).

use sifter::{Cache, Policy};
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
    println!("capacity     build ms  +MB   {inserts} inserts ms  +MB   drop ms");
    for n in sizes {
        let r0 = resident_mb();
        let t = Instant::now();
        let c: Cache<u64, u64> = Cache::builder().capacity(n).policy(Policy::Mobius).build();
        let build = t.elapsed();
        let r1 = resident_mb();
        let t = Instant::now();
        for k in 0..inserts.min(n) {
            c.insert(k.wrapping_mul(0x9e37_79b9_7f4a_7c15), k);
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
}

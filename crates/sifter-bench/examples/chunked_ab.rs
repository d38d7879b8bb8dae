//! Caches compared at one thread by *chunks alternated in one process*: every cache is warmed
//! on the same first requests, then each chunk of the stream runs on every cache in turn (the
//! order rotated by chunk), read-through; the speed ratio of each cache to the last one is
//! taken per chunk, and the median and quartiles of those ratios are printed. (Reads are
//! read-through; a workload's gets, inserts and erases run as `sifter bench` runs them.)
//!
//! On a host whose speed switches within seconds (docs/BENCHMARKS.md, stop 80: every cache ran
//! either 13–16 or 21–29 Mops/s, switching between repetitions), ratios of runs made a second
//! apart scatter by ±30 %; chunks a few milliseconds apart share the host's state, and a
//! median over hundreds of them resolves a few percent.
//!
//! Made for two variants of one cache (the same memory footprint). Between different caches
//! the ratio is biased: each chunk starts with the CPU caches full of the other caches' lines,
//! which costs a cache with more memory traffic per request more (Mobius ÷ quick_cache at 100k
//! entries: 1.56–1.71 by chunks, 1.07–1.15 by `sifter bench`, which runs one cache at a time).
//!
//! ```sh
//! cargo run --release -p sifter-bench --example chunked_ab -- 10000 100000 300 mobius,quick_cache
//! # CAPACITY CHUNK ROUNDS CACHES [WORKLOAD]   (WORKLOAD as `sifter bench -w`, default Zipf 1.0 over 1M keys)
//! ```
use sifter_bench::adapter::{make, BenchCache};
use sifter_bench::workload::{unpack, Mode, Op, Workload};
use std::time::Instant;

const WARM: usize = 4_000_000;

fn usage(why: &str) -> ! {
    eprintln!("chunked_ab: {why}");
    eprintln!("usage: chunked_ab CAPACITY CHUNK ROUNDS CACHE,CACHE[,...] [WORKLOAD]");
    std::process::exit(2)
}

fn number(s: Option<&String>, what: &str) -> usize {
    match s.map(|s| s.replace('_', "").parse::<usize>()) {
        Some(Ok(n)) if n > 0 => n,
        Some(_) => usage(&format!("{what} must be a positive integer")),
        None => usage(&format!("missing {what}")),
    }
}

/// Runs the operations of `s` as `sifter bench` does (a read inserts on a miss; a get does
/// not; inserts and erases as they come): seconds taken, and hits among the lookups.
fn run(c: &dyn BenchCache, s: &[u64]) -> (f64, u64) {
    let t0 = Instant::now();
    let mut hits = 0;
    for &x in s {
        match unpack(x) {
            (Op::Read, k) => {
                if c.get(k).is_some() {
                    hits += 1;
                } else {
                    c.insert(k);
                }
            }
            (Op::Get, k) => hits += u64::from(c.get(k).is_some()),
            (Op::Insert, k) => c.insert(k),
            (Op::Erase, k) => c.remove(k),
        }
    }
    (t0.elapsed().as_secs_f64(), hits)
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let cap = number(a.get(1), "CAPACITY") as u64;
    let chunk = number(a.get(2), "CHUNK");
    let rounds = number(a.get(3), "ROUNDS");
    let names: Vec<&str> = match a.get(4) {
        Some(s) => s.split(',').filter(|n| !n.is_empty()).collect(),
        None => usage("missing CACHES"),
    };
    if names.len() < 2 {
        usage("name at least two caches (the last is the denominator)");
    }
    let spec = a.get(5).map_or("zipf:alpha=1.0,keys=1000000", String::as_str);
    let w = Workload::parse(spec).unwrap_or_else(|e| usage(&e.to_string()));
    let total = chunk
        .checked_mul(rounds)
        .and_then(|n| n.checked_add(WARM))
        .unwrap_or_else(|| usage("CHUNK × ROUNDS too large"));
    let (seqs, _) = w.generate(1, total, Mode::Shared).unwrap_or_else(|e| usage(&e.to_string()));
    let seq = &seqs[0];
    if seq.len() < total {
        usage(&format!("the workload has {} requests, {total} needed", seq.len()));
    }
    let caches: Vec<Box<dyn BenchCache>> =
        names.iter().map(|n| make(n, cap).unwrap_or_else(|e| usage(&e.to_string()))).collect();
    for c in &caches {
        run(&**c, &seq[..WARM]);
    }
    let n = caches.len();
    let mut times = vec![Vec::with_capacity(rounds); n];
    let mut hits = vec![0u64; n];
    for r in 0..rounds {
        let s = &seq[WARM + r * chunk..WARM + (r + 1) * chunk];
        for i in 0..n {
            let j = (i + r) % n;
            let (t, h) = run(&*caches[j], s);
            times[j].push(t);
            hits[j] += h;
        }
    }
    // Hit ratios are of the lookups (reads and gets) of the measured chunks.
    let lookups = seq[WARM..WARM + chunk * rounds]
        .iter()
        .filter(|&&x| matches!(unpack(x).0, Op::Read | Op::Get))
        .count()
        .max(1);
    let last = n - 1;
    println!("capacity {cap}, {rounds} chunks of {chunk} requests after a {WARM}-request warm-up, one thread, {spec}");
    for i in 0..n {
        let mut rs: Vec<f64> = (0..rounds).map(|r| times[last][r] / times[i][r]).collect();
        rs.sort_by(f64::total_cmp);
        let q = |p: f64| rs[((rs.len() - 1) as f64 * p).round() as usize];
        let best = times[i].iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "{:>16} ÷ {}: median {:.3} [quartiles {:.3}, {:.3}]  best chunk {:.1} Mops/s  hit ratio {:.4}",
            names[i],
            names[last],
            q(0.5),
            q(0.25),
            q(0.75),
            chunk as f64 / best / 1e6,
            hits[i] as f64 / lookups as f64
        );
    }
}

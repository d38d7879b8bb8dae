//! Memory under oversubscription: N threads replay Zipf(1.0) read-through on a 10,000-entry
//! Mobius cache for two seconds; prints throughput, the bytes of overhead per entry before
//! and after (the arena grows only when reclamation stalls), rejected inserts and `len`.
//!
//! `cargo run --release -p sifter --example oversubscribed -- 16`
use rand::prelude::*;
use rand_distr::Zipf;
use sifter::{Cache, Policy};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let threads: usize = match std::env::args().nth(1).map(|s| s.parse()) {
        None => 2,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: oversubscribed [THREADS > 0]");
            std::process::exit(2);
        }
    };
    let cache: Arc<Cache<u64, u64>> =
        Arc::new(Cache::builder().capacity(10_000).policy(Policy::Mobius).build());
    let before = cache.overhead_per_entry();
    let zipf = Zipf::new(1_000_000f64, 1.0).expect("valid Zipf parameters");
    let sequences: Vec<Vec<u64>> = (0..threads)
        .map(|t| {
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(t as u64);
            (0..1_000_000).map(|_| zipf.sample(&mut rng) as u64).collect()
        })
        .collect();
    let start = Instant::now();
    let end = start + Duration::from_secs(2);
    let handles: Vec<_> = sequences
        .into_iter()
        .map(|keys| {
            let c = cache.clone();
            std::thread::spawn(move || {
                let mut ops = 0u64;
                'run: loop {
                    for &k in &keys {
                        if c.get(&k).is_none() {
                            c.insert(k, k);
                        }
                        ops += 1;
                        if ops.is_multiple_of(4096) && Instant::now() > end {
                            break 'run;
                        }
                    }
                }
                ops
            })
        })
        .collect();
    let ops: u64 = handles.into_iter().map(|h| h.join().expect("worker")).sum();
    println!(
        "{threads} threads: {:.2} Mops/s; overhead per entry {before:.1} B before, {:.1} B after; \
         {} inserts rejected; len {}",
        ops as f64 / start.elapsed().as_secs_f64() / 1e6,
        cache.overhead_per_entry(),
        cache.rejected(),
        cache.len()
    );
}

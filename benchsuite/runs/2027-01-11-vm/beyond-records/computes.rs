use sifter::{Cache, Policy};
use std::sync::{Arc, Barrier};
use std::time::Instant;
fn main() {
    let threads: u64 = std::env::args().nth(1).map_or(80, |s| s.parse().unwrap());
    let mode: String = std::env::args().nth(3).unwrap_or("compute".into());
    let ops: u64 = std::env::args().nth(2).map_or(5_000, |s| s.parse().unwrap());
    for p in [Policy::Mobius, Policy::S3Fifo, Policy::Lru] {
        let c: Arc<Cache<u64, u64>> = Arc::new(Cache::builder().capacity(1000).policy(p).build());
        let b = Arc::new(Barrier::new(threads as usize));
        let t0 = Instant::now();
        let hs: Vec<_> = (0..threads).map(|t| { let c = c.clone(); let b = b.clone(); let mode = mode.clone(); std::thread::spawn(move || {
            b.wait();
            let mut x = 12_345 + t;
            for _ in 0..ops { x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                if mode == "compute" { c.compute(x % 10_000, |v| sifter::Op::Put(v.map_or(1, |n| n + 1))); } else if c.get(&(x % 10_000)).is_none() { c.insert(x % 10_000, 1); } }
        })}).collect();
        for h in hs { h.join().unwrap(); }
        println!("{p:?} threads={threads} ops={} rejected={} time={:?}", threads*ops, c.rejected(), t0.elapsed());
        c.validate().unwrap();
    }
}

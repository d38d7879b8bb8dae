use sifter::{Cache, Policy};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
fn main() {
    let mode: String = std::env::args().nth(1).unwrap_or("compute".into());
    for p in [Policy::Mobius, Policy::S3Fifo, Policy::Lru] {
        let c: Arc<Cache<u64, u64>> = Arc::new(Cache::builder().capacity(1000).policy(p).build());
        for k in 0..1000 { c.insert(k, k); }
        let stop = Arc::new(AtomicBool::new(false));
        let slow = { let c = c.clone(); let stop = stop.clone(); let mode = mode.clone(); std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                if mode == "compute" {
                    c.compute(5, |v| { std::thread::sleep(Duration::from_millis(20)); sifter::Op::Put(v.map_or(1, |n| n + 1)) });
                } else {
                    c.retain(|_, _| { std::thread::sleep(Duration::from_micros(20)); true });
                }
                n += 1;
            }
            n
        })};
        let t0 = Instant::now();
        let mut x = 1u64; let mut ops = 0u64;
        while t0.elapsed() < Duration::from_secs(1) {
            for _ in 0..1000 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; let k = x % 100_000;
                if c.get(&k).is_none() { c.insert(k, k); } ops += 1; }
        }
        stop.store(true, Ordering::Relaxed);
        let n = slow.join().unwrap();
        println!("{p:?} mode={mode} slow_ops={n} fast_ops={ops} rejected={} len={}", c.rejected(), c.len());
        c.validate().unwrap();
    }
}

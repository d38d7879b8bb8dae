use sifter::{Cache, Policy};
use sifter_trace::TraceSource;
use std::sync::atomic::Ordering::Relaxed;
fn main() {
    let spec = std::env::args().nth(1).unwrap();
    let src = TraceSource::parse(&spec, None).expect("spec");
    let keys: Vec<u64> = src.requests().expect("gen").map(|r| r.unwrap().key).collect();
    for cap in std::env::args().skip(2).map(|a| a.parse::<u64>().unwrap()) {
        let c: Cache<u64, u64> = Cache::builder().capacity(cap).policy(Policy::Mobius).build();
        let (mut miss, mut wm) = (0u64, 0u64);
        for (i, &k) in keys.iter().enumerate() { if c.get(&k).is_none() { miss += 1; wm += 1; c.insert(k, k); }
            if (i + 1) % 1_000_000 == 0 {
                let g = |a: &std::sync::atomic::AtomicUsize| a.swap(0, Relaxed) as f64;
                let (sc, vi, re, po) = (g(&sifter::XSCANS), g(&sifter::XVICT), g(&sifter::XRESCAN), g(&sifter::XPOP));
                println!("  {:>8} miss {:.4} victims/scan {:.2} rescans/scan {:.3} pops/scan {:.3} victims/miss {:.3}", i + 1, wm as f64 / 1e6, vi / sc, re / sc, po / sc, sc / wm as f64);
                wm = 0;
            }
        }
        println!("{cap}: misses {miss}");
    }
}

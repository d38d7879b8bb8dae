use rand::prelude::*;
use std::sync::Arc;
fn main() {
    let keys = 1_000_000u64;
    let c: Arc<sifter::Cache<u64, u64>> = Arc::new(sifter::Cache::new(100_000));
    let z = rand_distr::Zipf::new(keys as f64, 1.0).unwrap();
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let c = c.clone();
            s.spawn(move || {
                let mut r = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(t);
                for _ in 0..3_000_000 {
                    let k = z.sample(&mut r) as u64;
                    match r.random_range(0..100) {
                        0..60 => { c.get(&k); }
                        60..80 => { c.insert(k, k); }
                        80..90 => { if c.get(&k).is_none() { c.insert(k, k); } }
                        _ => { c.remove(&k); }
                    }
                }
            });
        }
    });
    let f = sifter::cache::DBG[0].load(std::sync::atomic::Ordering::Relaxed);
    let ok = sifter::cache::DBG[1].load(std::sync::atomic::Ordering::Relaxed);
    println!("in-place {ok} fallbacks {f} ({:.1} %) {c:?}", 100.0 * f as f64 / (f + ok) as f64);
}

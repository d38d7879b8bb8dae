// Scratch: claims and revocations with T threads hammering a warm cache.
use std::sync::Arc;
fn main() {
    let t: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2);
    let hit_only = std::env::args().nth(2).is_some();
    let c: Arc<sifter::Cache<u64, u64>> = Arc::new(sifter::Cache::builder().capacity(100_000).build());
    let keys = if hit_only { 100_000 } else { 1_000_000 };
    for k in 0..100_000 { c.insert(k, k); }
    let t0 = std::time::Instant::now();
    std::thread::scope(|s| {
        for i in 0..t {
            let c = c.clone();
            s.spawn(move || {
                let mut x = 0x9e3779b97f4a7c15u64 ^ i as u64;
                while t0.elapsed().as_secs_f64() < 2.0 {
                    for _ in 0..1000 {
                        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                        let k = x % keys;
                        if c.get(&k).is_none() { c.insert(k, k); }
                    }
                }
            });
        }
    });
    println!("threads {t} hit_only {hit_only}: claims/revocations {:?}", c.owner_changes());
}

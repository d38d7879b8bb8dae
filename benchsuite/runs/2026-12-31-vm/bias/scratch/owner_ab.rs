// Scratch A/B: the same read-through stream on two caches (owner bias on / off), alternated
// in chunks inside one process; prints the median and quartiles of the per-chunk ratios.
use std::time::Instant;
fn zipf_keys(n: usize, keys: u64, alpha: f64, seed: u64) -> Vec<u64> {
    // inverse CDF over a table of cumulative weights
    let mut cdf = Vec::with_capacity(keys as usize);
    let mut acc = 0.0;
    for i in 1..=keys {
        acc += 1.0 / (i as f64).powf(alpha);
        cdf.push(acc);
    }
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64 * acc;
            let i = cdf.partition_point(|&c| c < u) as u64;
            // scatter ranks over the key space
            i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        })
        .collect()
}
fn run(c: &sifter::Cache<u64, u64>, ks: &[u64]) -> f64 {
    let t0 = Instant::now();
    for &k in ks {
        if c.get(&k).is_none() {
            c.insert(k, k);
        }
    }
    t0.elapsed().as_secs_f64()
}
fn main() {
    let cap: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let chunk = 100_000;
    let rounds = 300;
    let ks = zipf_keys(chunk * rounds + 4_000_000, 1_000_000, 1.0, 7);
    let a: sifter::Cache<u64, u64> = sifter::Cache::builder().capacity(cap).build();
    let b: sifter::Cache<u64, u64> = sifter::Cache::builder().capacity(cap).owner_bias(false).build();
    run(&a, &ks[..4_000_000]);
    run(&b, &ks[..4_000_000]);
    let mut ratios = Vec::new();
    for r in 0..rounds {
        let s = &ks[4_000_000 + r * chunk..4_000_000 + (r + 1) * chunk];
        let (ta, tb) = if r % 2 == 0 {
            let ta = run(&a, s);
            (ta, run(&b, s))
        } else {
            let tb = run(&b, s);
            (run(&a, s), tb)
        };
        ratios.push(tb / ta); // speed of a over b
    }
    ratios.sort_by(|x, y| x.partial_cmp(y).unwrap());
    let q = |p: f64| ratios[((ratios.len() - 1) as f64 * p) as usize];
    println!(
        "cap {cap}: owned÷shared median {:.3} [q1 {:.3}, q3 {:.3}]; owned now {}",
        q(0.5),
        q(0.25),
        q(0.75),
        a.owned_by_current_thread()
    );
}

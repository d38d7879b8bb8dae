use rand::prelude::*;
use rand_distr::Zipf;
#[inline(never)]
fn run(c: &sifter::Cache<u64, u64>, keys: &[u64]) -> u64 {
    let mut hits = 0u64;
    for &k in keys { if c.get(&k).is_some() { hits += 1 } else { c.insert(k, k) } }
    hits
}
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let p = match args[1].as_str() { "mobius" => sifter::Policy::Mobius, "nbq" => sifter::Policy::NbqClock, "clock" => sifter::Policy::Clock, "s3" => sifter::Policy::S3Fifo, _ => panic!() };
    let cap: u64 = args[2].parse().unwrap();
    let z = Zipf::new(1_000_000.0, 1.0).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let keys: Vec<u64> = (0..3_000_000).map(|_| z.sample(&mut rng) as u64).collect();
    let c: sifter::Cache<u64, u64> = sifter::Cache::builder().capacity(cap).policy(p).build();
    run(&c, &keys[..1_000_000]);
    let t = std::time::Instant::now();
    let hits = run(&c, &keys[1_000_000..]);
    let el = t.elapsed();
    println!("{:?} cap {} hit {:.4} {:.1} ns/req", p, cap, hits as f64 / 2e6, el.as_nanos() as f64 / 2e6);
}

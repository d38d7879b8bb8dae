// SCRATCH
use sifter::{Cache, Policy};
use sifter_sim::registry::PolicySpec;
use sifter_sim::runner::{simulate, CacheSize};
use sifter_sim::trace::LoadedTrace;
use sifter_trace::TraceSource;
fn main() {
    let spec = std::env::args().nth(1).unwrap();
    let src = TraceSource::parse(&spec, None).expect("spec");
    let t = LoadedTrace::load("t", src.requests().expect("gen"), &|_| {}).expect("load");
    for cap in std::env::args().skip(2).map(|a| a.parse::<u64>().unwrap()) {
        for (p, name) in [(Policy::Mobius, "mobius(consecutive=true)"), (Policy::Clock, "clock"), (Policy::S3Fifo, "s3fifo")] {
            let c: Cache<u64, u64> = Cache::builder().capacity(cap).policy(p).build();
            let mut miss = 0u64; let mut late = 0u64; let q = t.keys.len() * 3 / 4;
            for (i, &k) in t.keys.iter().enumerate() { if c.get(&k).is_none() { miss += 1; if i >= q { late += 1; } c.insert(k, k); } }
            eprintln!("{cap} {name} last quarter miss {:.5}", late as f64 / (t.keys.len() - q) as f64);
            let want = simulate(&t, &PolicySpec::parse(name).unwrap(), CacheSize::Absolute(cap), false, 0, &|_| {}).unwrap();
            let n = t.len() as f64;
            println!("{cap:>6} {name:>26} cache {:.5} sim {:.5} diff {:+.5}", miss as f64 / n, want.counts.misses as f64 / n, (miss as f64 - want.counts.misses as f64) / n);
        }
    }
}

// SCRATCH: one-thread miss ratio of sifter::Cache against the simulator, per policy and size.
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
        for (p, cd, name) in [
            (Policy::Mobius, true, "mobius(consecutive=true)"),
            (Policy::Mobius, false, "mobius(consecutive=false)"),
            (Policy::Fifo, true, "fifo"),
            (Policy::Clock, true, "clock"),
            (Policy::NbqClock, true, "gclock(bits=8)"),
            (Policy::S3Fifo, true, "s3fifo"),
        ] {
            if let Ok(f) = std::env::var("ONLY") { if !name.starts_with(f.as_str()) { continue; } }
            let c: Cache<u64, u64> =
                Cache::builder().capacity(cap).policy(p).consecutive_detection(cd).build();
            let mut miss = 0u64;
            for &k in t.keys.iter() {
                if c.get(&k).is_none() {
                    miss += 1;
                    c.insert(k, k);
                }
            }
            let want = simulate(&t, &PolicySpec::parse(name).unwrap(), CacheSize::Absolute(cap), false, 0, &|_| {}).unwrap();
            let n = t.len() as f64;
            println!(
                "{cap:>6} {name:>26} batches {:?} cache {:.5} sim {:.5} diff {:+.5}",
                c.queue_batches(),
                miss as f64 / n,
                want.counts.misses as f64 / n,
                (miss as f64 - want.counts.misses as f64) / n
            );
        }
    }
}

//! Read-through throughput of sifter's policies and of quick_cache and moka.
//!
//! Workload: Zipf(1.0) over 1M keys (ids permuted), each request a `get` and, on a miss, an
//! `insert` (read-through). Two modes:
//! * `shared`: all threads draw from one key space and share one cache of `size` × 1M entries
//!   (hot keys are contended);
//! * `per-thread`: each thread replays the same sequence in its own key space and the capacity
//!   is `size` × 1M × threads (the Mobius/CacheLib papers' method).
//!
//! Each run: warm-up (not timed), then a fixed-duration measured phase; throughput = requests of
//! all threads / wall time. Medians over `--repeat` runs, with min and max.
//!
//! ```sh
//! cargo bench -p sifter --bench throughput                 # defaults below
//! SIFTER_BENCH_THREADS=1,2,4,8 SIFTER_BENCH_SIZES=0.01,0.1 SIFTER_BENCH_MODES=shared,per-thread \
//! SIFTER_BENCH_CACHES=mobius,sieve,lru,quick_cache,moka SIFTER_BENCH_SECS=1 SIFTER_BENCH_REPEAT=3 \
//!   cargo bench -p sifter --bench throughput
//! ```
//! Results also go to `$SIFTER_BENCH_OUT` (default `target/bench-throughput.csv`).

use rand::SeedableRng;
use rand_distr::{Distribution, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;
use sifter::{Cache, Policy};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const KEYS: u64 = 1_000_000;
const SEQ: usize = 2_000_000;

/// One small adapter trait over every cache.
trait Bench: Send + Sync {
    fn get(&self, k: u64) -> bool;
    fn insert(&self, k: u64);
}

struct Sifter(Cache<u64, u64>);
struct Quick(quick_cache::sync::Cache<u64, u64>);
struct Moka(moka::sync::Cache<u64, u64>);

/// The three caches share the same `get(&k) -> Option` / `insert(k, v)` shape.
macro_rules! adapter {
    ($($t:ty),*) => {$(
        impl Bench for $t {
            #[inline]
            fn get(&self, k: u64) -> bool {
                self.0.get(&k).is_some()
            }
            #[inline]
            fn insert(&self, k: u64) {
                self.0.insert(k, k)
            }
        }
    )*};
}
adapter!(Sifter, Quick, Moka);

fn make(name: &str, cap: u64) -> Box<dyn Bench> {
    let sifter = |p: Policy, cd: bool| -> Box<dyn Bench> {
        Box::new(Sifter(Cache::builder().capacity(cap).policy(p).consecutive_detection(cd).build()))
    };
    match name {
        "mobius" => sifter(Policy::Mobius, true),
        "mobius-wd" => sifter(Policy::Mobius, false),
        "sieve" => sifter(Policy::Sieve, true),
        "lru" => sifter(Policy::Lru, true),
        "fifo" => sifter(Policy::Fifo, true),
        "clock" => sifter(Policy::Clock, true),
        "quick_cache" => Box::new(Quick(quick_cache::sync::Cache::new(cap as usize))),
        "moka" => Box::new(Moka(moka::sync::Cache::new(cap))),
        _ => panic!("unknown cache {name}"),
    }
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

fn sequence(seed: u64) -> Vec<u64> {
    let z = Zipf::new(KEYS as f64, 1.0).expect("zipf");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..SEQ).map(|_| mix(z.sample(&mut rng) as u64)).collect()
}

struct Run {
    mops: f64,
    hit_ratio: f64,
}

fn run(
    cache: &dyn Bench,
    seqs: &[Arc<Vec<u64>>],
    offsets: &[u64],
    warm: Duration,
    secs: Duration,
) -> Run {
    let threads = seqs.len();
    let barrier = Barrier::new(threads + 1);
    let stop = AtomicBool::new(false);
    let warming = AtomicBool::new(true);
    let results: Vec<(u64, u64)> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let (seq, off, barrier, stop, warming) =
                    (&seqs[t], offsets[t], &barrier, &stop, &warming);
                s.spawn(move || {
                    let (mut reqs, mut hits) = (0u64, 0u64);
                    let mut i = t * 7919 % seq.len();
                    let mut counting = false;
                    barrier.wait();
                    loop {
                        for _ in 0..256 {
                            let k = seq[i] ^ off;
                            i += 1;
                            if i == seq.len() {
                                i = 0;
                            }
                            let hit = cache.get(k);
                            if !hit {
                                cache.insert(k);
                            }
                            hits += hit as u64;
                        }
                        reqs += 256;
                        // Relaxed: flags only end phases; no data depends on them.
                        if !counting && !warming.load(Ordering::Relaxed) {
                            counting = true;
                            reqs = 0;
                            hits = 0;
                        }
                        if stop.load(Ordering::Relaxed) {
                            return (reqs, hits);
                        }
                    }
                })
            })
            .collect();
        barrier.wait();
        std::thread::sleep(warm);
        warming.store(false, Ordering::Relaxed);
        let t0 = Instant::now();
        std::thread::sleep(secs);
        stop.store(true, Ordering::Relaxed);
        let r: Vec<(u64, u64)> = hs.into_iter().map(|h| h.join().expect("worker")).collect();
        let el = t0.elapsed().as_secs_f64();
        r.into_iter().map(|(a, b)| ((a as f64 / el) as u64, b * 1_000_000 / a.max(1))).collect()
    });
    let mops = results.iter().map(|r| r.0).sum::<u64>() as f64 / 1e6;
    let hit_ratio = results.iter().map(|r| r.1 as f64 / 1e6).sum::<f64>() / threads as f64;
    Run { mops, hit_ratio }
}

fn env_list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn main() {
    let threads: Vec<usize> = env_list("SIFTER_BENCH_THREADS", "1,2,4,8")
        .iter()
        .map(|s| s.parse().expect("threads"))
        .collect();
    let sizes: Vec<f64> = env_list("SIFTER_BENCH_SIZES", "0.01,0.1")
        .iter()
        .map(|s| s.parse().expect("size"))
        .collect();
    let modes = env_list("SIFTER_BENCH_MODES", "shared,per-thread");
    let caches = env_list("SIFTER_BENCH_CACHES", "mobius,sieve,lru,clock,fifo,quick_cache,moka");
    let secs = Duration::from_secs_f64(
        std::env::var("SIFTER_BENCH_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(0.5),
    );
    let warm = secs / 2;
    let repeat: usize =
        std::env::var("SIFTER_BENCH_REPEAT").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    let out =
        std::env::var("SIFTER_BENCH_OUT").unwrap_or_else(|_| "target/bench-throughput.csv".into());
    let max_t = *threads.iter().max().unwrap_or(&1);
    eprintln!("generating {max_t} Zipf(1.0) sequences of {SEQ} requests over {KEYS} keys...");
    let seqs: Vec<Arc<Vec<u64>>> = (0..max_t as u64).map(|t| Arc::new(sequence(t + 1))).collect();
    let mut csv = String::from("mode,size,threads,cache,mops_median,mops_min,mops_max,hit_ratio\n");
    println!(
        "{:<11} {:>5} {:>3} {:<12} {:>9} {:>9} {:>9} {:>7}",
        "mode", "size", "thr", "cache", "Mops/s", "min", "max", "hit"
    );
    for mode in &modes {
        for &size in &sizes {
            for &t in &threads {
                let (cap, tseqs, offsets): (u64, Vec<Arc<Vec<u64>>>, Vec<u64>) = match mode.as_str()
                {
                    // shared keys: every thread its own random draw from the same distribution
                    "shared" => ((KEYS as f64 * size) as u64, seqs[..t].to_vec(), vec![0; t]),
                    // per-thread key spaces: the same sequence, a per-thread key prefix
                    _ => (
                        (KEYS as f64 * size) as u64 * t as u64,
                        vec![seqs[0].clone(); t],
                        (0..t as u64).map(|i| i << 56).collect(),
                    ),
                };
                // Round-robin over the caches in each repetition, so that the machine's noise
                // (shared host) hits every cache alike.
                let mut runs: Vec<Vec<Run>> = caches.iter().map(|_| Vec::new()).collect();
                for _ in 0..repeat {
                    for (i, c) in caches.iter().enumerate() {
                        runs[i].push(run(&*make(c, cap), &tseqs, &offsets, warm, secs));
                    }
                }
                for (c, mut runs) in caches.iter().zip(runs) {
                    runs.sort_by(|a, b| a.mops.total_cmp(&b.mops));
                    let med = &runs[runs.len() / 2];
                    println!(
                        "{:<11} {:>5} {:>3} {:<12} {:>9.2} {:>9.2} {:>9.2} {:>7.4}",
                        mode,
                        size,
                        t,
                        c,
                        med.mops,
                        runs[0].mops,
                        runs[runs.len() - 1].mops,
                        med.hit_ratio
                    );
                    csv.push_str(&format!(
                        "{mode},{size},{t},{c},{:.3},{:.3},{:.3},{:.4}\n",
                        med.mops,
                        runs[0].mops,
                        runs[runs.len() - 1].mops,
                        med.hit_ratio
                    ));
                }
            }
        }
    }
    if let Some(dir) = std::path::Path::new(&out).parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(&out, csv).expect("write results");
    eprintln!("wrote {out}");
}

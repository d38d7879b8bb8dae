// An outside harness: its own Zipf stream, read-through, caches alternated per repetition.
use rand::{rngs::StdRng, SeedableRng};
use rand_distr::{Distribution, Zipf};
use std::sync::Arc;
use std::time::Instant;

trait C<V>: Sync {
    fn get(&self, k: &u64) -> Option<V>;
    fn put(&self, k: u64, v: V);
}
struct S<V>(sifter::Cache<u64, V>);
struct Q<V>(quick_cache::sync::Cache<u64, V>);
impl<V: Clone + Send + Sync + 'static> C<V> for S<V> {
    fn get(&self, k: &u64) -> Option<V> { self.0.get(k) }
    fn put(&self, k: u64, v: V) { self.0.insert(k, v) }
}
impl<V: Clone + Send + Sync + 'static> C<V> for Q<V> {
    fn get(&self, k: &u64) -> Option<V> { self.0.get(k) }
    fn put(&self, k: u64, v: V) { self.0.insert(k, v) }
}

fn run<V: Clone + Send + Sync>(c: &dyn C<V>, streams: &[Vec<u64>], mk: &(dyn Fn(u64) -> V + Sync), warm: usize) -> (f64, f64) {
    // warm-up: each thread's first `warm` requests, then the rest measured
    let hits = std::sync::atomic::AtomicU64::new(0);
    let go = |range: std::ops::Range<usize>, count: bool| {
        std::thread::scope(|s| {
            for st in streams {
                let st = &st[range.clone()];
                let hits = &hits;
                s.spawn(move || {
                    let mut h = 0u64;
                    for &k in st {
                        match c.get(&k) {
                            Some(v) => { std::hint::black_box(v); h += 1; }
                            None => c.put(k, mk(k)),
                        }
                    }
                    if count { hits.fetch_add(h, std::sync::atomic::Ordering::Relaxed); }
                });
            }
        });
    };
    go(0..warm, false);
    let n = streams[0].len();
    let t = Instant::now();
    go(warm..n, true);
    let secs = t.elapsed().as_secs_f64();
    let total = ((n - warm) * streams.len()) as f64;
    (total / secs / 1e6, hits.into_inner() as f64 / total)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let vt = args.get(1).map(|s| s.as_str()).unwrap_or("u64");
    let reps: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(5);
    let env = |k: &str, d: &str| std::env::var(k).unwrap_or(d.to_string());
    let caps: Vec<usize> = env("CAPS", "10000,100000").split(',').map(|x| x.parse().unwrap()).collect();
    let ths: Vec<usize> = env("THREADS", "1,2").split(',').map(|x| x.parse().unwrap()).collect();
    let only = env("ONLY", "");
    let spread = env("SPREAD", "0") == "1";
    let n: usize = env("N", "6000000").parse().unwrap();
    let warm = n / 3;
    let z = Zipf::new(1_000_000f64, 1.0).unwrap();
    let all: Vec<Vec<u64>> = (0..2).map(|t| {
        let mut r = StdRng::seed_from_u64(42 + t);
        (0..n).map(|_| { let k = z.sample(&mut r) as u64; if spread { splitmix(k) } else { k } }).collect()
    }).collect();
    println!("values,threads,entries,rep,cache,mops,hit");
    for rep in 0..reps {
        for &cap in caps.iter() {
            for &th in ths.iter() {
                let streams = &all[..th];
                let order: [&str; 2] = if rep % 2 == 0 { ["sifter", "qc"] } else { ["qc", "sifter"] };
                for name in order {
                    if !only.is_empty() && name != only { continue; }
                    let (m, h) = match vt {
                        "u64" => {
                            let mk = |k: u64| k;
                            if name == "sifter" { run(&S(sifter::Cache::new(cap as u64)), streams, &mk, warm) }
                            else { run(&Q(quick_cache::sync::Cache::new(cap)), streams, &mk, warm) }
                        }
                        _ => {
                            let mk = |k: u64| -> Arc<str> { Arc::from(format!("value-{k:024}")) };
                            if name == "sifter" { run(&S(sifter::Cache::new(cap as u64)), streams, &mk, warm) }
                            else { run(&Q(quick_cache::sync::Cache::new(cap)), streams, &mk, warm) }
                        }
                    };
                    println!("{vt},{th},{cap},{rep},{name},{m:.3},{h:.4}");
                }
            }
        }
    }
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

//! An outside harness for issue 11's and 12's throughput targets: its own Zipf stream (rand_distr,
//! raw ranks as keys unless `spread=1`), read-through (`get`, and `insert` on a miss), threads
//! under `std::thread::scope`, each cache behind the same `dyn` trait, a fresh cache per
//! measurement, the caches in rotated order in every repetition. Nothing from `sifter-bench`.
//!
//! Arguments are `key=value` (defaults in brackets): `caches` [mobius,quick_cache] (any of
//! sifter's policy names, and `quick_cache`), `threads` [1,2], `sizes` [10000,100000],
//! `reps` [20: on a shared 2-vCPU host six left the one-thread 10k ratio anywhere in
//! 0.64–0.83 from run to run], `requests` per thread [6000000, the first third warms the
//! cache], `keys`
//! [1000000], `alpha` [1.0], `values` [u64 | arc: an `Arc<str>` of 30 bytes made on a miss],
//! `spread` [0 | 1: keys through splitmix64], `out` [outside.csv], `base` [the first cache].
//! Prints every measurement to stderr as it comes, then a table of paired ratios: each cache
//! against `base`, per size and thread count (geometric mean over repetitions,
//! with ±2 standard errors of the mean log ratio).

use rand::{rngs::StdRng, SeedableRng};
use rand_distr::{Distribution, Zipf};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

trait Store<V>: Sync {
    fn get(&self, k: &u64) -> Option<V>;
    fn put(&self, k: u64, v: V);
}

impl<V: Clone + Send + Sync + 'static> Store<V> for sifter::Cache<u64, V> {
    fn get(&self, k: &u64) -> Option<V> {
        sifter::Cache::get(self, k)
    }
    fn put(&self, k: u64, v: V) {
        self.insert(k, v)
    }
}

impl<V: Clone + Send + Sync + 'static> Store<V> for quick_cache::sync::Cache<u64, V> {
    fn get(&self, k: &u64) -> Option<V> {
        quick_cache::sync::Cache::get(self, k)
    }
    fn put(&self, k: u64, v: V) {
        self.insert(k, v)
    }
}

fn build<V: Clone + Send + Sync + 'static>(
    name: &str,
    cap: usize,
) -> Result<Box<dyn Store<V>>, String> {
    if name == "quick_cache" {
        return Ok(Box::new(quick_cache::sync::Cache::new(cap)));
    }
    let p = sifter::Policy::ALL
        .into_iter()
        .find(|p| p.name() == name)
        .ok_or_else(|| format!("unknown cache {name:?}"))?;
    let c = sifter::Cache::builder().capacity(cap as u64).policy(p).try_build();
    Ok(Box::new(c.map_err(|e| format!("{name} of {cap} entries: {e}"))?))
}

/// Runs each stream's first `warm` requests, then times the rest: (Mops/s, hit ratio).
fn run<V: Send>(
    c: &dyn Store<V>,
    streams: &[Vec<u64>],
    mk: fn(u64) -> V,
    warm: usize,
) -> (f64, f64) {
    let hits = AtomicU64::new(0);
    let pass = |from: usize, to: usize, count: bool| {
        std::thread::scope(|s| {
            for st in streams {
                let (st, hits) = (&st[from..to], &hits);
                s.spawn(move || {
                    let mut h = 0u64;
                    for &k in st {
                        match c.get(&k) {
                            Some(v) => {
                                std::hint::black_box(v);
                                h += 1;
                            }
                            None => c.put(k, mk(k)),
                        }
                    }
                    if count {
                        hits.fetch_add(h, Ordering::Relaxed);
                    }
                });
            }
        });
    };
    let n = streams[0].len();
    pass(0, warm, false);
    let t = Instant::now();
    pass(warm, n, true);
    let secs = t.elapsed().as_secs_f64();
    let total = ((n - warm) * streams.len()) as f64;
    (total / secs / 1e6, hits.into_inner() as f64 / total)
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn list<T: std::str::FromStr>(s: &str, what: &str) -> Result<Vec<T>, String> {
    s.split(',').map(|x| x.trim().parse().map_err(|_| format!("bad {what}: {x:?}"))).collect()
}

fn main() {
    if let Err(e) = real_main() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

fn real_main() -> Result<(), String> {
    let mut a: BTreeMap<String, String> = [
        ("caches", "mobius,quick_cache"),
        ("threads", "1,2"),
        ("sizes", "10000,100000"),
        ("reps", "20"),
        ("requests", "6000000"),
        ("keys", "1000000"),
        ("alpha", "1.0"),
        ("values", "u64"),
        ("spread", "0"),
        ("out", "outside.csv"),
        ("base", ""),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for arg in std::env::args().skip(1) {
        let (k, v) =
            arg.split_once('=').ok_or_else(|| format!("expected key=value, got {arg:?}"))?;
        if !a.contains_key(k) {
            return Err(format!(
                "unknown argument {k:?} (known: {:?})",
                a.keys().collect::<Vec<_>>()
            ));
        }
        a.insert(k.to_string(), v.to_string());
    }
    let caches: Vec<String> = list(&a["caches"], "cache")?;
    let threads: Vec<usize> = list(&a["threads"], "thread count")?;
    let sizes: Vec<usize> = list(&a["sizes"], "size")?;
    let reps: usize = a["reps"].parse().map_err(|_| "bad reps")?;
    let n: usize = a["requests"].parse().map_err(|_| "bad requests")?;
    let keys: f64 = a["keys"].parse().map_err(|_| "bad keys")?;
    let alpha: f64 = a["alpha"].parse().map_err(|_| "bad alpha")?;
    let spread = a["spread"] == "1";
    let arc = match a["values"].as_str() {
        "u64" => false,
        "arc" => true,
        v => return Err(format!("values must be u64 or arc, not {v:?}")),
    };
    if caches.is_empty() || threads.contains(&0) || sizes.contains(&0) || n < 3 || reps == 0 {
        return Err("need caches, threads ≥ 1, sizes ≥ 1, requests ≥ 3, reps ≥ 1".into());
    }
    if let Some(s) = sizes.iter().find(|&&s| s > 100_000_000) {
        return Err(format!("size {s}: at most 100,000,000 entries"));
    }
    for c in &caches {
        build::<u64>(c, 1)?;
    }
    if !a["base"].is_empty() && !caches.contains(&a["base"]) {
        return Err(format!("base {:?} is not among the caches", a["base"]));
    }
    let z = Zipf::new(keys, alpha).map_err(|e| format!("zipf: {e}"))?;
    let max_t = *threads.iter().max().unwrap();
    // The streams are held in memory: refuse what this machine cannot hold, before trying.
    let bytes = (max_t as u128) * (n as u128) * 8;
    if bytes > 16 << 30 {
        return Err(format!(
            "{max_t} streams of {n} requests need {} GiB; at most 16 GiB",
            bytes >> 30
        ));
    }
    eprintln!("generating {max_t} streams of {n} requests");
    let streams: Vec<Vec<u64>> = (0..max_t)
        .map(|t| {
            let mut r = StdRng::seed_from_u64(42 + t as u64);
            (0..n)
                .map(|_| {
                    let k = z.sample(&mut r) as u64;
                    if spread {
                        splitmix(k)
                    } else {
                        k
                    }
                })
                .collect()
        })
        .collect();
    let mut out = std::fs::File::create(&a["out"]).map_err(|e| format!("{}: {e}", a["out"]))?;
    writeln!(out, "values,threads,entries,rep,cache,mops,hit_ratio").map_err(|e| e.to_string())?;
    // (size, threads, cache) -> per-rep Mops/s
    let mut got: BTreeMap<(usize, usize, String), Vec<f64>> = BTreeMap::new();
    for rep in 0..reps {
        for &cap in &sizes {
            for &th in &threads {
                let k = caches.len();
                for i in 0..k {
                    let name = &caches[(i + rep) % k];
                    let (m, h) = if arc {
                        let c = build::<Arc<str>>(name, cap)?;
                        run(&*c, &streams[..th], |k| Arc::from(format!("value-{k:024}")), n / 3)
                    } else {
                        let c = build::<u64>(name, cap)?;
                        run(&*c, &streams[..th], |k| k, n / 3)
                    };
                    let line = format!("{},{th},{cap},{rep},{name},{m:.3},{h:.4}", a["values"]);
                    eprintln!("{line}");
                    writeln!(out, "{line}").map_err(|e| e.to_string())?;
                    got.entry((cap, th, name.clone())).or_default().push(m);
                }
            }
        }
    }
    let base = if a["base"].is_empty() { &caches[0] } else { &a["base"] };
    println!("| entries | threads | cache ÷ {base} | geomean [±2 s.e.] | reps |");
    println!("|---|---|---|---|---|");
    for &cap in &sizes {
        for &th in &threads {
            let b = &got[&(cap, th, base.clone())];
            for c in caches.iter().filter(|c| *c != base) {
                let x = &got[&(cap, th, c.clone())];
                let l: Vec<f64> = x.iter().zip(b).map(|(x, b)| (x / b).ln()).collect();
                let mean = l.iter().sum::<f64>() / l.len() as f64;
                let se = if l.len() > 1 {
                    (l.iter().map(|v| (v - mean).powi(2)).sum::<f64>()
                        / (l.len() - 1) as f64
                        / l.len() as f64)
                        .sqrt()
                } else {
                    f64::NAN
                };
                // One repetition has no spread to show.
                let interval = if se.is_nan() {
                    "[—]".to_string()
                } else {
                    format!("[{:.3}, {:.3}]", (mean - 2.0 * se).exp(), (mean + 2.0 * se).exp())
                };
                println!("| {cap} | {th} | {c} | {:.3} {interval} | {} |", mean.exp(), l.len());
            }
        }
    }
    Ok(())
}

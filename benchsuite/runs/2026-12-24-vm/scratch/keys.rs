use rand::prelude::*;
use rand_distr::Zipf;
use std::sync::Arc;
trait C<K>: Sync { fn get(&self, k: &K) -> bool; fn insert(&self, k: K); }
struct S<K: std::hash::Hash + Eq + Send + Sync + 'static>(sifter::Cache<K, Arc<[u8; 64]>>);
struct Q<K: std::hash::Hash + Eq + Clone + Send + Sync + 'static>(quick_cache::sync::Cache<K, Arc<[u8; 64]>>);
impl<K: std::hash::Hash + Eq + Send + Sync + 'static> C<K> for S<K> { fn get(&self, k: &K) -> bool { self.0.get(k).is_some() } fn insert(&self, k: K) { self.0.insert(k, Arc::new([0; 64])) } }
impl<K: std::hash::Hash + Eq + Clone + Send + Sync + 'static> C<K> for Q<K> { fn get(&self, k: &K) -> bool { self.0.get(k).is_some() } fn insert(&self, k: K) { self.0.insert(k, Arc::new([0; 64])) } }
#[inline(never)]
fn run<K: Clone, X: C<K>>(c: &X, keys: &[K]) -> u64 {
    let mut hits = 0;
    for k in keys { if c.get(k) { hits += 1 } else { c.insert(k.clone()) } }
    hits
}
fn bench<K: Clone + Send + Sync + std::hash::Hash + Eq + 'static>(name: &str, keys: &[K], cap: usize, threads: usize) {
    let s = S(sifter::Cache::builder().capacity(cap as u64).build());
    let q = Q(quick_cache::sync::Cache::new(cap));
    let n = keys.len() / 3;
    run(&s, &keys[..n]); run(&q, &keys[..n]);
    let mut out = vec![];
    for which in 0..2 {
        let t = std::time::Instant::now();
        let hits: u64 = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..threads).map(|i| { let ks = &keys[n + i * (2 * n / threads)..n + (i + 1) * (2 * n / threads)]; let (s, q) = (&s, &q); sc.spawn(move || if which == 0 { run(s, ks) } else { run(q, ks) }) }).collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        out.push((t.elapsed().as_nanos() as f64 / (2 * n) as f64, hits as f64 / (2 * n) as f64));
    }
    println!("{name} cap {cap} t{threads}: mobius {:.1} ns/req hit {:.4} | quick_cache {:.1} ns/req hit {:.4} | ratio {:.3}", out[0].0, out[0].1, out[1].0, out[1].1, out[1].0 / out[0].0);
}
fn main() {
    let z = Zipf::new(1_000_000.0, 1.0).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let ids: Vec<u64> = (0..3_000_000).map(|_| z.sample(&mut rng) as u64).collect();
    let strs: Vec<String> = ids.iter().map(|i| format!("user:{i:012}")).collect();
    for t in [1, 2] {
        for cap in [10_000, 100_000] {
            bench("u64", &ids, cap, t);
            bench("String", &strs, cap, t);
        }
    }
}

// SIEVE written from the SIEVE paper's description alone, sharing no code with sifter: does its
// hit ratio on Zipf 1.0 over 1M keys also climb for tens of millions of requests? (stop 67,
// docs/BENCHMARKS.md). Build and run: rustc -O sievecheck.rs && ./sievecheck CAPACITY REQUESTS
// Prints the hit ratio of each window of 2M requests.
use std::collections::HashMap;
struct Rng(u64);
impl Rng { fn next(&mut self) -> u64 { self.0 ^= self.0 << 13; self.0 ^= self.0 >> 7; self.0 ^= self.0 << 17; self.0 } 
  fn f(&mut self) -> f64 { (self.next() >> 11) as f64 / (1u64 << 53) as f64 } }
const NIL: usize = usize::MAX;
struct Sieve { cap: usize, map: HashMap<u64, usize>, key: Vec<u64>, vis: Vec<bool>, prev: Vec<usize>, next: Vec<usize>, head: usize, tail: usize, hand: usize, free: Vec<usize> }
// prev: toward tail (older), next: toward head (newer)
impl Sieve {
  fn new(cap: usize) -> Self { Sieve { cap, map: HashMap::new(), key: vec![0; cap], vis: vec![false; cap], prev: vec![NIL; cap], next: vec![NIL; cap], head: NIL, tail: NIL, hand: NIL, free: (0..cap).rev().collect() } }
  fn unlink(&mut self, i: usize) { let (p, n) = (self.prev[i], self.next[i]); if p != NIL { self.next[p] = n } else { self.tail = n } if n != NIL { self.prev[n] = p } else { self.head = p } }
  fn access(&mut self, k: u64) -> bool {
    if let Some(&i) = self.map.get(&k) { self.vis[i] = true; return true; }
    if self.map.len() == self.cap {
      let mut h = if self.hand == NIL { self.tail } else { self.hand };
      while self.vis[h] { self.vis[h] = false; h = self.next[h]; if h == NIL { h = self.tail; } }
      self.hand = self.next[h];
      self.unlink(h); self.map.remove(&self.key[h]); self.free.push(h);
    }
    let i = self.free.pop().unwrap();
    self.key[i] = k; self.vis[i] = false; self.prev[i] = self.head; self.next[i] = NIL;
    if self.head != NIL { self.next[self.head] = i } else { self.tail = i }
    self.head = i; self.map.insert(k, i); false
  }
}
fn main() {
  let n = 1_000_000usize; let alpha = 1.0f64;
  let mut cdf = Vec::with_capacity(n); let mut s = 0.0; for r in 1..=n { s += 1.0 / (r as f64).powf(alpha); cdf.push(s); }
  for c in cdf.iter_mut() { *c /= s; }
  let cap: usize = std::env::args().nth(1).map(|x| x.parse().unwrap()).unwrap_or(10000);
  let total: usize = std::env::args().nth(2).map(|x| x.parse().unwrap()).unwrap_or(40_000_000);
  let win = 2_000_000;
  let mut rng = Rng(0x9e3779b97f4a7c15);
  let mut c = Sieve::new(cap);
  let mut hits = 0usize;
  for i in 0..total {
    let u = rng.f(); let r = cdf.partition_point(|&x| x < u) as u64;
    if c.access(r.wrapping_mul(0x9e3779b97f4a7c15)) { hits += 1; }
    if (i + 1) % win == 0 { println!("{:>10} {:.4}", i + 1, hits as f64 / win as f64); hits = 0; }
  }
}

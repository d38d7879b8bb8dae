//! What a hit costs in each table layout, stripped of everything else: no synchronisation, no
//! statistics, no policy — only the memory a lookup touches (docs/BENCHMARKS.md, "Where a
//! hit's time goes: the index's first line").
//!
//! ```sh
//! cargo run --release -p sifter-bench --example index_layouts -- \
//!     [--keys 1000000] [--alpha 0.99] [--requests 4000000] [--rounds 4] [--rank-order]
//! ```
//!
//! Every key is resident (`--keys` of them); the requests are Zipf(`--alpha`) over them, as
//! `sifter bench --hit-only`. Three layouts of the same entries (u64 → u64, 32-byte slots as
//! sifter's), each looked up by the same request sequence, nanoseconds per lookup per round:
//!
//! * `words`: sifter's storage today — 64-byte index buckets of seven words (a 32-bit tag and
//!   a slot number each) and a control word of byte tags, sized 4 entries per bucket; the slots
//!   in an arena apart, in insertion order (shuffled unless `--rank-order`: slots are handed
//!   out as they come free, not by popularity). A hit reads the bucket's line, then the slot's.
//! * `positional`: the slot *is* the table position — a dense array of control words (eight
//!   byte tags for eight slots) and the slots at `bucket * 8 + i`, 1.43 positions per entry. A
//!   hit reads one control word (1 byte per slot: the array is small enough to stay in the L2
//!   far more often) and then the slot's line.
//! * `hashbrown`: `hashbrown::HashMap` (SwissTable: 16 control bytes per group, 16-byte
//!   buckets), the `ceiling` row of `sifter bench`.
//!
//! Both sifter-like layouts use the same hash (foldhash, spread as sifter's index spreads it)
//! and the same SWAR byte matching; the numbers are for comparing layouts on one machine in one
//! run, not absolute.

use rand::prelude::*;
use rand::rngs::SmallRng;
use rand_distr::Zipf;
use std::hash::BuildHasher;
use std::time::Instant;

const ONES: u64 = 0x0101_0101_0101_0101;
const LOWS: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `c` equal to `b` (exact, as sifter's index matches).
#[inline]
fn matching(c: u64, b: u64) -> u64 {
    let x = c ^ b.wrapping_mul(ONES);
    !(((x & LOWS) + LOWS) | x) & HIGHS
}

/// Sifter's hash spreading (multiply-fold), so both layouts see the same bits.
#[inline]
fn spread(h: u64) -> u64 {
    let p = u128::from(h) * 0x9E37_79B9_7F4A_7C15;
    (p as u64) ^ ((p >> 64) as u64)
}

#[inline]
fn byte_tag(h: u64) -> u64 {
    (h & 0x7f) | 0x80
}

/// `h`'s bucket among `n` (multiply-shift of the low half, as sifter's index).
#[inline]
fn home(h: u64, n: usize) -> usize {
    ((u64::from(h as u32) * n as u64) >> 32) as usize
}

/// A slot as sifter lays one out for u64 → u64: key, value, queue link, metadata.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Slot {
    key: u64,
    value: u64,
    next: u64,
    meta: u64,
}

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Bucket {
    words: [u64; 7],
    ctrl: u64,
}

/// Index buckets of words naming arena slots (sifter's storage).
struct Words {
    buckets: Vec<Bucket>,
    arena: Vec<Slot>,
}

impl Words {
    fn new(n: usize) -> Self {
        Words {
            buckets: vec![Bucket { words: [0; 7], ctrl: 0 }; n / 4 + 2],
            arena: vec![Slot::default(); n],
        }
    }

    fn insert(&mut self, h: u64, key: u64, value: u64, slot: usize) {
        let mut b = home(h, self.buckets.len());
        loop {
            let bucket = &mut self.buckets[b];
            if let Some(i) = bucket.words.iter().position(|w| *w == 0) {
                bucket.words[i] = (h >> 32 << 32) | (slot as u64 + 1);
                bucket.ctrl |= byte_tag(h) << (8 * i);
                self.arena[slot] = Slot { key, value, ..Slot::default() };
                return;
            }
            b = (b + 1) % self.buckets.len();
        }
    }

    #[inline(always)]
    fn get(&self, h: u64, key: u64) -> Option<u64> {
        let mut b = home(h, self.buckets.len());
        loop {
            let bucket = &self.buckets[b];
            let mut m = matching(bucket.ctrl, byte_tag(h)) & (HIGHS >> 8);
            while m != 0 {
                let x = bucket.words[(m.trailing_zeros() / 8) as usize];
                if x >> 32 == h >> 32 {
                    let slot = &self.arena[(x as u32 - 1) as usize];
                    if slot.key == key {
                        return Some(slot.value);
                    }
                }
                m &= m - 1;
            }
            if bucket.words.contains(&0) {
                return None;
            }
            b = (b + 1) % self.buckets.len();
        }
    }
}

/// Control words over slots by position.
struct Positional {
    ctrl: Vec<u64>,
    slots: Vec<Slot>,
}

impl Positional {
    fn new(n: usize) -> Self {
        let groups = n * 10 / 7 / 8 + 2;
        Positional { ctrl: vec![0; groups], slots: vec![Slot::default(); groups * 8] }
    }

    fn insert(&mut self, h: u64, key: u64, value: u64) {
        let mut g = home(h, self.ctrl.len());
        loop {
            if let Some(i) = (0..8).find(|i| self.ctrl[g] >> (8 * i) & 0x80 == 0) {
                self.ctrl[g] |= byte_tag(h) << (8 * i);
                self.slots[g * 8 + i] = Slot { key, value, ..Slot::default() };
                return;
            }
            g = (g + 1) % self.ctrl.len();
        }
    }

    #[inline(always)]
    fn get(&self, h: u64, key: u64) -> Option<u64> {
        let mut g = home(h, self.ctrl.len());
        loop {
            let c = self.ctrl[g];
            let mut m = matching(c, byte_tag(h));
            while m != 0 {
                let slot = &self.slots[g * 8 + (m.trailing_zeros() / 8) as usize];
                if slot.key == key {
                    return Some(slot.value);
                }
                m &= m - 1;
            }
            if c & HIGHS != HIGHS {
                return None;
            }
            g = (g + 1) % self.ctrl.len();
        }
    }
}

/// Nanoseconds per lookup of `seq` by `get` (monomorphised: each layout's loop is its own),
/// and the sum of the values found.
fn time(seq: &[u64], get: impl Fn(u64) -> Option<u64>) -> (f64, u64) {
    let t = Instant::now();
    let mut sum = 0u64;
    for &k in seq {
        sum = sum.wrapping_add(get(k).expect("every key is resident"));
    }
    (t.elapsed().as_nanos() as f64 / seq.len() as f64, sum)
}

fn main() {
    let (mut keys, mut alpha, mut requests, mut rounds, mut rank_order) =
        (1_000_000usize, 0.99f64, 4_000_000usize, 4usize, false);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next().unwrap_or_else(|| {
                eprintln!("{name} needs a value");
                std::process::exit(2)
            })
        };
        fn parse<T: std::str::FromStr>(name: &str, v: String) -> T {
            v.parse().unwrap_or_else(|_| {
                eprintln!("{name}: not a valid value: {v}");
                std::process::exit(2)
            })
        }
        match a.as_str() {
            "--keys" => keys = parse("--keys", value("--keys")),
            "--alpha" => alpha = parse("--alpha", value("--alpha")),
            "--requests" => requests = parse("--requests", value("--requests")),
            "--rounds" => rounds = parse("--rounds", value("--rounds")),
            "--rank-order" => rank_order = true,
            _ => {
                eprintln!(
                    "unknown argument {a}; usage: index_layouts [--keys N] [--alpha A] \
                     [--requests N] [--rounds N] [--rank-order]"
                );
                std::process::exit(2)
            }
        }
    }
    if !(1..=100_000_000).contains(&keys) || !(1..=500_000_000).contains(&requests) || rounds == 0 {
        eprintln!(
            "--keys must be in 1..=100000000, --requests in 1..=500000000 (8 bytes each, held \
             in memory), --rounds at least 1"
        );
        std::process::exit(2)
    }
    let Ok(zipf) = Zipf::new(keys as f64, alpha) else {
        eprintln!("--alpha: not a valid Zipf exponent: {alpha}");
        std::process::exit(2)
    };
    let key_of = |rank: u64| rank.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut rng = SmallRng::seed_from_u64(1);
    let seq: Vec<u64> = (0..requests).map(|_| key_of(zipf.sample(&mut rng) as u64)).collect();
    let hasher = foldhash::fast::FixedState::with_seed(7);
    let hash = |k: u64| spread(hasher.hash_one(k));
    let mut words = Words::new(keys);
    let mut positional = Positional::new(keys);
    let mut map = hashbrown::HashMap::with_capacity(keys);
    let mut order: Vec<usize> = (0..keys).collect();
    if !rank_order {
        order.shuffle(&mut rng);
    }
    for (rank, &slot) in (1..=keys as u64).zip(&order) {
        let k = key_of(rank);
        words.insert(hash(k), k, rank, slot);
        positional.insert(hash(k), k, rank);
        map.insert(k, rank);
    }
    println!(
        "{keys} keys, Zipf {alpha}, {requests} requests, arena in {} order",
        if rank_order { "rank" } else { "shuffled" }
    );
    println!("round  words ns  positional ns  hashbrown ns  words/hashbrown  positional/hashbrown");
    for round in 1..=rounds {
        let (w, s1) = time(&seq, |k| words.get(hash(k), k));
        let (p, s2) = time(&seq, |k| positional.get(hash(k), k));
        let (h, s3) = time(&seq, |k| map.get(&k).copied());
        assert!(s1 == s2 && s2 == s3, "the layouts disagree");
        println!("{round:>5}  {w:>8.1}  {p:>13.1}  {h:>12.1}  {:>15.2}  {:>20.2}", h / w, h / p);
    }
}

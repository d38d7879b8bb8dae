//! What a hit costs in each table layout, stripped of everything else: no synchronisation, no
//! statistics, no policy — only the memory a lookup touches (docs/BENCHMARKS.md, "Where a
//! hit's time goes: the index's first line").
//!
//! ```sh
//! cargo run --release -p sifter-bench --example index_layouts -- \
//!     [--keys 1000000] [--alpha 0.99] [--requests 4000000] [--rounds 4] [--rank-order] \
//!     [--read-through FRACTION] [--positions 1.43]
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
//! * `positional`: the slot *is* the table position — a dense array of control words (seven
//!   byte tags for seven slots and a pass-through count, as in the design of docs/DESIGN.md,
//!   "Next: positional slots") and the slots at `group * 7 + i`, 1.43 positions per entry
//!   (`--positions`). A
//!   hit reads one control word (1 byte per slot: the array is small enough to stay in the L2
//!   far more often) and then the slot's line.
//! * `hashbrown`: `hashbrown::HashMap` (SwissTable: 16 control bytes per group, 16-byte
//!   buckets), the `ceiling` row of `sifter bench`.
//!
//! With `--read-through F` the two sifter-like layouts run as caches of `F × keys` entries
//! instead, read-through under CLOCK (a queue of slots; a hit sets the slot's reference bit if
//! clear; a miss evicts at the queue's head — a marked slot loses its mark and goes to the
//! tail — and inserts the key), so what an insert and an eviction touch in each layout is
//! timed too, ns per request. `words` reuses the victim's slot for the new key (as sifter's
//! free lists hand back a slot just retired) and clears the victim's word in its bucket, found
//! from the hash the slot keeps; `positional` clears the victim's byte and claims a free
//! position in the new key's home group, whose slot line is wherever the hash says. Both run
//! the same policy on the same stream, so their hits are equal (checked).
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
/// Positions per control word in the positional layout (byte 7: the pass-through count).
const GROUP: usize = 7;

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

/// Control word `c` with its pass-through count (byte 7) raised by one; the count sticks at
/// 255, as sifter's does (lookups go on past a saturated bucket).
fn raise(c: u64) -> u64 {
    if c >> 56 < 0xFF {
        c + (1 << 56)
    } else {
        c
    }
}

/// Control word `c` with its pass-through count lowered by one, unless saturated.
fn lower(c: u64) -> u64 {
    if c >> 56 < 0xFF {
        c - (1 << 56)
    } else {
        c
    }
}

/// The reference bit, in a slot's `meta` above the hash's low half (which names the home).
const MARK: u64 = 1 << 63;

impl Words {
    fn new(n: usize) -> Self {
        Words {
            buckets: vec![Bucket { words: [0; 7], ctrl: 0 }; n / 4 + 2],
            arena: vec![Slot::default(); n],
        }
    }

    /// Stores `slot` for `h` in its home bucket or, if that is full, in the next with room,
    /// raising the pass-through counts (byte 7 of the control word) of the buckets passed, as
    /// sifter's index does.
    fn insert(&mut self, h: u64, key: u64, value: u64, slot: usize) {
        let mut b = home(h, self.buckets.len());
        loop {
            let bucket = &mut self.buckets[b];
            if let Some(i) = bucket.words.iter().position(|w| *w == 0) {
                bucket.words[i] = (h >> 32 << 32) | (slot as u64 + 1);
                bucket.ctrl |= byte_tag(h) << (8 * i);
                self.arena[slot] = Slot { key, value, next: 0, meta: h & 0xFFFF_FFFF };
                return;
            }
            bucket.ctrl = raise(bucket.ctrl);
            b = (b + 1) % self.buckets.len();
        }
    }

    #[inline(always)]
    fn get(&self, h: u64, key: u64) -> Option<u64> {
        self.find(h, key).map(|s| self.arena[s].value)
    }

    /// The slot of `key`.
    #[inline(always)]
    fn find(&self, h: u64, key: u64) -> Option<usize> {
        let mut b = home(h, self.buckets.len());
        loop {
            let bucket = &self.buckets[b];
            let mut m = matching(bucket.ctrl, byte_tag(h)) & (HIGHS >> 8);
            while m != 0 {
                let x = bucket.words[(m.trailing_zeros() / 8) as usize];
                if x >> 32 == h >> 32 {
                    let s = (x as u32 - 1) as usize;
                    if self.arena[s].key == key {
                        return Some(s);
                    }
                }
                m &= m - 1;
            }
            if bucket.ctrl >> 56 == 0 {
                return None;
            }
            b = (b + 1) % self.buckets.len();
        }
    }

    /// Takes slot `s`'s word out of the index (found from the hash the slot keeps, probing
    /// from its home), lowering the pass-through counts it raised; leaves the slot as it is.
    fn remove(&mut self, s: usize) {
        let h = self.arena[s].meta & 0xFFFF_FFFF;
        let want = s as u64 + 1;
        let mut b = home(h, self.buckets.len());
        loop {
            let bucket = &mut self.buckets[b];
            let mut m = matching(bucket.ctrl, byte_tag(h)) & (HIGHS >> 8);
            while m != 0 {
                let i = (m.trailing_zeros() / 8) as usize;
                if bucket.words[i] & 0xFFFF_FFFF == want {
                    bucket.words[i] = 0;
                    bucket.ctrl &= !(0xFF << (8 * i));
                    return;
                }
                m &= m - 1;
            }
            bucket.ctrl = lower(bucket.ctrl);
            b = (b + 1) % self.buckets.len();
        }
    }
}

impl Clock for Words {
    fn mark(&mut self, s: usize) -> &mut u64 {
        &mut self.arena[s].meta
    }

    fn hit(&mut self, h: u64, key: u64) -> Option<usize> {
        self.find(h, key)
    }

    fn replace(&mut self, victim: usize, h: u64, key: u64, value: u64) -> usize {
        self.remove(victim);
        self.insert(h, key, value, victim);
        victim
    }
}

/// Control words over slots by position.
struct Positional {
    ctrl: Vec<u64>,
    slots: Vec<Slot>,
}

impl Positional {
    /// A table for `n` entries with `per_entry` positions each.
    fn new(n: usize, per_entry: f64) -> Self {
        let groups = (n as f64 * per_entry) as usize / GROUP + 2;
        Positional { ctrl: vec![0; groups], slots: vec![Slot::default(); groups * GROUP] }
    }

    /// Claims a free position for `h` and fills its slot; returns the position.
    fn insert(&mut self, h: u64, key: u64, value: u64) -> usize {
        let mut g = home(h, self.ctrl.len());
        loop {
            let free = !self.ctrl[g] & (HIGHS >> 8);
            if free != 0 {
                let i = (free.trailing_zeros() / 8) as usize;
                self.ctrl[g] |= byte_tag(h) << (8 * i);
                let p = g * GROUP + i;
                self.slots[p] = Slot { key, value, next: 0, meta: h & 0xFFFF_FFFF };
                return p;
            }
            self.ctrl[g] = raise(self.ctrl[g]);
            g = (g + 1) % self.ctrl.len();
        }
    }

    #[inline(always)]
    fn get(&self, h: u64, key: u64) -> Option<u64> {
        self.find(h, key).map(|p| self.slots[p].value)
    }

    /// The position of `key`.
    #[inline(always)]
    fn find(&self, h: u64, key: u64) -> Option<usize> {
        let mut g = home(h, self.ctrl.len());
        loop {
            let c = self.ctrl[g];
            let mut m = matching(c, byte_tag(h)) & (HIGHS >> 8);
            while m != 0 {
                let p = g * GROUP + (m.trailing_zeros() / 8) as usize;
                if self.slots[p].key == key {
                    return Some(p);
                }
                m &= m - 1;
            }
            if c >> 56 == 0 {
                return None;
            }
            g = (g + 1) % self.ctrl.len();
        }
    }
}

impl Clock for Positional {
    fn mark(&mut self, p: usize) -> &mut u64 {
        &mut self.slots[p].meta
    }

    fn hit(&mut self, h: u64, key: u64) -> Option<usize> {
        self.find(h, key)
    }

    /// Frees the victim's position (its byte, and the pass-through counts of the groups
    /// before it if it overflowed: known from the hash its slot keeps, a line the eviction
    /// read anyway), then claims one for the new key.
    fn replace(&mut self, victim: usize, h: u64, key: u64, value: u64) -> usize {
        let (vg, vi) = (victim / GROUP, victim % GROUP);
        self.ctrl[vg] &= !(0xFF << (8 * vi));
        let mut g = home(self.slots[victim].meta & 0xFFFF_FFFF, self.ctrl.len());
        while g != vg {
            self.ctrl[g] = lower(self.ctrl[g]);
            g = (g + 1) % self.ctrl.len();
        }
        self.insert(h, key, value)
    }
}

/// A layout run as a read-through cache under CLOCK (see the module docs).
trait Clock {
    /// Slot `s`'s word that holds its reference bit ([`MARK`]).
    fn mark(&mut self, s: usize) -> &mut u64;
    /// The slot of `key`, if cached.
    fn hit(&mut self, h: u64, key: u64) -> Option<usize>;
    /// Evicts `victim` and caches `key` → `value`; returns the new entry's slot.
    fn replace(&mut self, victim: usize, h: u64, key: u64, value: u64) -> usize;
}

/// Runs `seq` read-through against `cache` (filled with `queue`'s slots) under CLOCK: ns per
/// request and the hits. The queue is a ring of slot numbers.
fn clock_run<C: Clock>(
    cache: &mut C,
    queue: &mut std::collections::VecDeque<usize>,
    seq: &[u64],
    hash: impl Fn(u64) -> u64,
) -> (f64, u64) {
    let t = Instant::now();
    let mut hits = 0u64;
    for &k in seq {
        let h = hash(k);
        if let Some(s) = cache.hit(h, k) {
            let m = cache.mark(s);
            if *m & MARK == 0 {
                *m |= MARK;
            }
            hits += 1;
            continue;
        }
        let victim = loop {
            let s = queue.pop_front().expect("the cache is full");
            let m = cache.mark(s);
            if *m & MARK == 0 {
                break s;
            }
            *m &= !MARK;
            queue.push_back(s);
        };
        let s = cache.replace(victim, h, k, k ^ 1);
        queue.push_back(s);
    }
    (t.elapsed().as_nanos() as f64 / seq.len() as f64, hits)
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
    let mut read_through: Option<f64> = None;
    let mut per_entry = 1.43f64;
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
            "--positions" => per_entry = parse("--positions", value("--positions")),
            "--read-through" => {
                read_through = Some(parse("--read-through", value("--read-through")))
            }
            _ => {
                eprintln!(
                    "unknown argument {a}; usage: index_layouts [--keys N] [--alpha A] \
                     [--requests N] [--rounds N] [--rank-order] [--read-through F] [--positions P]"
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
    if !(1.15..=4.0).contains(&per_entry) {
        eprintln!("--positions: positions per entry must be in [1.15, 4]");
        std::process::exit(2)
    }
    if read_through.is_some_and(|f| !(f > 0.0 && f < 1.0)) {
        eprintln!("--read-through: the cache's share of the keys must be in (0, 1)");
        std::process::exit(2)
    }
    let key_of = |rank: u64| rank.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut rng = SmallRng::seed_from_u64(1);
    let seq: Vec<u64> = (0..requests).map(|_| key_of(zipf.sample(&mut rng) as u64)).collect();
    let hasher = foldhash::fast::FixedState::with_seed(7);
    let hash = |k: u64| spread(hasher.hash_one(k));
    if let Some(f) = read_through {
        read_through_rounds(&seq, keys, f, per_entry, rounds, &hash);
        return;
    }
    let mut words = Words::new(keys);
    let mut positional = Positional::new(keys, per_entry);
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

/// The `--read-through` experiment: both layouts as CLOCK caches of `f × keys` entries,
/// filled with the most popular keys, then `rounds` passes over `seq`, the layouts taking
/// turns every 50,000 requests.
fn read_through_rounds(
    seq: &[u64],
    keys: usize,
    f: f64,
    per_entry: f64,
    rounds: usize,
    hash: &impl Fn(u64) -> u64,
) {
    let cap = ((keys as f64 * f) as usize).max(1);
    let key_of = |rank: u64| rank.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut words = Words::new(cap);
    let mut positional = Positional::new(cap, per_entry);
    let (mut wq, mut pq) = (std::collections::VecDeque::new(), std::collections::VecDeque::new());
    for rank in 1..=cap as u64 {
        let k = key_of(rank);
        words.insert(hash(k), k, k ^ 1, (rank - 1) as usize);
        wq.push_back((rank - 1) as usize);
        pq.push_back(positional.insert(hash(k), k, k ^ 1));
    }
    println!(
        "{keys} keys, cache of {cap} ({f}), Zipf, {} requests per round, read-through under CLOCK",
        seq.len()
    );
    println!("round  words ns  positional ns  positional/words  hit ratio");
    // The layouts take turns every CHUNK requests (the caches carry on where they stopped),
    // so that a phase of the host's noise falls on both alike.
    const CHUNK: usize = 50_000;
    for round in 1..=rounds {
        let (mut w, mut p, mut hw, mut hp) = (0.0, 0.0, 0, 0);
        for part in seq.chunks(CHUNK) {
            let share = part.len() as f64 / seq.len() as f64;
            let (t, h) = clock_run(&mut words, &mut wq, part, hash);
            (w, hw) = (w + t * share, hw + h);
            let (t, h) = clock_run(&mut positional, &mut pq, part, hash);
            (p, hp) = (p + t * share, hp + h);
        }
        assert_eq!(hw, hp, "the layouts' caches disagree");
        println!(
            "{round:>5}  {w:>8.1}  {p:>13.1}  {:>16.2}  {:>9.4}",
            p / w,
            hw as f64 / seq.len() as f64
        );
    }
}

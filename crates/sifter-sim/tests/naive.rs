//! Differential tests: every policy against a deliberately naive, obviously-correct model
//! (vectors and linear scans, written straight from each algorithm's description), on random
//! traces in object and byte mode. Also checks each policy's `validate()` after every request.

use proptest::prelude::*;
use sifter_sim::policy::{PolicyCtx, Req};
use sifter_sim::registry::PolicySpec;
use sifter_sim::trace::{LoadedTrace, NEVER};
use sifter_trace::Request;
use std::collections::VecDeque;

fn load(reqs: &[(u64, u32)]) -> LoadedTrace {
    let it = reqs
        .iter()
        .enumerate()
        .map(|(i, &(k, s))| Ok(Request { size: s, ..Request::get(i as u64, k) }));
    LoadedTrace::load("t", it, &|_| {}).expect("load")
}

/// Misses of the real policy, validating its invariants after every request.
fn run_real(name: &str, t: &LoadedTrace, cap: u64, bytes: bool) -> u64 {
    let spec = PolicySpec::parse(name).expect("spec");
    let mut p =
        spec.build(&PolicyCtx { capacity: cap, n_objects: t.n_objects, seed: 0 }).expect("build");
    let next = t.next_access();
    let mut misses = 0;
    for i in 0..t.len() {
        let size = if bytes { t.sizes[i] } else { 1 };
        let nx = if p.wants_next_access() { next[i] } else { NEVER };
        let hit = p.step(&Req { id: t.ids[i], key: t.keys[i], size, next: nx });
        misses += (!hit) as u64;
        if let Err(e) = p.check() {
            panic!("{name} cap {cap} bytes {bytes}: after request {i}: {e}");
        }
        // Policies that list their contents (for `analyze ideal`) list each id once, within
        // capacity, and (object mode: every listing policy admits everything) the id just asked.
        if let Some(mut ids) = p.resident_ids() {
            let n = ids.len();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), n, "{name}: an id listed twice after request {i}");
            if !bytes {
                assert!(n as u64 <= cap, "{name}: {n} listed, capacity {cap}");
                assert!(ids.binary_search(&t.ids[i]).is_ok(), "{name}: request {i} not listed");
            }
        }
    }
    misses
}

struct Obj {
    id: u32,
    size: u64,
    freq: u32,
}

/// The libCacheSim get: hit, or make room and insert (objects larger than the cache are skipped).
fn naive(name: &str, t: &LoadedTrace, cap: u64, bytes: bool) -> u64 {
    let mut q: Vec<Obj> = Vec::new(); // index 0 = oldest (tail)
    let mut hand: Option<usize> = None; // SIEVE: index into q
    let used = |q: &Vec<Obj>| q.iter().map(|o| o.size).sum::<u64>();
    let mut misses = 0;
    for i in 0..t.len() {
        let id = t.ids[i];
        let size = if bytes { t.sizes[i] as u64 } else { 1 };
        if let Some(pos) = q.iter().position(|o| o.id == id) {
            match name {
                "lru" => {
                    let o = q.remove(pos);
                    q.push(o);
                }
                "clock" => q[pos].freq = (q[pos].freq + 1).min(1),
                "gclock(bits=3)" => q[pos].freq = (q[pos].freq + 1).min(7),
                "sieve" => q[pos].freq = 1,
                _ => {}
            }
            continue;
        }
        misses += 1;
        if size > cap {
            continue;
        }
        while used(&q) + size > cap {
            match name {
                "fifo" | "lru" => {
                    q.remove(0);
                }
                "clock" | "gclock(bits=3)" => loop {
                    let mut o = q.remove(0);
                    if o.freq >= 1 {
                        o.freq -= 1;
                        q.push(o);
                    } else {
                        break;
                    }
                },
                "sieve" => {
                    // The hand walks from old (index 0) to new, wrapping; evicts the first
                    // unvisited object; then points at the next newer object (or none).
                    let mut h = hand.unwrap_or(0);
                    while q[h].freq == 1 {
                        q[h].freq = 0;
                        h = if h + 1 == q.len() { 0 } else { h + 1 };
                    }
                    q.remove(h);
                    hand = if h < q.len() { Some(h) } else { None };
                }
                "belady" => {
                    // furthest next use; position i's future starts after i
                    let nu = |o: &Obj| {
                        (i + 1..t.len()).find(|&j| t.ids[j] == o.id).map_or(u64::MAX, |j| j as u64)
                    };
                    let (k, _) =
                        q.iter().enumerate().max_by_key(|(_, o)| nu(o)).expect("non-empty");
                    // ties (never used again) do not change hits in object mode
                    q.remove(k);
                }
                _ => unreachable!(),
            }
        }
        q.push(Obj { id, size, freq: 0 });
    }
    misses
}

/// S3-FIFO, naively: three vectors, the ghost a vector of (id, size).
fn naive_s3fifo(t: &LoadedTrace, cap: u64, bytes: bool) -> u64 {
    let s_cap = (cap as f64 * 0.1) as u64;
    let m_cap = cap - s_cap;
    let g_cap = (cap as f64 * 0.9) as u64;
    let mut s: VecDeque<Obj> = VecDeque::new();
    let mut m: VecDeque<Obj> = VecDeque::new();
    let mut g: VecDeque<(u32, u64)> = VecDeque::new();
    let sum = |q: &VecDeque<Obj>| q.iter().map(|o| o.size).sum::<u64>();
    let mut misses = 0;
    for i in 0..t.len() {
        let id = t.ids[i];
        let size = if bytes { t.sizes[i] as u64 } else { 1 };
        if let Some(o) = s.iter_mut().chain(m.iter_mut()).find(|o| o.id == id) {
            o.freq += 1;
            continue;
        }
        misses += 1;
        let ghost_hit = match g.iter().position(|&(gid, _)| gid == id) {
            Some(p) => {
                g.remove(p);
                true
            }
            None => false,
        };
        if size > s_cap || size > cap {
            continue;
        }
        while sum(&s) + sum(&m) + size > cap {
            if sum(&m) > m_cap || s.is_empty() {
                while let Some(mut o) = m.pop_front() {
                    if o.freq >= 1 {
                        o.freq = o.freq.min(3) - 1;
                        m.push_back(o);
                    } else {
                        break;
                    }
                }
            } else {
                while let Some(mut o) = s.pop_front() {
                    if o.freq >= 2 {
                        o.freq = 0;
                        m.push_back(o);
                    } else {
                        if o.size <= g_cap {
                            while g.iter().map(|x| x.1).sum::<u64>() + o.size > g_cap {
                                g.pop_front();
                            }
                            g.push_back((o.id, o.size));
                        }
                        break;
                    }
                }
            }
        }
        if ghost_hit {
            m.push_back(Obj { id, size, freq: 0 });
        } else if size < s_cap {
            s.push_back(Obj { id, size, freq: 0 });
        }
    }
    misses
}

fn trace_strategy() -> impl Strategy<Value = Vec<(u64, u32)>> {
    // Few keys (so hits happen), small sizes (so byte mode evicts several objects at once).
    (1u64..40, 1usize..400)
        .prop_flat_map(|(keys, len)| prop::collection::vec((0..keys, 1u32..9), len))
}

/// LFU-DA and LRU-K, naively: resident objects in a vector, the victim found by a full scan.
/// LFU-DA: (key, time the key was set); LRU-K: every request time of every object.
fn naive_lfuda(t: &LoadedTrace, cap: u64, bytes: bool) -> u64 {
    // (id, size, count, key, key set at)
    let mut res: Vec<(u32, u64, u64, u64, usize)> = Vec::new();
    let (mut age, mut misses) = (0u64, 0u64);
    for i in 0..t.len() {
        let (id, size) = (t.ids[i], if bytes { t.sizes[i] as u64 } else { 1 });
        if let Some(o) = res.iter_mut().find(|o| o.0 == id) {
            o.2 += 1;
            (o.3, o.4) = (o.2 + age, i);
            continue;
        }
        misses += 1;
        if size > cap {
            continue;
        }
        while res.iter().map(|o| o.1).sum::<u64>() + size > cap {
            let (k, _) = res.iter().enumerate().min_by_key(|(_, o)| (o.3, o.4)).expect("non-empty");
            age = res.remove(k).3;
        }
        res.push((id, size, 1, 1 + age, i));
    }
    misses
}

fn naive_lruk(t: &LoadedTrace, cap: u64, bytes: bool, k: usize) -> u64 {
    let mut times: std::collections::HashMap<u32, Vec<u64>> = Default::default();
    let mut res: Vec<(u32, u64)> = Vec::new();
    let mut misses = 0;
    for i in 0..t.len() {
        let (id, size) = (t.ids[i], if bytes { t.sizes[i] as u64 } else { 1 });
        let now = i as u64 + 1;
        if res.iter().any(|o| o.0 == id) {
            times.entry(id).or_default().push(now);
            continue;
        }
        misses += 1;
        if size > cap {
            continue;
        }
        while res.iter().map(|o| o.1).sum::<u64>() + size > cap {
            let rank = |id: u32| {
                let h = &times[&id];
                let kth = if h.len() >= k { h[h.len() - k] } else { 0 };
                (kth, *h.last().expect("requested"))
            };
            let (v, _) = res.iter().enumerate().min_by_key(|(_, o)| rank(o.0)).expect("non-empty");
            res.remove(v);
        }
        times.entry(id).or_default().push(now);
        res.push((id, size));
    }
    misses
}

/// B-LRU: the same Bloom filter as the policy's (cleared after `items` new keys) in front of the
/// naive LRU — this checks the admission, generation and LRU logic; the filter is the crate's.
fn naive_blru(t: &LoadedTrace, cap: u64, bytes: bool, items: usize) -> u64 {
    let mut seen = sifter_sim::policies::blru::BLru::filter(items as u64, 0.01, 0).expect("filter");
    let mut added = 0;
    let mut q: Vec<(u32, u64)> = Vec::new(); // index 0 = least recent
    let mut misses = 0;
    for i in 0..t.len() {
        let (id, size) = (t.ids[i], if bytes { t.sizes[i] as u64 } else { 1 });
        if let Some(pos) = q.iter().position(|o| o.0 == id) {
            let o = q.remove(pos);
            q.push(o);
            continue;
        }
        misses += 1;
        if !seen.check(&t.keys[i]) {
            if added == items {
                seen.clear();
                added = 0;
            }
            seen.set(&t.keys[i]);
            added += 1;
            continue;
        }
        if size > cap {
            continue;
        }
        while q.iter().map(|o| o.1).sum::<u64>() + size > cap {
            q.remove(0);
        }
        q.push((id, size));
    }
    misses
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn policies_match_naive_models(reqs in trace_strategy(), cap in 1u64..30, bytes in any::<bool>()) {
        let t = load(&reqs);
        for name in ["fifo", "lru", "clock", "gclock(bits=3)", "sieve", "belady"] {
            if name == "belady" && bytes {
                continue; // ties among never-again objects of different sizes are order-dependent
            }
            prop_assert_eq!(run_real(name, &t, cap, bytes), naive(name, &t, cap, bytes), "{} cap {} bytes {}", name, cap, bytes);
        }
        prop_assert_eq!(run_real("s3fifo", &t, cap, bytes), naive_s3fifo(&t, cap, bytes), "s3fifo cap {} bytes {}", cap, bytes);
    }

    #[test]
    fn random_stays_within_capacity(reqs in trace_strategy(), cap in 1u64..30) {
        let t = load(&reqs);
        run_real("random", &t, cap, true);
    }
}

#[test]
fn belady_is_optimal_among_policies() {
    let src =
        sifter_trace::SynthSpec::parse("zipf:alpha=0.8,n=500,requests=20000,seed=3").expect("spec");
    let t = LoadedTrace::load("z", src.generate().map(Ok), &|_| {}).expect("load");
    let opt = run_real("belady", &t, 50, false);
    for p in ["fifo", "lru", "clock", "sieve", "s3fifo", "random"] {
        assert!(run_real(p, &t, 50, false) >= opt, "{p} beat Belady");
    }
}

/// Multi-step LRU, naively: each set is `m` vectors (Vec) of at most `p` ids, MRU first.
fn naive_multistep(t: &LoadedTrace, cap: u64, p: usize, m: usize) -> u64 {
    fn mix(mut x: u64) -> u64 {
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
        x ^ (x >> 31)
    }
    let sets = (cap / (p * m) as u64).max(1);
    let mut s: Vec<Vec<Vec<u32>>> = vec![vec![Vec::new(); m]; sets as usize];
    let mut misses = 0;
    for i in 0..t.len() {
        let (id, key) = (t.ids[i], t.keys[i]);
        let set = &mut s[(mix(key) % sets) as usize];
        let found = set
            .iter()
            .enumerate()
            .find_map(|(v, vec)| vec.iter().position(|&x| x == id).map(|j| (v, j)));
        match found {
            Some((v, j)) if j > 0 => {
                let x = set[v].remove(j);
                set[v].insert(0, x);
            }
            Some((v, 0)) if v > 0 => {
                let me = set[v].remove(0);
                let other = set[v - 1].pop();
                set[v - 1].push(me);
                if let Some(o) = other {
                    set[v].insert(0, o);
                }
            }
            Some(_) => {}
            None => {
                misses += 1;
                match (0..m).find(|&v| set[v].len() < p) {
                    Some(v) => set[v].insert(0, id),
                    None => {
                        set[m - 1].pop();
                        set[m - 1].insert(0, id);
                    }
                }
            }
        }
    }
    misses
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn multistep_matches_naive_model(reqs in trace_strategy(), cap in 1u64..40, p in 1usize..5, m in 1usize..4) {
        let t = load(&reqs);
        let spec = format!("multistep-lru(p={p},m={m})");
        prop_assert_eq!(run_real(&spec, &t, cap, false), naive_multistep(&t, cap, p, m), "{}", spec);
    }

    #[test]
    fn problru_extremes_are_lru_and_fifo(reqs in trace_strategy(), cap in 1u64..30) {
        let t = load(&reqs);
        prop_assert_eq!(run_real("problru(q=0)", &t, cap, true), run_real("lru", &t, cap, true));
        prop_assert_eq!(run_real("problru(q=1)", &t, cap, true), run_real("fifo", &t, cap, true));
    }

    #[test]
    fn blru_matches_naive_model(reqs in trace_strategy(), cap in 1u64..30, bytes in any::<bool>(), items in 1usize..20) {
        let t = load(&reqs);
        let spec = format!("blru(items={items})");
        prop_assert_eq!(run_real(&spec, &t, cap, bytes), naive_blru(&t, cap, bytes, items));
    }

    #[test]
    fn lfuda_and_lruk_match_naive_models(reqs in trace_strategy(), cap in 1u64..30, bytes in any::<bool>()) {
        let t = load(&reqs);
        prop_assert_eq!(run_real("lfuda", &t, cap, bytes), naive_lfuda(&t, cap, bytes));
        prop_assert_eq!(run_real("lruk", &t, cap, bytes), naive_lruk(&t, cap, bytes, 2));
        prop_assert_eq!(run_real("lruk(k=3)", &t, cap, bytes), naive_lruk(&t, cap, bytes, 3));
        prop_assert_eq!(run_real("lruk(k=1)", &t, cap, bytes), run_real("lru", &t, cap, bytes));
    }

    #[test]
    fn lecar_with_fixed_weights_is_one_expert(reqs in trace_strategy(), cap in 1u64..30, bytes in any::<bool>()) {
        let t = load(&reqs);
        let lru_only = "lecar(lru-weight=1,update-weight=false)";
        let lfu_only = "lecar(lru-weight=0,update-weight=false)";
        prop_assert_eq!(run_real(lru_only, &t, cap, bytes), run_real("lru", &t, cap, bytes));
        prop_assert_eq!(run_real(lfu_only, &t, cap, bytes), run_real("lfu", &t, cap, bytes));
        let sieve_only = "lecar-sieve(lru-weight=1,update-weight=false)";
        let lfu_only = "lecar-sieve(lru-weight=0,update-weight=false)";
        prop_assert_eq!(run_real(sieve_only, &t, cap, bytes), run_real("sieve", &t, cap, bytes));
        prop_assert_eq!(run_real(lfu_only, &t, cap, bytes), run_real("lfu", &t, cap, bytes));
    }

    #[test]
    fn every_policy_keeps_its_invariants(reqs in trace_strategy(), cap in 1u64..30, bytes in any::<bool>()) {
        let t = load(&reqs);
        for name in sifter_sim::registry::names() {
            run_real(name, &t, cap, bytes);
        }
    }
}

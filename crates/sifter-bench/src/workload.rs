//! Workloads: what each thread asks of the cache, precomputed before the clock starts.
//!
//! A workload spec is `kind:key=value,...`:
//!
//! | kind | operations | parameters (defaults) |
//! |---|---|---|
//! | `zipf` | read-through (get; insert on a miss) over Zipf(alpha) keys | `alpha=1.0`, `keys=1000000` |
//! | `ycsb` | YCSB-style mix: `read` share of read-through gets, the rest updates (insert) over Zipf keys; `ycsb:a` = 50 % reads, `b` = 95 %, `c` = 100 % | `read=0.95`, `alpha=0.99`, `keys=1000000` |
//! | `nbq` | the NbQ-CLOCK paper's mix: `get` share of plain GETs (no insert on a miss), the rest ADDs (insert) over power-law keys | `get=0.7`, `alpha=1.0`, `keys=1000000` |
//! | `cachebench` | a mix modelled on RocksDB's `cache_bench`, percentages of lookup (get only), insert, lookup-insert (read-through) and erase | `lookup=50`, `insert=40`, `lookup-insert=0`, `erase=10`, `alpha=1.0`, `keys=1000000` |
//! | anything else | any trace the trace layer reads (a file, or its generators `uniform:`, `latest:`, `scan:`, `twophase:`): gets are read-through, sets are inserts, deletes are erases | — |
//!
//! All kinds also take `seed=1`. Keys are hashed (splitmix64) so that popular keys spread over
//! the hash space, and kept to 62 bits: the top two bits of each precomputed `u64` carry the
//! operation, so a thread's whole workload is one flat array (no allocation, no branching on a
//! side table in the measured loop).
//!
//! Two ways to give threads their keys ([`Mode`]): `shared` — all threads draw from one key
//! space (independent draws per thread for generators; consecutive parts of one trace, one per
//! thread) and share one capacity; `per-thread` — the papers' scaling method: every thread
//! replays the same sequence in its own key space and the capacity is multiplied by the thread
//! count.

use crate::BenchError;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;
use sifter_trace::{Op as TraceOp, TraceError, TraceSource};
use std::collections::HashSet;
use std::sync::Arc;

/// What one request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// Get; on a miss insert (a look-aside cache in front of a backend).
    Read,
    /// Get only (a miss inserts nothing).
    Get,
    /// Insert or overwrite.
    Insert,
    /// Remove.
    Erase,
}

impl Op {
    /// All operations, in their encoding order.
    pub const ALL: [Op; 4] = [Op::Read, Op::Get, Op::Insert, Op::Erase];

    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Get => "get",
            Op::Insert => "insert",
            Op::Erase => "erase",
        }
    }
}

const KEY_BITS: u32 = 62;
const KEY_MASK: u64 = (1 << KEY_BITS) - 1;

/// Packs an operation and a key into one word.
#[inline]
pub fn pack(op: Op, key: u64) -> u64 {
    (op as u64) << KEY_BITS | (key & KEY_MASK)
}

/// Unpacks [`pack`].
#[inline]
pub fn unpack(w: u64) -> (Op, u64) {
    (Op::ALL[(w >> KEY_BITS) as usize], w & KEY_MASK)
}

/// One thread's precomputed operations ([`pack`]ed words), shared between threads that replay
/// the same sequence.
pub type Sequence = Arc<Vec<u64>>;

/// How threads share keys and capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// One key space and one capacity for all threads.
    Shared,
    /// Each thread replays the same sequence in its own key space; capacity × threads.
    PerThread,
}

impl Mode {
    /// Parses `shared` / `per-thread`.
    pub fn parse(s: &str) -> Result<Mode, BenchError> {
        match s {
            "shared" => Ok(Mode::Shared),
            "per-thread" | "perthread" | "scaling" => Ok(Mode::PerThread),
            _ => Err(BenchError::Config(format!("mode {s:?}: expected shared or per-thread"))),
        }
    }

    /// Name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Shared => "shared",
            Mode::PerThread => "per-thread",
        }
    }
}

/// The workload kinds the bench generates itself (any other spec is a trace file or one of
/// the trace layer's generators).
const KINDS: &[&str] = &["zipf", "ycsb", "nbq", "cachebench"];

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// Synthetic: per-mille shares of read, get, insert, erase over Zipf keys.
    Mix { shares: [f64; 4], alpha: f64, keys: u64 },
    /// A trace (file or the trace layer's generator).
    Trace(String),
}

/// A parsed workload spec.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    spec: String,
    kind: Kind,
    seed: u64,
}

fn num(kind: &str, key: &str, v: &str) -> Result<f64, BenchError> {
    v.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0).ok_or_else(|| {
        BenchError::Config(format!("workload {kind}: {key}={v} is not a non-negative number"))
    })
}

impl Workload {
    /// Parses a spec (see the module docs).
    pub fn parse(spec: &str) -> Result<Workload, BenchError> {
        let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
        if !KINDS.contains(&kind) {
            return Ok(Workload { spec: spec.into(), kind: Kind::Trace(spec.into()), seed: 1 });
        }
        let (mut alpha, mut keys, mut seed) = (1.0, 1_000_000u64, 1u64);
        // read, get, insert, erase
        let mut shares = match kind {
            "zipf" => [1.0, 0.0, 0.0, 0.0],
            "ycsb" => {
                alpha = 0.99;
                [0.95, 0.0, 0.05, 0.0]
            }
            "nbq" => [0.0, 0.7, 0.3, 0.0],
            _ => [0.0, 50.0, 40.0, 10.0],
        };
        for kv in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if kind == "ycsb" && kv.len() == 1 {
                let read = match kv {
                    "a" => 0.5,
                    "b" => 0.95,
                    "c" => 1.0,
                    _ => {
                        return Err(BenchError::Config(format!(
                            "workload ycsb:{kv}: known presets are a, b, c"
                        )))
                    }
                };
                shares = [read, 0.0, 1.0 - read, 0.0];
                continue;
            }
            let (k, v) = kv.split_once('=').ok_or_else(|| {
                BenchError::Config(format!("workload {kind}: expected key=value, got {kv:?}"))
            })?;
            match (kind, k) {
                (_, "alpha") => alpha = num(kind, k, v)?,
                (_, "keys") => {
                    keys = v.parse().ok().filter(|&n| n > 0 && n <= KEY_MASK).ok_or_else(|| {
                        BenchError::Config(format!("workload {kind}: keys={v} must be ≥ 1"))
                    })?
                }
                (_, "seed") => {
                    seed = v.parse().map_err(|_| {
                        BenchError::Config(format!("workload {kind}: seed={v} is not an integer"))
                    })?
                }
                ("ycsb", "read") => {
                    let r = num(kind, k, v)?;
                    if r > 1.0 {
                        return Err(BenchError::Config(format!("ycsb: read={v} must be ≤ 1")));
                    }
                    shares = [r, 0.0, 1.0 - r, 0.0];
                }
                ("nbq", "get") => {
                    let g = num(kind, k, v)?;
                    if g > 1.0 {
                        return Err(BenchError::Config(format!("nbq: get={v} must be ≤ 1")));
                    }
                    shares = [0.0, g, 1.0 - g, 0.0];
                }
                ("cachebench", "lookup") => shares[1] = num(kind, k, v)?,
                ("cachebench", "insert") => shares[2] = num(kind, k, v)?,
                ("cachebench", "lookup-insert") => shares[0] = num(kind, k, v)?,
                ("cachebench", "erase") => shares[3] = num(kind, k, v)?,
                _ => {
                    return Err(BenchError::Config(format!(
                        "workload {kind}: unknown parameter {k:?}"
                    )))
                }
            }
        }
        let total: f64 = shares.iter().sum();
        if total <= 0.0 {
            return Err(BenchError::Config(format!("workload {spec}: all shares are zero")));
        }
        if kind == "cachebench" && (total - 100.0).abs() > 1e-9 {
            return Err(BenchError::Config(format!(
                "cachebench: lookup + insert + lookup-insert + erase must be 100 (got {total})"
            )));
        }
        let shares = shares.map(|s| s / total);
        Ok(Workload { spec: spec.into(), kind: Kind::Mix { shares, alpha, keys }, seed })
    }

    /// The spec as given.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// Whether [`Workload::generate`]'s sequences for `t` threads depend on `t` beyond their
    /// number: a trace shared out among the threads (one part each). Otherwise the first `t`
    /// sequences generated for more threads are those for `t`.
    pub fn shares_out(&self, mode: Mode) -> bool {
        self.is_trace() && mode == Mode::Shared
    }

    /// Whether this is a trace (its own sequence: `--sequence` does not apply).
    pub fn is_trace(&self) -> bool {
        matches!(self.kind, Kind::Trace(_))
    }

    /// Generates each thread's operations (`requests` per thread for synthetic kinds; a trace
    /// is shared out in consecutive parts in shared mode, and replayed whole by every thread
    /// in per-thread mode) and returns them with the dataset size: the distinct keys of one
    /// thread's sequence, or of the whole trace (what cache-size fractions refer to, as the
    /// simulator's do).
    pub fn generate(
        &self,
        threads: usize,
        requests: usize,
        mode: Mode,
    ) -> Result<(Vec<Sequence>, u64), BenchError> {
        if threads == 0 || requests == 0 {
            return Err(BenchError::Config("threads and requests must be at least 1".into()));
        }
        match &self.kind {
            Kind::Mix { shares, alpha, keys } => {
                let gen = |seed: u64| mix_sequence(*shares, *alpha, *keys, requests, seed);
                let seqs = match mode {
                    Mode::Shared => (0..threads as u64)
                        .map(|t| gen(self.seed.wrapping_add(t)).map(Arc::new))
                        .collect::<Result<Vec<_>, _>>()?,
                    Mode::PerThread => {
                        let one = Arc::new(gen(self.seed)?);
                        vec![one; threads]
                    }
                };
                // The dataset is what the first sequence touches (a skewed draw reaches only
                // part of `keys`), as a trace's distinct objects are for the simulator.
                let distinct: HashSet<u64> = seqs[0].iter().map(|&w| unpack(w).1).collect();
                Ok((seqs, distinct.len() as u64))
            }
            Kind::Trace(arg) => {
                let src = TraceSource::parse(arg, None).map_err(|e| match e {
                    // Worded for the bench, whose own kinds the trace layer does not know.
                    TraceError::NotFound(_) => {
                        let traces: Vec<&str> = sifter_trace::synth::KINDS
                            .iter()
                            .copied()
                            .filter(|k| !KINDS.contains(k))
                            .collect();
                        BenchError::Config(format!(
                            "workload {arg:?}: no such file, nor a workload kind ({}; or the \
                             trace generators {})",
                            KINDS.join(", "),
                            traces.join(", ")
                        ))
                    }
                    e => BenchError::Config(format!("workload {arg}: {e}")),
                })?;
                let mut ops = Vec::new();
                let mut distinct = HashSet::new();
                for r in src.requests().map_err(|e| BenchError::Config(e.to_string()))? {
                    let r = r.map_err(|e| BenchError::Config(e.to_string()))?;
                    let key = splitmix(r.key) & KEY_MASK;
                    distinct.insert(key);
                    let op = match r.op {
                        TraceOp::Get | TraceOp::Other => Op::Read,
                        TraceOp::Set => Op::Insert,
                        TraceOp::Delete => Op::Erase,
                    };
                    ops.push(pack(op, key));
                }
                if ops.is_empty() {
                    return Err(BenchError::Config(format!("workload {arg}: no requests")));
                }
                let seqs = match mode {
                    // One trace shared out: thread t replays the t-th of `threads` consecutive
                    // parts. Each thread's warm-up runs the first share of its own part and its
                    // measured phase the rest, so no measured request is one that any thread
                    // made in the warm-up. (Until stop 67 every thread ran the whole trace from
                    // its own starting point; with two threads their warm-ups then covered it
                    // all, and the measured phase replayed the other thread's warm-up.)
                    Mode::Shared => share_out(&ops, threads)
                        .map_err(|e| BenchError::Config(format!("workload {arg}: {e}")))?,
                    Mode::PerThread => {
                        let one = Arc::new(ops);
                        vec![one; threads]
                    }
                };
                Ok((seqs, distinct.len() as u64))
            }
        }
    }
}

/// `ops` cut into `threads` consecutive parts of equal length (±1), one per thread; an error if
/// there are fewer requests than threads.
pub fn share_out(ops: &[u64], threads: usize) -> Result<Vec<Sequence>, String> {
    if ops.len() < threads.max(1) {
        return Err(format!(
            "{} requests cannot be shared out among {threads} threads (one part each); use \
             fewer threads or a longer trace",
            ops.len()
        ));
    }
    Ok((0..threads)
        .map(|t| Arc::new(ops[t * ops.len() / threads..(t + 1) * ops.len() / threads].to_vec()))
        .collect())
}

/// splitmix64's finaliser: spreads consecutive ranks over the key space.
#[inline]
pub fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

fn mix_sequence(
    shares: [f64; 4],
    alpha: f64,
    keys: u64,
    requests: usize,
    seed: u64,
) -> Result<Vec<u64>, BenchError> {
    let z = Zipf::new(keys as f64, alpha)
        .map_err(|e| BenchError::Config(format!("zipf(alpha={alpha}, keys={keys}): {e}")))?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let cum = [shares[0], shares[0] + shares[1], shares[0] + shares[1] + shares[2]];
    Ok((0..requests)
        .map(|_| {
            let rank = z.sample(&mut rng) as u64;
            let u: f64 = if shares[0] == 1.0 { 0.0 } else { rng.random() };
            let op = if u < cum[0] {
                Op::Read
            } else if u < cum[1] {
                Op::Get
            } else if u < cum[2] {
                Op::Insert
            } else {
                Op::Erase
            };
            pack(op, splitmix(rank))
        })
        .collect())
}

/// The key a thread uses for sequence key `k` in per-thread mode: its own key space.
#[inline]
pub fn thread_key(k: u64, thread: usize, mode: Mode) -> u64 {
    match mode {
        Mode::Shared => k,
        // Bits 56..62 select the thread's key space (up to 64 threads).
        Mode::PerThread => k ^ ((thread as u64 & 63) << 56),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_round_trips() {
        for op in Op::ALL {
            for k in [0, 1, KEY_MASK, 12345] {
                assert_eq!(unpack(pack(op, k)), (op, k));
            }
        }
    }

    fn shares_of(spec: &str) -> [f64; 4] {
        let w = Workload::parse(spec).unwrap();
        let (seqs, _) = w.generate(1, 100_000, Mode::Shared).unwrap();
        let mut n = [0usize; 4];
        for &x in seqs[0].iter() {
            n[unpack(x).0 as usize] += 1;
        }
        n.map(|c| c as f64 / 100_000.0)
    }

    #[test]
    fn mixes_have_the_asked_shares() {
        let close = |a: [f64; 4], b: [f64; 4]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 0.01);
        assert!(close(shares_of("zipf:keys=1000"), [1.0, 0.0, 0.0, 0.0]));
        assert!(close(shares_of("ycsb:a,keys=1000"), [0.5, 0.0, 0.5, 0.0]));
        assert!(close(shares_of("nbq:keys=1000"), [0.0, 0.7, 0.3, 0.0]));
        let cb = "cachebench:lookup=60,insert=20,lookup-insert=10,erase=10,keys=1000";
        assert!(close(shares_of(cb), [0.1, 0.6, 0.2, 0.1]));
    }

    #[test]
    fn bad_specs_are_refused() {
        for bad in [
            "zipf:alpha=-1",
            "zipf:keys=0",
            "zipf:what=1",
            "ycsb:z",
            "ycsb:read=2",
            "cachebench:lookup=60",
            "nbq:get=x",
            "zipf:alpha",
        ] {
            assert!(Workload::parse(bad).is_err(), "{bad} accepted");
        }
        assert!(Workload::parse("/no/such/file").unwrap().generate(1, 10, Mode::Shared).is_err());
        // An unknown name says once what it is not, and lists the bench's own kinds too.
        let e = Workload::parse("nope").unwrap().generate(1, 10, Mode::Shared).unwrap_err();
        let e = e.to_string();
        assert_eq!(e.matches("nope").count(), 1, "{e}");
        assert!(e.contains("ycsb") && e.contains("cachebench") && e.contains("uniform"), "{e}");
        // The trace layer's generators still run.
        let (s, _) = Workload::parse("uniform:n=50,requests=100")
            .unwrap()
            .generate(1, 10, Mode::Shared)
            .unwrap();
        assert!(!s[0].is_empty());
    }

    #[test]
    fn modes_share_or_separate_keys() {
        let w = Workload::parse("zipf:keys=100").unwrap();
        let (s, keys) = w.generate(2, 1000, Mode::Shared).unwrap();
        let distinct: HashSet<u64> = s[0].iter().map(|&x| unpack(x).1).collect();
        assert_eq!(keys, distinct.len() as u64);
        assert!(keys <= 100 && keys > 50, "{keys} distinct keys");
        assert_ne!(s[0], s[1], "shared mode: independent draws per thread");
        let (p, _) = w.generate(2, 1000, Mode::PerThread).unwrap();
        assert_eq!(p[0], p[1], "per-thread mode: the same sequence");
        let k = unpack(p[0][0]).1;
        assert_ne!(thread_key(k, 0, Mode::PerThread), thread_key(k, 1, Mode::PerThread));
    }

    /// A spec that is neither a bench kind, a trace generator nor a file is refused with both
    /// lists of kinds; a malformed generator spec with the trace layer's own message.
    #[test]
    fn an_unknown_workload_names_every_kind() {
        let e = Workload::parse("nosuch:alpha=1")
            .unwrap()
            .generate(1, 10, Mode::Shared)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"nosuch:alpha=1\": no such file, nor a workload kind"), "{e}");
        for kind in ["zipf", "ycsb", "cachebench", "uniform", "twophase"] {
            assert!(e.contains(kind), "{kind} missing from {e}");
        }
        let e = Workload::parse("uniform:n=oops").unwrap().generate(1, 10, Mode::Shared);
        let e = e.unwrap_err().to_string();
        assert!(e.starts_with("workload uniform:n=oops: ") && !e.contains("no such file"), "{e}");
    }

    /// A trace in shared mode is cut into one consecutive part per thread (so no thread's
    /// measured requests are another's warm-up requests); in per-thread mode every thread
    /// replays it whole. Both count the whole trace's distinct keys.
    #[test]
    fn a_shared_trace_is_cut_into_one_part_per_thread() {
        let w = Workload::parse("uniform:n=500,requests=10001").unwrap();
        let (whole, keys) = w.generate(3, 1, Mode::PerThread).unwrap();
        assert_eq!(whole[0].len(), 10_001);
        assert!(whole.iter().all(|s| s == &whole[0]));
        let (parts, shared_keys) = w.generate(3, 1, Mode::Shared).unwrap();
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|p| (3333..=3334).contains(&p.len())), "uneven parts");
        let joined: Vec<u64> = parts.iter().flat_map(|p| p.iter().copied()).collect();
        assert_eq!(&joined, &*whole[0]);
        assert_eq!(shared_keys, keys);
        let distinct: HashSet<u64> = whole[0].iter().map(|&x| unpack(x).1).collect();
        assert_eq!(keys, distinct.len() as u64);
        // Fewer requests than threads: refused with the counts, not run with empty parts.
        let short = Workload::parse("uniform:n=10,requests=2").unwrap();
        let e = short.generate(3, 1, Mode::Shared).unwrap_err().to_string();
        assert!(e.contains("2 requests") && e.contains("3 threads"), "{e}");
    }
}

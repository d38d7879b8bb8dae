//! The experiment that closes the loop between the queueing model and the real caches:
//! `sifter model calibrate` measures what sifter's own operations cost on this machine, and
//! `sifter bench closed-loop` runs N worker threads against a cache whose misses wait an emulated
//! backend latency, sweeping the hit ratio through the cache size, and puts the calibrated
//! model's prediction beside each measurement.
//!
//! The backend wait **sleeps** (`std::thread::sleep`) by default, so that the multiprogramming
//! level can exceed the core count and a waiting request uses no CPU — what the model's delay
//! station assumes. Linux sleeps overshoot short requests (timer slack, wake-up latency), so the
//! mean wait is *measured* and that measured mean is what the model is given. `--spin` busy-waits
//! instead (exact latency, but a waiting request then occupies a core, so the model counts the
//! wait as CPU work).
//!
//! The workers are OS threads by default ([`Workers::Threads`]): with more of them than cores
//! the kernel time-slices them, and a worker can be preempted while it holds a lock (LRU's
//! mutex then forms a convoy, docs/BENCHMARKS.md). [`Workers::Loops`] runs one event loop per
//! core instead, each multiplexing its share of the workers: a worker runs until its next miss,
//! then waits on a timer while the loop runs another worker, so the MPL counts requests in
//! flight, at most one per core runs at once, and no worker is ever preempted by another — the
//! paper's setting (MPL 72 on 72 cores), and how event-driven cache servers run.
//!
//! [`Experiment::run`] is the whole sweep (typed rows out, progress as [`Event`]s); the pieces
//! (calibration, prefill, the size search, one point) are public for the lab and for callers
//! that assemble their own experiment.

use anyhow::{bail, Context, Result};
use rand::SeedableRng;
use rand_distr::{Distribution, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;
use sifter::{Cache, MultiStepCache, Policy};
use sifter_model::network::{Dist, Network, Path, Station, Step};
use sifter_model::sim::{simulate, SimOptions};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Mean CPU cost of one hit and one miss (get + insert with its eviction) of a policy, µs: the
/// CPU time one operation takes (its demand on the model's CPU station), measured with some
/// number of threads running at once.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Costs {
    /// A hit.
    pub hit_us: f64,
    /// A miss, excluding any backend wait.
    pub miss_us: f64,
}

/// A policy's costs alone and under the concurrency of a closed-loop point.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Calibration {
    /// One thread.
    pub one: Costs,
    /// Threads at once in `busy` (the point's MPL, capped at the cores: more workers than
    /// cores never run more than that many at once).
    pub threads: usize,
    /// `threads` threads on one cache at once: each operation's CPU time, including what the
    /// threads cost each other (cache-line transfers, lock hand-offs, a shared core).
    pub busy: Costs,
}

/// The closed-loop name of the multi-step LRU cache ([`MultiStepCache`], 2 vectors of 4 ways
/// per set, the paper's geometry): a sibling type of [`Cache`], not one of its policies.
pub const MULTISTEP: &str = "multistep";

/// What a closed-loop name stands for: a [`Cache`] policy (`problru-mpl` is Prob-LRU with
/// q = 1 − 1/MPL), or `None` for the multi-step LRU cache; an error for an unknown name.
fn kind_of(name: &str) -> Result<Option<Policy>> {
    match name {
        MULTISTEP => Ok(None),
        "problru-mpl" => Ok(Some(Policy::ProbLru)),
        _ => name.parse::<Policy>().map(Some).map_err(|e| {
            anyhow::anyhow!("{e}; the closed loop also knows problru-mpl and {MULTISTEP}")
        }),
    }
}

/// The cache a closed-loop name stands for: sifter's [`Cache`] with that policy, or the
/// multi-step LRU cache. Workers, prefill and calibration all go through it.
// A point has one of these, built once and never moved in the workers' loops: boxing the
// large variant would only add an indirection to every measured request.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Subject {
    /// A [`Cache`] of one policy.
    Policy(Cache<u64, u64>),
    /// The multi-step LRU cache.
    MultiStep(MultiStepCache<u64, u64>),
}

impl Subject {
    /// The cache of closed-loop name `name` with `cap` entries (`q`: Prob-LRU's skip
    /// probability, see [`skip_q`]). Multi-step LRU's capacity is a whole number of sets: `cap`
    /// rounded down to a multiple of its 8 ways per set.
    pub fn build(name: &str, cap: u64, q: f64) -> Result<Self> {
        match kind_of(name)? {
            Some(policy) => Subject::of(policy, cap, q),
            None if cap > MAX_ENTRIES => {
                bail!("a multistep cache of {cap} entries: at most {MAX_ENTRIES} entries")
            }
            None => {
                let c = MultiStepCache::try_new(cap);
                Ok(Subject::MultiStep(c.map_err(|e| anyhow::anyhow!("a multistep cache: {e}"))?))
            }
        }
    }

    /// A [`Cache`] of `policy` with `cap` entries; an error if `Cache` cannot have that
    /// capacity.
    pub fn of(policy: Policy, cap: u64, q: f64) -> Result<Self> {
        let c = Cache::builder().capacity(cap).policy(policy).promotion_skip(q).try_build();
        Ok(Subject::Policy(c.map_err(|e| anyhow::anyhow!("a {policy:?} cache: {e}"))?))
    }

    /// A lookup (a hit counts as a use).
    #[inline]
    pub fn get(&self, k: &u64) -> Option<u64> {
        match self {
            Subject::Policy(c) => c.get(k),
            Subject::MultiStep(c) => c.get(k),
        }
    }

    /// An insert.
    #[inline]
    pub fn insert(&self, k: u64, v: u64) {
        match self {
            Subject::Policy(c) => c.insert(k, v),
            Subject::MultiStep(c) => c.insert(k, v),
        }
    }
}

/// What the closed loop's workers send their requests to: a cache, or a [`Coin`] (to time
/// the workers' own machinery).
trait Store: Sync {
    /// A lookup: true on a hit.
    fn hit(&self, k: &u64) -> bool;
    /// The insert after a miss's backend wait.
    fn fill(&self, k: u64);
}

impl Store for Subject {
    #[inline]
    fn hit(&self, k: &u64) -> bool {
        self.get(k).is_some()
    }

    #[inline]
    fn fill(&self, k: u64) {
        self.insert(k, k)
    }
}

/// A store without a cache: a key hits when it is odd, and nothing is kept. Replaying keys drawn
/// for it at a hit ratio runs the workers' machinery alone (see [`loop_overhead_us`]).
struct Coin;

impl Store for Coin {
    #[inline]
    fn hit(&self, k: &u64) -> bool {
        std::hint::black_box(*k) & 1 == 1
    }

    #[inline]
    fn fill(&self, k: u64) {
        std::hint::black_box(k);
    }
}

/// The most entries a [`Subject`] may have: about what [`Cache`] takes (its builder refuses
/// more), for multi-step LRU too.
const MAX_ENTRIES: u64 = 1_000_000_000;

/// Prob-LRU's q (the probability that a hit skips the list update) for `name` at `mpl` workers:
/// 0.5 for `problru`, 1 − 1/MPL for `problru-mpl` (the paper's choice: about one worker at a
/// time promotes); the builder's default for the other policies (unused by them).
pub fn skip_q(name: &str, mpl: usize) -> f64 {
    match name {
        "problru-mpl" => 1.0 - 1.0 / mpl.max(1) as f64,
        _ => 0.5,
    }
}

/// The seed of a closed-loop point's calibration stream: none of the workers' (they take 1 to
/// the MPL, see [`sequences`]).
const CALIBRATION_SEED: u64 = u64::MAX - 0x5eed;

/// The stream a closed-loop point's calibrations replay: Zipf 1.0 over the workers' `keys`, as
/// long as the workers' sequences `seqs` together, drawn apart from them. (Until stop 75 it was
/// the workers' sequences themselves. Replayed into the workers' own cache, they left it
/// holding the keys the workers were about to ask for, and LRU's measured hit ratio rose from
/// 0.980 to 0.987 at a 0.98 target, docs/BENCHMARKS.md.)
fn calibration_stream(keys: u64, seqs: &[Vec<u64>]) -> Arc<[u64]> {
    let total = seqs.iter().map(Vec::len).sum::<usize>().max(1);
    zipf_seq(keys, total, CALIBRATION_SEED).into()
}

fn zipf_seq(keys: u64, n: usize, seed: u64) -> Vec<u64> {
    let z = Zipf::new(keys as f64, 1.0).expect("valid zipf");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n).map(|_| z.sample(&mut rng) as u64).collect()
}

/// A cache of one policy and size calibrated round after round on a stream of the workload's
/// own kind: it holds what a cache of its size holds at steady state under that stream, and
/// each round's threads replay the stream's next requests in chunks (see
/// [`Calibrator::round`]): a chunk of lookups, then a chunk read through, where a miss inserts
/// its key and evicts an entry, as a worker's miss does. A closed-loop point calibrates the
/// workers' cache itself ([`Calibrator::on`]); the model's Mobius baseline and `sifter model
/// calibrate` fill a cache of their own ([`Calibrator::new`]).
///
/// Why the workers' own cache (since stop 75): a cache's costs depend on its state — where its
/// entries sit in the index, how far its hit ratio has climbed — and on its lines being the
/// ones the cores hold. Calibrated on a second cache of the same policy and size, filled
/// apart, Prob-LRU (q = 1 − 1/MPL) read 0.985 hits at the size where the workers' cache read
/// 0.995, and its two-thread hit cost came out 0.061 µs where the workers' own cache gave
/// 0.044-0.054. On the workers' cache the calibration must keep it at the stream's steady
/// state: its stream is drawn apart from the workers' (`calibration_stream`), and every
/// miss it makes is inserted, the lookup chunks' and the warm-up's too (`OnMiss::Note`).
/// In two alternated rounds against the separate caches (docs/BENCHMARKS.md, stop 75), at
/// MPL 72 with 100 µs, mean |error| 5.1 → 4.3 % (largest 27 → 20 %); with 20 µs 9.1 → 6.2 %;
/// at MPL 8 3.3 → 4.1 %.
///
/// Why misses are timed among hits: a miss's cost depends on the requests around it. Under
/// CLOCK and SIEVE the hits between two misses set reference bits that the next eviction's
/// sweep must clear (back to back, the sweep finds the bits it cleared for the previous miss);
/// a FIFO victim is an entry not touched for long, whose lines are cold (back to back, it is
/// the previous miss's entry, still cached); and misses and hits push each other's lines out
/// of the core's caches. Calibrated back to back and apart from the hits, the model was 14–27 %
/// optimistic for FIFO and CLOCK at 0.5 and 0.9 hits in every round, and 4 % on average at a
/// 100 µs backend (docs/BENCHMARKS.md, "Misses timed among hits").
///
/// Why the workload's stream: a miss's cost also depends on what missed. Until stop 57 the
/// calibration drew its hits from the `cap` keys it had inserted and made its misses with
/// keys never seen before (so it could set any hit ratio): each such key was requested once,
/// and under CLOCK, SIEVE and S3-FIFO the eviction found it unmarked soon after, its lines
/// still cached. A workload's misses are keys of the stream's tail that come back: inserted,
/// they are hit again and marked, and the eviction sweeps past them. Timed in the event loops
/// themselves, a CLOCK insert took 220-450 ns where the calibration gave a whole miss 155 ns
/// (S3-FIFO: 380-730 against 200-340), and the loops' measured CPU time per request was 1.15-1.3
/// times the calibrated one at 0.98 hits (docs/BENCHMARKS.md, "The calibration replays the
/// workload's stream").
///
/// (Multi-step LRU cannot keep every one of `cap` keys: a set that more than its 8 ways' worth
/// of them hash to keeps 8, the most popular. Its "hits" then include the lookups of the
/// others, which miss: 3–4 % of them at 1,000–100,000 entries.)
pub struct Calibrator {
    cache: Arc<Subject>,
    /// The requests replayed, in order, from `at` on (wrapping round at the end).
    stream: Arc<[u64]>,
    at: usize,
    /// Requests per pass, the threads' together.
    requests: usize,
    /// The most threads a round runs.
    threads: usize,
    /// The read-through hit ratio the fill ended at.
    hit: f64,
    /// How each miss of a read-through chunk waits for the backend, as a worker's core would
    /// (see [`Calibrator::waiting`]); `None`: misses do not wait.
    wait: Option<Wait>,
}

/// How a calibration's misses wait for the backend ([`Calibrator::waiting`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Wait {
    /// Busy-wait this long (a worker's spinning backend, or an event loop with nothing else to
    /// run polling its timer).
    Spin(Duration),
    /// Sleep this long (a thread worker with a core of its own, which idles meanwhile).
    Sleep(Duration),
}

impl Wait {
    /// How the workers of a point (`mpl` of them, run by `workers` on `cores` cores) wait with
    /// their cores, if their cores have nothing else to do meanwhile: a spinning backend, or
    /// at most one worker per core (`mpl` ≤ `cores`). `None` where other workers run while
    /// one waits (for event loops, [`point`] then spins for the loops' idle time per miss in
    /// its model instead: [`loop_idle_gap`]).
    pub fn of_point(
        backend: Duration,
        spin: bool,
        workers: Workers,
        mpl: usize,
        cores: u32,
    ) -> Option<Wait> {
        let alone = mpl <= cores.max(1) as usize;
        match (spin, workers) {
            (true, _) => Some(Wait::Spin(backend)),
            (false, Workers::Threads) if alone => Some(Wait::Sleep(backend)),
            (false, Workers::Loops) if alone => Some(Wait::Spin(backend)),
            _ => None,
        }
    }

    /// Waits, and returns the µs it took (the workers' waits and the calibration's alike).
    fn wait(self) -> f64 {
        let t = Instant::now();
        match self {
            Wait::Spin(d) => {
                while t.elapsed() < d {
                    std::hint::spin_loop();
                }
            }
            Wait::Sleep(d) => std::thread::sleep(d),
        }
        t.elapsed().as_secs_f64() * 1e6
    }
}

impl std::fmt::Debug for Calibrator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Calibrator")
            .field("cache", &self.cache)
            .field("threads", &self.threads)
            .field("hit", &self.hit)
            .finish_non_exhaustive()
    }
}

impl Calibrator {
    /// Calibrates `cache` (of `cap` entries: see [`Subject::build`]), first brought to steady
    /// state under `stream` (Zipf ranks, 1 the most popular: see `Calibrator::fill`); rounds
    /// of up to `threads` threads make `requests` requests per pass from the stream, half of
    /// them read through.
    pub fn new(
        cache: Subject,
        cap: u64,
        stream: Arc<[u64]>,
        threads: usize,
        requests: usize,
    ) -> Result<Self> {
        // `on` refuses an empty stream before the fill replays it.
        let mut c = Self::on(Arc::new(cache), 0.0, stream, threads, requests)?;
        (c.hit, c.at) = Self::fill(&c.cache, cap, &c.stream);
        Ok(c)
    }

    /// Calibrates `cache`, shared (the closed loop's workers use it between rounds), already at
    /// steady state under `stream` with read-through hit ratio `hit` ([`prefill`]); rounds as
    /// in [`Calibrator::new`], from the stream's start.
    pub fn on(
        cache: Arc<Subject>,
        hit: f64,
        stream: Arc<[u64]>,
        threads: usize,
        requests: usize,
    ) -> Result<Self> {
        if stream.is_empty() {
            bail!("a calibration needs a stream of at least one request");
        }
        let (threads, requests) = (threads.max(1), requests.max(1));
        Ok(Calibrator { cache, stream, at: 0, requests, threads, hit, wait: None })
    }

    /// Brings the cache to steady state under `stream`: first the `cap` most popular keys
    /// (ranks 1 to `cap`), in the order that leaves them where a workload leaves them, then
    /// the stream read through as the workers' cache is prefilled ([`prefill`]); returns the
    /// hit ratio reached and where the stream stands. The orders:
    /// * The index's ([`Cache`]): the most popular first. A workload fills a cache with its
    ///   popular keys first, and they stay, so they sit in their home buckets; a key inserted
    ///   into a bucket already full goes to a later one, and its every hit probes further.
    ///   Filled least popular first, the most popular keys met the fullest buckets, and hits
    ///   came out 15-20 % slower (a full cache of 95,000 entries, Zipf 1.0 gets: 20-22 ns
    ///   against 17-19), and the model as much too pessimistic where the CPU bounds a point
    ///   (docs/BENCHMARKS.md, "The calibration's cache filled as a workload fills it; its
    ///   threads live for the round").
    /// * Multi-step LRU's: the least popular first. Where it cannot keep them all (a set keeps
    ///   the last 8 of the keys that hash to it), it keeps the popular ones, as it does at
    ///   steady state.
    ///
    /// (At 0.995 hits the hit ratio still climbs slowly after the prefill stops: the rounds
    /// read 0.991 at first and 0.997 by the last, where the workers measured 0.997. A fill
    /// replaying the whole stream once was tried and dropped: four alternated rounds could not
    /// tell it apart, docs/BENCHMARKS.md, "The calibration replays the workload's stream".)
    fn fill(c: &Subject, cap: u64, stream: &[u64]) -> (f64, usize) {
        match c {
            Subject::Policy(c) => (1..=cap).for_each(|k| c.insert(k, k)),
            Subject::MultiStep(c) => (1..=cap).rev().for_each(|k| c.insert(k, k)),
        }
        let (hit, _, at) = prefill(c, &[stream]);
        (hit, at[0])
    }

    /// The read-through hit ratio of the stream at the end of the fill (about the hit ratio
    /// of the read-through chunks; see `Calibrator::fill`).
    pub fn hit(&self) -> f64 {
        self.hit
    }

    /// Makes each miss of the read-through chunks wait for the backend after its insert
    /// (`wait`: as a worker's core does, see [`Wait::of_point`]); the waits are timed and
    /// taken out of the chunks' time.
    ///
    /// A wait is not free for the requests after it: hits that follow a 5 µs spin took
    /// 30-50 % longer than hits back to back, and longer after longer spins (a scratch loop
    /// of 200 Mobius hits then a spin, one thread; the core's caches lose lines while it
    /// waits, here to other tenants of the host). The closed loop's workers meet that after
    /// every miss; calibrated back to back, the model was 9-23 % optimistic at 0.95-0.995 hits
    /// with a spinning 5 µs backend. With the waits in the read-through chunks, what a miss
    /// costs the hits after it is part of the miss's cost, and the chunks' time per request
    /// is still the model's CPU demand at their hit ratio. A worker that sleeps on a core of
    /// its own meets the same, more so (the core idles, and the host runs others there):
    /// Mobius and FIFO at 0.995 hits were 12 % optimistic with two threads and a sleeping
    /// 5 µs backend. Where other workers run while one waits, its core is busy with their
    /// requests for part of the wait and idles for the rest: [`point`] then paces its
    /// calibrations with the idle time per miss of its model ([`loop_idle_gap`], event loops).
    pub fn waiting(mut self, wait: Wait) -> Self {
        self.wait = Some(wait);
        self
    }

    /// Changes how the read-through chunks' misses wait ([`Calibrator::waiting`]; `None`: they
    /// do not) and the requests per pass, for the rounds from here on.
    pub fn pace(&mut self, wait: Option<Wait>, requests: usize) {
        self.wait = wait;
        self.requests = requests.max(1);
    }

    /// One round with `threads` threads (at most the `threads` it was made for) started
    /// together, each replaying its share of the stream's next requests as chunks of lookups
    /// and chunks read through (`Split`): the costs are the means over threads — the CPU
    /// time one operation takes while `threads` run together — and the medians over
    /// `PASSES` passes. (Threads beyond the cores are not meant here: the closed loop
    /// calibrates at most one per core.)
    pub fn round(&mut self, threads: usize) -> Costs {
        let threads = threads.clamp(1, self.threads);
        let len = (self.requests / threads).max(1);
        let warm_len = (WARM_REQUESTS / threads).max(len);
        // The round's requests: a warming share and a share per pass for each thread.
        let need = threads * (warm_len + PASSES * len);
        let n = self.stream.len();
        let from = self.at;
        let part: std::borrow::Cow<'_, [u64]> = if from + need <= n {
            std::borrow::Cow::Borrowed(&self.stream[from..from + need])
        } else {
            std::borrow::Cow::Owned((0..need).map(|i| self.stream[(from + i) % n]).collect())
        };
        self.at = (from + need) % n;
        // Thread `t`'s warming share, and its share of pass `p`.
        let warming = |t: usize| &part[t * warm_len..][..warm_len];
        let share =
            |p: usize, t: usize| &part[threads * warm_len + (p * threads + t) * len..][..len];
        let (c, wait) = (&*self.cache, self.wait);
        // A pass before the timed ones, by each timed thread, read through without backend
        // waits: each thread warms its own core's caches (a pass made on another core leaves
        // a thread whose core shares no cache with it — a host may place two virtual CPUs so
        // — fetching every entry from memory during its timed pass), and the popular entries
        // are marked, as hits keep them at steady state, before the first round's timing.
        // Timed cold, the single-threaded hit cost came out about twice the two-thread one
        // (which ran second, warmed by it), and the model 7-31 % pessimistic at 0.99-0.995
        // hits with a spinning backend (docs/BENCHMARKS.md, "Hits calibrated warm"). It is
        // [`WARM_REQUESTS`] long, whatever the passes' length. Its misses are inserted, as the
        // stream's are (until stop 75 it made lookups alone, which let nothing new in: see
        // [`OnMiss::Note`]).
        let warm = |t: usize| {
            let mut tally = (0, 0);
            replay(c, warming(t), OnMiss::Fill(None), &mut tally);
        };
        // Each cost is the median of PASSES timed passes: a pass takes a few milliseconds, so
        // one preemption or a hypervisor's pause can double a single one. The passes run on
        // the same threads, warmed once (see `together`).
        let (mut hit_us, mut miss_us) = ([0.0; PASSES], [0.0; PASSES]);
        let passes =
            together(threads, PASSES, warm, |t, i, done| timed_pass(c, share(i, t), wait, done));
        for (i, per_thread) in passes.iter().enumerate() {
            let (h, m): (Vec<f64>, Vec<f64>) = per_thread.iter().map(Split::costs).unzip();
            hit_us[i] = h.iter().sum::<f64>() / threads as f64;
            miss_us[i] = m.iter().sum::<f64>() / threads as f64;
        }
        Costs { hit_us: median(&mut hit_us), miss_us: median(&mut miss_us) }
    }

    /// A round alone and a round with `threads` threads.
    pub fn calibration(&mut self, threads: usize) -> Calibration {
        let one = self.round(1);
        let threads = threads.clamp(1, self.threads);
        let busy = if threads == 1 { one } else { self.round(threads) };
        Calibration { one, threads, busy }
    }
}

/// The number of keys whose Zipf 1.0 stream a cache of its `cap` most popular keys would hit
/// at ratio `hit`: `H(keys) = H(cap) / hit`, `H` the harmonic numbers (`H(n) ≈ ln n + γ +
/// 1/2n`), at least `cap + 1` and at most 2^40. A policy hits less than that ideal cache, so
/// the stream's hit ratio under it comes out lower ([`Calibrator::hit`] says by how much).
pub fn keys_for_hit(cap: u64, hit: f64) -> u64 {
    const GAMMA: f64 = 0.577_215_664_901_532_9;
    let cap = cap.max(1) as f64;
    let h_cap = cap.ln() + GAMMA + 0.5 / cap;
    let hit = if hit.is_finite() { hit.clamp(1e-3, 1.0) } else { 1e-3 };
    let keys = (h_cap / hit - GAMMA).exp();
    keys.clamp(cap + 1.0, (1u64 << 40) as f64) as u64
}

/// The hit and miss costs of the cache of closed-loop name `name` (see [`Subject::build`];
/// `problru-mpl` takes its q for `threads` workers) at capacity `cap` with `threads` threads at
/// once, on a Zipf 1.0 stream over as many keys as a cache of that size would hit at about
/// `hit` ([`keys_for_hit`]): the median of `rounds` rounds of passes of 2^20 requests (see
/// [`Calibrator::round`]), and the stream's read-through hit ratio under the policy.
pub fn calibrate(
    name: &str,
    cap: u64,
    threads: usize,
    rounds: usize,
    hit: f64,
) -> Result<(Costs, f64)> {
    let q = skip_q(name, threads);
    // The cache first: a capacity it cannot have is refused before the stream is drawn.
    let cache = Subject::build(name, cap, q)?;
    let stream: Arc<[u64]> = zipf_seq(keys_for_hit(cap, hit), 8 << 20, 7).into();
    let mut c = Calibrator::new(cache, cap, stream, threads, 1 << 20)?;
    let (mut hit_us, mut miss_us): (Vec<f64>, Vec<f64>) =
        (0..rounds.max(1)).map(|_| c.round(threads)).map(|c| (c.hit_us, c.miss_us)).unzip();
    Ok((Costs { hit_us: median(&mut hit_us), miss_us: median(&mut miss_us) }, c.hit()))
}

/// Requests of a calibration pass: `(hits, misses)`.
type Tally = (u64, u64);

/// One thread's calibration pass: its chunks of lookups (`hit`) and its chunks read through
/// (`mixed`), with the time each kind took, µs.
#[derive(Debug, Default, Clone, Copy)]
struct Split {
    hit: Tally,
    hit_us: f64,
    mixed: Tally,
    mixed_us: f64,
    /// Of `mixed_us`, the time the misses spent in backend waits ([`Calibrator::waiting`]).
    waited_us: f64,
}

impl Split {
    /// The cost of a hit (the lookup chunks' time per request: the stream's keys not cached
    /// there, a share of one minus the hit ratio, are looked up and missed, at about a hit's
    /// cost) and of a miss: the read-through chunks' time less their hits at that cost, per
    /// miss, and never below a hit (a miss is a lookup and more). Whatever the hit cost's
    /// error, the read-through chunks' time per request (the model's demand at their hit
    /// ratio) is kept. Backend waits are not the cache's: they are taken out of the
    /// read-through chunks' time (the model has them apart).
    fn costs(&self) -> (f64, f64) {
        let hit = self.hit_us / (self.hit.0 + self.hit.1).max(1) as f64;
        let (served, missed) = self.mixed;
        let busy_us = self.mixed_us - self.waited_us;
        let miss = if missed == 0 {
            hit
        } else {
            ((busy_us - served as f64 * hit) / missed as f64).max(hit)
        };
        (hit, miss)
    }
}

/// One calibration pass of one thread over `keys` on `c`: chunks of lookups and chunks read
/// through, alternately, each timed. The two costs are measured side by side, so that the
/// host's drift between passes does not enter their difference. The keys a chunk of lookups
/// missed are read through after it, untimed (see [`OnMiss::Note`]). Stops early once `done`
/// is set (see [`together`]).
fn timed_pass<S: Store>(c: &S, keys: &[u64], wait: Option<Wait>, done: &AtomicBool) -> Split {
    let mut split = Split::default();
    let mut noted = Vec::with_capacity(CHUNK);
    // One clock read per chunk, and one after the untimed inserts: a chunk's end is the next
    // one's start.
    let mut t0 = Instant::now();
    for pair in keys.chunks(2 * CHUNK) {
        // Relaxed: the flag only ends the pass early.
        if done.load(Ordering::Relaxed) {
            break;
        }
        let (hits, mixed) = pair.split_at(pair.len().min(CHUNK));
        noted.clear();
        replay(c, hits, OnMiss::Note(&mut noted), &mut split.hit);
        let t1 = Instant::now();
        for &k in &noted {
            c.fill(k);
        }
        let t2 = Instant::now();
        split.waited_us += replay(c, mixed, OnMiss::Fill(wait), &mut split.mixed);
        let t3 = Instant::now();
        split.hit_us += (t1 - t0).as_secs_f64() * 1e6;
        split.mixed_us += (t3 - t2).as_secs_f64() * 1e6;
        t0 = t3;
    }
    split
}

/// What [`replay`] does with a key that misses.
enum OnMiss<'a> {
    /// Notes it (a chunk of lookups, timed as hits): the pass reads the noted keys through
    /// after the chunk, untimed, so that every miss of the stream is inserted, as a worker's
    /// is, and the cache stays at the stream's steady state. (Until stop 75 the lookups'
    /// misses were never inserted: harmless to a cache kept for the calibration alone, not
    /// to the workers' own.)
    Note(&'a mut Vec<u64>),
    /// Inserts it (read through), then waits as the [`Wait`] says, if given (see
    /// [`Calibrator::waiting`]).
    Fill(Option<Wait>),
}

/// Replays `keys` on `c`, tallying hits and misses in `tally`, doing with each miss what
/// `miss` says; returns the µs spent in backend waits.
///
/// The lookup chunks and the read-through chunks of a pass run this same code (not inlined
/// into either), so that a read-through chunk's hits cost what the lookup chunks measured.
#[inline(never)]
fn replay<S: Store>(c: &S, keys: &[u64], mut miss: OnMiss<'_>, tally: &mut Tally) -> f64 {
    let (mut served, mut missed) = *tally;
    let mut waited_us = 0.0;
    for &k in keys {
        if c.hit(&k) {
            served += 1;
        } else {
            match &mut miss {
                OnMiss::Note(noted) => noted.push(k),
                OnMiss::Fill(wait) => {
                    c.fill(k);
                    if let Some(w) = wait {
                        // As the workers wait (before the insert there, after it here: the
                        // order makes no difference to what the cache meets).
                        waited_us += w.wait();
                    }
                }
            }
            missed += 1;
        }
    }
    *tally = (served, missed);
    waited_us
}

/// Operations a calibration thread makes between two looks at the end flag of [`together`].
const CHUNK: usize = 256;

/// Timed passes per cost in a calibration round (the cost is their median).
const PASSES: usize = 3;

/// Requests a calibration round reads through (without backend waits) before its timed passes,
/// the threads' together (each at least a pass long): a cache larger than a core's L2 needs
/// about this many before the core's caches hold what they hold at steady state. With a
/// warm-up one pass long (2^18 at most), the hits of the caches sized for 0.99-0.995 hits
/// (about 95,000 entries, 6 MB) were calibrated up to a tenth above what they cost the
/// workers, and the model was 6-11 % pessimistic there (docs/BENCHMARKS.md, stop 74).
const WARM_REQUESTS: usize = 1 << 20;

/// Runs `warm(t)` once and then `passes` times `work(t, pass, done)` on `threads` threads, each
/// pass's works started together (the works time themselves), and returns each pass's results,
/// one per thread. `work` stops early (within [`CHUNK`] operations) once that pass's `done` is
/// set, which the first thread to finish its share sets: every thread's time is then time they
/// all ran together. (Without the stop a thread that finished early left the others to run
/// alone, at the single-threaded cost: LRU's two-thread hit came out 10-25 % lower in
/// alternated runs, docs/BENCHMARKS.md.)
///
/// The threads live for every pass of a round, as a closed loop's workers live for its whole
/// measurement. With fresh threads for each pass (until stop 56), only the first pass's
/// warmed, Mobius's one-thread hit came out at 21-45 ns across rounds where the round's own
/// threads measure 19-21 (docs/BENCHMARKS.md, "The calibration's cache filled as a workload
/// fills it; its threads live for the round").
fn together<R: Send>(
    threads: usize,
    passes: usize,
    warm: impl Fn(usize) + Sync,
    work: impl Fn(usize, usize, &AtomicBool) -> R + Sync,
) -> Vec<Vec<R>> {
    let arrived: Vec<std::sync::atomic::AtomicUsize> =
        (0..passes).map(|_| std::sync::atomic::AtomicUsize::new(0)).collect();
    let done: Vec<AtomicBool> = (0..passes).map(|_| AtomicBool::new(false)).collect();
    let per_thread: Vec<Vec<R>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let (arrived, warm, work, done) = (&arrived, &warm, &work, &done);
                s.spawn(move || {
                    warm(t);
                    (0..passes)
                        .map(|p| {
                            // A spinning start: every thread is on a running core when the
                            // clocks start (a blocking barrier lets the first arrivals' cores
                            // go idle, and a virtual CPU woken from idle may take long to run
                            // again). The yield lets threads not yet started run where there
                            // are more than the cores.
                            // Relaxed: only the count matters; the work shares nothing else.
                            arrived[p].fetch_add(1, Ordering::Relaxed);
                            let mut spins = 0u32;
                            while arrived[p].load(Ordering::Relaxed) < threads {
                                spins = spins.wrapping_add(1);
                                if spins.is_multiple_of(256) {
                                    std::thread::yield_now();
                                }
                                std::hint::spin_loop();
                            }
                            let r = work(t, p, &done[p]);
                            // Relaxed: the flag only ends the others' work early.
                            done[p].store(true, Ordering::Relaxed);
                            r
                        })
                        .collect::<Vec<R>>()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("calibration thread")).collect()
    });
    // Transpose: one vector per pass.
    let mut out: Vec<Vec<R>> = (0..passes).map(|_| Vec::with_capacity(threads)).collect();
    for rs in per_thread {
        for (p, r) in rs.into_iter().enumerate() {
            out[p].push(r);
        }
    }
    out
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// The backend a miss waits for, as the model sees it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Backend {
    /// Mean wait per miss, µs (the measured mean: sleeps overshoot).
    pub wait_us: f64,
    /// The wait busy-waits on a core (else it sleeps, using no CPU).
    pub spin: bool,
    /// CPU time the workers' machinery spends per request outside the cache, µs: reading the
    /// sequence, the clock reads of a miss and (event loops) the timer queue
    /// ([`loop_overhead_us`], [`thread_overhead_us`]), less what the calibrated costs hold of
    /// it already ([`net_overhead_us`]). A sleeping thread's sleep and wake-up (the kernel's
    /// work) are not in it.
    pub overhead_us: f64,
}

/// The calibrated model of policy `name` at hit ratio `hit` with `mpl` workers.
///
/// * **CPU**: a `cores`-server station. Its service is the single-threaded cost of a hit or a
///   miss (`cal.one`); it is load-dependent: with `j` requests at it, each runs slower by
///   the factor measured with `cal.threads` threads at once (`cal.busy` against `cal.one`,
///   blended at the hit ratio; interpolated for `j` between 1 and `cal.threads`) — what
///   cores cost each other on this machine (shared lines, a shared physical core, the
///   hypervisor). With a spinning backend every core is always busy (working or spinning),
///   so the measured factor applies at any occupancy.
/// * **Lock** (LRU and Prob-LRU hits, SIEVE misses): a single-server station holding the
///   policy's cost above the lock-free Mobius (`base`): its single-threaded hold time when
///   the point has one thread, else the hold time measured with `cal.threads` threads — the
///   lock's cache line moves between cores on (nearly) every acquisition when threads on
///   other cores use it, whether or not one waits at that instant, so the hold time grows
///   with the threads using the lock rather than with the queue at it. Under contention the
///   calibration threads' extra time is mostly waiting, which the station's queue models
///   itself, so the contended hold time is at most the time between two operations of the
///   calibration (one lock-bound acquisition each). Its holds are nearly constant, so the
///   station is deterministic ([`Dist::Det`]): an arrival that finds the lock held waits
///   for the rest of a hold, not a whole exponential one. (With two threads on a spinning
///   backend the simulated model of the locked policies is 9–13 % pessimistic at 0.98–0.995
///   hits: a thread whose peer is in its backend wait holds the lock for less than the
///   contended hold, and more than the single-threaded one; docs/BENCHMARKS.md.)
///   (Multi-step LRU's per-set locks are no station, like the index's bucket locks: a hit
///   locks only its own set, which two threads rarely want at once, so their cost is CPU work.)
/// * **A lock's wait and hold take a core too** ([`Step::Acquire`]): a worker takes its core
///   for its CPU work and keeps it while it waits for the lock and holds it. An event loop
///   blocked on the lock runs none of its other workers, and a thread spins on it (parking_lot
///   spins before it parks, far longer than these holds) or holds it on its core. Without
///   this the model ran a policy's locked part beside the cores, as if on a core of its own:
///   Prob-LRU (q = 1 − 1/MPL) at MPL 72 came out 10–15 % optimistic (docs/BENCHMARKS.md).
///   Only the simulation solves possession, so [`point`] solves the model by simulation.
/// * **Event loops** (`workers`): each loop is a core of its own for its workers (the CPU
///   station is [`pinned`](Station::pinned)): a loop whose workers all wait idles while the
///   other has a queue.
/// * **Backend**: a delay (sleeping), or CPU work when it spins and there are more workers than
///   cores; spinning with at most one worker per core, it is a delay too (nobody waits for the
///   core it occupies). The workers' own machinery (`backend.overhead_us`) is CPU work of
///   every request.
#[allow(clippy::too_many_arguments)]
pub fn calibrated_network(
    name: &str,
    cal: &Calibration,
    base: &Calibration,
    hit: f64,
    backend: Backend,
    workers: Workers,
    cores: u32,
    mpl: usize,
) -> Network {
    // The lock-held part of a hit and of a miss.
    let lock_of = |c: &Costs, b: &Costs| -> (f64, f64) {
        let (h, m) = ((c.hit_us - b.hit_us).max(0.0), (c.miss_us - b.miss_us).max(0.0));
        match name {
            // Prob-LRU: the calibrated mean hit cost already holds the lock on the hits that
            // promote; the station carries that mean demand.
            "lru" | "problru" | "problru-mpl" => (h, m),
            "sieve" => (0.0, m),
            _ => (0.0, 0.0),
        }
    };
    let (hit_lock, miss_lock) = lock_of(&cal.one, &base.one);
    let (busy_hit_lock, busy_miss_lock) = lock_of(&cal.busy, &base.busy);
    let t = cal.threads.max(1);
    // CPU work outside the lock: single-threaded (the service) and with `t` threads.
    let over = backend.overhead_us.max(0.0);
    let (cpu_hit, cpu_miss) =
        (cal.one.hit_us - hit_lock + over, cal.one.miss_us - miss_lock + over);
    let blend = |h_us: f64, m_us: f64| hit * h_us + (1.0 - hit) * m_us;
    let one = blend(cpu_hit, cpu_miss);
    let busy =
        blend(cal.busy.hit_us - busy_hit_lock + over, cal.busy.miss_us - busy_miss_lock + over);
    let cpu_slowdown = if t > 1 && one > 0.0 && busy > 0.0 {
        let r = busy / one;
        if backend.spin {
            // Waiting workers spin on their cores: the cores are always all busy.
            vec![r]
        } else {
            (1..=t).map(|j| 1.0 + (r - 1.0) * (j - 1) as f64 / (t - 1) as f64).collect()
        }
    } else {
        Vec::new()
    };
    let pinned = workers == Workers::Loops;
    let mut stations = vec![Station {
        slowdown: cpu_slowdown,
        pinned,
        ..Station::new("cpu", 0.0, cores, Dist::Exp)
    }];
    // The lock's hold times: contended (see above) when threads on other cores use it — at
    // most one calibration inter-operation time each — else single-threaded.
    let (hit_hold, miss_hold) = if t > 1 {
        (
            busy_hit_lock.min(cal.busy.hit_us / t as f64),
            busy_miss_lock.min(cal.busy.miss_us / t as f64),
        )
    } else {
        (hit_lock, miss_lock)
    };
    let held = hit_hold.max(miss_hold);
    let lk = (held > 0.0).then(|| {
        stations.push(Station::new("lock", held, 1, Dist::Det));
        stations.len() - 1
    });
    // CPU work, then the lock's wait and hold on the same core.
    let cpu_then_lock = |cpu: f64, hold: f64| match lk {
        Some(l) if hold > 0.0 => {
            vec![Step::Acquire(0), Step::Work(0, cpu), Step::Work(l, hold), Step::Release(0)]
        }
        _ => vec![Step::Work(0, cpu)],
    };
    let hit_steps = cpu_then_lock(cpu_hit, hit_hold);
    let mut miss_steps = cpu_then_lock(cpu_miss, miss_hold);
    miss_steps.push(if backend.spin && mpl > cores as usize {
        Step::Work(0, backend.wait_us)
    } else {
        Step::Think(backend.wait_us)
    });
    let mut n = Network {
        name: format!("{name} (calibrated)"),
        stations,
        paths: vec![
            Path { label: "hit".into(), prob: hit, steps: hit_steps },
            Path { label: "miss".into(), prob: 1.0 - hit, steps: miss_steps },
        ],
    };
    let (d, v) = (n.demands()[0], n.visits()[0]);
    n.stations[0].service = if v > 0.0 { d / v } else { 0.0 };
    n
}

/// One closed-loop measurement.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Measured {
    /// Requests per µs.
    pub x: f64,
    /// Hit ratio.
    pub hit: f64,
    /// Mean measured backend wait per miss, µs.
    pub wait_us: f64,
    /// Event loops: the fraction of their time they were busy (not idle waiting for a timer
    /// with no worker ready) — the CPU utilisation the model predicts as its CPU station's.
    /// `None` for thread workers.
    pub busy: Option<f64>,
    /// Hit ratio of the last window of the prefill (steady state), and requests replayed.
    pub prefill_hit: f64,
    pub prefill_requests: usize,
}

/// Requests per window of the steady-state check.
pub const PREFILL_WINDOW: usize = 100_000;

/// Warms `cache` to steady state before a measurement: replays the workers' sequences
/// interleaved, single-threaded and without the backend wait (a miss just inserts), in windows
/// of [`PREFILL_WINDOW`] requests, until the hit ratio of two consecutive windows differs by
/// less than 0.002 (or three passes over the sequences). Returns the last window's hit ratio,
/// the requests replayed, and where each worker's sequence stands: the measurement goes on
/// from there. (Starting it over from the beginning would replay first the requests whose
/// keys went in first — the ones a FIFO evicts first — and measure far below the steady
/// state.)
pub fn prefill<S: AsRef<[u64]>>(cache: &Subject, seqs: &[S]) -> (f64, usize, Vec<usize>) {
    let total: usize = seqs.iter().map(|s| s.as_ref().len()).sum();
    let limit = 3 * total.max(1);
    let mut pos = vec![0usize; seqs.len()];
    let (mut done, mut last, mut stable) = (0usize, f64::NAN, 0);
    let mut w = 0usize;
    loop {
        let mut hits = 0usize;
        for _ in 0..PREFILL_WINDOW {
            let t = w % seqs.len();
            w += 1;
            let seq = seqs[t].as_ref();
            if seq.is_empty() {
                continue;
            }
            let k = seq[pos[t] % seq.len()];
            pos[t] += 1;
            if cache.get(&k).is_some() {
                hits += 1;
            } else {
                cache.insert(k, k);
            }
        }
        done += PREFILL_WINDOW;
        let h = hits as f64 / PREFILL_WINDOW as f64;
        stable = if (h - last).abs() < 0.002 { stable + 1 } else { 0 };
        last = h;
        if stable >= 2 || done >= limit {
            let at = pos.iter().zip(seqs).map(|(&p, s)| p % s.as_ref().len().max(1)).collect();
            return (h, done, at);
        }
    }
}

/// The simulator's policy closest to a concurrent one at `mpl` workers, for the size search
/// (Mobius runs SIEVE's algorithm on two queues; its hit ratio follows SIEVE's within a few
/// thousandths; Prob-LRU's q may depend on the MPL).
fn twin(name: &str, mpl: usize) -> Option<String> {
    Some(match name {
        "lru" => "lru".into(),
        "problru" | "problru-mpl" => format!("problru(q={})", skip_q(name, mpl)),
        "fifo" => "fifo".into(),
        "clock" => "clock".into(),
        "sieve" | "mobius" | "mobius-wd" => "sieve".into(),
        "s3fifo" => "s3fifo".into(),
        "nbq-clock" => "gclock(bits=8)".into(),
        // The same geometry as `MultiStepCache<u64, u64>` (2 vectors of 4 ways per set).
        MULTISTEP => "multistep-lru(m=2,p=4)".into(),
        _ => return None,
    })
}

/// The smallest cache (entries) whose steady-state hit ratio on `trace`, by the simulator's
/// twin of `policy` at `mpl` workers, reaches `target`, and that hit ratio; `None` if even all
/// keys do not reach it. Steady state, as the measurement sees it after its prefill: the
/// first half of the trace warms the cache, the second half is counted (so compulsory misses
/// do not cap the targets, and a target is met rather than overshot).
pub fn size_for_hit_ratio(
    policy: &str,
    target: f64,
    trace: &sifter_sim::trace::LoadedTrace,
    mpl: usize,
) -> Result<Option<(u64, f64)>> {
    use sifter_sim::registry::PolicySpec;
    use sifter_sim::runner::{simulate_after_warmup, CacheSize};
    let spec =
        PolicySpec::parse(&twin(policy, mpl).with_context(|| {
            format!("{policy}: no simulator policy to size it by (use --sizes)")
        })?)?;
    let hit_at = |cap: u64| -> Result<f64> {
        let r = simulate_after_warmup(trace, &spec, CacheSize::Absolute(cap), trace.len() / 2)?;
        Ok(1.0 - r.miss_ratio)
    };
    let (mut lo, mut hi) = (1u64, trace.n_objects as u64);
    let top = hit_at(hi)?;
    if top < target {
        return Ok(None);
    }
    // Hit ratio grows with the size for these policies: bisect to the smallest that reaches it.
    let mut best = (hi, top);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let h = hit_at(mid)?;
        if h >= target {
            best = (mid, h);
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(Some(best))
}

/// Counts of one measured window of the workers.
#[derive(Debug, Clone, Copy, Default)]
struct Window {
    reqs: u64,
    hits: u64,
    /// Backend wait summed over the misses, µs.
    waited_us: f64,
    secs: f64,
    /// Event loops: how many ran, and their idle time summed (waiting for a timer with no
    /// worker ready), seconds.
    loops: usize,
    idle_secs: f64,
}

impl Window {
    fn add(&mut self, o: &Window) {
        self.reqs += o.reqs;
        self.hits += o.hits;
        self.waited_us += o.waited_us;
        self.secs += o.secs;
        self.idle_secs += o.idle_secs;
        self.loops = self.loops.max(o.loops);
    }

    fn measured(&self, prefill: (f64, usize)) -> Measured {
        let misses = self.reqs.saturating_sub(self.hits).max(1);
        Measured {
            x: self.reqs as f64 / self.secs.max(1e-9) / 1e6,
            hit: self.hits as f64 / self.reqs.max(1) as f64,
            wait_us: self.waited_us / misses as f64,
            // Clamped: a loop idle at the end of the window sees the stop a little after the
            // window's clock does, so its idle time can pass the window's by that much.
            busy: (self.loops > 0).then(|| {
                (1.0 - self.idle_secs / (self.secs * self.loops as f64).max(1e-9)).clamp(0.0, 1.0)
            }),
            prefill_hit: prefill.0,
            prefill_requests: prefill.1,
        }
    }
}

/// What runs the closed loop's workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Workers {
    /// One OS thread per worker; the kernel shares the cores among them (and may preempt a
    /// worker anywhere, in a lock too).
    #[default]
    Threads,
    /// One event loop (OS thread) per core, each running its share of the workers one at a
    /// time: a worker runs until a miss, waits on a timer for the backend (using no CPU), and
    /// the loop runs the next ready one. An idle loop polls its earliest timer, so a wait ends
    /// at its deadline. The backend must sleep (a spinning wait would hold the loop: use
    /// threads with `--spin`).
    Loops,
}

impl std::str::FromStr for Workers {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "threads" => Ok(Self::Threads),
            "loops" => Ok(Self::Loops),
            _ => bail!("workers '{s}': expected threads or loops"),
        }
    }
}

impl std::fmt::Display for Workers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Threads => "threads",
            Self::Loops => "loops",
        })
    }
}

/// Runs the workers (one per sequence) against `cache` the way `workers` says (each miss waits
/// `backend`, sleeping or spinning): `warm` seconds unmeasured, then `secs` measured. `pos`:
/// where each worker is in its sequence, carried from window to window.
#[allow(clippy::too_many_arguments)]
fn window(
    cache: &Subject,
    seqs: &[Vec<u64>],
    pos: &mut [usize],
    backend: Duration,
    spin: bool,
    workers: Workers,
    cores: u32,
    warm: f64,
    secs: f64,
) -> Window {
    match workers {
        Workers::Threads => thread_window(cache, seqs, pos, backend, spin, warm, secs),
        Workers::Loops => loop_window(cache, seqs, pos, backend, cores, warm, secs),
    }
}

/// The phases of a window, as its threads see them: unmeasured while `warming`, measured until
/// `stop`. Relaxed loads and stores: the flags only end phases.
struct Phases {
    warming: AtomicBool,
    stop: AtomicBool,
}

impl Phases {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// True the first time it is asked (through `counting`) after the warm-up ended: the
    /// caller then zeroes its counts.
    fn starts_counting(&self, counting: &mut bool) -> bool {
        if !*counting && !self.warming.load(Ordering::Relaxed) {
            *counting = true;
            return true;
        }
        false
    }
}

/// What one thread of a window counted (its measured phase), and where each of its workers
/// stands in its sequence: (worker, position).
type Counted = (Window, Vec<(usize, usize)>);

/// Runs `work(j, phases)` on `n` threads for `warm` seconds unmeasured, then `secs` measured,
/// and adds up their counts over the measured seconds; `pos` takes each worker's position.
fn in_phases(
    n: usize,
    pos: &mut [usize],
    warm: f64,
    secs: f64,
    work: impl Fn(usize, &Phases) -> Counted + Sync,
) -> Window {
    let phases = Phases { warming: AtomicBool::new(true), stop: AtomicBool::new(false) };
    let (res, el) = std::thread::scope(|s| {
        let hs: Vec<_> = (0..n)
            .map(|j| {
                let (work, phases) = (&work, &phases);
                s.spawn(move || work(j, phases))
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(warm));
        phases.warming.store(false, Ordering::Relaxed);
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_secs_f64(secs));
        phases.stop.store(true, Ordering::Relaxed);
        let el = t0.elapsed().as_secs_f64();
        (hs.into_iter().map(|h| h.join().expect("closed-loop worker")).collect::<Vec<_>>(), el)
    });
    // Each thread's counts cover the measured window (it stops within a request or a burst
    // of `stop`).
    let mut w = Window { secs: el, ..Window::default() };
    for (counted, at) in res {
        w.add(&counted);
        for (id, p) in at {
            pos[id] = p;
        }
    }
    w
}

/// [`window`] with one OS thread per worker.
fn thread_window(
    cache: &impl Store,
    seqs: &[Vec<u64>],
    pos: &mut [usize],
    backend: Duration,
    spin: bool,
    warm: f64,
    secs: f64,
) -> Window {
    let starts = pos.to_vec();
    // A miss waits as the calibration's misses do (`Calibrator::waiting`), by the same code.
    let wait = if spin { Wait::Spin(backend) } else { Wait::Sleep(backend) };
    in_phases(seqs.len(), pos, warm, secs, |j, phases| {
        let seq = &seqs[j];
        let mut c = Window::default();
        let mut counting = false;
        let mut i = starts[j] % seq.len().max(1);
        while !phases.stopped() {
            if phases.starts_counting(&mut counting) {
                c = Window::default();
            }
            let k = seq[i];
            i = if i + 1 == seq.len() { 0 } else { i + 1 };
            if cache.hit(&k) {
                c.hits += 1;
            } else {
                c.waited_us += wait.wait();
                cache.fill(k);
            }
            c.reqs += 1;
        }
        (c, vec![(j, i)])
    })
}

/// Hits an event loop's worker makes in a row before the next ready worker's turn.
const BURST: usize = 256;

/// One worker of an event loop: its sequence and where it stands.
struct LoopWorker<'a> {
    seq: &'a [u64],
    at: usize,
}

/// [`window`] with `cores` event loops (at most one per worker), worker `w` on loop
/// `w % loops`. Each loop keeps its ready workers in a FIFO and its waiting ones in another:
/// every wait is the same length, so deadlines come in the order the waits began.
fn loop_window(
    cache: &impl Store,
    seqs: &[Vec<u64>],
    pos: &mut [usize],
    backend: Duration,
    cores: u32,
    warm: f64,
    secs: f64,
) -> Window {
    use std::collections::VecDeque;
    let loops = seqs.len().min(cores.max(1) as usize).max(1);
    let starts = pos.to_vec();
    in_phases(loops, pos, warm, secs, |l, phases| {
        let ids: Vec<usize> = (l..seqs.len()).step_by(loops).collect();
        let mut ws: Vec<LoopWorker<'_>> = ids
            .iter()
            .map(|&w| LoopWorker { seq: &seqs[w], at: starts[w] % seqs[w].len().max(1) })
            .collect();
        let mut ready: VecDeque<usize> = (0..ws.len()).filter(|&i| !ws[i].seq.is_empty()).collect();
        // (deadline, worker, key). Every wait is `backend` long: a wait ends at its deadline
        // (an idle loop polls for it); a busy loop's delay in taking the worker back is CPU
        // queueing, which the model has apart.
        let mut waiting: VecDeque<(Instant, usize, u64)> = VecDeque::new();
        let wait_us = backend.as_secs_f64() * 1e6;
        let mut c = Window::default();
        let mut counting = false;
        // The clock is read once per miss (and while idle): it is the loop's own main cost
        // (`clock_gettime` took a fifth of the CPU at a 5 µs backend when read twice).
        let mut now = Instant::now();
        while !phases.stopped() {
            if phases.starts_counting(&mut counting) {
                c = Window::default();
            }
            while let Some(&(due, i, k)) = waiting.front() {
                if due > now {
                    break;
                }
                waiting.pop_front();
                c.waited_us += wait_us;
                cache.fill(k);
                c.reqs += 1;
                ready.push_back(i);
            }
            let Some(i) = ready.pop_front() else {
                match waiting.front() {
                    Some(&(due, ..)) => {
                        // Idle from here (a clock read an idle loop can afford) to the deadline.
                        let from = Instant::now();
                        loop {
                            now = Instant::now();
                            if now >= due || phases.stopped() {
                                break;
                            }
                            std::hint::spin_loop();
                        }
                        c.idle_secs += now.saturating_duration_since(from).as_secs_f64();
                    }
                    None => break,
                }
                continue;
            };
            // Run worker `i` until its next miss, or for at most BURST hits: then it goes to
            // the back of the ready queue, so a loop whose workers all hit still takes turns
            // among them and sees the phase flags.
            let w = &mut ws[i];
            let mut missed = false;
            for _ in 0..BURST {
                let k = w.seq[w.at];
                w.at = if w.at + 1 == w.seq.len() { 0 } else { w.at + 1 };
                if cache.hit(&k) {
                    c.hits += 1;
                    c.reqs += 1;
                } else {
                    now = Instant::now();
                    waiting.push_back((now + backend, i, k));
                    missed = true;
                    break;
                }
            }
            if !missed {
                ready.push_back(i);
                now = Instant::now();
            }
        }
        // Waits cut off by the end of the window still bring their keys (uncounted).
        for (_, _, k) in waiting {
            cache.fill(k);
        }
        c.loops = loops;
        (c, ids.into_iter().zip(ws.into_iter().map(|w| w.at)).collect())
    })
}

/// Sequences for [`loop_overhead_us`] and [`thread_overhead_us`]: shaped like the workers'
/// ([`sequences`]: as many, as long, so the same memory traffic), each key odd with
/// probability `hit` (the cacheless store those functions run against hits odd keys).
pub fn coin_sequences(hit: f64, workers: usize) -> Vec<Vec<u64>> {
    let len = sequence_len(workers);
    (0..workers as u64)
        .map(|w| {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(w + 1);
            (0..len as u64)
                .map(|i| i << 1 | (rand::Rng::random::<f64>(&mut rng) < hit) as u64)
                .collect()
        })
        .collect()
}

/// The event loops' own CPU time per request, µs, with the workers of `seqs`
/// ([`coin_sequences`]) on `loops` loops: what a loop spends besides the cache — reading the
/// worker's sequence, the clock read and timer queue of a miss, the turn to the next ready
/// worker, the look at the phase flags. Measured by running the event loop itself for about
/// `secs` seconds against a store without a cache (odd keys hit, nothing is kept) and with
/// no backend wait, so the loops never idle. (The cache's own costs are calibrated apart;
/// their calibration loops read a sequence too, one per thread, which this counts again:
/// about a nanosecond.)
pub fn loop_overhead_us(seqs: &[Vec<u64>], loops: usize, secs: f64) -> f64 {
    let mut pos = vec![0; seqs.len()];
    let loops = loops.clamp(1, seqs.len().max(1));
    let w = loop_window(&Coin, seqs, &mut pos, Duration::ZERO, loops as u32, 0.2 * secs, secs);
    w.secs * loops as f64 * 1e6 / w.reqs.max(1) as f64
}

/// [`loop_overhead_us`] for thread workers: their loop, run by one thread per sequence of
/// `seqs` (at most one per core: more would measure time slicing) against the same cacheless
/// store, with a spinning wait of zero, for about `secs` seconds. The time a miss's wait
/// records is not the machinery's (the real run counts it as the backend's), so it is taken
/// out. The kernel's work for a sleeping wait (the sleep and the wake-up) is not in it.
pub fn thread_overhead_us(seqs: &[Vec<u64>], secs: f64) -> f64 {
    let mut pos = vec![0; seqs.len()];
    let w = thread_window(&Coin, seqs, &mut pos, Duration::ZERO, true, 0.2 * secs, secs);
    let busy_us = w.secs * seqs.len() as f64 * 1e6 - w.waited_us;
    busy_us.max(0.0) / w.reqs.max(1) as f64
}

/// The calibration's own loop cost per request, µs: its passes ([`Calibrator::round`]: the
/// same chunks of lookups and chunks read through, the same clock reads) run against the
/// cacheless store on `threads` threads at once, each replaying a sequence of `seqs`
/// ([`coin_sequences`]), for about `secs` seconds; the mean over threads. The calibrated costs
/// include it (a calibration times its loop with the cache), and so do the workers' own costs
/// ([`loop_overhead_us`], [`thread_overhead_us`]: their loops read a sequence too), so the
/// model is charged the workers' cost less this ([`net_overhead_us`]), once.
pub fn replay_overhead_us(seqs: &[Vec<u64>], threads: usize, secs: f64) -> f64 {
    if seqs.is_empty() {
        return 0.0;
    }
    let threads = threads.max(1);
    let per_thread = together(
        threads,
        1,
        |_| {},
        |t, _, done| {
            let seq = &seqs[t % seqs.len()];
            let (mut us, mut reqs) = (0.0, 0u64);
            let t0 = Instant::now();
            while !done.load(Ordering::Relaxed) && t0.elapsed().as_secs_f64() < secs {
                let s = timed_pass(&Coin, seq, None, done);
                us += s.hit_us + s.mixed_us;
                reqs += s.hit.0 + s.hit.1 + s.mixed.0 + s.mixed.1;
            }
            us / reqs.max(1) as f64
        },
    );
    per_thread[0].iter().sum::<f64>() / threads as f64
}

/// The workers' own cost the model is charged per request, µs: their loop's (`workers_us`:
/// [`loop_overhead_us`] or [`thread_overhead_us`]) less the calibration loop's
/// (`calibration_us`: [`replay_overhead_us`]), which the calibrated costs already hold;
/// never below zero.
pub fn net_overhead_us(workers_us: f64, calibration_us: f64) -> f64 {
    (workers_us - calibration_us).max(0.0)
}

/// One point of the sweep: the measurement and the calibrated model's prediction (Mops/s).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Point {
    /// What was measured.
    pub measured: Measured,
    /// Mean backend wait given to the model, µs (the measured mean).
    pub wait_us: f64,
    /// The policy's calibration at this point (size and concurrency; the mean over slices).
    pub calibration: Calibration,
    /// The model's throughput, requests per µs (the mean over slices).
    pub model: f64,
    /// The workers' own CPU time per request given to the model, µs (the mean over slices; see
    /// [`Backend::overhead_us`]): their loop's, less the calibration loop's ([`net_overhead_us`]).
    pub overhead_us: f64,
    /// The calibration loop's own cost per request taken out of the workers' cost, µs (the mean
    /// over slices; [`replay_overhead_us`]).
    pub replay_us: f64,
    /// The model's utilisation of its CPU station per core (the mean over slices): compare
    /// with the event loops' measured [`Measured::busy`].
    pub model_busy: f64,
    /// The calibrations' spin after each miss, µs (the mean over slices; 0 where they do not
    /// wait so): a loop's idle time per miss in the model ([`loop_idle_gap`]), for event
    /// loops with several workers each.
    pub idle_gap_us: f64,
}

/// How a point's calibrated model is solved: simulated ([`calibrated_network`] has
/// simultaneous possession, which MVA cannot solve), long enough that the 95 % confidence
/// interval is about ±1 % of its throughput, from a fixed seed (a slice's model is a function
/// of its inputs).
const MODEL_SIM: SimOptions =
    SimOptions { warmup: 20_000, requests: 200_000, batches: 20, seed: 1 };

/// Requests per calibration pass: 2^18, fewer (down to 2^12) where misses waiting `wait` at
/// hit ratio `hit` would keep a pass waiting for more than [`WAIT_BUDGET`] seconds (a
/// sleep takes its latency plus the timer's slack, about 60 µs here). Such points have
/// misses enough that their cost is measured well with fewer requests, and their throughput
/// is the backend's more than the cache's.
fn calibration_requests(wait: Option<Wait>, hit: f64) -> usize {
    let per_miss = match wait {
        None => return 1 << 18,
        Some(Wait::Spin(d)) => d.as_secs_f64(),
        Some(Wait::Sleep(d)) => d.as_secs_f64() + 60e-6,
    };
    // Half the requests are in read-through chunks, a share `1 − hit` of them misses.
    let waits_per_request = 0.5 * (1.0 - hit).clamp(0.0, 1.0) * per_miss;
    if waits_per_request <= 0.0 {
        return 1 << 18;
    }
    ((WAIT_BUDGET / waits_per_request) as usize).clamp(1 << 12, 1 << 18)
}

/// How long an event loop idles per miss, on average, in a solved model: `x` requests per µs
/// in all, its CPU station `busy` (per core) of the time, hit ratio `hit`, `loops` loops. Each
/// loop sees `x (1 − hit) / loops` misses per µs and idles `1 − busy` of the time, so it idles
/// `(1 − busy) loops / (x (1 − hit))` µs per miss — at most the `backend` wait (a loop waits
/// for no longer than the miss it has just sent). `None` where it does not idle (or nothing
/// misses).
///
/// The idle time falls between bursts unevenly (after some misses another worker is ready
/// at once, after others the loop waits), and a calibration that spins its mean after every
/// miss slows the requests after each spin by less than the longer, rarer real gaps would if
/// the slowdown grows with the gap (it does, less than in proportion: hits after 5, 100 and
/// 500 µs spins cost 39, 59 and 76 ns on this host).
pub fn loop_idle_gap(
    x: f64,
    busy: f64,
    hit: f64,
    loops: usize,
    backend: Duration,
) -> Option<Duration> {
    let misses = x * (1.0 - hit) / loops.max(1) as f64;
    let idle = 1.0 - busy;
    if !(misses > 0.0 && idle > 0.0) {
        return None;
    }
    let us = (idle / misses).min(backend.as_secs_f64() * 1e6);
    (us.is_finite() && us > 0.0).then(|| Duration::from_secs_f64(us * 1e-6))
}

/// Seconds a calibration pass may spend in backend waits ([`calibration_requests`]).
const WAIT_BUDGET: f64 = 0.1;

/// Slices a point's measurement is cut into, each right after its own calibration.
pub const SLICES: usize = 4;

/// Seconds each slice's calibration of the workers' own cost runs ([`loop_overhead_us`],
/// [`thread_overhead_us`]).
const OVERHEAD_SECS: f64 = 0.01;

/// Measures one policy at one cache size and predicts it with the calibrated model.
///
/// This machine's speed drifts (other tenants: runs seconds apart differ by up to 1.7×), so a
/// calibration made once and a measurement made later disagree by that much whatever the
/// model. The point therefore alternates: after the prefill, [`SLICES`] times, calibrate the
/// policy and the lock-free base (Mobius) at this size, alone and with as many threads as can
/// run together here (the MPL, at most the cores), then measure a slice of `secs / SLICES`
/// seconds and the workers' own cost per request ([`loop_overhead_us`],
/// [`thread_overhead_us`]); each slice is modelled with its own calibration, hit ratio,
/// backend wait and workers' cost, and the point reports the whole measurement against the
/// mean of the slices' models.
#[allow(clippy::too_many_arguments)]
pub fn point(
    name: &str,
    keys: u64,
    size: f64,
    seqs: &[Vec<u64>],
    backend: Duration,
    spin: bool,
    workers: Workers,
    secs: f64,
    cores: u32,
) -> Result<Point> {
    if spin && workers == Workers::Loops {
        bail!("a spinning backend needs thread workers (an event loop cannot spin for one worker)");
    }
    let q = skip_q(name, seqs.len());
    let cap = ((keys as f64 * size).round() as u64).max(10);
    let threads = seqs.len().min(cores.max(1) as usize);
    let cache = Arc::new(Subject::build(name, cap, q)?);
    let (prefill_hit, replayed, mut pos) = prefill(&cache, seqs);
    // The calibrations' misses are timed among hits at the steady state's hit ratio.
    // Where a worker's core waits with it, the calibrations' misses wait too (see
    // `Calibrator::waiting`), with fewer requests when the waits would make a pass long.
    let wait = Wait::of_point(backend, spin, workers, seqs.len(), cores);
    let requests = calibration_requests(wait, prefill_hit);
    let waits = |c: Calibrator| match wait {
        Some(w) => c.waiting(w),
        None => c,
    };
    // The calibrations replay a stream of the workers' kind on the workers' own cache (see
    // `Calibrator`), and the lock-free baseline of the others on a Mobius cache brought to
    // that stream's steady state.
    let stream = calibration_stream(keys, seqs);
    let workers_cache =
        || Calibrator::on(cache.clone(), prefill_hit, stream.clone(), threads, requests);
    let mut base = waits(match name {
        "mobius" => workers_cache()?,
        _ => Calibrator::new(
            Subject::of(Policy::Mobius, cap, q)?,
            cap,
            stream.clone(),
            threads,
            requests,
        )?,
    });
    let mut own = match name {
        "mobius" => None,
        _ => Some(waits(workers_cache()?)),
    };
    // The workers' own cost is measured at the steady state's hit ratio: every loop's
    // workers, or as many threads as run at once.
    let coins = match workers {
        Workers::Loops => coin_sequences(prefill_hit, seqs.len()),
        Workers::Threads => coin_sequences(prefill_hit, threads),
    };
    let pre = (prefill_hit, replayed);
    let slice = secs / SLICES as f64;
    // Event loops with several workers each idle between their workers' bursts, and a core's
    // first requests after an idle spell are slower than back to back (in-loop hits cost
    // 1.5-3x the unpaced calibration at MPL 8: docs/BENCHMARKS.md, "The loops' hits cost
    // 1.5-3x their calibration"). Their calibrations therefore spin after each miss for as
    // long as a loop idles per miss in the model solved with the previous calibration
    // ([`loop_idle_gap`]): the first from an unpaced calibration, the others from the last
    // slice's model: the measured throughput and busy time, which the model is judged
    // against, do not enter the gap.
    let paced = workers == Workers::Loops && wait.is_none() && seqs.len() > threads;
    let solve = |cal: &Calibration, b: &Calibration, hit: f64, backend: Backend| {
        let net = calibrated_network(name, cal, b, hit, backend, workers, cores, seqs.len());
        simulate(&net, seqs.len() as u32, &MODEL_SIM)
            .map_err(|e| anyhow::anyhow!("solving the model of {name} at size {size}: {e}"))
    };
    let gap_of = |x: f64, busy: f64, hit: f64| {
        if paced {
            loop_idle_gap(x, busy, hit, threads, backend)
        } else {
            None
        }
    };
    let mut gap = None;
    if paced {
        let b = base.calibration(threads);
        let cal = own.as_mut().map_or(b, |c| c.calibration(threads));
        let nominal =
            Backend { wait_us: backend.as_secs_f64() * 1e6, spin: false, overhead_us: 0.0 };
        let solved = solve(&cal, &b, prefill_hit, nominal)?;
        gap = gap_of(solved.x, solved.u[0], prefill_hit);
    }
    let mut total = Window::default();
    let (mut model, mut sum, mut overhead, mut model_busy) = (0.0, [0.0; 4], 0.0, 0.0);
    let (mut replay_us, mut gap_us) = (0.0, 0.0);
    for _ in 0..SLICES {
        if paced {
            let w = gap.map(Wait::Spin);
            let requests = calibration_requests(w, prefill_hit);
            base.pace(w, requests);
            if let Some(c) = own.as_mut() {
                c.pace(w, requests);
            }
            gap_us += gap.map_or(0.0, |g| g.as_secs_f64() * 1e6) / SLICES as f64;
        }
        let b = base.calibration(threads);
        let cal = own.as_mut().map_or(b, |c| c.calibration(threads));
        let warm = (0.2 * slice).max(0.02);
        let w = window(&cache, seqs, &mut pos, backend, spin, workers, cores, warm, slice);
        total.add(&w);
        let m = w.measured(pre);
        let workers_us = match workers {
            Workers::Loops => loop_overhead_us(&coins, threads, OVERHEAD_SECS),
            Workers::Threads => thread_overhead_us(&coins, OVERHEAD_SECS),
        };
        let calibration_us = replay_overhead_us(&coins, threads, OVERHEAD_SECS);
        let over = net_overhead_us(workers_us, calibration_us);
        overhead += over / SLICES as f64;
        replay_us += calibration_us / SLICES as f64;
        let solved =
            solve(&cal, &b, m.hit, Backend { wait_us: m.wait_us, spin, overhead_us: over })?;
        gap = gap_of(solved.x, solved.u[0], m.hit);
        model += solved.x / SLICES as f64;
        model_busy += solved.u[0] / SLICES as f64;
        for (s, v) in
            sum.iter_mut().zip([cal.one.hit_us, cal.one.miss_us, cal.busy.hit_us, cal.busy.miss_us])
        {
            *s += v / SLICES as f64;
        }
    }
    let measured = total.measured(pre);
    let calibration = Calibration {
        one: Costs { hit_us: sum[0], miss_us: sum[1] },
        threads,
        busy: Costs { hit_us: sum[2], miss_us: sum[3] },
    };
    Ok(Point {
        measured,
        wait_us: measured.wait_us,
        calibration,
        model,
        overhead_us: overhead,
        replay_us,
        model_busy,
        idle_gap_us: gap_us,
    })
}

/// The workers' sequences one after the other, as a trace for the simulator (the size search).
pub fn stream_trace(seqs: &[Vec<u64>]) -> Result<sifter_sim::trace::LoadedTrace> {
    let reqs = seqs
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, &k)| Ok(sifter_trace::Request::get(i as u64, k)));
    Ok(sifter_sim::trace::LoadedTrace::load("closed-loop", reqs, &|_| {})?)
}

/// Zipf(1.0) request sequences, one per worker: 8 × 2^20 requests shared out (at least 2^16
/// each, so beyond 128 workers the total grows). At every MPL up to 128 the workers replay as
/// many requests as the 8-worker stream the cache sizes are found on: fewer, longer
/// sequences at a low MPL would otherwise cycle through fewer distinct keys than that stream
/// (at MPL 2, 2 × 2^20 requests left a cache sized for 0.995 holding every key they use).
pub fn sequences(keys: u64, workers: usize) -> Vec<Vec<u64>> {
    let len = sequence_len(workers);
    (0..workers).map(|t| zipf_seq(keys, len, t as u64 + 1)).collect()
}

/// The length of each of `workers` workers' sequences: 8 Mi requests in all, at least 64 Ki each.
fn sequence_len(workers: usize) -> usize {
    ((8usize << 20) / workers.max(1)).max(1 << 16)
}

/// Parses a latency: `5us`, `100us`, `1ms`, `500ns`, `2s` (a bare number is µs).
pub fn parse_latency(s: &str) -> Result<Duration> {
    let t = s.trim();
    let (num, mul) = if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("ns") {
        (n, 1e-9)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1e-6)
    };
    let v: f64 = num
        .trim()
        .parse()
        .with_context(|| format!("latency '{s}': expected e.g. 5us, 100us, 1ms, 2s"))?;
    if !(0.0..1e9).contains(&v) {
        bail!("latency '{s}' out of range");
    }
    Ok(Duration::from_secs_f64(v * mul))
}

/// How the points of an [`Experiment`] are sized.
#[derive(Debug, Clone, PartialEq)]
pub enum Sizing {
    /// Cache sizes as fractions of the keys, in (0, 1].
    Fractions(Vec<f64>),
    /// Target hit ratios in (0, 1): each policy's size for a target is found on the workers'
    /// own request stream by the simulator's twin of the policy ([`size_for_hit_ratio`]).
    HitRatios(Vec<f64>),
}

/// The closed-loop experiment: policies × multiprogramming levels × sizes (or target hit
/// ratios), each point prefilled, calibrated, measured and modelled (see [`point`]).
#[derive(Debug, Clone)]
pub struct Experiment {
    /// Closed-loop policy names: mobius, sieve, lru, problru (q = 0.5), problru-mpl
    /// (q = 1 − 1/MPL), fifo, clock, s3fifo, nbq-clock, and multistep (the multi-step LRU
    /// cache, see [`MULTISTEP`]).
    pub policies: Vec<String>,
    /// Worker counts (multiprogramming levels), each in 1..=1024.
    pub mpls: Vec<usize>,
    /// Emulated backend latency per miss.
    pub backend: Duration,
    /// What the points are.
    pub sizing: Sizing,
    /// Distinct keys (Zipf 1.0), at least 10.
    pub keys: u64,
    /// Seconds measured per point.
    pub secs: f64,
    /// Busy-wait the backend latency instead of sleeping.
    pub spin: bool,
    /// What runs the workers: OS threads, or one event loop per core.
    pub workers: Workers,
    /// Cores for the model's CPU station (and the event loops).
    pub cores: u32,
}

/// What [`Experiment::run`] reports as it goes.
#[derive(Debug, Clone)]
pub enum Event<'a> {
    /// A target hit ratio's cache size was found (`simulated`: the twin's hit ratio there).
    Sized { policy: &'a str, target: f64, entries: u64, simulated: f64 },
    /// A target hit ratio is out of reach with every key cached: the point is skipped.
    OutOfReach { policy: &'a str, target: f64, keys: u64 },
    /// Planning is done; about this many points are measured next (Prob-LRU with
    /// q = 1 − 1/MPL may find a target out of reach at some MPL and skip it).
    Measuring { points: usize },
    /// One point was measured.
    Measured(&'a Row),
}

/// One measured point of an [`Experiment`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    /// The closed-loop policy name.
    pub policy: String,
    /// Workers.
    pub mpl: usize,
    /// The backend latency asked for, µs.
    pub backend_us: f64,
    /// The target hit ratio the size was found for, if sized by one.
    pub target: Option<f64>,
    /// The cache size as a fraction of the keys.
    pub size: f64,
    /// The measurement and the model's prediction.
    pub point: Point,
}

impl Row {
    /// The model's relative error against the measurement: (model − measured) / measured.
    pub fn error(&self) -> f64 {
        (self.point.model - self.point.measured.x) / self.point.measured.x
    }
}

/// A point to measure: the target hit ratio (if sized for one) and the size as a fraction.
type Planned = (Option<f64>, f64);

impl Experiment {
    /// Checks the settings (the messages name the CLI's options).
    pub fn check(&self) -> Result<()> {
        if self.mpls.is_empty()
            || self.mpls.iter().any(|&m| m == 0 || m > 1024)
            || self.keys < 10
            || self.secs.is_nan()
            || self.secs <= 0.0
        {
            bail!("need --mpl between 1 and 1024, --keys >= 10 and --secs > 0");
        }
        if self.spin && self.workers == Workers::Loops {
            bail!("--spin needs --workers threads (an event loop cannot spin for one worker)");
        }
        if self.cores == 0 {
            bail!("--cores must be at least 1");
        }
        match &self.sizing {
            Sizing::HitRatios(t) if t.iter().any(|t| !(*t > 0.0 && *t < 1.0)) => {
                bail!("--hit-ratios are in (0, 1)")
            }
            Sizing::Fractions(s) if s.iter().any(|s| !(*s > 0.0 && *s <= 1.0)) => {
                bail!("--sizes are fractions in (0, 1]")
            }
            _ => {}
        }
        for name in &self.policies {
            kind_of(name)?;
        }
        Ok(())
    }

    /// Runs the sweep: plans every policy's points (the size search runs on 8 workers'
    /// streams, the same distribution at every MPL; Prob-LRU with q = 1 − 1/MPL is sized again
    /// for each MPL), then measures them, MPL outer, policies inner. Returns the rows in
    /// that order; `on` sees the plan and each row as it comes. `stop` (checked before each
    /// point) ends the sweep with an error.
    pub fn run(&self, on: &mut dyn FnMut(Event<'_>), stop: &AtomicBool) -> Result<Vec<Row>> {
        self.check()?;
        let seqs = sequences(self.keys, 8);
        let mut plan: Vec<(&str, Vec<Planned>)> = Vec::new();
        let plan_trace = match &self.sizing {
            Sizing::HitRatios(_) => Some(stream_trace(&seqs)?),
            Sizing::Fractions(_) => None,
        };
        for name in &self.policies {
            let pts = match (&self.sizing, &plan_trace) {
                (Sizing::HitRatios(targets), Some(trace)) => {
                    let mut pts = Vec::new();
                    for &t in targets {
                        match size_for_hit_ratio(name, t, trace, seqs.len())? {
                            Some((cap, sim_hit)) => {
                                on(Event::Sized {
                                    policy: name,
                                    target: t,
                                    entries: cap,
                                    simulated: sim_hit,
                                });
                                pts.push((Some(t), cap as f64 / self.keys as f64));
                            }
                            None => {
                                on(Event::OutOfReach { policy: name, target: t, keys: self.keys })
                            }
                        }
                    }
                    pts
                }
                (Sizing::Fractions(sizes), _) => sizes.iter().map(|&z| (None, z)).collect(),
                (Sizing::HitRatios(_), None) => unreachable!("the trace is built for hit ratios"),
            };
            plan.push((name, pts));
        }
        on(Event::Measuring {
            points: self.mpls.len() * plan.iter().map(|(_, p)| p.len()).sum::<usize>(),
        });
        let mut rows = Vec::new();
        for &mpl in &self.mpls {
            // The planning streams are the 8-worker ones: reused at MPL 8 (the default).
            let other;
            let seqs = if mpl == seqs.len() {
                &seqs
            } else {
                other = sequences(self.keys, mpl);
                &other
            };
            for (name, pts) in &plan {
                for &(target, size) in pts {
                    // Relaxed: a request to stop, acted on at the next point.
                    if stop.load(Ordering::Relaxed) {
                        bail!("stopped before the sweep was complete");
                    }
                    let size = match (*name, target, &plan_trace) {
                        ("problru-mpl", Some(t), Some(trace)) => {
                            match size_for_hit_ratio(name, t, trace, mpl)? {
                                Some((cap, _)) => cap as f64 / self.keys as f64,
                                None => continue,
                            }
                        }
                        _ => size,
                    };
                    let point = point(
                        name,
                        self.keys,
                        size,
                        seqs,
                        self.backend,
                        self.spin,
                        self.workers,
                        self.secs,
                        self.cores,
                    )?;
                    let row = Row {
                        policy: name.to_string(),
                        mpl,
                        backend_us: self.backend.as_secs_f64() * 1e6,
                        target,
                        size,
                        point,
                    };
                    on(Event::Measured(&row));
                    rows.push(row);
                }
            }
        }
        Ok(rows)
    }
}

/// The rows as CSV (`sifter bench closed-loop --csv`'s columns).
pub fn rows_csv(rows: &[Row]) -> String {
    let mut csv = String::from(
        "policy,mpl,backend_us,target_hit,size,prefill_requests,prefill_hit,hit_ratio,measured_mops,model_mops,error,wait_us,calib_threads,hit_us,miss_us,busy_hit_us,busy_miss_us,overhead_us,busy,model_busy,replay_us,idle_gap_us\n",
    );
    for r in rows {
        let (m, c) = (&r.point.measured, &r.point.calibration);
        let target = r.target.map_or("-".to_string(), |t| format!("{t}"));
        csv.push_str(&format!(
            "{},{},{},{target},{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.2},{},{:.4},{:.4},{:.4},{:.4},{:.4},{},{:.4},{:.4},{:.2}\n",
            r.policy,
            r.mpl,
            r.backend_us,
            r.size,
            m.prefill_requests,
            m.prefill_hit,
            m.hit,
            m.x,
            r.point.model,
            r.error(),
            r.point.wait_us,
            c.threads,
            c.one.hit_us,
            c.one.miss_us,
            c.busy.hit_us,
            c.busy.miss_us,
            r.point.overhead_us,
            m.busy.map_or("-".to_string(), |b| format!("{b:.4}")),
            r.point.model_busy,
            r.point.replay_us,
            r.point.idle_gap_us
        ));
    }
    csv
}

#[cfg(test)]
mod size_search_tests {
    use super::*;
    use sifter_sim::registry::PolicySpec;
    use sifter_sim::runner::{simulate, simulate_after_warmup, CacheSize};

    #[test]
    fn the_size_found_is_the_smallest_that_reaches_the_target() {
        let seqs: Vec<Vec<u64>> = (0..2).map(|t| zipf_seq(5_000, 50_000, t + 1)).collect();
        let trace = stream_trace(&seqs).expect("load");
        // The steady-state hit ratio: the second half, after the first half warmed the cache.
        let hit = |p: &str, cap: u64| {
            let r = simulate_after_warmup(
                &trace,
                &PolicySpec::parse(p).expect("spec"),
                CacheSize::Absolute(cap),
                trace.len() / 2,
            )
            .expect("sim");
            assert_eq!(r.counts.requests as usize, trace.len() - trace.len() / 2);
            1.0 - r.miss_ratio
        };
        for (policy, twin) in [("lru", "lru"), ("mobius", "sieve"), ("s3fifo", "s3fifo")] {
            for target in [0.5, 0.8, 0.9] {
                let (cap, h) = size_for_hit_ratio(policy, target, &trace, 8)
                    .expect("search")
                    .expect("reachable");
                assert!(
                    h >= target && hit(twin, cap) >= target,
                    "{policy} {target}: {cap} gives {h}"
                );
                assert!(
                    cap == 1 || hit(twin, cap - 1) < target,
                    "{policy} {target}: {cap} is not the smallest"
                );
            }
        }
        // The steady state has no compulsory misses: a target above the cold-start hit ratio
        // of every key cached is reachable (it was not when the whole trace counted).
        let cold = |cap: u64| {
            let r = simulate(
                &trace,
                &PolicySpec::parse("lru").expect("spec"),
                CacheSize::Absolute(cap),
                false,
                0,
                &|_| {},
            )
            .expect("sim");
            1.0 - r.miss_ratio
        };
        let all = cold(trace.n_objects as u64);
        let (_, h) = size_for_hit_ratio("lru", all + 0.01, &trace, 8)
            .expect("search")
            .expect("reachable in steady state");
        assert!(h > all, "{h} vs the cold start's {all}");
        // Beyond what all keys give: None, not a wrong size.
        assert_eq!(size_for_hit_ratio("lru", 0.999_999_9, &trace, 8).expect("search"), None);
        assert!(size_for_hit_ratio("no-such", 0.5, &trace, 8).is_err(), "no twin: an error");
        // Prob-LRU with q = 1 − 1/MPL: at one worker q = 0, every hit promotes — LRU's size;
        // at 72 workers q is near 1, hits hardly promote, and it needs more room than LRU.
        for target in [0.5, 0.8] {
            let lru = size_for_hit_ratio("lru", target, &trace, 1).expect("search");
            assert_eq!(size_for_hit_ratio("problru-mpl", target, &trace, 1).expect("search"), lru);
            let (busy, _) = size_for_hit_ratio("problru-mpl", target, &trace, 72)
                .expect("search")
                .expect("reachable");
            assert!(busy > lru.expect("reachable").0, "{target}: {busy} entries at MPL 72");
        }
    }

    #[test]
    fn multistep_is_sized_by_its_simulator_twin_and_measured() {
        let seqs: Vec<Vec<u64>> = (0..2).map(|t| zipf_seq(4_000, 100_000, t + 1)).collect();
        let trace = stream_trace(&seqs).expect("trace");
        let (cap, sim) =
            size_for_hit_ratio(MULTISTEP, 0.7, &trace, 2).expect("search").expect("reachable");
        assert!(sim >= 0.7 && cap < 4_000, "{cap} entries, simulated {sim}");
        // The size is the twin's, so the cache itself, warm, hits about as often.
        let p = point(
            MULTISTEP,
            4_000,
            cap as f64 / 4_000.0,
            &seqs,
            Duration::ZERO,
            false,
            Workers::Threads,
            0.1,
            2,
        )
        .expect("point");
        let m = p.measured;
        assert!((m.hit - sim).abs() < 0.03, "measured {} against the twin's {sim}", m.hit);
        assert!(m.x > 0.0 && p.model > 0.0, "{p:?}");
        assert!(p.calibration.one.hit_us > 0.0 && p.calibration.one.miss_us > 0.0, "{p:?}");
        // It is a cache of its own: no `sifter::Cache` policy by that name.
        assert_eq!(kind_of(MULTISTEP).expect("a closed-loop name"), None);
        assert!(Subject::build("no-such", 10, 0.5).is_err());
        // Capacities no cache can have are errors that say so, not panics.
        for name in ["mobius", "lru", "multistep"] {
            let e = Subject::build(name, 1 << 40, 0.5).expect_err(name).to_string();
            assert!(e.contains("too large") || e.contains("at most"), "{name}: {e}");
        }
    }

    /// Both ways of running the workers: every worker makes progress, each miss waits the
    /// backend (a worker has at most one miss per latency in flight, so the misses are bounded
    /// by the window), and the loops' recorded wait is the latency itself.
    #[test]
    fn workers_run_as_threads_or_event_loops_and_wait_the_backend() {
        // A prime length: a worker's position is taken modulo it, and a loop whose workers
        // all hit runs them in turns of BURST requests, so with 20,000 (a multiple of
        // BURST's 2^8 in 160,000 requests, one window's worth on this machine) a worker that
        // ran exactly 625 turns was back at 0 and read as one that never ran (it happened).
        // With 20,011, that takes 20,011 turns.
        let seqs: Vec<Vec<u64>> = (0..6).map(|t| zipf_seq(2_000, 20_011, t + 1)).collect();
        let backend = Duration::from_micros(200);
        for workers in [Workers::Threads, Workers::Loops] {
            let c = Subject::of(Policy::Lru, 500, 0.5).unwrap();
            let mut pos = vec![0usize; seqs.len()];
            let (warm, secs) = (0.02, 0.1);
            let w = window(&c, &seqs, &mut pos, backend, false, workers, 2, warm, secs);
            let misses = w.reqs - w.hits;
            assert!(w.hits > 0 && misses > 0, "{workers}: {w:?}");
            assert!(pos.iter().all(|&p| p > 0), "{workers}: a worker never ran: {pos:?}");
            // Warm-up and window: at most one miss per worker per latency.
            let bound = seqs.len() as f64 * (warm + secs + 0.05) / backend.as_secs_f64();
            assert!((misses as f64) < bound, "{workers}: {misses} misses, at most {bound}");
            let wait = w.waited_us / misses as f64;
            assert!(wait >= 200.0, "{workers}: waited {wait} µs per miss");
            if workers == Workers::Loops {
                assert!(wait < 200.5, "loops record the latency: {wait} µs");
            }
            // A loop waiting 200 µs for each of its 3 workers' misses is mostly idle.
            match (workers, w.measured((0.0, 0)).busy) {
                (Workers::Threads, b) => assert_eq!(b, None),
                (Workers::Loops, Some(b)) => assert!((0.0..0.5).contains(&b), "busy {b}"),
                (Workers::Loops, None) => panic!("loops report how busy they were"),
            }
            let Subject::Policy(c) = &c else { unreachable!("an LRU cache") };
            c.validate().expect("a valid cache after the window");
        }
        // A cache holding every key: no worker ever misses, and still every one takes turns.
        let c = Subject::of(Policy::Lru, 2_000, 0.5).unwrap();
        for k in 1..=2_000 {
            c.insert(k, k);
        }
        let mut pos = vec![0usize; seqs.len()];
        let w = window(&c, &seqs, &mut pos, backend, false, Workers::Loops, 2, 0.02, 0.05);
        assert!(w.reqs > 0 && w.hits == w.reqs, "{w:?}");
        assert!(pos.iter().all(|&p| p > 0), "a worker never ran: {pos:?}");
        assert_eq!("loops".parse::<Workers>().expect("a name"), Workers::Loops);
        assert!("fibers".parse::<Workers>().is_err());
        // A loop cannot spin for one worker.
        let e = point("lru", 2_000, 0.25, &seqs, backend, true, Workers::Loops, 0.05, 2);
        assert!(e.is_err());
    }

    #[test]
    fn the_workers_own_cost_is_measured_without_a_cache_and_charged_to_every_request() {
        let seqs = coin_sequences(0.9, 4);
        let (n, odd) = (seqs[0].len(), seqs[0].iter().filter(|&&k| k & 1 == 1).count());
        assert_eq!(n, sequence_len(4));
        assert!((odd as f64 / n as f64 - 0.9).abs() < 0.01, "{odd} of {n} hit");
        // A loop's turn costs some nanoseconds: never nothing, nowhere near a microsecond
        // (a loop that counted no request would report the whole window).
        let us = loop_overhead_us(&seqs, 2, 0.02);
        assert!(us > 0.0 && us < 1.0, "{us} µs per request");
        // Thread workers' loop, the zero wait taken out.
        let us = thread_overhead_us(&seqs[..2], 0.02);
        assert!(us > 0.0 && us < 1.0, "{us} µs per request");
        // The calibration's own loop, which the calibrated costs hold already, is taken out
        // of it, once, never below zero.
        let replay = replay_overhead_us(&seqs, 2, 0.02);
        assert!(replay > 0.0 && replay < 1.0, "{replay} µs per request");
        assert!((net_overhead_us(0.003, 0.001) - 0.002).abs() < 1e-12);
        assert_eq!(net_overhead_us(0.001, 0.003), 0.0);
        // The model charges it to hits and misses alike, on the CPU station.
        let costs = Costs { hit_us: 0.02, miss_us: 0.2 };
        let cal = Calibration { one: costs, threads: 2, busy: costs };
        let net = |overhead_us| {
            let b = Backend { wait_us: 5.0, spin: false, overhead_us };
            calibrated_network("mobius", &cal, &cal, 0.9, b, Workers::Loops, 2, 72)
        };
        let (plain, loaded) = (net(0.0).demands()[0], net(0.01).demands()[0]);
        assert!((loaded - plain - 0.01).abs() < 1e-12, "{plain} -> {loaded}");
    }

    #[test]
    fn calibration_misses_are_timed_among_hits_at_the_hit_ratio() {
        let cap = 2_000;
        let cache = Subject::of(Policy::Mobius, cap, 0.5).unwrap();
        let keys = zipf_seq(4 * cap, 20_000, 3);
        // Lookup chunks insert nothing: they note what missed.
        let (mut t, mut noted) = ((0, 0), Vec::new());
        assert_eq!(replay(&cache, &keys[..CHUNK], OnMiss::Note(&mut noted), &mut t), 0.0);
        assert_eq!(t, (0, CHUNK as u64), "an empty cache misses");
        assert_eq!(noted, keys[..CHUNK]);
        assert!(cache.get(&keys[0]).is_none());
        // Read-through chunks insert each key they miss: the same chunk again hits (it holds
        // fewer keys than the cache), and the tallies add up chunk after chunk.
        let fill = || OnMiss::Fill(None);
        let mut t = (0, 0);
        replay(&cache, &keys[..CHUNK], fill(), &mut t);
        assert_eq!(t.0 + t.1, CHUNK as u64);
        assert!(t.1 > 0 && cache.get(&keys[0]).is_some());
        replay(&cache, &keys[..CHUNK], fill(), &mut t);
        assert_eq!(t.0 + t.1, 2 * CHUNK as u64);
        assert_eq!(t.1, (t.0 + t.1) - t.0, "tallied");
        let before = t;
        let mut noted = Vec::new();
        replay(&cache, &keys[..CHUNK], OnMiss::Note(&mut noted), &mut t);
        assert_eq!(t.1, before.1, "resident: every lookup hits");
        assert!(noted.is_empty());
        // With a spinning or sleeping backend each miss read through waits it, and the waits
        // are told apart; lookups wait for nothing.
        for (n, wait) in
            [Wait::Spin(Duration::from_micros(20)), Wait::Sleep(Duration::from_micros(20))]
                .into_iter()
                .enumerate()
        {
            // Keys beyond the stream's: never resident.
            let fresh: Vec<u64> = (0..8).map(|k| 1_000_000 * (n as u64 + 1) + k).collect();
            let (mut t, mut noted) = ((0, 0), Vec::new());
            assert_eq!(replay(&cache, &fresh, OnMiss::Note(&mut noted), &mut t), 0.0);
            let mut t = (0, 0);
            let waited = replay(&cache, &fresh, OnMiss::Fill(Some(wait)), &mut t);
            assert_eq!(t, (0, 8));
            assert!(waited >= 20.0 * 8.0, "{wait:?}: {waited} µs for 8 misses");
        }
        // A pass reads through every key it misses, the lookup chunks' after each chunk
        // (untimed): keys seen once each, fewer than the cache holds, are all resident after.
        let once = Subject::of(Policy::Mobius, cap, 0.5).unwrap();
        let distinct: Vec<u64> = (1..=4 * CHUNK as u64).collect();
        let split = timed_pass(&once, &distinct, None, &AtomicBool::new(false));
        assert_eq!((split.hit, split.mixed), ((0, 2 * CHUNK as u64), (0, 2 * CHUNK as u64)));
        assert!(distinct.iter().all(|k| once.get(k).is_some()));
        // Misses wait where the worker's core has nothing else to do meanwhile.
        let d = Duration::from_micros(5);
        let of = |spin, workers, mpl| Wait::of_point(d, spin, workers, mpl, 2);
        assert_eq!(of(true, Workers::Threads, 2), Some(Wait::Spin(d)));
        assert_eq!(of(false, Workers::Threads, 2), Some(Wait::Sleep(d)));
        assert_eq!(of(false, Workers::Threads, 8), None);
        assert_eq!(of(false, Workers::Loops, 1), Some(Wait::Spin(d)));
        assert_eq!(of(false, Workers::Loops, 72), None);
        // A pass makes fewer requests only where its waits would keep it long.
        assert_eq!(calibration_requests(None, 0.5), 1 << 18);
        assert_eq!(calibration_requests(Some(Wait::Spin(d)), 0.995), 1 << 18);
        let few = calibration_requests(Some(Wait::Sleep(d)), 0.5);
        assert!((1 << 12..1 << 18).contains(&few), "{few} requests");
        assert!(few as f64 * 0.25 * 65e-6 <= WAIT_BUDGET * 1.01, "{few} requests wait too long");
        // The costs: a hit at the lookup chunks' time per request; a miss at what the
        // read-through chunks took beyond their hits, never below a hit. Either way the
        // read-through chunks' time per request is the model's demand at their hit ratio.
        let split =
            Split { hit: (95, 5), hit_us: 10.0, mixed: (90, 10), mixed_us: 19.0, waited_us: 0.0 };
        let (hit, miss) = split.costs();
        assert!((hit - 0.1).abs() < 1e-12 && (miss - 1.0).abs() < 1e-12, "{hit} {miss}");
        assert!((0.9 * hit + 0.1 * miss - 19.0 / 100.0).abs() < 1e-12);
        let split = Split { mixed_us: 5.0, ..split };
        assert_eq!(split.costs(), (0.1, 0.1));
        let split = Split { mixed: (100, 0), ..split };
        assert_eq!(split.costs(), (0.1, 0.1));
        // Waits are taken out: 50 µs of waiting in 69 µs leaves the 19 µs above.
        let waiting = Split { mixed: (90, 10), mixed_us: 69.0, waited_us: 50.0, ..split };
        let (hit, miss) = waiting.costs();
        assert!((hit - 0.1).abs() < 1e-12 && (miss - 1.0).abs() < 1e-12, "{hit} {miss}");
    }

    #[test]
    fn the_calibration_replays_the_stream_at_its_steady_state() {
        // A stream whose steady state under a cache of 2,000 entries hits about 0.85.
        let stream: Arc<[u64]> = zipf_seq(12_000, 400_000, 5).into();
        let clock = || Subject::of(Policy::Clock, 2_000, 0.5).unwrap();
        let mut c = Calibrator::new(clock(), 2_000, stream.clone(), 2, 8_192).unwrap();
        // The fill ends at the stream's steady state, which a separate read-through replay
        // of the same cache size confirms.
        let twin = Subject::of(Policy::Clock, 2_000, 0.5).unwrap();
        let (steady, _, _) = prefill(&twin, &[&stream[..]]);
        assert!((c.hit() - steady).abs() < 0.02, "filled at {} against {steady}", c.hit());
        assert!((0.7..0.95).contains(&c.hit()), "{}", c.hit());
        // Each round takes the stream's next requests: a warming share of WARM_REQUESTS in
        // all (each at least a pass long) and one per pass for each thread, wrapping round at
        // the end.
        let at = c.at;
        let costs = c.round(2);
        let warm = WARM_REQUESTS;
        assert_eq!(c.at, (at + warm + PASSES * 2 * 4_096) % stream.len());
        assert!(costs.hit_us > 0.0 && costs.miss_us >= costs.hit_us, "{costs:?}");
        c.at = stream.len() - 10;
        c.round(1);
        assert_eq!(c.at, (warm + PASSES * 8_192 - 10) % stream.len());
        // Passes longer than the warm-up's share: the warm-up is a pass long.
        let mut long =
            Calibrator::new(clock(), 2_000, stream.clone(), 1, 2 * WARM_REQUESTS).unwrap();
        let at = long.at;
        long.round(1);
        assert_eq!(long.at, (at + (PASSES + 1) * 2 * WARM_REQUESTS) % stream.len());
        let Subject::Policy(cache) = &*c.cache else { unreachable!("a CLOCK cache") };
        assert!(cache.len() <= 2_000);
        assert!(Calibrator::new(clock(), 10, Vec::new().into(), 1, 10).is_err());
    }

    #[test]
    fn the_calibration_stream_is_drawn_apart_from_the_workers() {
        let seqs = sequences(5_000, 4);
        let stream = calibration_stream(5_000, &seqs);
        let total: usize = seqs.iter().map(Vec::len).sum();
        assert_eq!(stream.len(), total);
        assert!(stream.iter().all(|&k| (1..=5_000).contains(&k)));
        // No worker's sequence is replayed: at most chance agreement, position by position.
        for s in &seqs {
            let same = s.iter().zip(stream.iter()).filter(|(a, b)| a == b).count();
            assert!(same * 10 < s.len(), "{same} of {} positions agree", s.len());
        }
    }

    #[test]
    fn a_point_calibrates_the_workers_own_cache() {
        let stream: Arc<[u64]> = zipf_seq(12_000, 400_000, 5).into();
        let cache = Arc::new(Subject::of(Policy::Clock, 2_000, 0.5).unwrap());
        let (hit, _, _) = prefill(&cache, &[&stream[..]]);
        let Subject::Policy(workers) = &*cache else { unreachable!("a CLOCK cache") };
        let before = workers.stats();
        let mut c = Calibrator::on(cache.clone(), hit, stream.clone(), 2, 8_192).unwrap();
        // Left as the prefill left it: no fill of its own, the stream from its start.
        assert_eq!((c.hit(), c.at), (hit, 0));
        assert_eq!(workers.stats(), before);
        let costs = c.round(2);
        assert!(costs.hit_us > 0.0 && costs.miss_us >= costs.hit_us, "{costs:?}");
        // The round's lookups (its warm-up and its passes) and its read-through inserts went
        // to the workers' cache, which stays within its capacity.
        let after = workers.stats();
        let looked = (after.hits + after.misses) - (before.hits + before.misses);
        assert!(looked >= WARM_REQUESTS as u64 + 8_192, "{looked} lookups");
        assert!(after.inserts > before.inserts, "{before:?} -> {after:?}");
        assert!(workers.len() <= 2_000);
        assert!(Calibrator::on(cache, hit, Vec::new().into(), 1, 10).is_err());
    }

    #[test]
    fn loops_idle_per_miss_as_the_solved_model_says() {
        let d = Duration::from_micros(100);
        let us = |g: Option<Duration>| g.map(|g| g.as_secs_f64() * 1e6);
        // 1 request per µs on 2 loops, 10 % misses: each loop sees a miss every 20 µs and
        // idles half of the time, 10 µs per miss.
        let g = us(loop_idle_gap(1.0, 0.5, 0.9, 2, d)).expect("a gap");
        assert!((g - 10.0).abs() < 1e-6, "{g}");
        // Never longer than the backend wait.
        assert_eq!(us(loop_idle_gap(0.01, 0.1, 0.9, 2, d)), Some(100.0));
        // Saturated loops, nothing missing, and nonsense: no gap.
        assert_eq!(loop_idle_gap(1.0, 1.0, 0.9, 2, d), None);
        assert_eq!(loop_idle_gap(1.0, 0.5, 1.0, 2, d), None);
        assert_eq!(loop_idle_gap(f64::NAN, 0.5, 0.9, 2, d), None);
        assert_eq!(loop_idle_gap(0.0, 0.5, 0.9, 2, d), None);
    }

    #[test]
    fn loops_sharing_a_core_are_calibrated_with_their_idle_gaps() {
        let seqs: Vec<Vec<u64>> = (0..6).map(|t| zipf_seq(2_000, 20_011, t + 1)).collect();
        let backend = Duration::from_micros(200);
        // Three workers per loop: paced by the model's idle time per miss.
        let p = point("fifo", 2_000, 0.25, &seqs, backend, false, Workers::Loops, 0.05, 2)
            .expect("a point");
        assert!(p.idle_gap_us > 0.0 && p.idle_gap_us <= 200.0, "{p:?}");
        // A loop per worker waits the backend itself; threads are not paced.
        let p = point("fifo", 2_000, 0.25, &seqs[..2], backend, false, Workers::Loops, 0.05, 2)
            .expect("a point");
        assert_eq!(p.idle_gap_us, 0.0);
        let p = point("fifo", 2_000, 0.25, &seqs, backend, false, Workers::Threads, 0.05, 2)
            .expect("a point");
        assert_eq!(p.idle_gap_us, 0.0);
    }

    #[test]
    fn keys_for_hit_ratio_follow_the_harmonic_numbers() {
        // An ideal cache of the most popular keys: H(cap) / H(keys) = hit.
        let h = |n: u64| (1..=n).map(|i| 1.0 / i as f64).sum::<f64>();
        for (cap, hit) in [(1_000, 0.5), (10_000, 0.9), (50_000, 0.98)] {
            let keys = keys_for_hit(cap, hit);
            let got = h(cap) / h(keys);
            assert!((got - hit).abs() < 0.002, "{cap} at {hit}: {keys} keys give {got}");
        }
        // Bounds: more keys than the cache, and not beyond 2^40.
        assert_eq!(keys_for_hit(100, 1.0), 101);
        assert_eq!(keys_for_hit(100, 0.0), 1 << 40);
        assert_eq!(keys_for_hit(100, f64::NAN), 1 << 40);
    }

    #[test]
    fn calibration_threads_warm_once_and_live_for_every_pass() {
        use std::sync::atomic::AtomicUsize;
        let (threads, passes) = (3, 4);
        let warms = AtomicUsize::new(0);
        // How many threads have started each pass's work: a pass starts when all arrived.
        let started: Vec<AtomicUsize> = (0..passes).map(|_| AtomicUsize::new(0)).collect();
        let out = together(
            threads,
            passes,
            |_| {
                warms.fetch_add(1, Ordering::Relaxed);
            },
            |t, p, _done| {
                started[p].fetch_add(1, Ordering::Relaxed);
                // Every thread of the round is past the pass's start barrier, so a later
                // pass cannot have begun while this one's threads were still arriving.
                assert!(p == 0 || started[p - 1].load(Ordering::Relaxed) == threads);
                (t, p, std::thread::current().id())
            },
        );
        assert_eq!(warms.load(Ordering::Relaxed), threads, "one warm-up per thread");
        assert_eq!(out.len(), passes);
        for (p, pass) in out.iter().enumerate() {
            assert_eq!(pass.len(), threads);
            for (t, &(tt, pp, id)) in pass.iter().enumerate() {
                assert_eq!((tt, pp), (t, p), "results in thread order, per pass");
                // The thread that ran pass 0 for `t` runs its every pass.
                assert_eq!(id, out[0][t].2, "thread {t} replaced at pass {p}");
            }
        }
    }

    #[test]
    fn a_lock_is_waited_for_and_held_on_the_workers_core() {
        let c = |hit_us, miss_us| Costs { hit_us, miss_us };
        let cal = |h, m| Calibration { one: c(h, m), threads: 2, busy: c(h, m) };
        let (base, lru) = (cal(0.02, 0.2), cal(0.05, 0.3));
        let b = Backend { wait_us: 100.0, spin: false, overhead_us: 0.0 };
        let net = |name: &str, cal: &Calibration, w| {
            calibrated_network(name, cal, &base, 0.99, b, w, 2, 72)
        };
        // LRU's hit: its core taken for the CPU work and kept through the lock's wait and hold.
        let l = net("lru", &lru, Workers::Loops);
        assert_eq!(l.stations[1].name, "lock");
        let hit = &l.paths[0].steps;
        assert!(
            matches!(
                hit[..],
                [Step::Acquire(0), Step::Work(0, _), Step::Work(1, _), Step::Release(0)]
            ),
            "{hit:?}"
        );
        // Event loops' workers queue at their own loop; threads share the cores.
        assert!(l.stations[0].pinned);
        assert!(!net("lru", &lru, Workers::Threads).stations[0].pinned);
        // No lock, nothing held.
        let m = net("mobius", &base, Workers::Loops);
        assert_eq!(m.stations.len(), 1);
        assert!(m.paths.iter().flat_map(|p| &p.steps).all(|s| !matches!(s, Step::Acquire(_))));
        // Held on the core, the lock's holds take CPU time: the simulated model is slower and
        // its cores busier than with the lock beside the cores (the same network without
        // possession).
        let o = SimOptions { requests: 100_000, ..MODEL_SIM };
        let held = sifter_model::sim::simulate(&l, 72, &o).unwrap();
        let mut beside = l.clone();
        for p in &mut beside.paths {
            p.steps.retain(|s| !matches!(s, Step::Acquire(_) | Step::Release(_)));
        }
        let free = sifter_model::sim::simulate(&beside, 72, &o).unwrap();
        assert!(held.x < free.x * 0.95, "{} vs {}", held.x, free.x);
        assert!(held.u[0] > free.u[0], "{:?} vs {:?}", held.u, free.u);
    }

    #[test]
    fn prefill_reaches_the_steady_hit_ratio() {
        let seqs: Vec<Vec<u64>> = (0..2).map(|t| zipf_seq(2_000, 100_000, t + 1)).collect();
        let c = Subject::of(Policy::Lru, 1_000, 0.5).unwrap();
        let (h, n, at) = prefill(&c, &seqs);
        assert!((3 * PREFILL_WINDOW..=3 * 200_000).contains(&n), "{n}");
        // Round robin over the workers: each stands where its share of the replay ended.
        assert_eq!(at, vec![(n / 2) % 100_000; 2]);
        // A second prefill of the warm cache sees the same steady hit ratio.
        let (h2, _, _) = prefill(&c, &seqs);
        assert!((h - h2).abs() < 0.01 && h > 0.5, "{h} then {h2}");
    }
}

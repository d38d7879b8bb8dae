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
//! [`Experiment::run`] is the whole sweep (typed rows out, progress as [`Event`]s); the pieces
//! (calibration, prefill, the size search, one point) are public for the lab and for callers
//! that assemble their own experiment.

use anyhow::{bail, Context, Result};
use rand::SeedableRng;
use rand_distr::{Distribution, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;
use sifter::{Cache, Policy};
use sifter_model::network::{Dist, Network, Path, Station, Step};
use sifter_model::solve::mva;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Mean CPU cost of one hit and one miss (get + insert with its eviction) of a policy, µs.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Costs {
    /// A hit.
    pub hit_us: f64,
    /// A miss, excluding any backend wait.
    pub miss_us: f64,
}

/// The concurrent policy of a closed-loop name (`problru-mpl` is Prob-LRU with q = 1 − 1/MPL).
fn policy_of(name: &str) -> Result<Policy> {
    match name {
        "problru-mpl" => Ok(Policy::ProbLru),
        _ => name.parse::<Policy>().map_err(anyhow::Error::msg),
    }
}

/// Prob-LRU's q (the probability that a hit skips the list update) for `name` at `mpl` workers:
/// 0.5 for `problru`, 1 − 1/MPL for `problru-mpl` (the paper's choice: about one worker at a
/// time promotes); the builder's default for the other policies (unused by them).
pub fn skip_q(name: &str, mpl: usize) -> f64 {
    match name {
        "problru-mpl" => 1.0 - 1.0 / mpl.max(1) as f64,
        _ => 0.5,
    }
}

fn zipf_seq(keys: u64, n: usize, seed: u64) -> Vec<u64> {
    let z = Zipf::new(keys as f64, 1.0).expect("valid zipf");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n).map(|_| z.sample(&mut rng) as u64).collect()
}

/// Measures hit and miss costs of `policy` single-threaded: a warm cache of `cap` entries,
/// hits on resident keys, misses on keys never seen (each evicts one entry).
/// `q`: Prob-LRU's skip probability (see [`skip_q`]).
pub fn calibrate(policy: Policy, q: f64, cap: u64, rounds: usize) -> Costs {
    let c: Cache<u64, u64> =
        Cache::builder().capacity(cap).policy(policy).promotion_skip(q).build();
    for k in 0..cap {
        c.insert(k, k);
    }
    let seq = zipf_seq(cap, 1 << 20, 9);
    let mut hit = f64::MAX;
    let mut miss = f64::MAX;
    let mut fresh = cap;
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        let mut found = 0u64;
        for &k in &seq {
            found += c.get(&(k - 1)).is_some() as u64;
        }
        std::hint::black_box(found);
        hit = hit.min(t.elapsed().as_secs_f64() * 1e6 / seq.len() as f64);
        let n = 200_000u64;
        let t = Instant::now();
        for k in fresh..fresh + n {
            if c.get(&k).is_none() {
                c.insert(k, k);
            }
        }
        fresh += n;
        miss = miss.min(t.elapsed().as_secs_f64() * 1e6 / n as f64);
        // put the popular keys back so the next hit round hits
        for k in 0..cap {
            c.insert(k, k);
        }
    }
    Costs { hit_us: hit, miss_us: miss }
}

/// The calibrated model: CPU work as a `cores`-server station, the backend as a delay, and for
/// LRU the per-hit list update as a single-server lock station (its cost is the hit cost above
/// the lock-free policies'); SIEVE's lock holds its misses' list work likewise.
/// With `spin`, the backend wait busy-waits on a core, so it is CPU work rather than a delay.
pub fn calibrated_network(
    name: &str,
    costs: &Costs,
    base: &Costs,
    hit: f64,
    backend_us: f64,
    spin: bool,
    cores: u32,
) -> Network {
    let mut stations =
        vec![Station { name: "cpu".into(), service: 0.0, servers: cores, dist: Dist::Exp }];
    let mut lock = |us: f64| -> Option<usize> {
        (us > 0.0).then(|| {
            stations.push(Station {
                name: "lock".into(),
                service: us,
                servers: 1,
                dist: Dist::Exp,
            });
            stations.len() - 1
        })
    };
    let (hit_lock, miss_lock) = match name {
        // Prob-LRU: the calibrated mean hit cost already holds the lock on half the hits; the
        // station carries that mean demand.
        "lru" | "problru" | "problru-mpl" => {
            ((costs.hit_us - base.hit_us).max(0.0), (costs.miss_us - base.miss_us).max(0.0))
        }
        "sieve" => (0.0, (costs.miss_us - base.miss_us).max(0.0)),
        _ => (0.0, 0.0),
    };
    let lk = lock(hit_lock.max(miss_lock));
    let mut hit_steps = vec![Step::Work(0, costs.hit_us - hit_lock)];
    let backend = if spin { Step::Work(0, backend_us) } else { Step::Think(backend_us) };
    let mut miss_steps = vec![Step::Work(0, costs.miss_us - miss_lock), backend];
    if let Some(l) = lk {
        if hit_lock > 0.0 {
            hit_steps.push(Step::Work(l, hit_lock));
        }
        if miss_lock > 0.0 {
            miss_steps.push(Step::Work(l, miss_lock));
        }
    }
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
    /// Hit ratio of the last window of the prefill (steady state), and requests replayed.
    pub prefill_hit: f64,
    pub prefill_requests: usize,
}

/// Requests per window of the steady-state check.
const PREFILL_WINDOW: usize = 100_000;

/// Warms `cache` to steady state before a measurement: replays the workers' sequences
/// interleaved, single-threaded and without the backend wait (a miss just inserts), in windows
/// of [`PREFILL_WINDOW`] requests, until the hit ratio of two consecutive windows differs by
/// less than 0.002 (or three passes over the sequences). Returns the last window's hit ratio
/// and the requests replayed.
pub fn prefill(cache: &Cache<u64, u64>, seqs: &[Vec<u64>]) -> (f64, usize) {
    let total: usize = seqs.iter().map(Vec::len).sum();
    let limit = 3 * total.max(1);
    let mut pos = vec![0usize; seqs.len()];
    let (mut done, mut last, mut stable) = (0usize, f64::NAN, 0);
    let mut w = 0usize;
    loop {
        let mut hits = 0usize;
        for _ in 0..PREFILL_WINDOW {
            let t = w % seqs.len();
            w += 1;
            let seq = &seqs[t];
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
            return (h, done);
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
        _ => return None,
    })
}

/// The smallest cache (entries) whose hit ratio on `trace`, by the simulator's twin of
/// `policy` at `mpl` workers, reaches `target`, and that hit ratio; `None` if even all keys do
/// not reach it.
pub fn size_for_hit_ratio(
    policy: &str,
    target: f64,
    trace: &sifter_sim::trace::LoadedTrace,
    mpl: usize,
) -> Result<Option<(u64, f64)>> {
    use sifter_sim::registry::PolicySpec;
    use sifter_sim::runner::{simulate, CacheSize};
    let spec =
        PolicySpec::parse(&twin(policy, mpl).with_context(|| {
            format!("{policy}: no simulator policy to size it by (use --sizes)")
        })?)?;
    let hit_at = |cap: u64| -> Result<f64> {
        let r = simulate(trace, &spec, CacheSize::Absolute(cap), false, 0, &|_| {})?;
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

/// Runs `mpl` workers for `secs` against `cache`; each miss waits `backend` (sleep or spin).
pub fn run(
    cache: &Cache<u64, u64>,
    seqs: &[Vec<u64>],
    backend: Duration,
    spin: bool,
    secs: f64,
) -> Measured {
    let (prefill_hit, prefill_requests) = prefill(cache, seqs);
    let stop = AtomicBool::new(false);
    let warm = AtomicBool::new(true);
    let res: Vec<(u64, u64, f64)> = std::thread::scope(|s| {
        let hs: Vec<_> = seqs
            .iter()
            .map(|seq| {
                let (stop, warm) = (&stop, &warm);
                s.spawn(move || {
                    let (mut reqs, mut hits, mut waited) = (0u64, 0u64, 0.0f64);
                    let mut counting = false;
                    let mut i = 0;
                    // Relaxed: the flags only end phases.
                    while !stop.load(Ordering::Relaxed) {
                        if !counting && !warm.load(Ordering::Relaxed) {
                            counting = true;
                            (reqs, hits, waited) = (0, 0, 0.0);
                        }
                        let k = seq[i];
                        i = if i + 1 == seq.len() { 0 } else { i + 1 };
                        if cache.get(&k).is_some() {
                            hits += 1;
                        } else {
                            let t = Instant::now();
                            if spin {
                                while t.elapsed() < backend {
                                    std::hint::spin_loop();
                                }
                            } else {
                                std::thread::sleep(backend);
                            }
                            waited += t.elapsed().as_secs_f64();
                            cache.insert(k, k);
                        }
                        reqs += 1;
                    }
                    (reqs, hits, waited)
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(secs * 0.3));
        warm.store(false, Ordering::Relaxed);
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_secs_f64(secs));
        stop.store(true, Ordering::Relaxed);
        let el = t0.elapsed().as_secs_f64();
        let r: Vec<(u64, u64, f64)> = hs.into_iter().map(|h| h.join().expect("worker")).collect();
        r.into_iter().map(|(reqs, hits, w)| (reqs, hits, w / el)).collect()
    });
    // Each worker's counts cover the measured window (it stops within one request of `stop`).
    let reqs: u64 = res.iter().map(|r| r.0).sum();
    let hits: u64 = res.iter().map(|r| r.1).sum();
    let misses = reqs.saturating_sub(hits).max(1);
    let waited_per_sec: f64 = res.iter().map(|r| r.2).sum();
    Measured {
        x: reqs as f64 / secs / 1e6,
        hit: hits as f64 / reqs.max(1) as f64,
        wait_us: waited_per_sec * secs * 1e6 / misses as f64,
        prefill_hit,
        prefill_requests,
    }
}

/// One point of the sweep: the measurement and the calibrated model's prediction (Mops/s).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Point {
    /// What was measured.
    pub measured: Measured,
    /// Mean backend wait given to the model, µs.
    pub wait_us: f64,
    /// The model's throughput, requests per µs.
    pub model: f64,
}

/// Measures one policy at one cache size and predicts it with the calibrated model.
#[allow(clippy::too_many_arguments)]
pub fn point(
    name: &str,
    keys: u64,
    size: f64,
    seqs: &[Vec<u64>],
    backend: Duration,
    spin: bool,
    secs: f64,
    cores: u32,
) -> Result<Point> {
    let policy = policy_of(name)?;
    let q = skip_q(name, seqs.len());
    let cap = ((keys as f64 * size).round() as u64).max(10);
    // Costs depend on the cache size (memory footprint), so calibrate at this size; the
    // lock-free Mobius is the base that lock costs are measured against.
    let base = calibrate(Policy::Mobius, q, cap, 3);
    let costs = if policy == Policy::Mobius { base } else { calibrate(policy, q, cap, 3) };
    let cache: Cache<u64, u64> =
        Cache::builder().capacity(cap).policy(policy).promotion_skip(q).build();
    let measured = run(&cache, seqs, backend, spin, secs);
    let wait_us = if spin { backend.as_secs_f64() * 1e6 } else { measured.wait_us };
    let net = calibrated_network(name, &costs, &base, measured.hit, wait_us, spin, cores);
    let model = mva(&net, seqs.len() as u32).x;
    Ok(Point { measured, wait_us, model })
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

/// Zipf(1.0) request sequences, one per worker: 2^20 requests each up to 8 workers, then 8 ×
/// 2^20 shared out (at least 2^16 each), so 72 workers do not need 72 × 8 MB.
pub fn sequences(keys: u64, workers: usize) -> Vec<Vec<u64>> {
    let len = ((8usize << 20) / workers.max(1)).clamp(1 << 16, 1 << 20);
    (0..workers).map(|t| zipf_seq(keys, len, t as u64 + 1)).collect()
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
    /// (q = 1 − 1/MPL), fifo, clock, s3fifo, nbq-clock.
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
    /// Cores for the model's CPU station.
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
            policy_of(name)?;
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
        "policy,mpl,backend_us,target_hit,size,prefill_requests,prefill_hit,hit_ratio,measured_mops,model_mops,error,wait_us\n",
    );
    for r in rows {
        let m = &r.point.measured;
        let target = r.target.map_or("-".to_string(), |t| format!("{t}"));
        csv.push_str(&format!(
            "{},{},{},{target},{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.2}\n",
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
            r.point.wait_us
        ));
    }
    csv
}

#[cfg(test)]
mod size_search_tests {
    use super::*;
    use sifter_sim::registry::PolicySpec;
    use sifter_sim::runner::{simulate, CacheSize};

    #[test]
    fn the_size_found_is_the_smallest_that_reaches_the_target() {
        let seqs: Vec<Vec<u64>> = (0..2).map(|t| zipf_seq(5_000, 50_000, t + 1)).collect();
        let trace = stream_trace(&seqs).expect("load");
        let hit = |p: &str, cap: u64| {
            let r = simulate(
                &trace,
                &PolicySpec::parse(p).expect("spec"),
                CacheSize::Absolute(cap),
                false,
                0,
                &|_| {},
            )
            .expect("sim");
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
        // Beyond what all keys give: None, not a wrong size.
        assert_eq!(size_for_hit_ratio("lru", 0.9999, &trace, 8).expect("search"), None);
        assert!(size_for_hit_ratio("multistep", 0.5, &trace, 8).is_err(), "no twin: an error");
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
    fn prefill_reaches_the_steady_hit_ratio() {
        let seqs: Vec<Vec<u64>> = (0..2).map(|t| zipf_seq(2_000, 100_000, t + 1)).collect();
        let c: Cache<u64, u64> = Cache::builder().capacity(1_000).policy(Policy::Lru).build();
        let (h, n) = prefill(&c, &seqs);
        assert!((3 * PREFILL_WINDOW..=3 * 200_000).contains(&n), "{n}");
        // A second prefill of the warm cache sees the same steady hit ratio.
        let (h2, _) = prefill(&c, &seqs);
        assert!((h - h2).abs() < 0.01 && h > 0.5, "{h} then {h2}");
    }
}

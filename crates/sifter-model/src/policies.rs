//! Built-in networks of cache policies, with the service times (µs) that Qiu, Yang and
//! Harchol-Balter measured for their CacheLib implementation ("Can increasing the hit ratio
//! hurt cache throughput?", and their simulator `CacheThputSim`; see
//! `../shared/design/reference-implementations.md` §2) as defaults. Every service time can be
//! overridden by station name (`sifter model ... --set delink=0.8`), e.g. with the values
//! `sifter model calibrate` measures for sifter's own code.
//!
//! | policy | hit path | miss path (after lookup + disk) |
//! |---|---|---|
//! | `lru` | delink (0.7) → head (0.59) | tail (0.59) → head (0.59) |
//! | `lru-global` | one global lock (0.9) | the lock (0.95); think 0.5 instead of 0.51 |
//! | `problru` (q) | with prob. 1−q: delink (0.81) → head (0.73); else nothing | tail (0.64) → head (0.73) |
//! | `fifo` | nothing | tail (0.64) → head (0.73) |
//! | `clock` | nothing (a bit) | tail (0.65 + 0.3·g(p)) |
//! | `slru` | protected: delink-h (0.7) → head-h (0.59); probationary: delink-l (0.7) → head-h (0.59) | tail-l (0.59) → head-l (0.59) |
//! | `s3fifo` (p1, p2) | nothing | 2nd lookup (0.51); ghost hit p1: head-m → tail-m; else head-s → tail-s, then with p2 head-m → tail-m (0.65 each; tail-m 0.65 + 0.3·g(p)) |
//! | `sieve` | nothing (a bit, no lock) | one lock for insert + hand (0.65 + 0.65 + 0.3·g(p)) |
//! | `mobius` | nothing (a bit) | tail swap (0.1) and head CAS (0.1), scanning outside any queue (0.3·g(p) think) |
//!
//! `g(p) = 2.43e-5·exp(11.24 p) + 0.187` is the paper's fit of the mean number of second-chance
//! reinsertions per eviction. Derived (not measured by the paper, stated as our assumptions):
//! SIEVE's lock holds insert and the hand scan; Mobius serialises only on the two pointer
//! updates (one CAS and one swap of a shared cache line, ~0.1 µs each) and scans lock-free. The
//! S3-FIFO probabilities p1/p2 are parameters (the paper fits them per trace; defaults 0.1/0.3).

use crate::network::{Dist, Network, Path, Station, Step};

/// Parameters of a built-in network.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// Hit ratio.
    pub hit: f64,
    /// Mean disk (backend) latency on a miss, µs.
    pub disk_us: f64,
    /// Lookup (hash) time, µs.
    pub lookup_us: f64,
    /// Probabilistic LRU: probability that a hit skips the list update.
    pub q: f64,
    /// S3-FIFO: ghost-hit probability among misses.
    pub p1: f64,
    /// S3-FIFO: probability an object was re-accessed while in the small queue.
    pub p2: f64,
    /// Service-time overrides by station name.
    pub overrides: Vec<(String, f64)>,
    /// Model the CPU work (lookup, scans) as a station with this many servers instead of as
    /// think time (`None`: infinitely many cores).
    pub cpu_servers: Option<u32>,
    /// Service-time distribution of the stations (for the simulation).
    pub dist: Dist,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            hit: 0.9,
            disk_us: 100.0,
            lookup_us: 0.51,
            q: 0.5,
            p1: 0.1,
            p2: 0.3,
            overrides: Vec::new(),
            cpu_servers: None,
            dist: Dist::Exp,
        }
    }
}

/// The paper's fit of reinsertions per eviction, g(p).
pub fn g(p: f64) -> f64 {
    2.43e-5 * (11.24 * p).exp() + 0.187
}

/// Names of the built-in networks.
pub const POLICIES: &[&str] =
    &["lru", "lru-global", "problru", "fifo", "clock", "slru", "s3fifo", "sieve", "mobius"];

struct Builder<'a> {
    p: &'a Params,
    stations: Vec<Station>,
    cpu: Option<usize>,
}

impl Builder<'_> {
    fn station(&mut self, name: &str, default: f64) -> usize {
        let service =
            self.p.overrides.iter().rev().find(|(k, _)| k == name).map_or(default, |(_, v)| *v);
        self.stations.push(Station::new(name, service, 1, self.p.dist));
        self.stations.len() - 1
    }

    /// CPU work: think time, or a visit to the CPU station.
    fn cpu_work(&mut self, us: f64, steps: &mut Vec<Step>) {
        match self.cpu {
            Some(c) if us > 0.0 => steps.push(Step::Work(c, us)),
            _ => steps.push(Step::Think(us)),
        }
    }
}

/// Builds the network of `policy` with `p`.
pub fn build(policy: &str, p: &Params) -> Result<Network, String> {
    if !(0.0..=1.0).contains(&p.hit) {
        return Err(format!("hit ratio {} is not in [0, 1]", p.hit));
    }
    if !(p.disk_us >= 0.0 && p.lookup_us >= 0.0) {
        return Err("latencies must be non-negative".into());
    }
    let mut b = Builder { p, stations: Vec::new(), cpu: None };
    if let Some(c) = p.cpu_servers {
        if c == 0 {
            return Err("cpu servers must be at least 1".into());
        }
        b.stations.push(Station::new("cpu", 0.0, c, p.dist));
        b.cpu = Some(0);
    }
    let h = p.hit;
    let mut paths = Vec::new();
    let lookup = p.lookup_us;
    let mut path =
        |b: &mut Builder<'_>, label: &str, prob: f64, cpu_us: f64, disk: bool, visits: &[usize]| {
            let mut steps = Vec::new();
            b.cpu_work(cpu_us, &mut steps);
            if disk {
                steps.push(Step::Think(p.disk_us));
            }
            steps.extend(visits.iter().map(|&k| Step::Visit(k)));
            if prob > 0.0 {
                paths.push(Path { label: label.into(), prob, steps });
            }
        };
    match policy {
        "lru" => {
            let (delink, head, tail) =
                (b.station("delink", 0.7), b.station("head", 0.59), b.station("tail", 0.59));
            path(&mut b, "hit", h, lookup, false, &[delink, head]);
            path(&mut b, "miss", 1.0 - h, lookup, true, &[tail, head]);
        }
        "lru-global" => {
            let hit_lock = b.station("lock-hit", 0.9);
            let miss_lock = b.station("lock-miss", 0.95);
            // One lock: merge the two service classes into one station with the mixed mean.
            let mean = h * b.stations[hit_lock].service + (1.0 - h) * b.stations[miss_lock].service;
            b.stations.truncate(hit_lock);
            let lock = b.station("lock", mean);
            path(&mut b, "hit", h, 0.5, false, &[lock]);
            path(&mut b, "miss", 1.0 - h, 0.5, true, &[lock]);
        }
        "problru" | "fifo" => {
            let q = if policy == "fifo" { 1.0 } else { p.q };
            if !(0.0..=1.0).contains(&q) {
                return Err(format!("q = {q} is not in [0, 1]"));
            }
            let (delink, head, tail) =
                (b.station("delink", 0.81), b.station("head", 0.73), b.station("tail", 0.64));
            path(&mut b, "hit-promote", h * (1.0 - q), lookup, false, &[delink, head]);
            path(&mut b, "hit", h * q, lookup, false, &[]);
            path(&mut b, "miss", 1.0 - h, lookup, true, &[tail, head]);
        }
        "clock" => {
            let tail = b.station("tail", 0.65 + 0.3 * g(h));
            path(&mut b, "hit", h, lookup, false, &[]);
            path(&mut b, "miss", 1.0 - h, lookup, true, &[tail]);
        }
        "slru" => {
            let prot = (-0.1158 * h * h + 1.0112 * h - 0.0009).clamp(0.0, h);
            let (dh, dl, tl, hl, hh) = (
                b.station("delink-h", 0.7),
                b.station("delink-l", 0.7),
                b.station("tail-l", 0.59),
                b.station("head-l", 0.59),
                b.station("head-h", 0.59),
            );
            path(&mut b, "hit-protected", prot, lookup, false, &[dh, hh]);
            path(&mut b, "hit-probationary", h - prot, lookup, false, &[dl, hh]);
            path(&mut b, "miss", 1.0 - h, lookup, true, &[tl, hl]);
        }
        "s3fifo" => {
            if !(0.0..=1.0).contains(&p.p1) || !(0.0..=1.0).contains(&p.p2) {
                return Err("p1 and p2 must be probabilities".into());
            }
            let (hm, tm, hs, ts) = (
                b.station("head-m", 0.65),
                b.station("tail-m", 0.65 + 0.3 * g(h)),
                b.station("head-s", 0.65),
                b.station("tail-s", 0.65),
            );
            let m = 1.0 - h;
            path(&mut b, "hit", h, lookup, false, &[]);
            path(&mut b, "miss-ghost", m * p.p1, 2.0 * lookup, true, &[hm, tm]);
            path(
                &mut b,
                "miss-small-promote",
                m * (1.0 - p.p1) * p.p2,
                2.0 * lookup,
                true,
                &[hs, ts, hm, tm],
            );
            path(
                &mut b,
                "miss-small",
                m * (1.0 - p.p1) * (1.0 - p.p2),
                2.0 * lookup,
                true,
                &[hs, ts],
            );
        }
        "sieve" => {
            let lock = b.station("lock", 0.65 + 0.65 + 0.3 * g(h));
            path(&mut b, "hit", h, lookup, false, &[]);
            path(&mut b, "miss", 1.0 - h, lookup, true, &[lock]);
        }
        "mobius" => {
            let (head, tail) = (b.station("head-cas", 0.1), b.station("tail-swap", 0.1));
            path(&mut b, "hit", h, lookup, false, &[]);
            path(&mut b, "miss", 1.0 - h, lookup + 0.3 * g(h), true, &[head, tail]);
        }
        _ => return Err(format!("unknown policy '{policy}' (known: {})", POLICIES.join(", "))),
    }
    let mut net = Network { name: policy.into(), stations: b.stations, paths };
    if let Some(c) = b.cpu {
        // The CPU station's nominal mean: demand per visit (paths give their own means).
        let (d, v) = (net.demands()[c], net.visits()[c]);
        net.stations[c].service = if v > 0.0 { d / v } else { 0.0 };
    }
    for (k, _) in &p.overrides {
        if !net.stations.iter().any(|s| &s.name == k) {
            return Err(format!(
                "policy '{policy}' has no station '{k}' (stations: {})",
                net.stations.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    net.check()?;
    Ok(net)
}

//! Solvers: asymptotic bounds, exact Mean Value Analysis, and p*.

use crate::network::Network;
use serde::Serialize;

/// The asymptotic bound X ≤ min(N / (D + Z), 1 / D_max) (Harchol-Balter, Theorem 7.1), with
/// multi-server stations contributing D_k / c_k to the bottleneck term.
#[derive(Debug, Clone, Serialize)]
pub struct Bound {
    /// The bound on throughput (requests per µs = Mops/s).
    pub x: f64,
    /// N / (D + Z).
    pub population_term: f64,
    /// 1 / D_max.
    pub bottleneck_term: f64,
    /// The bottleneck station.
    pub bottleneck: String,
    /// Total demand D.
    pub demand: f64,
    /// Mean think time Z.
    pub think: f64,
}

/// Computes the bound for `n` concurrent requests.
pub fn bound(net: &Network, n: u32) -> Bound {
    let d = net.demands();
    let z = net.think();
    let total: f64 = d.iter().sum();
    let (mut dmax, mut name) = (0.0f64, String::from("none"));
    for (k, s) in net.stations.iter().enumerate() {
        // A load-dependent station at its busiest: every server occupied, the slowdown of a
        // full station (the most requests it can hold).
        let per_server = d[k] * s.slowdown_at(usize::MAX) / s.servers as f64;
        if per_server > dmax {
            dmax = per_server;
            name = s.name.clone();
        }
    }
    let pop = n as f64 / (total + z);
    let bot = if dmax > 0.0 { 1.0 / dmax } else { f64::INFINITY };
    Bound {
        x: pop.min(bot),
        population_term: pop,
        bottleneck_term: bot,
        bottleneck: name,
        demand: total,
        think: z,
    }
}

/// Result of MVA.
#[derive(Debug, Clone, Serialize)]
pub struct Mva {
    /// Throughput (requests per µs).
    pub x: f64,
    /// Mean response time per request excluding think time (µs).
    pub r: f64,
    /// Per-station mean queue length.
    pub q: Vec<f64>,
    /// Per-station utilisation (per server).
    pub u: Vec<f64>,
}

/// Exact MVA for a single-class closed product-form network with `n` requests: single-server
/// FCFS stations with exponential service, multi-server and load-dependent stations (rate
/// min(j, c) / (S · slowdown(j)) with j present, see [`Station::slowdown`]), and think time as
/// a delay station. (Reiser & Lavenberg 1980; the load-dependent recursion tracks each such
/// station's marginal queue-length distribution.)
///
/// [`Station::slowdown`]: crate::network::Station::slowdown
pub fn mva(net: &Network, n: u32) -> Mva {
    let d = net.demands();
    let z = net.think();
    let k = d.len();
    let c: Vec<u32> = net.stations.iter().map(|s| s.servers).collect();
    let plain: Vec<bool> =
        net.stations.iter().map(|s| s.servers == 1 && s.slowdown.is_empty()).collect();
    // Mean time per visit-demand with j requests present: D · slowdown(j) / min(j, c).
    let per =
        |i: usize, j: usize| d[i] * net.stations[i].slowdown_at(j) / (j.min(c[i] as usize) as f64);
    let mut q = vec![0.0; k];
    // Marginal probabilities p_k(j) for load-dependent stations.
    let mut marg: Vec<Vec<f64>> = (0..k).map(|_| vec![1.0]).collect();
    let mut x = 0.0;
    let mut r_tot = 0.0;
    for pop in 1..=n as usize {
        let mut r = vec![0.0; k];
        for i in 0..k {
            if plain[i] {
                r[i] = d[i] * (1.0 + q[i]);
            } else {
                // R = Σ_{j=1..pop} j · per(j) · p(j−1 | pop−1)
                r[i] = (1..=pop)
                    .map(|j| j as f64 * per(i, j) * marg[i].get(j - 1).copied().unwrap_or(0.0))
                    .sum();
            }
        }
        r_tot = r.iter().sum();
        x = pop as f64 / (z + r_tot);
        for i in 0..k {
            q[i] = x * r[i];
            if !plain[i] {
                let mut next = vec![0.0; pop + 1];
                for j in 1..=pop {
                    next[j] = per(i, j) * x * marg[i].get(j - 1).copied().unwrap_or(0.0);
                }
                next[0] = (1.0 - next[1..].iter().sum::<f64>()).max(0.0);
                marg[i] = next;
            }
        }
    }
    // Utilisation per server: the probability-weighted busy servers over c.
    let u = (0..k)
        .map(|i| {
            if plain[i] {
                x * d[i]
            } else {
                marg[i]
                    .iter()
                    .enumerate()
                    .map(|(j, p)| p * j.min(c[i] as usize) as f64)
                    .sum::<f64>()
                    / c[i] as f64
            }
        })
        .collect();
    Mva { x, r: r_tot, q, u }
}

/// The hit ratio at which throughput peaks — beyond it, a higher hit ratio lowers throughput —
/// and the throughput there. Found on a grid of `steps` points, then refined: golden-section
/// search for the maximum near the best grid point, then bisection for the end of a plateau
/// (the bound of LRU is flat until the delink station becomes the bottleneck, and p* is where
/// it starts to fall). Returns `(1.0, X(1))` when throughput never falls.
pub fn pstar(x_of: impl Fn(f64) -> f64, steps: usize) -> (f64, f64) {
    let steps = steps.max(10);
    let xs: Vec<f64> = (0..=steps).map(|i| x_of(i as f64 / steps as f64)).collect();
    let max = xs.iter().copied().fold(f64::MIN, f64::max);
    let near = |v: f64, m: f64| v >= m * (1.0 - 1e-9);
    let i = xs.iter().rposition(|&v| near(v, max)).unwrap_or(steps);
    if i == steps {
        return (1.0, xs[steps]);
    }
    let (mut a, mut b) = (i.saturating_sub(1) as f64 / steps as f64, (i + 1) as f64 / steps as f64);
    let hi = b;
    let phi = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..100 {
        let (c, d) = (b - phi * (b - a), a + phi * (b - a));
        if x_of(c) < x_of(d) {
            a = c;
        } else {
            b = d;
        }
    }
    let pm = 0.5 * (a + b);
    let xm = x_of(pm).max(max);
    let (mut lo, mut up) = (pm.min(i as f64 / steps as f64), hi);
    if !near(x_of(lo), xm) {
        lo = pm;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + up);
        if near(x_of(mid), xm) {
            lo = mid;
        } else {
            up = mid;
        }
    }
    (lo, x_of(lo))
}

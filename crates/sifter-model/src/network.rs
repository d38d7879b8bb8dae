//! Closed queueing networks of a cache: stations, request paths, demands.
//!
//! A request follows one of several **paths** (chosen at random with the path's probability —
//! hit or miss, promoted or not, ...). A path is a sequence of steps: a **think** delay (work
//! every core can do at once: hashing, the disk), or a visit to a **queueing station** (a
//! shared structure that serves one request at a time: a list lock, a head pointer, ...). The
//! network is closed: `N` requests (the multiprogramming level, one per thread) circulate
//! forever, each starting a new request when it finishes.
//!
//! From the paths follow the quantities of operational analysis (Harchol-Balter, *Performance
//! Modeling and Design of Computer Systems*, ch. 6–7): the mean think time `Z` per request and
//! the demand `D_k = V_k · S_k` at each station (visits per request × mean service time).

use serde::Serialize;

/// Service-time distribution of a station (its mean is the station's `service`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Dist {
    /// Exponential (product form: MVA is exact).
    Exp,
    /// Always the mean.
    Det,
    /// Uniform on [0, 2·mean].
    Uniform,
}

/// A queueing station.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Station {
    /// Name (e.g. `delink`).
    pub name: String,
    /// Mean service time (µs).
    pub service: f64,
    /// Servers (1 = a lock or a single pointer; 2 = e.g. a 2-core CPU).
    pub servers: u32,
    /// Service distribution (for the simulation).
    pub dist: Dist,
    /// Load dependence: `slowdown[j - 1]` multiplies every service time at the station while
    /// `j` requests are there (the last entry for more; empty: 1, a load-independent
    /// station). A CPU whose cores slow each other down (shared caches, hyperthreads, a
    /// hypervisor), or a lock whose hand-off between cores lengthens its hold time, is such
    /// a station.
    pub slowdown: Vec<f64>,
    /// Each request uses one server only, its own (request `i` of the `N` in circulation uses
    /// server `i % servers`, with a queue of its own): event loops, whose workers are fixed to
    /// a loop. Only [`simulate`](crate::sim::simulate) honours it; the other solvers pool the
    /// servers.
    pub pinned: bool,
}

impl Station {
    /// A load-independent station.
    pub fn new(name: &str, service: f64, servers: u32, dist: Dist) -> Self {
        Station { name: name.into(), service, servers, dist, slowdown: Vec::new(), pinned: false }
    }

    /// The service-time multiplier with `j` requests at the station (1 when there is none).
    pub fn slowdown_at(&self, j: usize) -> f64 {
        match self.slowdown.len() {
            0 => 1.0,
            n => self.slowdown[j.clamp(1, n) - 1],
        }
    }
}

/// One step of a path.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Step {
    /// A delay every request can do concurrently (µs, deterministic).
    Think(f64),
    /// A visit to station `k` with its mean service time.
    Visit(usize),
    /// A visit to station `k` with this path-specific mean service time (µs), e.g. CPU work.
    Work(usize, f64),
    /// Takes a server of station `k` (queueing for it like a visit) and keeps it until
    /// [`Step::Release`]`(k)`: the steps in between run while the request holds it —
    /// *simultaneous possession*, as when an event loop or a thread keeps its core while it
    /// waits for a lock and holds it. A visit to `k` while holding it is served by the held server,
    /// without queueing. Only [`simulate`](crate::sim::simulate) honours possession; the other
    /// solvers count a held station's visits as plain visits (so [`bound`] stays an upper
    /// bound) and the holding itself as nothing.
    ///
    /// [`bound`]: crate::solve::bound
    Acquire(usize),
    /// Gives back the server of station `k` taken by [`Step::Acquire`]`(k)`.
    Release(usize),
}

/// A path and its probability.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Path {
    /// Label (`hit`, `miss`, ...).
    pub label: String,
    /// Probability of taking this path.
    pub prob: f64,
    /// The steps in order.
    pub steps: Vec<Step>,
}

/// A closed network.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Network {
    /// Description.
    pub name: String,
    /// Queueing stations.
    pub stations: Vec<Station>,
    /// Paths (probabilities sum to 1).
    pub paths: Vec<Path>,
}

impl Network {
    /// Mean think time per request.
    pub fn think(&self) -> f64 {
        self.paths
            .iter()
            .map(|p| {
                p.prob
                    * p.steps
                        .iter()
                        .map(|s| if let Step::Think(t) = s { *t } else { 0.0 })
                        .sum::<f64>()
            })
            .sum()
    }

    /// Visits per request to each station.
    pub fn visits(&self) -> Vec<f64> {
        let mut v = vec![0.0; self.stations.len()];
        for p in &self.paths {
            for s in &p.steps {
                if let Step::Visit(k) | Step::Work(k, _) = s {
                    v[*k] += p.prob;
                }
            }
        }
        v
    }

    /// Demand per request at each station (µs).
    pub fn demands(&self) -> Vec<f64> {
        let mut d = vec![0.0; self.stations.len()];
        for p in &self.paths {
            for s in &p.steps {
                match *s {
                    Step::Visit(k) => d[k] += p.prob * self.stations[k].service,
                    Step::Work(k, us) => d[k] += p.prob * us,
                    Step::Think(_) | Step::Acquire(_) | Step::Release(_) => {}
                }
            }
        }
        d
    }

    /// Checks probabilities and references.
    pub fn check(&self) -> Result<(), String> {
        let total: f64 = self.paths.iter().map(|p| p.prob).sum();
        if (total - 1.0).abs() > 1e-9 {
            return Err(format!("{}: path probabilities sum to {total}, not 1", self.name));
        }
        for p in &self.paths {
            if !(0.0..=1.0 + 1e-12).contains(&p.prob) {
                return Err(format!("{}: path {} has probability {}", self.name, p.label, p.prob));
            }
            let mut held = Vec::new();
            for s in &p.steps {
                match *s {
                    Step::Visit(k) | Step::Work(k, _) | Step::Acquire(k) | Step::Release(k)
                        if k >= self.stations.len() =>
                    {
                        return Err(format!(
                            "{}: path {} visits station {k}, which does not exist",
                            self.name, p.label
                        ))
                    }
                    Step::Think(t) if !(t >= 0.0 && t.is_finite()) => {
                        return Err(format!("{}: negative or infinite think time", self.name))
                    }
                    Step::Work(_, us) if !(us >= 0.0 && us.is_finite()) => {
                        return Err(format!(
                            "{}: path {} has a negative or infinite service time",
                            self.name, p.label
                        ))
                    }
                    Step::Acquire(k) if held.contains(&k) => {
                        return Err(format!(
                            "{}: path {} acquires station {k} while holding it",
                            self.name, p.label
                        ))
                    }
                    Step::Acquire(k) => held.push(k),
                    Step::Release(k) => match held.iter().position(|&h| h == k) {
                        Some(i) => {
                            held.remove(i);
                        }
                        None => {
                            return Err(format!(
                                "{}: path {} releases station {k}, which it does not hold",
                                self.name, p.label
                            ))
                        }
                    },
                    _ => {}
                }
            }
            if let Some(k) = held.first() {
                return Err(format!(
                    "{}: path {} ends holding station {k} (no release)",
                    self.name, p.label
                ));
            }
        }
        for s in &self.stations {
            if !(s.service >= 0.0 && s.service.is_finite()) || s.servers == 0 {
                return Err(format!(
                    "{}: station {} needs a finite service time and >= 1 server",
                    self.name, s.name
                ));
            }
            if let Some(m) = s.slowdown.iter().find(|m| !(**m > 0.0 && m.is_finite())) {
                return Err(format!(
                    "{}: station {} has a slowdown of {m}; it must be positive and finite",
                    self.name, s.name
                ));
            }
        }
        Ok(())
    }
}

//! Discrete-event simulation of a closed network: `N` requests, deterministic think delays,
//! FCFS stations with one or more servers and general service distributions. Throughput comes
//! with a 95 % confidence interval from batch means (after a warm-up).

use crate::network::{Dist, Network, Step};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// Simulation settings.
#[derive(Debug, Clone, Copy)]
pub struct SimOptions {
    /// Requests completed before measuring.
    pub warmup: u64,
    /// Requests measured.
    pub requests: u64,
    /// Batches for the confidence interval.
    pub batches: u32,
    /// RNG seed.
    pub seed: u64,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions { warmup: 20_000, requests: 200_000, batches: 20, seed: 1 }
    }
}

/// Result of a simulation.
#[derive(Debug, Clone, Serialize)]
pub struct SimResult {
    /// Throughput (requests per µs).
    pub x: f64,
    /// Half-width of the 95 % confidence interval of `x`.
    pub ci95: f64,
    /// Per-station utilisation (per server).
    pub u: Vec<f64>,
    /// Mean response time excluding think (µs).
    pub r: f64,
}

#[derive(Debug, Clone, Copy)]
struct Ev {
    t: f64,
    seq: u64,
    job: usize,
    /// Some((station, queue)) for a service completion, whose server it frees; None for the
    /// end of a delay (a think, work on a held server, or a grant to move on).
    frees: Option<(usize, usize)>,
}
impl PartialEq for Ev {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Ev {}
impl PartialOrd for Ev {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ev {
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap, we want the earliest event.
        o.t.total_cmp(&self.t).then(o.seq.cmp(&self.seq))
    }
}

struct Job {
    path: usize,
    step: usize,
    /// When the current request started, and the think time it has had so far.
    started: f64,
    thought: f64,
    /// Servers held ([`Step::Acquire`]): (station, queue).
    held: Vec<(usize, usize)>,
}

/// What a request waiting at a queue gets when a server frees up.
#[derive(Debug, Clone, Copy)]
enum Grant {
    /// A visit with this mean service time.
    Serve(f64),
    /// The server itself, kept until the request releases it.
    Hold,
}

/// The servers of a station a request may use (all of them, or a pinned request's own one)
/// and the requests waiting for one of them, first come first served.
struct Queue {
    busy: u32,
    servers: u32,
    waiting: VecDeque<(usize, Grant)>,
}

/// The simulator's state.
struct Sim<'a> {
    net: &'a Network,
    cum: Vec<f64>,
    rng: Xoshiro256PlusPlus,
    now: f64,
    heap: BinaryHeap<Ev>,
    seq: u64,
    jobs: Vec<Job>,
    /// Per station: one queue, or one per server when it is pinned.
    queues: Vec<Vec<Queue>>,
    /// Response times (excluding think) of requests completed since the last look.
    finished: Vec<f64>,
}

impl Sim<'_> {
    fn sample(&mut self, mean: f64, dist: Dist) -> f64 {
        match dist {
            Dist::Det => mean,
            Dist::Exp => -mean * (1.0 - self.rng.random::<f64>()).ln(),
            Dist::Uniform => 2.0 * mean * self.rng.random::<f64>(),
        }
    }

    fn pick_path(&mut self) -> usize {
        let u: f64 = self.rng.random();
        self.cum.iter().position(|&c| u < c).unwrap_or(self.cum.len() - 1)
    }

    fn schedule(&mut self, t: f64, job: usize, frees: Option<(usize, usize)>) {
        self.seq += 1;
        self.heap.push(Ev { t, seq: self.seq, job, frees });
    }

    /// The queue of station `s` that `job` uses.
    fn queue_of(&self, job: usize, s: usize) -> usize {
        if self.net.stations[s].pinned {
            job % self.queues[s].len()
        } else {
            0
        }
    }

    /// Requests at station `s` now (in service, holding a server, or waiting).
    fn present(&self, s: usize) -> usize {
        self.queues[s].iter().map(|q| q.busy as usize + q.waiting.len()).sum()
    }

    /// A service time at station `s` with mean `mean`, stretched by the station's slowdown
    /// with the requests there now.
    fn service(&mut self, s: usize, mean: f64) -> f64 {
        let st = &self.net.stations[s];
        let (slow, dist) = (st.slowdown_at(self.present(s)), st.dist);
        self.sample(mean * slow, dist)
    }

    /// Gives `job` what it waited for at queue `(s, q)`, whose server it now has.
    fn grant(&mut self, job: usize, s: usize, q: usize, g: Grant) {
        match g {
            Grant::Serve(mean) => {
                let d = self.service(s, mean);
                self.schedule(self.now + d, job, Some((s, q)));
            }
            Grant::Hold => {
                self.jobs[job].held.push((s, q));
                self.schedule(self.now, job, None);
            }
        }
    }

    /// A server of queue `(s, q)` is free: the next waiting request gets it.
    fn free(&mut self, s: usize, q: usize) {
        match self.queues[s][q].waiting.pop_front() {
            Some((next, g)) => self.grant(next, s, q, g),
            None => self.queues[s][q].busy -= 1,
        }
    }

    /// `job` asks station `s` for `g`: granted now if a server of its queue is free, else it
    /// waits its turn.
    fn request(&mut self, job: usize, s: usize, g: Grant) {
        let q = self.queue_of(job, s);
        let queue = &mut self.queues[s][q];
        if queue.busy < queue.servers {
            queue.busy += 1;
            self.grant(job, s, q, g);
        } else {
            queue.waiting.push_back((job, g));
        }
    }

    /// Runs `job` forward from its current step until it waits on a delay or a station;
    /// finished requests are recorded and the job starts a new one (closed loop).
    fn advance(&mut self, job: usize) {
        let net = self.net;
        loop {
            let (path, step) = (self.jobs[job].path, self.jobs[job].step);
            let steps = &net.paths[path].steps;
            if step == steps.len() {
                let j = &self.jobs[job];
                self.finished.push(self.now - j.started - j.thought);
                let next = self.pick_path();
                let j = &mut self.jobs[job];
                (j.path, j.step, j.started, j.thought) = (next, 0, self.now, 0.0);
                continue;
            }
            match steps[step] {
                Step::Think(t) => {
                    self.jobs[job].thought += t;
                    self.schedule(self.now + t, job, None);
                    return;
                }
                Step::Visit(s) | Step::Work(s, _) => {
                    let mean = if let Step::Work(_, us) = steps[step] {
                        us
                    } else {
                        net.stations[s].service
                    };
                    if self.jobs[job].held.iter().any(|&(h, _)| h == s) {
                        // Served by the server it holds.
                        let d = self.service(s, mean);
                        self.schedule(self.now + d, job, None);
                    } else {
                        self.request(job, s, Grant::Serve(mean));
                    }
                    return;
                }
                Step::Acquire(s) => {
                    self.request(job, s, Grant::Hold);
                    return;
                }
                Step::Release(s) => {
                    let held = &mut self.jobs[job].held;
                    // `Network::check` saw every release preceded by its acquire.
                    let i = held.iter().position(|&(h, _)| h == s).expect("released unheld");
                    let (_, q) = held.swap_remove(i);
                    self.free(s, q);
                    self.jobs[job].step += 1;
                }
            }
        }
    }

    /// Handles the next event; the time it moved the clock by, or None if there is none.
    fn step(&mut self) -> Option<f64> {
        let ev = self.heap.pop()?;
        let dt = ev.t - self.now;
        self.now = ev.t;
        if let Some((s, q)) = ev.frees {
            self.free(s, q);
        }
        self.jobs[ev.job].step += 1;
        self.advance(ev.job);
        Some(dt)
    }

    /// Busy servers at each station now.
    fn busy(&self, into: &mut [u32]) {
        for (b, qs) in into.iter_mut().zip(&self.queues) {
            *b = qs.iter().map(|q| q.busy).sum();
        }
    }
}

/// Simulates `net` with `n` requests in circulation.
pub fn simulate(net: &Network, n: u32, o: &SimOptions) -> Result<SimResult, String> {
    net.check()?;
    if n == 0 {
        return Err("the multiprogramming level must be at least 1".into());
    }
    for p in &net.paths {
        let time: f64 = p
            .steps
            .iter()
            .map(|s| match *s {
                Step::Think(t) => t,
                Step::Visit(k) => net.stations[k].service,
                Step::Work(_, us) => us,
                Step::Acquire(_) | Step::Release(_) => 0.0,
            })
            .sum();
        if time <= 0.0 && p.prob > 0.0 {
            return Err(format!(
                "{}: path {} takes no time; throughput would be infinite",
                net.name, p.label
            ));
        }
    }
    let k = net.stations.len();
    let mut sim = Sim {
        net,
        cum: net
            .paths
            .iter()
            .scan(0.0, |a, p| {
                *a += p.prob;
                Some(*a)
            })
            .collect(),
        rng: Xoshiro256PlusPlus::seed_from_u64(o.seed),
        now: 0.0,
        heap: BinaryHeap::new(),
        seq: 0,
        jobs: Vec::new(),
        queues: net
            .stations
            .iter()
            .map(|st| {
                let (queues, servers) = if st.pinned { (st.servers, 1) } else { (1, st.servers) };
                (0..queues).map(|_| Queue { busy: 0, servers, waiting: VecDeque::new() }).collect()
            })
            .collect(),
        finished: Vec::new(),
    };
    for job in 0..n as usize {
        let path = sim.pick_path();
        sim.jobs.push(Job { path, step: 0, started: 0.0, thought: 0.0, held: Vec::new() });
        sim.advance(job);
    }
    let total = o.warmup + o.requests;
    let batch = (o.requests / o.batches.max(1) as u64).max(1);
    let (mut done, mut batch_start, mut measure_start, mut resp_sum) = (0u64, 0.0, 0.0, 0.0);
    let mut batch_x = Vec::new();
    let mut busy_area = vec![0.0; k];
    let max_events = total.saturating_mul(64).saturating_add(1_000_000);
    let mut events = 0u64;
    let mut busy_before = vec![0u32; k];
    while done < total {
        events += 1;
        if events > max_events {
            return Err("simulation did not converge (too many events per request)".into());
        }
        sim.busy(&mut busy_before);
        let Some(dt) = sim.step() else { return Err("simulation ran out of events".into()) };
        if done >= o.warmup {
            for s in 0..k {
                busy_area[s] += busy_before[s] as f64 * dt;
            }
        }
        for r in std::mem::take(&mut sim.finished) {
            done += 1;
            if done == o.warmup {
                measure_start = sim.now;
                batch_start = sim.now;
            } else if done > o.warmup {
                resp_sum += r;
                if (done - o.warmup).is_multiple_of(batch) && batch_x.len() < o.batches as usize {
                    batch_x.push(batch as f64 / (sim.now - batch_start).max(1e-12));
                    batch_start = sim.now;
                }
            }
        }
    }
    let span = (sim.now - measure_start).max(1e-12);
    let x = o.requests as f64 / span;
    let b = batch_x.len() as f64;
    let ci95 = if b >= 2.0 {
        let mean = batch_x.iter().sum::<f64>() / b;
        let var = batch_x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (b - 1.0);
        1.96 * (var / b).sqrt()
    } else {
        f64::NAN
    };
    let u = (0..k).map(|s| busy_area[s] / span / net.stations[s].servers as f64).collect();
    Ok(SimResult { x, ci95, u, r: resp_sum / o.requests as f64 })
}

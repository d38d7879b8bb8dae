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
    /// Some(station) for a service completion, None for the end of a think delay.
    station: Option<usize>,
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
    /// Start of the current request's non-think time accounting.
    queued_time: f64,
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
            })
            .sum();
        if time <= 0.0 && p.prob > 0.0 {
            return Err(format!(
                "{}: path {} takes no time; throughput would be infinite",
                net.name, p.label
            ));
        }
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(o.seed);
    let cum: Vec<f64> = net
        .paths
        .iter()
        .scan(0.0, |a, p| {
            *a += p.prob;
            Some(*a)
        })
        .collect();
    let k = net.stations.len();
    let mut busy = vec![0u32; k];
    let mut waiting: Vec<VecDeque<(usize, f64)>> = vec![VecDeque::new(); k];
    let mut busy_area = vec![0.0; k];
    let mut heap = BinaryHeap::new();
    let mut seq = 0u64;
    let mut now = 0.0f64;
    let mut jobs: Vec<Job> =
        (0..n as usize).map(|_| Job { path: 0, step: 0, queued_time: 0.0 }).collect();
    let total = o.warmup + o.requests;
    let batch = (o.requests / o.batches.max(1) as u64).max(1);
    let mut done = 0u64;
    let mut batch_start = 0.0;
    let mut batch_x = Vec::new();
    let mut measure_start = 0.0;
    let mut resp_sum = 0.0;
    let sample = |rng: &mut Xoshiro256PlusPlus, mean: f64, dist: Dist| -> f64 {
        match dist {
            Dist::Det => mean,
            Dist::Exp => -mean * (1.0 - rng.random::<f64>()).ln(),
            Dist::Uniform => 2.0 * mean * rng.random::<f64>(),
        }
    };
    let pick = |rng: &mut Xoshiro256PlusPlus| -> usize {
        let u: f64 = rng.random();
        cum.iter().position(|&c| u < c).unwrap_or(cum.len() - 1)
    };
    macro_rules! push {
        ($t:expr, $job:expr, $st:expr) => {{
            seq += 1;
            heap.push(Ev { t: $t, seq, job: $job, station: $st });
        }};
    }
    // Runs a job forward from its current step until it waits on something.
    let advance = |job: usize,
                   now: f64,
                   jobs: &mut Vec<Job>,
                   busy: &mut Vec<u32>,
                   waiting: &mut Vec<VecDeque<(usize, f64)>>,
                   rng: &mut Xoshiro256PlusPlus,
                   heap_push: &mut dyn FnMut(f64, usize, Option<usize>),
                   finished: &mut dyn FnMut(f64)| {
        loop {
            let j = &mut jobs[job];
            let steps = &net.paths[j.path].steps;
            if j.step == steps.len() {
                finished(j.queued_time);
                j.path = pick(rng);
                j.step = 0;
                j.queued_time = 0.0;
                continue;
            }
            match steps[j.step] {
                Step::Think(t) => {
                    heap_push(now + t, job, None);
                    return;
                }
                Step::Visit(s) | Step::Work(s, _) => {
                    let mean = match steps[j.step] {
                        Step::Work(_, us) => us,
                        _ => net.stations[s].service,
                    };
                    j.queued_time -= now;
                    if busy[s] < net.stations[s].servers {
                        busy[s] += 1;
                        heap_push(now + sample(rng, mean, net.stations[s].dist), job, Some(s));
                    } else {
                        waiting[s].push_back((job, mean));
                    }
                    return;
                }
            }
        }
    };
    let mut pending: Vec<(f64, usize, Option<usize>)> = Vec::new();
    let mut finished_times: Vec<f64> = Vec::new();
    for job in 0..n as usize {
        jobs[job].path = pick(&mut rng);
        advance(
            job,
            0.0,
            &mut jobs,
            &mut busy,
            &mut waiting,
            &mut rng,
            &mut |t, j, s| pending.push((t, j, s)),
            &mut |r| finished_times.push(r),
        );
    }
    for (t, j, s) in pending.drain(..) {
        push!(t, j, s);
    }
    let max_events = total.saturating_mul(64).saturating_add(1_000_000);
    let mut events = 0u64;
    while done < total {
        events += 1;
        if events > max_events {
            return Err("simulation did not converge (too many events per request)".into());
        }
        let Some(ev) = heap.pop() else { return Err("simulation ran out of events".into()) };
        if done >= o.warmup {
            for s in 0..k {
                busy_area[s] += busy[s] as f64 * (ev.t - now);
            }
        }
        now = ev.t;
        let job = ev.job;
        if let Some(s) = ev.station {
            jobs[job].queued_time += now;
            if let Some((next, mean)) = waiting[s].pop_front() {
                pending.push((now + sample(&mut rng, mean, net.stations[s].dist), next, Some(s)));
            } else {
                busy[s] -= 1;
            }
        }
        jobs[job].step += 1;
        advance(
            job,
            now,
            &mut jobs,
            &mut busy,
            &mut waiting,
            &mut rng,
            &mut |t, j, s| pending.push((t, j, s)),
            &mut |r| finished_times.push(r),
        );
        for (t, j, s) in pending.drain(..) {
            push!(t, j, s);
        }
        for r in finished_times.drain(..) {
            done += 1;
            if done == o.warmup {
                measure_start = now;
                batch_start = now;
            } else if done > o.warmup {
                resp_sum += r;
                let m = done - o.warmup;
                if m % batch == 0 && batch_x.len() < o.batches as usize {
                    batch_x.push(batch as f64 / (now - batch_start).max(1e-12));
                    batch_start = now;
                }
            }
        }
    }
    let span = (now - measure_start).max(1e-12);
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

//! sifter-bench: the throughput lab's harness.
//!
//! * [`adapter`]: one trait over sifter's concurrent policies and the peer caches (quick_cache,
//!   moka, mini-moka, foyer, `Mutex<lru::LruCache>`), and a null cache;
//! * [`workload`]: Zipf read-through, YCSB-style and NbQ-CLOCK mixes, a RocksDB `cache_bench`
//!   style mix, and any trace — precomputed per thread, in `shared` or `per-thread` key spaces;
//! * [`run`]: warm-up on the first part of each thread's sequence until the cache is full, then
//!   a measured phase on the rest (never a replay of the warm-up) of a fixed request count per
//!   thread (ending when the first thread is done) or a fixed duration, with sampled latencies
//!   in HdrHistograms;
//! * [`summarize`]: medians and min–max over repeated runs;
//! * [`host`]: the host's cache-line transfer time between two CPUs, which multi-thread
//!   figures on a VM depend on (each multi-thread run records it).
//!
//! The `sifter bench` command (crate `sifter-cli`) drives it and writes tables, CSV, JSON and
//! plots.

pub mod adapter;
pub mod host;
pub mod run;
pub mod workload;

use run::{Class, RunResult};

/// Errors from the harness: bad configuration or workload.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A configuration or workload problem, with what and where.
    #[error("{0}")]
    Config(String),
}

/// Latency percentiles of one class, nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Latency {
    /// Calls made in the measured phase.
    pub count: u64,
    /// Calls timed.
    pub samples: u64,
    /// Mean of the samples.
    pub mean: f64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
}

/// One cache × configuration, summarised over repeated runs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    /// Cache name.
    pub cache: String,
    /// Threads.
    pub threads: usize,
    /// Capacity in entries.
    pub capacity: u64,
    /// Median throughput, Mops/s.
    pub mops: f64,
    /// Lowest and highest throughput over the runs.
    pub mops_min: f64,
    /// Highest.
    pub mops_max: f64,
    /// Every run's throughput, in run order.
    pub mops_runs: Vec<f64>,
    /// Every run's cache-line transfer time in ns ([`RunResult::transfer_ns`]), in run order;
    /// NaN for runs without one (one thread).
    pub transfer_ns_runs: Vec<f64>,
    /// Hit ratio of the median run.
    pub hit_ratio: f64,
    /// The share of the median run's hits that wrote the policy's shared state
    /// ([`RunResult::hit_write_share`]; NaN for caches that do not count them).
    pub hit_writes: f64,
    /// Latencies of the median run per class (`hit`, `miss`, `insert`, `erase`, and `evict`
    /// for caches that report it), classes with no calls left out.
    pub latency: Vec<(String, Latency)>,
    /// Share of estimated time per class in the median run.
    pub breakdown: Vec<(String, f64)>,
    /// Warm-up seconds and fill reached, median run.
    pub warmup_secs: f64,
    /// Fill (len / capacity) at the end of warm-up.
    pub filled: f64,
    /// Runs whose measured phase ended early because a thread reached the end of its
    /// sequence ([`RunResult::exhausted`]).
    pub exhausted_runs: usize,
}

/// Summarises repeated runs of one cache and configuration: median throughput (and the run
/// it came from for hit ratio and latencies), min and max.
pub fn summarize(cache: &str, threads: usize, capacity: u64, runs: &[RunResult]) -> Summary {
    let mops_runs: Vec<f64> = runs.iter().map(RunResult::mops).collect();
    let transfer_ns_runs: Vec<f64> =
        runs.iter().map(|r| r.transfer_ns.unwrap_or(f64::NAN)).collect();
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| mops_runs[a].total_cmp(&mops_runs[b]));
    let (lo, hi) = (order.first().copied(), order.last().copied());
    let Some(med) = order.get(order.len() / 2).copied() else {
        return Summary {
            cache: cache.into(),
            threads,
            capacity,
            mops: f64::NAN,
            mops_min: f64::NAN,
            mops_max: f64::NAN,
            mops_runs,
            transfer_ns_runs,
            hit_ratio: f64::NAN,
            hit_writes: f64::NAN,
            latency: Vec::new(),
            breakdown: Vec::new(),
            warmup_secs: 0.0,
            filled: 0.0,
            exhausted_runs: 0,
        };
    };
    let r = &runs[med];
    let latency = Class::ALL
        .iter()
        .zip(&r.classes)
        .filter(|(_, c)| c.count > 0)
        .map(|(cl, c)| {
            let h = &c.hist;
            (
                cl.name().to_string(),
                Latency {
                    count: c.count,
                    samples: h.len(),
                    mean: h.mean(),
                    p50: h.value_at_quantile(0.5),
                    p90: h.value_at_quantile(0.9),
                    p99: h.value_at_quantile(0.99),
                    p999: h.value_at_quantile(0.999),
                },
            )
        })
        .collect();
    let breakdown = Class::ALL
        .iter()
        .zip(r.breakdown())
        .zip(&r.classes)
        .filter(|(_, c)| c.count > 0)
        .map(|((cl, share), _)| (cl.name().to_string(), share))
        .collect();
    Summary {
        cache: cache.into(),
        threads,
        capacity,
        mops: mops_runs[med],
        mops_min: lo.map_or(f64::NAN, |i| mops_runs[i]),
        mops_max: hi.map_or(f64::NAN, |i| mops_runs[i]),
        mops_runs: mops_runs.clone(),
        transfer_ns_runs,
        hit_ratio: r.hit_ratio(),
        hit_writes: r.hit_write_share(),
        latency,
        breakdown,
        warmup_secs: r.warmup.as_secs_f64(),
        filled: r.filled,
        exhausted_runs: runs.iter().filter(|r| r.exhausted).count(),
    }
}

//! Throughput of each cache window by window from an empty cache, at one thread: when does a
//! cache reach its steady state? (docs/BENCHMARKS.md, "Steady state before the measurement".)
//!
//! ```sh
//! cargo run --release -p sifter-bench --example steady_state -- \
//!     [--size 0.01] [--windows 40] [--window 250000] quick_cache mobius s3fifo
//! ```
//!
//! The stream is `sifter bench`'s default (Zipf 1.0 over 1M keys, a 2M-request sequence
//! replayed cyclically, read-through); the capacity is `--size` of its distinct keys. Each
//! line is one cache: Mops/s and hit ratio per window, and the window in which the cache first
//! held 98 % of its capacity (where `sifter bench`'s warm-up used to end).

use sifter_bench::adapter::make;
use sifter_bench::workload::{unpack, Mode, Workload};
use std::time::Instant;

fn main() {
    let (mut size, mut windows, mut window) = (0.01f64, 40usize, 250_000usize);
    let mut caches = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next().unwrap_or_else(|| {
                eprintln!("{name} needs a value");
                std::process::exit(2)
            })
        };
        let bad = |name: &str, v: &str| -> ! {
            eprintln!("{name}: not a valid value: {v}");
            std::process::exit(2)
        };
        match a.as_str() {
            "--size" => {
                let v = value("--size");
                size = v
                    .parse()
                    .ok()
                    .filter(|f| *f > 0.0 && *f <= 1.0)
                    .unwrap_or_else(|| bad("--size", &v));
            }
            "--windows" => {
                let v = value("--windows");
                windows = v.parse().ok().filter(|&n| n > 0).unwrap_or_else(|| bad("--windows", &v));
            }
            "--window" => {
                let v = value("--window");
                window = v.parse().ok().filter(|&n| n > 0).unwrap_or_else(|| bad("--window", &v));
            }
            _ => caches.push(a),
        }
    }
    if caches.is_empty() {
        eprintln!("usage: steady_state [--size F] [--windows N] [--window REQUESTS] CACHE...");
        std::process::exit(2);
    }
    let w = Workload::parse("zipf:alpha=1.0,keys=1000000").expect("a valid workload");
    let (seqs, distinct) = w.generate(1, 2_000_000, Mode::Shared).expect("a sequence");
    let seq = &seqs[0];
    let cap = ((distinct as f64 * size) as u64).max(1);
    println!("capacity {cap} ({size} of {distinct} keys), windows of {window} requests: Mops/s / hit ratio");
    for name in &caches {
        let c = match make(name, cap) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("{name}: {e}");
                std::process::exit(2)
            }
        };
        let (mut i, mut full_at) = (0usize, None);
        let mut line = format!("{name:12}");
        for win in 0..windows {
            let t = Instant::now();
            let mut hits = 0u64;
            for _ in 0..window {
                let (_, k) = unpack(seq[i]);
                i = if i + 1 == seq.len() { 0 } else { i + 1 };
                if c.get(k).is_some() {
                    hits += 1;
                } else {
                    c.insert(k);
                }
            }
            let secs = t.elapsed().as_secs_f64();
            if full_at.is_none() && c.len() as u64 >= cap * 98 / 100 {
                full_at = Some(win);
            }
            line +=
                &format!(" {:5.1}/{:.3}", window as f64 / secs / 1e6, hits as f64 / window as f64);
        }
        println!("{line}  (98 % full in window {})", full_at.map_or("-".into(), |w| w.to_string()));
    }
}

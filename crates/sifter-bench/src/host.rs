//! The host's state that multi-thread figures depend on: how long one cache line takes to
//! pass from one CPU to another.
//!
//! On the 2-vCPU VM this lab runs on, that time is bimodal (docs/BENCHMARKS.md, "The host's
//! two-thread modes are its cache-line transfer time"): about 42 ns most of the time, about
//! 190 ns for stretches of seconds, when every cache that writes shared memory runs about 3×
//! slower at two threads while one thread and a read-only loop do not change. A multi-thread
//! run records the time measured just before and just after its measured phase
//! ([`RunResult::transfer_ns`](crate::run::RunResult::transfer_ns)), so that a figure can be
//! read against the state the host was in.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Bursts per probe; the probe reports the fastest.
const BURSTS: u32 = 5;
/// Round trips between two looks at the clock.
const CHECK_EVERY: u64 = 256;

/// One cache line of its own (no neighbour shares it: 128 bytes covers adjacent-line
/// prefetching).
#[repr(align(128))]
struct Line(AtomicU64);

/// The time, in nanoseconds, one cache line written on one CPU takes to be read on another,
/// measured by two threads handing a counter back and forth for about `budget` (the fastest
/// of five bursts: a stall of the scheduler or the hypervisor only ever slows a burst, while
/// the host's slow state, lasting seconds, slows all five). `None` when the process may use a
/// single CPU (a transfer would then be a context switch, not a line's move), or when every
/// burst gave up waiting for the partner (it hardly ran: nothing was timed).
///
/// The threads are not pinned, like the bench's workers: on an otherwise idle machine they
/// run on two CPUs, and the probe measures what the workers' shared writes meet. On a busy
/// machine the figure grows (a partner off its CPU answers late), which is also what the
/// workers meet. Takes `budget`, at most eight times that when the partner stalls: each side
/// checks the clock, and the partner stops when told.
pub fn line_transfer_ns(budget: Duration) -> Option<f64> {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return None;
    }
    let line = Line(AtomicU64::new(0));
    let done = AtomicBool::new(false);
    let ready = AtomicBool::new(false);
    let burst = budget / BURSTS;
    let mut per_burst = Vec::with_capacity(BURSTS as usize);
    std::thread::scope(|s| {
        // The partner answers each odd value v with v + 1.
        s.spawn(|| {
            // Running: the bursts start only now (waking an idle vCPU can take milliseconds).
            // Relaxed: a flag; it publishes nothing.
            ready.store(true, Ordering::Relaxed);
            let mut spins = 0u64;
            loop {
                // Relaxed, all of the probe's accesses: the value itself is the message, and
                // no other memory is published through it.
                let v = line.0.load(Ordering::Relaxed);
                if v % 2 == 1 {
                    line.0.store(v + 1, Ordering::Relaxed);
                    continue;
                }
                spins += 1;
                if spins.is_multiple_of(CHECK_EVERY) && done.load(Ordering::Relaxed) {
                    return;
                }
                std::hint::spin_loop();
            }
        });
        // Bounded: a partner that does not start within four budgets leaves the bursts to
        // measure its absence.
        let wait = Instant::now() + budget * 4;
        while !ready.load(Ordering::Relaxed) && Instant::now() < wait {
            std::hint::spin_loop();
        }
        let mut v = 0u64;
        // Whether the partner still owes the answer to v + 1 (a burst gave up waiting for it).
        let mut owed = false;
        for _ in 0..BURSTS {
            let start = Instant::now();
            // Past this, a partner that does not answer (its vCPU descheduled, or one CPU
            // shared) ends the burst with what it has: a one-off stall is then one burst of
            // five, which the minimum passes over.
            let give_up = start + burst * 4;
            let mut trips = 0u64;
            let mut gave_up = false;
            'burst: loop {
                if !owed {
                    line.0.store(v + 1, Ordering::Relaxed);
                    owed = true;
                }
                let mut spins = 0u64;
                while line.0.load(Ordering::Relaxed) != v + 2 {
                    spins += 1;
                    if spins.is_multiple_of(CHECK_EVERY * 16) && Instant::now() > give_up {
                        gave_up = true;
                        break 'burst;
                    }
                    std::hint::spin_loop();
                }
                owed = false;
                v += 2;
                trips += 1;
                if trips.is_multiple_of(CHECK_EVERY) && start.elapsed() >= burst {
                    break;
                }
            }
            per_burst.push(Burst { took: start.elapsed(), trips, gave_up });
        }
        done.store(true, Ordering::Relaxed);
    });
    fastest(&per_burst)
}

/// One burst of round trips.
#[derive(Debug, Clone, Copy)]
struct Burst {
    took: Duration,
    trips: u64,
    /// It ended waiting for an answer past its give-up time (the partner off its CPU).
    gave_up: bool,
}

/// The probe's figure from its bursts: the fastest complete burst's time per transfer (two per
/// round trip). A burst that gave up says only that the partner was away for much of it, not
/// how long a line takes (a single round trip in 16 ms would read as 8 ms "per transfer"): it
/// gives no figure, and a probe made only of such bursts gives none (`None`).
fn fastest(bursts: &[Burst]) -> Option<f64> {
    bursts
        .iter()
        .filter(|b| !b.gave_up && b.trips > 0)
        .map(|b| b.took.as_nanos() as f64 / (2 * b.trips) as f64)
        .reduce(f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transfer_takes_a_plausible_time_and_the_probe_ends() {
        let start = Instant::now();
        let t = line_transfer_ns(Duration::from_millis(20));
        // The probe ends within a few of its budgets even on a loaded machine.
        assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
        if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
            assert_eq!(t, None);
            return;
        }
        // A transfer takes at least a nanosecond; a complete burst (4 ms here) made at least
        // 256 round trips, so its figure is at most 4 ms / 512 and a little (a burst checks the
        // clock every 256 trips). On a machine busy with other tests every burst may give up
        // (a partner off its CPU): no figure then.
        if let Some(t) = t {
            assert!(t > 1.0 && t < 2e5, "{t} ns");
        }
    }

    #[test]
    fn bursts_that_gave_up_give_no_figure() {
        let b = |ms: u64, trips: u64, gave_up: bool| Burst {
            took: Duration::from_millis(ms),
            trips,
            gave_up,
        };
        // The fastest complete burst, two transfers per trip; a burst that gave up after one
        // round trip (16 ms: 8 ms "per transfer", or less than the others) is passed over.
        assert_eq!(
            fastest(&[b(4, 1000, false), b(16, 1, true), b(4, 2000, false), b(16, 20_000, true)]),
            Some(1_000.0)
        );
        // Only bursts that gave up: the partner was away, no transfer was timed.
        assert_eq!(fastest(&[b(16, 0, true), b(16, 1, true)]), None);
        assert_eq!(fastest(&[]), None);
    }
}

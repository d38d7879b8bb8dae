//! Heap bytes per entry and whether a capacity fits the machine's memory: a counting global
//! allocator (installed by the binaries that measure: `sifter` and the Python module) and the
//! check `sifter bench` and `sifter.bench` make before building a large cache.
//!
//! A binary installs the allocator with
//! `#[global_allocator] static A: sifter_lab::memory::Counting = sifter_lab::memory::Counting;`.
//! It counts only while [`measure`] runs (one relaxed load per allocation otherwise). Without
//! it [`measure`] sees no bytes, and [`filled`] and [`fits`] say so as an error rather than
//! report nothing.

use anyhow::{bail, Result};
use sifter_bench::adapter::make;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

/// The process's allocator: the system allocator, counting when asked.
#[derive(Debug)]
pub struct Counting;

static ON: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // Relaxed (all): statistics only.
        if ON.load(Ordering::Relaxed) {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if ON.load(Ordering::Relaxed) {
            LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if ON.load(Ordering::Relaxed) {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if ON.load(Ordering::Relaxed) {
            LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Heap bytes allocated and not freed while `f` runs and its result lives, measured with
/// counting on; returns `f`'s result (drop it after reading) and the bytes.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, isize) {
    LIVE.store(0, Ordering::SeqCst);
    ON.store(true, Ordering::SeqCst);
    let v = f();
    let bytes = LIVE.load(Ordering::SeqCst);
    ON.store(false, Ordering::SeqCst);
    (v, bytes)
}

/// Capacities above this many entries are built only after their heap, extrapolated from a
/// cache of this size, is found to fit the memory the machine has available ([`fits`]).
pub const MEM_PROBE: u64 = 100_000;

/// Whether cache `name` filled with `n` u64 → u64 entries fits the machine's memory (its
/// heap, extrapolated from [`MEM_PROBE`] entries, at most 80 % of what is available): building
/// it beyond that would end in the OOM killer, or in hours of swapping, instead of an error.
/// `sifter bench` and the Python package's `bench` ask it of every cache and capacity before
/// they build any ([`crate::report::BenchSpec::fits`]), `--mem` before each fill. Caches of
/// at most [`MEM_PROBE`] entries, and capacities that would fit a tenth of the available
/// memory even at 1 KB per entry (moka, the largest here, takes about 250 B), are not
/// measured; neither is anything where the available memory is not known (not Linux).
pub fn fits(name: &str, n: u64) -> Result<()> {
    static PER_ENTRY: std::sync::Mutex<Vec<(String, f64)>> = std::sync::Mutex::new(Vec::new());
    let Some(available) = available_memory() else { return Ok(()) };
    if n <= MEM_PROBE || (n as f64) * 1024.0 < 0.1 * available as f64 {
        return Ok(());
    }
    // A poisoned lock only means another thread panicked holding it: the list is intact.
    let mut known = PER_ENTRY.lock().unwrap_or_else(|e| e.into_inner());
    let per = match known.iter().find(|(c, _)| c == name) {
        Some(&(_, per)) => per,
        None => {
            let (cache, len, bytes) = filled(name, MEM_PROBE)?;
            drop(cache);
            let per = bytes as f64 / len.max(1) as f64;
            known.push((name.to_string(), per));
            per
        }
    };
    check_fits(name, n, per * n as f64, MEM_PROBE, available)
}

/// Cache `name` built for `n` entries and filled with as many distinct u64 → u64 entries:
/// the cache, the entries it holds, and the heap bytes it took (counted by [`Counting`]; an
/// error if the program has not installed it, as no cache holds entries in no heap).
pub fn filled(
    name: &str,
    n: u64,
) -> Result<(Box<dyn sifter_bench::adapter::BenchCache>, usize, isize)> {
    let (built, bytes) = measure(|| -> Result<_> {
        let cache = make(name, n)?;
        for k in 0..n {
            cache.insert(sifter_bench::workload::splitmix(k));
        }
        let len = cache.len();
        Ok((cache, len))
    });
    let (cache, len) = built?;
    if bytes <= 0 && len > 0 {
        bail!(
            "the heap {name} took was not measured: this program has not installed \
             sifter_lab::memory::Counting as its global allocator"
        );
    }
    Ok((cache, len, bytes))
}

/// Refuses to fill cache `name` with `n` entries when the heap it would take (`need` bytes,
/// extrapolated from a cache of `probe` entries) is more than 80 % of `available` (the
/// machine's available memory): tables that grow in powers of two may take up to twice the
/// extrapolation, and the rest of the machine needs some too.
fn check_fits(name: &str, n: u64, need: f64, probe: u64, available: u64) -> Result<()> {
    const GB: f64 = 1e9;
    if need > 0.8 * available as f64 {
        bail!(
            "{name} with {n} entries needs about {:.1} GB of heap ({:.1} bytes per \
             entry, measured at {probe} entries), more than 80 % of the {:.1} GB this machine \
             has available: give a smaller size",
            need / GB,
            need / n as f64,
            available as f64 / GB
        );
    }
    Ok(())
}

/// The memory the machine has available for a new process, in bytes (Linux's `MemAvailable`
/// in `/proc/meminfo`); `None` where that is not known.
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_check_refuses_what_would_not_fit_and_passes_the_rest() {
        // 100M entries at 55 bytes: 5.5 GB.
        let need = 55.0 * 1e8;
        assert!(check_fits("mobius", 100_000_000, need, MEM_PROBE, 8_000_000_000).is_ok());
        let e = check_fits("mobius", 100_000_000, need, MEM_PROBE, 6_000_000_000)
            .expect_err("5.5 GB is more than 80 % of 6 GB")
            .to_string();
        for part in ["mobius", "100000000 entries", "5.5 GB", "55.0 bytes per entry", "6.0 GB"] {
            assert!(e.contains(part), "{part:?} missing from: {e}");
        }
    }

    #[test]
    fn available_memory_is_read_where_linux_reports_it() {
        match available_memory() {
            Some(b) => assert!(b > 1 << 20, "{b} bytes available"),
            None => assert!(
                std::fs::read_to_string("/proc/meminfo")
                    .map_or(true, |m| !m.contains("MemAvailable:")),
                "/proc/meminfo has MemAvailable but it was not read"
            ),
        }
    }
}

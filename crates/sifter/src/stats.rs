//! Statistics, always on, with no shared write per operation.
//!
//! Each of the first [`RECORDS`] thread ids owns a cache-padded
//! record of counters in every cache; only that thread writes it, with a plain load and store
//! (no read-modify-write, no line shared with another thread). Threads beyond them count in
//! one shared record with atomic adds. A snapshot sums the records: exact when no operation is
//! in flight, and each counter monotonic otherwise.

use crate::raw::epoch::RECORDS;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What a counter counts.
#[derive(Debug, Clone, Copy)]
#[repr(usize)]
pub(crate) enum Counter {
    Hits,
    HitWrites,
    Misses,
    Inserts,
    Updates,
    Evictions,
    Expirations,
    Removals,
    LoadSuccesses,
    LoadFailures,
    LoadNanos,
}

const N: usize = 11;

#[derive(Debug, Default)]
struct Record([AtomicU64; N]);

/// One cache's counters.
#[derive(Debug)]
pub(crate) struct Stats {
    records: Box<[CachePadded<Record>]>,
    shared: CachePadded<Record>,
}

impl Stats {
    pub fn new() -> Self {
        Stats {
            records: (0..RECORDS).map(|_| CachePadded::new(Record::default())).collect(),
            shared: CachePadded::new(Record::default()),
        }
    }

    /// Adds `n` to counter `c` of thread `tid` ([`thread_id`](crate::raw::epoch::thread_id)).
    #[inline]
    pub fn add(&self, tid: usize, c: Counter, n: u64) {
        match self.records.get(tid) {
            Some(r) => {
                let a = &r.0[c as usize];
                // Relaxed load + store: only thread `tid` writes its record (ids are unique
                // among live threads, and a reused id's previous owner exited — its writes
                // happen before through the id free list's lock), so no increment is lost.
                a.store(a.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
            }
            // Relaxed: a counter; the RMW keeps it exact among threads sharing the record.
            None => {
                self.shared.0[c as usize].fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    /// The sums now.
    pub fn snapshot(&self) -> CacheStats {
        let mut sum = [0u64; N];
        for r in self.records.iter().chain(std::iter::once(&self.shared)) {
            for (s, a) in sum.iter_mut().zip(r.0.iter()) {
                // Relaxed: counters; a snapshot is exact only when quiescent.
                *s = s.wrapping_add(a.load(Ordering::Relaxed));
            }
        }
        CacheStats {
            hits: sum[Counter::Hits as usize],
            misses: sum[Counter::Misses as usize],
            inserts: sum[Counter::Inserts as usize],
            updates: sum[Counter::Updates as usize],
            evictions: sum[Counter::Evictions as usize],
            expirations: sum[Counter::Expirations as usize],
            removals: sum[Counter::Removals as usize],
            load_successes: sum[Counter::LoadSuccesses as usize],
            load_failures: sum[Counter::LoadFailures as usize],
            load_time: Duration::from_nanos(sum[Counter::LoadNanos as usize]),
            hit_writes: sum[Counter::HitWrites as usize],
        }
    }
}

/// A snapshot of a cache's counters ([`Cache::stats`](crate::Cache::stats)).
///
/// Counted since the cache was built: exact when no operation is in flight. `hits` and
/// `misses` count lookups (`get`, `get_many`, the loaders' first lookup; not `peek` or
/// `contains_key`). `inserts` counts new keys stored, `updates` values replaced. An entry that
/// leaves counts once, by cause: `evictions` (capacity), `expirations`, `removals` (explicit
/// removal, `retain`, `clear`, or an insert too heavy to store that removed the old value).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups that found a live entry.
    pub hits: u64,
    /// Lookups that found none (or an expired one).
    pub misses: u64,
    /// Entries stored under a key that had none.
    pub inserts: u64,
    /// Values replaced under a key that had one.
    pub updates: u64,
    /// Entries evicted to make room.
    pub evictions: u64,
    /// Entries that left because they expired.
    pub expirations: u64,
    /// Entries removed explicitly (`remove`, `retain`/`remove_if`, `clear`, `compute`).
    pub removals: u64,
    /// Loader calls that produced a value.
    pub load_successes: u64,
    /// Loader calls that failed (returned an error or panicked).
    pub load_failures: u64,
    /// Time spent in loaders.
    pub load_time: Duration,
    /// Hits that wrote the policy's shared state: set a clear reference bit (Mobius, CLOCK,
    /// SIEVE), raised a frequency or counter below its cap (S3-FIFO, NbQ-CLOCK: a CAS, tried
    /// or not won), or took the list's lock to move the entry (LRU, and Prob-LRU when its coin
    /// says so). The other hits wrote nothing shared (FIFO's never do): on several cores the
    /// writes are what stops a policy's hits from scaling, since each takes the line from the
    /// other cores' caches. Expiry's own stores (time-to-idle moving a deadline) are not
    /// counted.
    pub hit_writes: u64,
}

impl CacheStats {
    /// `hits / (hits + misses)`, or 0 before any lookup.
    pub fn hit_ratio(&self) -> f64 {
        let n = self.hits + self.misses;
        if n == 0 {
            0.0
        } else {
            self.hits as f64 / n as f64
        }
    }
}

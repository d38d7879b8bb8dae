//! # sifter: concurrent caches whose hits scale
//!
//! A cache's eviction policy decides not only its hit ratio but how far its throughput scales
//! with threads. LRU moves an entry on every hit, so every hit writes shared state under a lock;
//! SIEVE-style policies only set a bit. `sifter::Cache` offers:
//!
//! | [`Policy`] | hit path | miss/eviction path | source |
//! |---|---|---|---|
//! | [`Policy::Mobius`] (default) | no lock, no RMW, at most one plain store | lock-free: two FIFO queues in rotation, consecutive detection | Mobius, POMACS 2025 |
//! | [`Policy::Sieve`] | no lock, no RMW | one global lock (insert, evict) | SIEVE, NSDI'24 (CacheLib prototype) |
//! | [`Policy::Clock`] | no lock, no RMW | lock-free single queue, reinsertion | FIFO-Reinsertion |
//! | [`Policy::Fifo`] | no lock, no store at all | lock-free single queue | — |
//! | [`Policy::Lru`] | one global lock (move to front) | one global lock | the classic baseline |
//! | [`Policy::ProbLru`] | the global lock on a fraction 1 − q of hits, nothing on the others | one global lock | Prob-LRU, "Can increasing the hit ratio hurt cache throughput?" |
//! | [`Policy::NbqClock`] | no lock, one CAS on an 8-bit counter (issue 12's atomic add; the report itself settled on non-atomic increments) | lock-free single queue, counters lowered as entries come round, batched re-insert | NbQ-CLOCK (Eads, UCB/EECS-2013-174) |
//! | [`MultiStepCache`] (a sibling type) | one lock per set (a byte), 32-bit tags compared with SSE2/AVX2 | the set's last vector, same lock | Multi-step LRU, BigData'21 |
//! | [`Policy::S3Fifo`] | no lock, no RMW, at most one plain store (2-bit count) | lock-free: small and main queues, a ghost of fingerprints | S3-FIFO, SOSP'23 |
//!
//! ```
//! use sifter::{Cache, Policy};
//! let cache: Cache<u64, String> = Cache::builder().capacity(1000).policy(Policy::Mobius).build();
//! cache.insert(1, "one".to_string());
//! assert_eq!(cache.get(&1).as_deref(), Some("one"));
//! assert_eq!(cache.remove(&1).as_deref(), Some("one"));
//! assert!(cache.get(&1).is_none());
//!
//! // Weight-bounded: capacity in bytes, each entry weighs what the weigher says.
//! let bytes: Cache<String, Vec<u8>> = Cache::builder()
//!     .weight_capacity(1 << 20)
//!     .weigher(|k: &String, v: &Vec<u8>| (k.len() + v.len()) as u64)
//!     .build();
//! bytes.insert("a".into(), vec![0; 100]);
//! assert_eq!(bytes.weight(), 101);
//! ```
//!
//! # What the cache offers
//!
//! Everything below works on every [`Policy`] and costs nothing when not configured: expiry
//! times live beside an entry's slot only in caches built with expiry, the listener and the
//! loaders' bookkeeping only exist when used, and statistics are per-thread counters (no
//! shared cache line is written by a hit).
//!
//! | feature | sifter | moka | quick_cache | Caffeine |
//! |---|---|---|---|---|
//! | capacity in entries or weights | [`CacheBuilder::capacity`], [`CacheBuilder::weigher`] | yes | yes | yes |
//! | time-to-live / time-to-idle | [`CacheBuilder::time_to_live`], [`CacheBuilder::time_to_idle`] | yes | no | yes |
//! | per-entry expiry | [`Expiry`] (create / update / read), [`Cache::insert_with_ttl`] | `Expiry` | no | `Expiry` |
//! | controllable clock | [`Clock`], [`ManualClock`] | `MockClock` (test feature) | no | `Ticker` |
//! | coalescing loader | [`Cache::get_with`], [`Cache::try_get_with`], [`Cache::get_with_async`] | `get_with`, `try_get_with` (async in `future`) | `get_or_insert_with`, placeholder guards | `LoadingCache`, `AsyncCache` |
//! | statistics | [`Cache::stats`]: hits, misses, inserts, updates, evictions, expirations, removals, loads, load time, hits that wrote the policy's state ([`CacheStats::hit_writes`]) | entry count, weighted size (no hit counts) | hits, misses | `recordStats` |
//! | eviction listener with cause | [`CacheBuilder::eviction_listener`], [`RemovalCause`] (called outside every lock, exactly once) | `eviction_listener` | lifecycle hooks | `removalListener`, `evictionListener` |
//! | iteration | [`Cache::iter`] (weakly consistent) | `iter` | `iter` | `asMap()` views |
//! | bulk removal | [`Cache::retain`], [`Cache::remove_if`], [`Cache::clear`], [`Cache::purge_expired`] | `invalidate_entries_if`, `invalidate_all` | `retain`, `clear` | `invalidateAll`, `asMap().entrySet().removeIf` |
//! | atomic per-key compute | [`Cache::compute`] with [`Op`] | `entry().and_compute_with` | `entry` API (replace guard) | `asMap().compute` |
//! | read without a use | [`Cache::peek`], [`Cache::contains_key`] | `contains_key` | `peek` | `getIfPresent` (a use), `asMap().get` |
//! | lock-free hits | yes (FIFO-family policies: one bit, no RMW) | no (read buffer, then locked apply) | sharded locks | striped buffers, then locked apply |
//!
//! ```
//! use sifter::{Cache, ManualClock, RemovalCause};
//! use std::sync::{Arc, Mutex};
//! use std::time::Duration;
//!
//! let clock = ManualClock::new();
//! let gone = Arc::new(Mutex::new(Vec::new()));
//! let g = gone.clone();
//! let cache: Cache<String, u64> = Cache::builder()
//!     .capacity(2)
//!     .time_to_live(Duration::from_secs(60))
//!     .clock(clock.clone())
//!     .eviction_listener(move |k: &String, _v: &u64, cause| g.lock().unwrap().push((k.clone(), cause)))
//!     .build();
//!
//! // A loader runs once per key, however many threads miss at once.
//! assert_eq!(cache.get_with("a".into(), || 1), 1);
//! assert_eq!(cache.get_with("a".into(), || unreachable!()), 1);
//! cache.insert("b".into(), 2);
//! cache.insert("c".into(), 3); // evicts one of the two (capacity 2)
//! clock.advance(Duration::from_secs(60)); // everything expires
//! assert_eq!(cache.get(&"c".to_string()), None);
//!
//! let s = cache.stats();
//! assert_eq!((s.hits, s.load_successes, s.evictions, s.expirations), (1, 1, 1, 1));
//! let gone = gone.lock().unwrap();
//! assert!(gone.iter().any(|(_, c)| *c == RemovalCause::Evicted));
//! assert!(gone.contains(&("c".to_string(), RemovalCause::Expired)));
//! ```
//!
//! Expired entries are never returned; they leave when a lookup, a walk or the eviction sweep
//! meets them (the sweep takes them before any live entry, without a second chance), or on
//! [`Cache::purge_expired`]. Until then they count in `len()` and hold capacity. The listener
//! is not called for entries still in the cache when it is dropped, nor for inserts that were
//! never stored (too heavy, or [`Cache::rejected`]).
//!
//! # Consistency model
//!
//! * **The index is linearizable.** `insert`, `remove` and `clear` take effect at one instant
//!   (one atomic store of an index word, under the short lock of the key's home bucket); a
//!   `get` that overlaps them returns either the value before or the value after, never a mix.
//!   A `get` that starts after `insert` returns returns the new value (or a later one, or
//!   nothing if it was evicted since).
//! * **The policy is eventually consistent.** The reference bit a hit sets may be cleared by a
//!   concurrent eviction pass (costing that entry its second chance), and which entry is evicted
//!   under concurrency is an approximation of the single-threaded order — for Mobius the paper
//!   reports SIEVE's hit ratio within 0.5 points, which our tests check. At one thread each
//!   policy keeps the simulator's order (`sifter sim -p mobius`, ...): SIEVE and LRU exactly;
//!   CLOCK, FIFO and NbQ-CLOCK exactly in caches of fewer than 16 entries per stripe (256
//!   entries on 2 cores, see below), and about within 0.002 of the miss ratio in larger ones,
//!   where the queue policies batch their queue operations; Mobius, whose SIEVE order turns
//!   on small differences, batches only while threads take turns below 4,096 entries (so one
//!   thread is exact there) and always from 4,096 on (within 0.001 on the tests' streams:
//!   docs/BENCHMARKS.md, stop 95); S3-FIFO within 0.002
//!   (its ghost keeps fingerprints), Prob-LRU within 0.005 (its own coins).
//! * `get` returns a clone of the value (`V: Clone`); store `Arc<T>` for large values. A value
//!   being read is never dropped under the reader: entries live in a preallocated arena of
//!   slots, and a slot is reused only after every thread that could have found it has left
//!   the cache. A `get` or a `remove` announces the one slot it reads (a hazard in the
//!   thread's own record, no shared write), so a reader preempted mid-`get` keeps that slot,
//!   not the reclamation of the whole cache, from going on; so do the closures of `compute`,
//!   `remove_if` and `retain` (a slow closure holds back its entry's slot only); rarer
//!   operations (iteration, `clear`) pin an epoch for a moment at a time.
//! * A value that leaves the cache is dropped once no reader can still be cloning it: an
//!   evicted one when its slot is reused (or by `clear`, `set_capacity` and the drop of the
//!   cache); a removed or replaced one, under the queue policies, a few retirements of its
//!   thread's stripe later, even while its slot still waits in the queue (the locked policies
//!   retire its slot at once: dropped at reuse, as an evicted one). So the values alive are
//!   those of the cache's entries plus a bounded number of recent departures, whatever the
//!   traffic (updates of the same keys included).
//! * An update (an insert of a cached key, without a weigher or custom expiry) writes the new
//!   value over the old one in place when no other thread can be reading the old one, and
//!   drops the old value at once; a `get` of that key meanwhile waits for the move (no user
//!   code runs in it). Otherwise it stores a new version, as an insert of a new key does.
//!
//! # Capacity: the bound always holds
//!
//! The capacity is a pool of tokens that an insert takes *before* it links its entry and that
//! an entry gives back the moment it leaves the index. So `len`/`weight` never exceed the
//! capacity — not while inserts are in flight, not when a thread is preempted anywhere, and
//! not at rest — with one exception: an update (an insert of a cached key, in a cache without
//! a weigher) that finds no token at hand does not evict for one, as the version it replaces
//! pays for it; if that version leaves (evicted, removed) in the moment between, the insert
//! adds its entry and takes its token just after, so while it does the cache may hold one
//! entry more than its capacity per such insert in flight. Removed and replaced entries give
//! their capacity back at once (with the lock-free queues their slot waits for the eviction
//! scan, or a sweep, which takes it first). An update counts as a use of the entry, as a hit
//! does.
//! Tokens are striped per group of threads; up to `stripes × capacity/1024` of them may sit
//! unused in the stripes of idle threads, which the others take when the pool runs dry. The
//! queue policies (Mobius, CLOCK, FIFO, NbQ-CLOCK) and S3-FIFO evict up to 8 entries at a time
//! in caches without a weigher of at least 16 entries per stripe (one scan and one shared write
//! for all of them; the batch is an eighth of the capacity per stripe, at most 8, so 8 from
//! 1,024 entries on 2 cores; Mobius below 4,096 entries only while another group of threads
//! evicted since this one last did), and such a cache holds up to a batch less one entries
//! per active group of threads fewer than its capacity until the next inserts use that room.
//! (There are 8 stripes per core, 4 to 64.) An entry whose weight exceeds the capacity is not
//! stored. An insert that cannot make room within a bounded number of attempts and then
//! 200 ms (threads preempted where others wait for them, with the cache at its limits) is not
//! stored either, and counted by [`Cache::rejected`]; so is one made from the listener (or a
//! key's or value's `Drop`) that finds no room without waiting, since the operation that
//! called it may hold that room (a listener inserting into its own full cache of capacity 1).
//!
//! # Costs
//!
//! Per entry, beyond the key and value: [`Cache::overhead_per_entry`] bytes (a 16-byte slot
//! header with the weight, queue link, reference bit and state; about 16 bytes of index — a
//! 64-byte bucket per four entries; a share of the 1/16 spare slots). `sifter bench --mem`
//! measures it: about 35 bytes per u64 → u64 entry, whatever the number of threads (the arena
//! grows only if reclamation stalls, which preempted readers no longer cause). Hits: one hash,
//! one hazard (a locked store to the thread's own record), one index line (tags of seven
//! entries), one slot line, an optional bit store, and the value clone. Misses: the index
//! line; inserts take tokens and a slot from the thread's stripe and evict into it (one CAS on
//! the queue head), all without allocation.
//!
//! **Against quick_cache** (`sifter bench`, read-through, Zipf 1.0 over a million u64 keys,
//! u64 values, ratios of throughput in the same processes on 2-vCPU VMs; docs/BENCHMARKS.md).
//! On an AMD EPYC host: with two threads Mobius runs 1.4–1.9× quick_cache at 1,000–10,000
//! entries and 2.4–3.3× at 100,000; with one thread it runs 0.7–0.75× below 4,096 entries
//! (where one thread alone evicts and enqueues one entry at a time, for the simulator's
//! order), 0.85–0.9× at 10,000, and level or ahead from about 20,000 (1.1–1.5× at 100,000). On
//! an Intel Xeon host, where a cache line takes 15–180 ns between the cores and quick_cache's
//! shard locks suffer more from it: 1.7–2.9× at 10,000 and 2.7–3.8× at 100,000 with two
//! threads, 0.75–0.9× at 10,000 and 1.1–1.4× at 100,000 with one. A small cache at one thread is
//! where quick_cache's insert, one lock over sequential structures, beats Mobius's concurrent
//! insert (about twice the instructions: capacity, slots and queues kept without a lock, an
//! index that lookups read without one); with keys that cost something to hash
//! and compare (`String`) and pointer values, Mobius was level at 10,000 (stop 73). Its hit
//! ratio is SIEVE's: on this stream 1.0–1.2 points below quick_cache's up to 50,000 entries,
//! 0.6 at 100,000, 0.1 at 200,000.
//!
//! **Huge pages.** The arena and the index (and [`MultiStepCache`]'s sets) are allocated
//! once, by the global allocator, and on Linux advised for transparent huge pages
//! (`madvise(MADV_HUGEPAGE)`) before their first write, the small pages of memory the
//! allocator hands out again dropped first (`MADV_DONTNEED`; the arena's blocks from 2 MiB on
//! are also aligned to 2 MiB), so a hit's two lines do not each cost a page walk once the cache
//! outgrows the TLB's reach (about a million u64 → u64 entries and up: hits 10–25 % faster
//! here). It is a hint:
//! with transparent huge pages off (`/sys/kernel/mm/transparent_hugepage/enabled` = `never`)
//! nothing changes. `SIFTER_HUGE_PAGES=off` in the environment turns the advice off for the
//! tables allocated after it is set (to compare, or where huge pages are unwelcome).
//!
//! **Large caches are committed as they fill.** Tables of 32 MiB or more (a cache of about a
//! million u64 → u64 entries and up; [`MultiStepCache`]'s sets too) are allocated zeroed and
//! not written at construction,
//! so building a cache of 100M entries takes under a millisecond (it took 24 s) and its
//! resident memory grows with its entries, not with its capacity (the index, written at
//! random, is committed first). The first writes into such a cache pay the page faults
//! instead. On Linux with the default overcommit, the memory the capacity needs is therefore
//! not reserved when the cache is built: a capacity the allocator refuses outright is
//! [`BuildError::OutOfMemory`], one it grants but the machine cannot back fails later, as
//! it fills, like any allocation the kernel overcommits.
//!
//! # Safety
//!
//! The unsafe core (`raw/`: the arena, the index, the lock-free queue, the epochs) is small,
//! documents the invariant behind every `unsafe` block and the pairing of every atomic
//! ordering, is model checked with loom, stress-tested with invariant checks
//! ([`Cache::validate`]) under oversubscription, and run under Miri.

#![deny(unsafe_op_in_unsafe_fn)]
// The loom build (`--cfg loom`, scripts/loom.sh) compiles the primitives its models check and
// leaves out `Cache` and its callers: what only they use is unused there.
#![cfg_attr(loom, allow(dead_code, unused_imports))]

mod policy;
mod raw;
mod sync;

#[cfg(not(loom))]
mod cache;
#[cfg(not(loom))]
mod expiry;
#[cfg(not(loom))]
mod listener;
#[cfg(not(loom))]
mod loader;
#[cfg(not(loom))]
mod multistep;
#[cfg(not(loom))]
mod panics;
#[cfg(not(loom))]
mod stats;
#[cfg(not(loom))]
mod views;
#[cfg(not(loom))]
pub use cache::Cache;
#[cfg(not(loom))]
pub use expiry::{Clock, CoarseClock, Expiry, ManualClock};
#[cfg(not(loom))]
pub use listener::RemovalCause;
#[cfg(not(loom))]
pub use multistep::MultiStepCache;
#[cfg(not(loom))]
pub use stats::CacheStats;
#[cfg(not(loom))]
pub use views::{Iter, Op};

/// Test-only stall points (feature `test-hooks`), to park a thread inside the windows a
/// preempted thread can leave open.
#[cfg(all(feature = "test-hooks", not(loom)))]
pub use raw::queue::hooks;

#[cfg(feature = "profile")]
pub mod profile;

#[cfg(loom)]
#[doc(hidden)]
pub mod loom_api;

/// Eviction policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Policy {
    /// Mobius: SIEVE semantics on two lock-free FIFO queues in rotation (default).
    #[default]
    Mobius,
    /// SIEVE with a locked list and hand; hits are lock-free.
    Sieve,
    /// LRU with one global lock.
    Lru,
    /// FIFO on a lock-free queue.
    Fifo,
    /// CLOCK (FIFO-Reinsertion, 1 bit) on a lock-free queue.
    Clock,
    /// S3-FIFO: small and main lock-free FIFO queues, 2-bit frequencies, a ghost of
    /// fingerprints.
    S3Fifo,
    /// NbQ-CLOCK: Generalized CLOCK with 8-bit counters circulating through a lock-free
    /// queue (with `consecutive_detection`, visited runs are re-inserted in one batch).
    NbqClock,
    /// Probabilistic LRU: LRU's locked list, but a hit takes the lock and moves the entry to
    /// the head only with probability 1 − q ([`CacheBuilder::promotion_skip`], default 0.5);
    /// the other hits write nothing (the hit-ratio-vs-throughput paper's fix for LRU).
    ProbLru,
}

impl Policy {
    /// Every policy.
    pub const ALL: [Policy; 8] = [
        Policy::Mobius,
        Policy::Sieve,
        Policy::Lru,
        Policy::Fifo,
        Policy::Clock,
        Policy::S3Fifo,
        Policy::NbqClock,
        Policy::ProbLru,
    ];

    /// Lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Mobius => "mobius",
            Policy::Sieve => "sieve",
            Policy::Lru => "lru",
            Policy::Fifo => "fifo",
            Policy::Clock => "clock",
            Policy::S3Fifo => "s3fifo",
            Policy::NbqClock => "nbq-clock",
            Policy::ProbLru => "problru",
        }
    }
}

impl std::str::FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Policy::ALL.into_iter().find(|p| p.name().eq_ignore_ascii_case(s)).ok_or_else(|| {
            format!(
                "unknown policy '{s}' (known: mobius, sieve, lru, fifo, clock, s3fifo, \
                     nbq-clock, problru)"
            )
        })
    }
}

/// A cache configuration error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// Neither `capacity` nor `weight_capacity` was set.
    NoCapacity,
    /// Both were set.
    BothCapacities,
    /// A weigher without `weight_capacity`, or the reverse.
    WeigherMismatch,
    /// Capacity above what the structures can address.
    TooLarge(u64),
    /// The allocator refused the cache's tables (they are allocated whole, for the capacity,
    /// when the cache is built): more memory than the machine gives the process.
    OutOfMemory {
        /// The capacity asked for (entries, or weight units with a weigher).
        capacity: u64,
        /// The size of the allocation that failed, in bytes (`usize::MAX`: beyond the
        /// address space).
        bytes: usize,
    },
    /// [`Cache::set_capacity`] above the capacity the cache was built with.
    Resize {
        /// The capacity asked for.
        asked: u64,
        /// The capacity the cache was built with.
        max: u64,
    },
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::NoCapacity => {
                write!(f, "set a capacity: .capacity(entries) or .weight_capacity(units)")
            }
            BuildError::BothCapacities => {
                write!(f, "set either .capacity(entries) or .weight_capacity(units), not both")
            }
            BuildError::WeigherMismatch => {
                write!(f, ".weigher(..) and .weight_capacity(..) go together")
            }
            BuildError::TooLarge(c) => {
                write!(f, "capacity {c} is too large (at most about 10^9 entries)")
            }
            BuildError::OutOfMemory { capacity, bytes: usize::MAX } => write!(
                f,
                "capacity {capacity} needs more memory than the address space holds \
                 (the cache's tables are allocated whole when it is built)"
            ),
            BuildError::OutOfMemory { capacity, bytes } => write!(
                f,
                "not enough memory for capacity {capacity}: allocating {bytes} bytes failed \
                 (the cache's tables are allocated whole when it is built)"
            ),
            BuildError::Resize { asked, max } => write!(
                f,
                "capacity {asked} is above the {max} the cache was built with (its storage is \
                 sized for that; build it with the largest capacity it may need)"
            ),
        }
    }
}

impl std::error::Error for BuildError {}

#[cfg(not(loom))]
type WeigherFn<K, V> = Box<dyn Fn(&K, &V) -> u64 + Send + Sync>;

/// Builds a [`Cache`].
#[cfg(not(loom))]
pub struct CacheBuilder<K, V, S = foldhash::fast::RandomState> {
    capacity: Option<u64>,
    weight_capacity: Option<u64>,
    weigher: Option<WeigherFn<K, V>>,
    policy: Policy,
    consecutive: bool,
    promotion_skip: f64,
    estimated_entries: Option<usize>,
    hasher: S,
    listener: Option<listener::ListenerFn<K, V>>,
    ttl: Option<std::time::Duration>,
    tti: Option<std::time::Duration>,
    expiry: Option<Box<dyn Expiry<K, V>>>,
    per_entry: bool,
    clock: Option<Box<dyn Clock>>,
}

#[cfg(not(loom))]
impl<K, V, S> std::fmt::Debug for CacheBuilder<K, V, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheBuilder")
            .field("capacity", &self.capacity)
            .field("weight_capacity", &self.weight_capacity)
            .field("policy", &self.policy)
            .field("consecutive_detection", &self.consecutive)
            .field("time_to_live", &self.ttl)
            .field("time_to_idle", &self.tti)
            .field("listener", &self.listener.is_some())
            .finish_non_exhaustive()
    }
}

#[cfg(not(loom))]
impl<K, V> Cache<K, V>
where
    K: std::hash::Hash + Eq + Send + Sync + 'static,
    V: Send + Sync + 'static,
{
    /// A cache of up to `entries` entries with the defaults (Mobius with consecutive
    /// detection, foldhash hashing): `Cache::builder().capacity(entries).build()`.
    ///
    /// ```
    /// let cache: sifter::Cache<u64, String> = sifter::Cache::new(1000);
    /// cache.insert(7, "seven".to_string());
    /// assert_eq!(cache.get(&7).as_deref(), Some("seven"));
    /// ```
    ///
    /// # Panics
    /// If `entries` is more than about 10^9 (slot numbers, growth room included, stay below
    /// 2^31), or more than the memory available holds (the tables are allocated whole, here);
    /// [`CacheBuilder::try_build`] is the non-panicking form. A capacity of 0 is valid: such a
    /// cache keeps nothing.
    pub fn new(entries: u64) -> Self {
        Self::builder().capacity(entries).build()
    }
}

#[cfg(not(loom))]
impl<K, V> Cache<K, V> {
    /// A builder with the defaults: Mobius with consecutive detection, foldhash hashing.
    pub fn builder() -> CacheBuilder<K, V> {
        CacheBuilder {
            capacity: None,
            weight_capacity: None,
            weigher: None,
            policy: Policy::Mobius,
            consecutive: true,
            promotion_skip: 0.5,
            estimated_entries: None,
            hasher: foldhash::fast::RandomState::default(),
            listener: None,
            ttl: None,
            tti: None,
            expiry: None,
            per_entry: false,
            clock: None,
        }
    }
}

#[cfg(not(loom))]
impl<K, V, S> CacheBuilder<K, V, S> {
    /// Bound the cache to `entries` entries.
    pub fn capacity(mut self, entries: u64) -> Self {
        self.capacity = Some(entries);
        self
    }

    /// Bound the total weight instead (use with [`CacheBuilder::weigher`]).
    pub fn weight_capacity(mut self, units: u64) -> Self {
        self.weight_capacity = Some(units);
        self
    }

    /// How much each entry weighs (e.g. its size in bytes).
    pub fn weigher(mut self, f: impl Fn(&K, &V) -> u64 + Send + Sync + 'static) -> Self {
        self.weigher = Some(Box::new(f));
        self
    }

    /// The eviction policy (default Mobius).
    pub fn policy(mut self, p: Policy) -> Self {
        self.policy = p;
        self
    }

    /// Mobius's consecutive detection (default on); off is the paper's "Mobius-w/d" ablation.
    /// For NbQ-CLOCK: the batched re-insert of visited runs (on) or one at a time (off).
    pub fn consecutive_detection(mut self, on: bool) -> Self {
        self.consecutive = on;
        self
    }

    /// [`Policy::ProbLru`]: the probability `q` that a hit skips the promotion to the head
    /// (0: LRU, 1: FIFO; default 0.5; values outside 0..=1 are clamped, NaN is 0.5).
    /// Ignored by the other policies.
    pub fn promotion_skip(mut self, q: f64) -> Self {
        self.promotion_skip = if q.is_nan() { 0.5 } else { q.clamp(0.0, 1.0) };
        self
    }

    /// Expected entries of a weight-bounded cache (at most 10^9; default `weight_capacity / 64`
    /// clamped to 1,024..=4,194,304): its slot arena is preallocated for this many (plus 1/16
    /// and 256 spare slots) and grows in chunks up to about twice that when slots run out;
    /// beyond, an insert evicts even if weight remains. The index is sized for the largest arena.
    /// Ignored by entry-bounded caches, whose arena is sized from the capacity.
    pub fn estimated_entries(mut self, n: usize) -> Self {
        self.estimated_entries = Some(n);
        self
    }

    /// The hasher for keys. Its hashes need not be well mixed: the cache stirs every hash with
    /// one multiply before using it, so even an identity hash of sequential integers spreads
    /// over the index (equal hashes still share a home bucket: a hasher that returns few
    /// distinct values makes lookups probe far).
    pub fn hasher<S2: std::hash::BuildHasher>(self, hasher: S2) -> CacheBuilder<K, V, S2> {
        CacheBuilder {
            capacity: self.capacity,
            weight_capacity: self.weight_capacity,
            weigher: self.weigher,
            policy: self.policy,
            consecutive: self.consecutive,
            promotion_skip: self.promotion_skip,
            estimated_entries: self.estimated_entries,
            hasher,
            listener: self.listener,
            ttl: self.ttl,
            tti: self.tti,
            expiry: self.expiry,
            per_entry: self.per_entry,
            clock: self.clock,
        }
    }

    /// Entries expire this long after they were written (created or replaced).
    ///
    /// Expiry is judged on the cache's [`Clock`]; the default, [`CoarseClock`], keeps a
    /// background thread advancing a shared time every millisecond while the cache lives.
    pub fn time_to_live(mut self, ttl: std::time::Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// Entries expire when not read (`get`) or written for this long. With a time-to-live as
    /// well, an entry expires at whichever comes first.
    ///
    /// ```
    /// use sifter::{Cache, ManualClock};
    /// use std::time::Duration;
    ///
    /// let clock = ManualClock::new();
    /// let cache: Cache<u64, u64> = Cache::builder()
    ///     .capacity(100)
    ///     .time_to_idle(Duration::from_secs(10))
    ///     .time_to_live(Duration::from_secs(25))
    ///     .clock(clock.clone())
    ///     .build();
    /// cache.insert(1, 10);
    /// cache.insert(2, 20);
    /// clock.advance(Duration::from_secs(8));
    /// assert_eq!(cache.get(&1), Some(10)); // a read: key 1 is idle from now on
    /// assert_eq!(cache.peek(&2), Some(20)); // a peek is not a use: key 2 stays idle since 0
    /// clock.advance(Duration::from_secs(8));
    /// assert_eq!(cache.get(&1), Some(10)); // read 8 s ago
    /// assert_eq!(cache.get(&2), None); // idle for 16 s
    /// clock.advance(Duration::from_secs(9));
    /// assert_eq!(cache.get(&1), None); // read recently, but written 25 s ago
    /// ```
    pub fn time_to_idle(mut self, tti: std::time::Duration) -> Self {
        self.tti = Some(tti);
        self
    }

    /// Per-entry expiry computed by `e` on create, update and read; takes the place of
    /// `time_to_live` and `time_to_idle`.
    pub fn expiry(mut self, e: impl Expiry<K, V> + 'static) -> Self {
        self.expiry = Some(Box::new(e));
        self
    }

    /// Room for an expiry time per entry without a default one, for
    /// [`Cache::insert_with_ttl`] (8 bytes per slot; implied by the other expiry settings).
    pub fn per_entry_expiry(mut self) -> Self {
        self.per_entry = true;
        self
    }

    /// The clock expiry is measured on (default [`CoarseClock`]; tests use [`ManualClock`]).
    pub fn clock(mut self, c: impl Clock) -> Self {
        self.clock = Some(Box::new(c));
        self
    }

    /// Called with the key, value and cause of every entry that leaves the cache (evicted,
    /// expired, removed, replaced or cleared), exactly once per entry, by the thread whose
    /// operation made it leave, after that operation has released every lock. Entries still
    /// in the cache when it is dropped are not reported. A panic in the listener is caught,
    /// the operation completes, and the panic is then resumed in the calling thread.
    pub fn eviction_listener(
        mut self,
        f: impl Fn(&K, &V, RemovalCause) + Send + Sync + 'static,
    ) -> Self {
        self.listener = Some(Box::new(f));
        self
    }

    /// Builds the cache, or says what is wrong with the configuration, or that the memory for
    /// its tables could not be had ([`BuildError::OutOfMemory`]: a cache allocates its slots
    /// and index whole, for the capacity, when it is built).
    pub fn try_build(self) -> Result<Cache<K, V, S>, BuildError>
    where
        K: std::hash::Hash + Eq + Send + Sync + 'static,
        V: Send + Sync + 'static,
        S: std::hash::BuildHasher,
    {
        let (capacity, estimate) =
            match (self.capacity, self.weight_capacity, self.weigher.is_some()) {
                (None, None, _) => return Err(BuildError::NoCapacity),
                (Some(_), Some(_), _) => return Err(BuildError::BothCapacities),
                (Some(_), None, true) | (None, Some(_), false) => {
                    return Err(BuildError::WeigherMismatch)
                }
                (Some(c), None, false) => (c, c as usize),
                (None, Some(w), true) => (w, (w / 64).clamp(1024, 1 << 22) as usize),
            };
        if self.capacity.is_some_and(|c| c > u32::MAX as u64) {
            return Err(BuildError::TooLarge(capacity));
        }
        let estimate = if self.capacity.is_some() {
            estimate
        } else {
            // (The arena's limit, just under 2^31 slots with growth room, fits 10^9 entries.)
            self.estimated_entries.unwrap_or(estimate).min(1_000_000_000)
        };
        let expiring =
            self.ttl.is_some() || self.tti.is_some() || self.expiry.is_some() || self.per_entry;
        let expiration = expiring.then(|| expiry::Expiration {
            _ticking: self.clock.is_none().then(expiry::ticker::keep_ticking),
            clock: self.clock,
            ttl: self.ttl.map(expiry::nanos),
            tti: self.tti.map(expiry::nanos),
            reads_move: match &self.expiry {
                Some(e) => e.reads_change_expiry(),
                None => self.tti.is_some(),
            },
            custom: self.expiry,
        });
        cache::Cache::from_parts(
            self.policy,
            self.consecutive,
            capacity,
            estimate,
            self.weigher,
            self.hasher,
            cache::Extras {
                listener: self.listener,
                expiration,
                promotion_skip: self.promotion_skip,
            },
        )
    }

    /// Builds the cache.
    ///
    /// # Panics
    /// If the configuration is invalid (see [`CacheBuilder::try_build`] for the non-panicking
    /// form): no capacity, both capacities, or a weigher without a weight capacity; a
    /// capacity too large to address or to allocate.
    pub fn build(self) -> Cache<K, V, S>
    where
        K: std::hash::Hash + Eq + Send + Sync + 'static,
        V: Send + Sync + 'static,
        S: std::hash::BuildHasher,
    {
        match self.try_build() {
            Ok(c) => c,
            Err(e) => panic!("sifter::Cache: {e}"),
        }
    }
}

//! `Cache<K, V>`: the arena, the index, a policy, the epochs, and capacity tokens.
//!
//! # Capacity tokens
//!
//! The capacity is a pool of tokens (weight units) that is conserved exactly: at every instant,
//! tokens in the stripes + tokens in the global pool + tokens held by inserts in flight + the
//! weight of the LIVE entries = the capacity. An insert takes its entry's weight in tokens
//! *before* it links the entry (from its stripe, else the global pool, else by evicting), and
//! an entry's tokens come back when it leaves the index (eviction, removal, replacement), to
//! the stripe of the thread that unlinked it. So the live weight never exceeds the capacity,
//! not even transiently, however many inserts are in flight or preempted.
//!
//! Stripes (one per group of threads, cache-padded) keep the common path off shared lines: at
//! steady state an insert evicts victims and takes back their tokens in its own stripe (queue
//! policies and S3-FIFO take [`EVICT_BATCH`] victims at once, leaving the spare tokens for the
//! stripe's next inserts). A stripe keeps at most `spill` tokens (about 1/1024 of the
//! capacity) after a removal; the rest goes back to the global pool, so tokens stranded in
//! idle threads' stripes are bounded by `stripes × max(spill, EVICT_BATCH - 1)`. An insert
//! that finds nothing in its stripe, the pool, or the policy takes the other stripes' tokens.
//!
//! An insert that cannot get tokens within a bounded number of attempts (every entry held by
//! inserts in flight), or a slot within the attempts and then [`SLOT_WAIT`] (reclamation held
//! up by threads preempted while pinned, with the arena grown to its limit), is not stored;
//! [`Cache::rejected`] counts them.

use crate::expiry::{expired, Expiration};
use crate::listener::{ListenerFn, RemovalCause};
use crate::loader::Loads;
use crate::panics;
use crate::policy::locked::{Kind, Locked};
use crate::policy::queues::Nodes;
use crate::policy::queues::{link_private, reset, Mode, Queues, Taken};
use crate::policy::s3fifo::{S3Fifo, MAIN, MAX_FREQ};
use crate::raw::epoch::{thread_id, Advance, Epochs, Guard, LazyPin};
use crate::raw::index::{pinned, spread, tag, First, Index, Inserted};
use crate::raw::queue::Links;
use crate::raw::slot::{
    hollowed, let_go, Arena, LetGo, Slot, Times, DEAD, EMPTY, HOLLOW, LIVE, RETIRED, TAKEN,
};
use crate::raw::table::AllocError;
use crate::stats::{CacheStats, Counter, Stats};
use crate::sync::{AtomicU8, Backoff, SpinLock};
use crate::{BuildError, Policy};
use crossbeam_utils::CachePadded;
use std::borrow::Borrow;
use std::collections::HashSet;
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};

type Weigher<K, V> = Box<dyn Fn(&K, &V) -> u64 + Send + Sync>;

/// Attempts an insert makes to get tokens or a slot before it gives up.
const ATTEMPTS: usize = 64;

/// How long an insert that found every slot live or in limbo waits for reclamation (threads
/// preempted while pinned hold the epochs back until the scheduler runs them again, within a
/// few scheduling periods) before it gives up.
const SLOT_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

// The queue variant is large because its heads and tails are cache-padded, on purpose; a
// cache has exactly one of these, so boxing would only add an indirection on every operation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Structure {
    Queues(Queues),
    Locked(Locked),
    S3(S3Fifo),
}

/// Free and retired slots of one stripe.
#[derive(Debug, Default)]
struct Lists {
    /// Reusable slots (EMPTY, or RETIRED with contents to drop at reuse).
    free: Vec<u32>,
    /// Retired slots by epoch residue mod 4 (a mask, not a division): (epoch, slots). Moved
    /// to `free` by [`Lists::collect`] after an advance attempt whose hazards cover them.
    limbo: [(u64, Vec<u32>); 4],
    /// Retired slots waiting for an advance attempt that frees them: those a hazard named
    /// (their epochs are past), and a limbo bucket's whose residue came round before any
    /// attempt freed them. `wait_epoch` is the latest retirement epoch among them.
    wait: Vec<u32>,
    wait_epoch: u64,
    /// Retirements since this stripe last tried to advance the epoch.
    since_advance: u32,
    /// Hollow entries (slot numbers with [`HOLLOW_ENTRY`] set) in `limbo` and `wait`: removed
    /// slots whose contents wait out their grace period there (see `raw/slot.rs`, hollowing).
    hollow_entries: u32,
    /// Removed slots whose grace period is over, for [`Cache::hollow`] to drop their contents
    /// (outside the lock).
    hollow: Vec<u32>,
    /// New slots of this stripe's inserts not yet enqueued (queue policies): a private chain
    /// `pend_first..=pend_last` of `pend_len` slots, enqueued in one go (one tail CAS for
    /// [`BATCH`] inserts instead of one each).
    pend_first: u32,
    pend_last: u32,
    pend_len: u32,
}

/// Most new entries a stripe gathers before enqueueing them as one chain (one tail CAS for all
/// of them; fewer in small caches, see [`batches`]). Gathered entries
/// cannot be evicted until the chain is enqueued: a queue policy's eviction scan that reaches
/// the tail enqueues its own stripe's chain first (so that, at one thread, the policy sees
/// every entry in insertion order wherever the tail matters to it), and an eviction that finds
/// the queues empty flushes every stripe.
const BATCH: u32 = 8;

/// Most victims an insert that must evict takes from a queue policy or S3-FIFO at once (caches
/// without a weigher; fewer in small caches, see [`batches`]): one scan and one head CAS for
/// all of them, and their tokens serve the stripe's next inserts without an eviction each. The
/// cache then holds up to `evict_batch - 1` entries per active stripe fewer than its capacity
/// until those inserts come.
const EVICT_BATCH: usize = 8;

/// The pending-chain length and the eviction batch of a cache of `capacity` with `stripes`
/// stripes; `evicts_in_batches`: a queue policy or S3-FIFO without a weigher. Each is an eighth
/// of the capacity per stripe, at most `BATCH` (`EVICT_BATCH`), so that the entries the stripes
/// may hold back in chains (`stripes × (chain − 1)`) and the tokens they may hold spare between
/// two evictions (`stripes × (evict_batch − 1)`) each stay below an eighth of the capacity.
/// Without batches, two threads inserting into a cache of a few hundred entries meet on the
/// queue's head and tail at every insert: at 256 and 1,000 entries Mobius ran 2.5–3× slower
/// with two threads than with one (docs/BENCHMARKS.md, stop 78).
fn batches(capacity: u64, stripes: u64, evicts_in_batches: bool) -> (u32, usize) {
    let per_stripe = capacity / (stripes * 8).max(1);
    let gather = per_stripe.clamp(1, u64::from(BATCH)) as u32;
    let evict =
        if evicts_in_batches { per_stripe.clamp(1, EVICT_BATCH as u64) as usize } else { 1 };
    (gather, evict)
}

/// Slots a sweep for removed entries passes over at most (see [`Cache::sweep_removed`]).
const SWEEP: usize = 64;

/// Retirements per stripe between attempts to advance the epoch: slots wait in limbo for
/// about two such rounds.
const ADVANCE_EVERY: u32 = 16;

/// Marks a hollow entry in a limbo (slot numbers stay below 2^31): the slot is removed and
/// still queued, and only its contents wait for the grace period (see `raw/slot.rs`).
const HOLLOW_ENTRY: u32 = 1 << 31;

impl Lists {
    /// Moves the retired slots that advance attempt `adv` allows to the free list: every limbo
    /// bucket it covers, minus the slots a hazard names (to `wait`), and `wait` if it covers
    /// that.
    fn collect(&mut self, adv: &Advance) {
        if !self.wait.is_empty() && adv.covers(self.wait_epoch) {
            let (mut wait, e) = (std::mem::take(&mut self.wait), self.wait_epoch);
            self.wait_epoch = 0;
            self.release(wait.drain(..), adv, e);
            if self.wait.is_empty() {
                self.wait = wait; // keep the allocation
            }
        }
        for i in 0..self.limbo.len() {
            let e = self.limbo[i].0;
            if self.limbo[i].1.is_empty() || !adv.covers(e) {
                continue;
            }
            if adv.any_hazard() || self.hollow_entries > 0 {
                let mut v = std::mem::take(&mut self.limbo[i].1);
                self.release(v.drain(..), adv, e);
                self.limbo[i].1 = v; // empty, its allocation kept
            } else {
                self.free.append(&mut self.limbo[i].1);
            }
        }
    }

    /// `slots` (retired at epoch `e` or before, covered by `adv`) to the free list, or to
    /// `wait` where a hazard names them.
    fn release(&mut self, slots: impl Iterator<Item = u32>, adv: &Advance, e: u64) {
        for s in slots {
            if adv.free(s & !HOLLOW_ENTRY) {
                if s & HOLLOW_ENTRY == 0 {
                    self.free.push(s);
                } else {
                    self.hollow_entries -= 1;
                    self.hollow.push(s & !HOLLOW_ENTRY);
                }
            } else {
                self.wait.push(s);
                self.wait_epoch = self.wait_epoch.max(e);
            }
        }
    }

    /// Puts a hollow entry for removed slot `s` in limbo (see [`HOLLOW_ENTRY`]); true when it
    /// is time to try to advance the epoch.
    fn retire_hollow(&mut self, s: u32, epoch: u64) -> bool {
        self.hollow_entries += 1;
        self.retire(s | HOLLOW_ENTRY, epoch)
    }

    /// Counts `n` slots freed at once (reused without the limbo, see `Epochs::quiet`) toward
    /// the next advance attempt while retired slots or hollow entries wait in `limbo` or
    /// `wait`: they need the epochs to move, and at steady state the victims freed at once
    /// are what the stripe retires. True when it is time to try to advance.
    fn freed_at_once(&mut self, n: u32) -> bool {
        if self.wait.is_empty() && self.limbo.iter().all(|(_, v)| v.is_empty()) {
            return false;
        }
        self.since_advance += n;
        if self.since_advance >= ADVANCE_EVERY {
            self.since_advance = 0;
            return true;
        }
        false
    }

    /// Puts `s` in limbo; true when it is time to try to advance the epoch.
    #[inline]
    fn retire(&mut self, s: u32, epoch: u64) -> bool {
        let (e, v) = &mut self.limbo[(epoch & 3) as usize];
        if *e < epoch {
            // The bucket holds slots of epoch - 4 (or older) that no advance attempt has
            // freed yet (this stripe made none since): they wait for the next.
            if !v.is_empty() {
                self.wait.append(v);
                self.wait_epoch = self.wait_epoch.max(*e);
            }
            *e = epoch;
        }
        // (If the bucket is newer — another thread of this stripe retired at a later epoch
        // while we were about to — `s` joins it and waits longer than it needs to.)
        v.push(s);
        self.since_advance += 1;
        if self.since_advance >= ADVANCE_EVERY {
            self.since_advance = 0;
            return true;
        }
        false
    }
}

/// Victims of one insert, retired together with the slot allocation (one stripe lock).
#[derive(Debug, Default)]
struct Victims {
    slots: [u32; 8],
    len: usize,
}

impl Victims {
    #[inline]
    fn push(&mut self, s: u32) {
        self.slots[self.len] = s;
        self.len += 1;
    }
    #[inline]
    fn as_slice(&self) -> &[u32] {
        &self.slots[..self.len]
    }
}

#[derive(Debug, Default)]
struct Stripe {
    /// Capacity tokens held by this stripe.
    tokens: AtomicU64,
    /// Entries linked minus entries unlinked by this stripe's threads (weighted caches' `len`).
    live: AtomicI64,
    lists: SpinLock<Lists>,
    /// Removed slots a queue policy still holds (garbage until a scan or a sweep reaches
    /// them): +1 for each unlink by this stripe's threads that leaves its slot queued, −1 for
    /// each such slot they take out of the queues. The sum over stripes is exact when
    /// quiescent.
    garbage: AtomicI64,
}

/// A concurrent cache. See the [crate docs](crate) for the consistency model and costs.
pub struct Cache<K, V, S = foldhash::fast::RandomState> {
    arena: Arena<K, V>,
    index: Index,
    epochs: Epochs,
    structure: Structure,
    stripes: Box<[CachePadded<Stripe>]>,
    /// Tokens not in any stripe.
    pool: CachePadded<AtomicU64>,
    /// Slots never used so far are `fresh..arena.len()`.
    fresh: CachePadded<AtomicUsize>,
    /// Inserts not stored (see the module docs).
    rejected: CachePadded<AtomicU64>,
    policy: Policy,
    consecutive: bool,
    hasher: S,
    weigher: Option<Weigher<K, V>>,
    /// Capacity in weight units (entries when there is no weigher); changed only by
    /// [`Cache::set_capacity`], under `resize`.
    capacity: AtomicU64,
    /// The capacity the cache was built with: the arena and the index are sized for it, so
    /// [`Cache::set_capacity`] may not go above it.
    max_capacity: u64,
    /// Serialises [`Cache::set_capacity`].
    resize: crate::sync::Mutex<()>,
    /// Most tokens a stripe keeps after a removal.
    spill: u64,
    /// New entries gathered per stripe before one enqueue (see [`BATCH`]).
    batch: u32,
    /// Victims an insert that must evict takes at once (see [`EVICT_BATCH`]).
    evict_batch: usize,
    stats: Stats,
    listener: Option<ListenerFn<K, V>>,
    expiration: Option<Expiration<K, V>>,
    /// Loads in flight (`get_with` and friends).
    loads: Loads<K, V>,
    /// Prob-LRU: a hit is promoted when a uniform 32-bit draw is below this ((1 − q) · 2^32).
    promote_below: u64,
    /// What a hit does to the policy's state (one match on the hit path).
    on_hit: OnHit,
    /// Whether updates may write in place ([`Cache::update_in_place`]): not with a weigher
    /// (an update may change the weight) or a custom expiry (its update callback reads the
    /// new version after publication).
    in_place: bool,
    /// Whether removed slots left in a queue are hollowed (their contents dropped after their
    /// grace period, not when the queue lets go of them; see `raw/slot.rs`): queue policies
    /// whose keys or values have drop glue.
    hollows: bool,
}

/// What a hit does to the policy's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnHit {
    /// Sets the reference bit if it is clear (Mobius, CLOCK, SIEVE).
    Touch,
    /// Nothing (FIFO).
    Nothing,
    /// Raises the 2-bit frequency (S3-FIFO).
    CountFreq,
    /// Raises the 8-bit counter (NbQ-CLOCK).
    Bump,
    /// Moves the entry to the list's head (LRU).
    Promote,
    /// Moves it with probability 1 − q (Prob-LRU).
    PromoteSome,
}

/// A uniform 32-bit draw from the calling thread's generator (xorshift64*, seeded once per
/// thread from a global sequence mixed with the address of its state; Prob-LRU's coin).
#[inline]
fn draw32() -> u32 {
    use std::cell::Cell;
    use std::sync::atomic::AtomicU64 as SeedCounter;
    static SEEDS: SeedCounter = SeedCounter::new(0x9E37_79B9_7F4A_7C15);
    thread_local! {
        static STATE: Cell<u64> = const { Cell::new(0) };
    }
    STATE.with(|st| {
        let mut x = st.get();
        if x == 0 {
            // Relaxed: only distinctness matters, which the RMW gives (once per thread).
            let n = SEEDS.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
            let z = (n ^ (st as *const Cell<u64> as u64)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x = (z ^ (z >> 31)) | 1;
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        st.set(x);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
    })
}

/// Takes up to `n` tokens from counter `t` (one RMW); returns how many it took.
#[inline]
fn take_up_to(t: &AtomicU64, n: u64) -> u64 {
    // Relaxed (token moves): counters whose exactness comes from each move being one RMW; no
    // other memory is published through them.
    let mut have = t.load(Ordering::Relaxed);
    while have > 0 && n > 0 {
        let k = have.min(n);
        match t.compare_exchange_weak(have, have - k, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return k,
            Err(now) => have = now,
        }
    }
    0
}

/// What [`Cache::unlink_slot`] did.
enum Unlink {
    /// Unlinked by this call: the entry's weight, whose tokens the caller now owns.
    Done(u64),
    /// Another thread unlinked it first.
    Gone,
    /// Not published yet (NEW, or still being allocated): its insert is in flight.
    NotYet,
    /// Left in place: its key's `Hash` panicked (resumed when the operation ends).
    Kept,
}

/// What a lookup counts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    /// A use: policy, statistics and time-to-idle see it.
    Get,
    /// Not a use (`peek`, `contains_key`, views).
    Peek,
}

/// What [`Cache::read_first`] found.
enum Quick<V> {
    Hit(V),
    Miss,
    /// Undecided: the full lookup decides.
    Probe,
}

/// The optional parts of a cache (from the builder).
pub(crate) struct Extras<K, V> {
    pub listener: Option<ListenerFn<K, V>>,
    pub expiration: Option<Expiration<K, V>>,
    /// Prob-LRU's q.
    pub promotion_skip: f64,
}

/// The arena as the eviction sweep of a cache with expiry sees it: expired entries are not
/// live (no second chance), so the scan takes them first.
struct Sweep<'a, K, V> {
    arena: &'a Arena<K, V>,
    now: u64,
}

impl<K, V> Links for Sweep<'_, K, V> {
    #[inline]
    fn next(&self, s: u32) -> &crate::sync::AtomicU64 {
        self.arena.next(s)
    }
}

impl<K, V> Nodes for Sweep<'_, K, V> {
    #[inline]
    fn visited(&self, s: u32) -> &AtomicU8 {
        self.arena.visited(s)
    }
    #[inline]
    fn place(&self, s: u32) -> &AtomicU8 {
        self.arena.place(s)
    }
    #[inline]
    fn is_live(&self, s: u32) -> bool {
        // Relaxed (both): a hint, as `Arena::is_live`; a state or expiry time seen stale only
        // costs a pass. Slot and time from one record address.
        let (slot, at) = self.arena.get_timed(s);
        slot.state.load(Ordering::Relaxed) == LIVE && !expired(at.load(Ordering::Relaxed), self.now)
    }
    #[inline]
    fn is_dead(&self, s: u32) -> bool {
        // (Expired entries are not dead until unlinked: only the eviction unlinks them.)
        self.arena.is_dead(s)
    }
    #[inline]
    fn marked(&self, s: u32, at_least: u8) -> bool {
        // Relaxed: as in `is_live`. Slot and time from one record address.
        let (slot, at) = self.arena.get_timed(s);
        slot.marked(at_least) && !expired(at.load(Ordering::Relaxed), self.now)
    }
    fn count(&self) -> usize {
        self.arena.count()
    }
    #[inline]
    fn prefetch(&self, s: u32) {
        self.arena.prefetch(s, false);
    }
}

// SAFETY: slots are shared between threads: keys and values are read (`get` clones values: V:
// Sync; keys are compared: K: Sync) and dropped (K, V: Send) from any thread. Every other
// shared field is an atomic or behind a lock; slot contents are accessed under the epoch and
// state protocol of `raw/`.
unsafe impl<K: Send + Sync, V: Send + Sync, S: Send> Send for Cache<K, V, S> {}
// SAFETY: as above; `S` is only used through `&S` (BuildHasher::hash_one).
unsafe impl<K: Send + Sync, V: Send + Sync, S: Sync> Sync for Cache<K, V, S> {}

impl<K, V, S> std::fmt::Debug for Cache<K, V, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("policy", &self.policy)
            .field("capacity", &self.capacity.load(Ordering::Relaxed))
            .field("slots", &self.arena.len())
            .field("capacity_tokens_free", &self.free_tokens())
            .field("removed_slots_queued", &self.garbage())
            .finish_non_exhaustive()
    }
}

impl<K, V, S> Cache<K, V, S>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Send + Sync + 'static,
    S: BuildHasher,
{
    pub(crate) fn from_parts(
        policy: Policy,
        consecutive: bool,
        capacity: u64,
        entries: usize,
        weigher: Option<Weigher<K, V>>,
        hasher: S,
        extras: Extras<K, V>,
    ) -> Result<Self, BuildError> {
        // Room for the entries, plus slots waiting out their grace period or held by the
        // queues after a removal.
        let slots = entries + entries / 16 + 256;
        // Growth room for when slots run out: more weighted entries than expected, or retired
        // slots not reusable in time (see `alloc`).
        let extra = slots;
        // Slot numbers stay below 2^31: index words hold `slot + 1` in their low half, and the
        // queues keep the top of the u32 range for their marks.
        if slots + extra >= (1 << 31) - 1 {
            return Err(BuildError::TooLarge(entries as u64));
        }
        let times = match &extras.expiration {
            None => Times::None,
            Some(e) if e.ttl.is_some() && e.tti.is_some() && e.custom.is_none() => {
                Times::AtAndLimit
            }
            Some(_) => Times::At,
        };
        let no_memory = |e: AllocError| BuildError::OutOfMemory { capacity, bytes: e.bytes };
        let arena = Arena::new(slots, extra, times).map_err(no_memory)?;
        // Entry-bounded caches index at most `capacity` entries (tokens); weighted ones at most
        // one per slot (S3-FIFO's ghost has a table of its own).
        let linked = if weigher.is_some() { arena.max_len() } else { slots };
        let index = Index::new(linked).map_err(no_memory)?;
        let structure = match policy {
            Policy::Mobius => Structure::Queues(Queues::new(Mode::Mobius { consecutive })),
            Policy::Clock => Structure::Queues(Queues::new(Mode::Clock)),
            Policy::Fifo => Structure::Queues(Queues::new(Mode::Fifo)),
            Policy::Sieve => {
                Structure::Locked(Locked::new(Kind::Sieve, arena.max_len()).map_err(no_memory)?)
            }
            Policy::Lru | Policy::ProbLru => {
                Structure::Locked(Locked::new(Kind::Lru, arena.max_len()).map_err(no_memory)?)
            }
            Policy::S3Fifo => {
                Structure::S3(S3Fifo::new(capacity, entries as u64).map_err(no_memory)?)
            }
            Policy::NbqClock => {
                Structure::Queues(Queues::new(Mode::NbqClock { batched: consecutive }))
            }
        };
        // Eight stripes per core: threads share a stripe (its token word and the spin lock of
        // its pending chain) only beyond 8 per core, so an oversubscribed thread preempted in
        // its stripe's lock rarely stalls another (at 16 threads on 2 cores, 16 stripes ran
        // Mobius 7–8 % faster than 8; docs/BENCHMARKS.md). The tokens idle stripes may hold are
        // bounded by the count (see the module docs).
        let in_place =
            weigher.is_none() && extras.expiration.as_ref().is_none_or(|e| e.custom.is_none());
        let n_stripes = std::thread::available_parallelism()
            .map_or(4, |n| n.get() * 8)
            .clamp(4, 64)
            .next_power_of_two();
        let queues = matches!(structure, Structure::Queues(_) | Structure::S3(_));
        let (batch, evict_batch) = batches(capacity, n_stripes as u64, queues && weigher.is_none());
        Ok(Cache {
            arena,
            index,
            epochs: Epochs::new(),
            structure,
            stripes: (0..n_stripes).map(|_| CachePadded::new(Stripe::default())).collect(),
            pool: CachePadded::new(AtomicU64::new(capacity)),
            fresh: CachePadded::new(AtomicUsize::new(0)),
            rejected: CachePadded::new(AtomicU64::new(0)),
            policy,
            consecutive,
            hasher,
            weigher,
            capacity: AtomicU64::new(capacity),
            max_capacity: capacity,
            resize: crate::sync::Mutex::new(()),
            spill: (capacity / 1024).max(1),
            batch,
            evict_batch,
            stats: Stats::new(),
            listener: extras.listener,
            expiration: extras.expiration,
            loads: Loads::default(),
            promote_below: ((1.0 - extras.promotion_skip) * 4_294_967_296.0) as u64,
            in_place,
            hollows: queues && (std::mem::needs_drop::<K>() || std::mem::needs_drop::<V>()),
            on_hit: match policy {
                Policy::Mobius | Policy::Clock | Policy::Sieve => OnHit::Touch,
                Policy::Fifo => OnHit::Nothing,
                Policy::S3Fifo => OnHit::CountFreq,
                Policy::NbqClock => OnHit::Bump,
                Policy::Lru => OnHit::Promote,
                Policy::ProbLru => OnHit::PromoteSome,
            },
        })
    }

    /// The key's hash as the index and the policies use it (see [`spread`]).
    #[inline]
    fn hash<Q: Hash + ?Sized>(&self, key: &Q) -> u64 {
        spread(self.hasher.hash_one(key))
    }

    /// The low half of the hash of the key of slot `s` (`slot`), all its home bucket depends
    /// on (the slot is published and not reused under the caller: pinned, or held through the
    /// policy). Slots of caches without a weigher keep it (see [`Slot`]'s meta word); with a
    /// weigher it is computed again, and `None` if the key's `Hash` panicked (resumed when the
    /// operation ends).
    #[inline(always)]
    fn home_hash(&self, s: u32, slot: &Slot<K, V>) -> Option<u32> {
        if self.weigher.is_none() {
            // SAFETY: see above.
            return Some(unsafe { slot.meta() });
        }
        self.rehash(s)
    }

    /// [`Cache::home_hash`] with a weigher: hashes the key again.
    #[inline(never)]
    fn rehash(&self, s: u32) -> Option<u32> {
        let mut h = 0;
        // SAFETY: as for `home_hash`.
        panics::defer(|| h = self.hash(unsafe { self.slot(s).key() })).then_some(h as u32)
    }

    /// The weight of slot `s`: 1 without a weigher (the slot is not read: S3-FIFO's counts ask
    /// for the weights of gathered slots whose inserts may still be filling them), else the
    /// slot's (published, not reused under the caller: pinned, or held through the policy,
    /// which in caches with a weigher holds only published slots, see `insert_inner`).
    #[inline]
    fn weight_of(&self, s: u32) -> u64 {
        if self.weigher.is_none() {
            return 1;
        }
        // SAFETY: see above.
        u64::from(unsafe { self.slot(s).meta() })
    }

    #[inline]
    fn slot(&self, s: u32) -> &Slot<K, V> {
        self.arena.get(s)
    }

    #[inline]
    fn stripe(&self, tid: usize) -> &Stripe {
        &self.stripes[tid & (self.stripes.len() - 1)]
    }

    #[inline]
    fn pin(&self) -> (Guard<'_>, usize) {
        let tid = thread_id();
        (self.epochs.pin(tid), tid)
    }

    /// The `pin` closure of a lookup or insert not protected yet (see [`Index::find`]): before
    /// it protects slot `s` — a full fence — it starts fetching that slot, so its line arrives
    /// while the fence drains.
    #[inline]
    fn pin_at<'p, 'e>(
        &'p self,
        pin: &'p mut LazyPin<'e>,
    ) -> impl FnMut(u32) -> bool + use<'p, 'e, K, V, S> {
        move |s| {
            if pin.covers(s) {
                return false;
            }
            self.arena.prefetch(s, false);
            pin.protect_uncovered(s);
            true
        }
    }

    /// Finds the slot of `key`, and the slot itself (its address computed once for the key
    /// comparison and the caller's reads); `pin` pins the caller before the first key
    /// comparison (see [`Index::find`]; pinned callers pass [`pinned`]).
    #[inline]
    fn find<Q>(
        &self,
        hash: u64,
        key: &Q,
        pin: impl FnMut(u32) -> bool,
    ) -> Option<(u32, &Slot<K, V>)>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        let mut found = None;
        let s = self.index.find(hash, pin, |s| {
            let slot = self.slot(s);
            // SAFETY: `s` was read from a published index word after the caller pinned.
            let hit = unsafe { slot.key() }.borrow() == key;
            if hit {
                found = Some(slot);
            }
            hit
        })?;
        // The comparison that returned true was the last, on slot `s`.
        found.map(|slot| (s, slot))
    }

    /// Returns a clone of the value for `key`, marking the entry as recently used.
    ///
    /// Takes no lock and makes no atomic read-modify-write for every policy except LRU (whose
    /// hits take its global lock by design) and NbQ-CLOCK (one CAS on the entry's counter, as
    /// its report prescribes). Shared stores: at most one, the reference bit or frequency, and
    /// only if it changes (and, under time-to-idle, the expiry time when it moves by at least
    /// 1/16 of the idle time). An expired entry is never returned: it is removed.
    #[inline]
    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
        V: Clone,
    {
        self.read(key, Use::Get)
    }

    /// Returns a clone of the value for `key` without counting it as a use: the policy, the
    /// statistics and time-to-idle do not see it. An expired entry is not returned.
    pub fn peek<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
        V: Clone,
    {
        self.read(key, Use::Peek)
    }

    /// Inlined into `get` and `peek` (left to itself the compiler kept it a call, whose
    /// register saves and restores were about 10 of a hit's ~130 instructions; measured:
    /// docs/BENCHMARKS.md, stop 70).
    #[inline(always)]
    fn read<Q>(&self, key: &Q, how: Use) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
        V: Clone,
    {
        let hash = self.hash(key);
        let tid = thread_id();
        if self.expiration.is_none() {
            match self.read_first(hash, key, tid, how) {
                Quick::Hit(v) => return Some(v),
                Quick::Miss => {
                    if how == Use::Get {
                        self.stats.add(tid, Counter::Misses, 1);
                    }
                    return None;
                }
                Quick::Probe => {}
            }
        }
        self.read_probe(hash, key, tid, how)
    }

    /// [`Cache::read`] past the home bucket (or with expiry): the general lookup. Out of line,
    /// so the common path above keeps few registers.
    #[inline(never)]
    fn read_probe<Q>(&self, hash: u64, key: &Q, tid: usize, how: Use) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
        V: Clone,
    {
        // Protected only if the index holds a word with the key's tag (a hit, or a rare
        // false match): most misses skip the barrier.
        let mut pin = LazyPin::new(&self.epochs, tid);
        let (_, slot) = self.lookup(hash, key, tid, how, self.pin_at(&mut pin))?;
        #[cfg(all(feature = "test-hooks", not(loom)))]
        crate::raw::queue::hooks::protected();
        slot.writing.settled();
        // SAFETY: found in the index after `pin` protected it (a key comparison comes first):
        // not reused before `pin` drops; no update is writing it (`settled`).
        Some(unsafe { slot.value() }.clone())
    }

    /// The common case of a read without expiry, in the key's home bucket alone: the first
    /// word there with the key's tag names the key's slot (a hit), or no word can (a miss);
    /// anything else (a false tag match, an entry that overflowed, a word that changed under
    /// the protection) is left to the full lookup, which starts over.
    #[inline(always)]
    fn read_first<Q>(&self, hash: u64, key: &Q, tid: usize, how: Use) -> Quick<V>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
        V: Clone,
    {
        // A thread without a hazard of its own (no record, or one nested in another of its
        // operations) takes the general path.
        let Some(free) = self.epochs.hazard(tid) else { return Quick::Probe };
        // Released when the read returns (`first` protects at most one slot).
        let mut _held = None;
        // The slot `first` protected (its address computed once for the prefetch, the key
        // comparison and the reads below).
        let protected = std::cell::Cell::new(None);
        let protect = |s| {
            let slot = self.slot(s);
            // Fetch the slot's line while the barrier drains (as `pin_at`).
            crate::sync::prefetch(slot, false);
            // A second announcement would end the first's protection (`first` makes one).
            debug_assert!(_held.is_none(), "one slot per hazard");
            _held = Some(free.announce(s));
            protected.set(Some(slot));
            true
        };
        let s = match self.index.first(hash, protect, |_| {
            // `first` compares only the slot it protected just before.
            let Some(slot) = protected.get() else { return false };
            // SAFETY: its number was read from a published index word after `protect`
            // announced it, and read again unchanged.
            unsafe { slot.key() }.borrow() == key
        }) {
            First::Absent => return Quick::Miss,
            First::Probe => return Quick::Probe,
            First::Found(s) => s,
        };
        // `eq` accepted the slot `protect` protected.
        let Some(slot) = protected.get() else { return Quick::Probe };
        if how == Use::Get {
            self.hit(tid, s, slot);
        }
        #[cfg(all(feature = "test-hooks", not(loom)))]
        crate::raw::queue::hooks::protected();
        slot.writing.settled();
        // SAFETY: as for the key comparison; no update is writing it (`settled`).
        Quick::Hit(unsafe { slot.value() }.clone())
    }

    /// Whether `key` is cached and not expired (does not count as a use).
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hash(key);
        let tid = thread_id();
        let mut pin = LazyPin::new(&self.epochs, tid);
        self.lookup(hash, key, tid, Use::Peek, self.pin_at(&mut pin)).is_some()
    }

    /// Finds `key`'s live, unexpired slot, and the slot itself (`pin` pins the caller before
    /// any slot is read, see [`Cache::find`]); with [`Use::Get`] marks the hit in the policy,
    /// the statistics and the expiry time. An expired entry found is removed (cause
    /// [`RemovalCause::Expired`]).
    #[inline]
    fn lookup<Q>(
        &self,
        hash: u64,
        key: &Q,
        tid: usize,
        how: Use,
        pin: impl FnMut(u32) -> bool,
    ) -> Option<(u32, &Slot<K, V>)>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        let found = self.find(hash, key, pin);
        let Some((s, slot)) = found else {
            if how == Use::Get {
                self.stats.add(tid, Counter::Misses, 1);
            }
            return None;
        };
        let slot = match &self.expiration {
            None => slot,
            Some(exp) => {
                let (slot, at) = self.arena.get_timed(s);
                // Relaxed: written before the slot was published (ordered by the index word's
                // Acquire) or moved by reads (a hint either way).
                let at = at.load(Ordering::Relaxed);
                let now = exp.now();
                if expired(at, now) {
                    self.expire_found(s, tid, now, how);
                    return None;
                }
                if how == Use::Get && exp.reads_move {
                    self.read_moves_expiry(exp, s, now, at);
                }
                slot
            }
        };
        if how == Use::Get {
            self.hit(tid, s, slot);
        }
        Some((s, slot))
    }

    /// A hit on slot `s`, as its policy sees it; true if it wrote the policy's shared state
    /// (counted in [`CacheStats::hit_writes`](crate::CacheStats::hit_writes) for lookups).
    #[inline(always)]
    fn mark_hit(&self, s: u32, slot: &Slot<K, V>) -> bool {
        match self.on_hit {
            OnHit::Touch => slot.touch(),
            OnHit::CountFreq => slot.count_hit(MAX_FREQ),
            OnHit::Bump => slot.bump(u8::MAX),
            OnHit::Nothing => false,
            OnHit::Promote | OnHit::PromoteSome => self.promote(s),
        }
    }

    /// A lookup's hit on slot `s`: counted, marked, and counted again if the mark wrote.
    #[inline(always)]
    fn hit(&self, tid: usize, s: u32, slot: &Slot<K, V>) {
        self.stats.add(tid, Counter::Hits, 1);
        if self.mark_hit(s, slot) {
            self.hit_wrote(tid);
        }
    }

    /// Counts a hit that wrote the policy's state: out of line, so that the common hit (which
    /// writes nothing under the FIFO-family policies) carries only the test.
    #[cold]
    #[inline(never)]
    fn hit_wrote(&self, tid: usize) {
        self.stats.add(tid, Counter::HitWrites, 1);
    }

    /// An update is a use of its entry, as in the simulator (a request for a cached key is a
    /// hit, whatever it does): the new version `new` starts with the reference bit, frequency
    /// or counter of the old one (slot `o`, readable: the caller is protected) raised as a hit
    /// raises it. (LRU's new version goes to the head anyway; FIFO keeps no use.) Without this
    /// an updated entry restarted cold, and a key updated often was evicted as if never read.
    /// S3-FIFO's new version also inherits the old one's place: an entry of main stays in main
    /// (see [`MAIN`](crate::policy::s3fifo::MAIN)), as in the one-at-a-time algorithm; before,
    /// it restarted in small and usually left through the ghost.
    #[inline]
    fn carry_use(&self, o: u32, new: &Slot<K, V>) {
        // Relaxed (all): hints, as a hit's (an eviction that saw the new slot's 0 first
        // gives it one pass less).
        let old = self.slot(o);
        let f = old.visited.load(Ordering::Relaxed);
        let v = match self.on_hit {
            OnHit::Touch => 1,
            OnHit::CountFreq => {
                new.place.store(old.place.load(Ordering::Relaxed), Ordering::Relaxed);
                f.saturating_add(1).min(MAX_FREQ)
            }
            OnHit::Bump => f.saturating_add(1),
            OnHit::Nothing | OnHit::Promote | OnHit::PromoteSome => return,
        };
        new.visited.store(v, Ordering::Relaxed);
    }

    /// [`Cache::mark_hit`] for the LRU lists (out of line: the common path of the others then
    /// saves fewer registers). True if it took the list's lock (a write of the lock word, and
    /// of the links unless the entry was at the head already).
    #[inline(never)]
    fn promote(&self, s: u32) -> bool {
        if let Structure::Locked(l) = &self.structure {
            // Prob-LRU promotes with probability 1 − q.
            if self.on_hit == OnHit::Promote || u64::from(draw32()) < self.promote_below {
                l.on_hit_lru(s);
                return true;
            }
        }
        false
    }

    /// A lookup found expired slot `s` (the caller is pinned): removes it if nobody else did,
    /// counts the miss.
    #[cold]
    fn expire_found(&self, s: u32, tid: usize, now: u64, how: Use) {
        self.remove_slot(s, tid, RemovalCause::Expired, now);
        if how == Use::Get {
            self.stats.add(tid, Counter::Misses, 1);
        }
        panics::resume();
    }

    /// A hit under time-to-idle or a custom read expiry: moves slot `s`'s expiry time.
    fn read_moves_expiry(&self, exp: &Expiration<K, V>, s: u32, now: u64, at: u64) {
        let d = self.arena.deadline(s);
        let slot = self.slot(s);
        slot.writing.settled();
        // SAFETY: published, protected by the caller's lookup; not being written (`settled`).
        let (k, v) = unsafe { (slot.key(), slot.value()) };
        if let Some(new) = exp.on_read(k, v, now, at, d.limit()) {
            // Relaxed: see `lookup`; racing readers store similar times.
            d.at.store(new, Ordering::Relaxed);
        }
    }

    /// Removes slot `s` (found while the caller is pinned) from the index if it is still
    /// there, reported with `cause` (not an eviction: the policy still holds `s`); true if
    /// this call removed it.
    pub(crate) fn remove_slot(&self, s: u32, tid: usize, cause: RemovalCause, now: u64) -> bool {
        debug_assert!(cause != RemovalCause::Evicted, "evictions unlink what they took");
        let st = self.stripe(tid);
        match self.unlink_slot(s, st, tid, cause, now, false) {
            Unlink::Done(w) => {
                self.credit(st, w);
                self.spill(st);
                self.release_removed(s, tid);
                true
            }
            Unlink::Gone | Unlink::NotYet | Unlink::Kept => false,
        }
    }

    /// Counts and reports the departure of slot `s` (its unlinker calls this, outside every
    /// lock, while the slot is still readable: pinned, or held through the policy).
    #[inline(always)]
    fn left(&self, s: u32, tid: usize, cause: RemovalCause) {
        let c = match cause {
            RemovalCause::Evicted => Counter::Evictions,
            RemovalCause::Expired => Counter::Expirations,
            RemovalCause::Removed | RemovalCause::Cleared => Counter::Removals,
            RemovalCause::Replaced => Counter::Updates,
        };
        // (Replacements are counted by the insert, as updates.)
        if cause != RemovalCause::Replaced {
            self.stats.add(tid, c, 1);
        }
        if let Some(l) = &self.listener {
            let slot = self.slot(s);
            // An update in place that found the entry still indexed before we unlinked it
            // finishes its write first (see `Writing`: our unlinking was a SeqCst RMW).
            slot.writing.settled_after_unlink();
            // SAFETY: per the contract, `s` is readable and holds the departing entry.
            let (k, v) = unsafe { (slot.key(), slot.value()) };
            panics::defer(|| l(k, v, cause));
        }
    }

    /// Calls `f` with the slot, key and value of every live, unexpired entry of index bucket
    /// `b` (pinned meanwhile: `f` may remove the slot with [`Cache::remove_slot`]), and the
    /// thread id. Expired entries met are removed (the caller resumes listener panics).
    pub(crate) fn walk_bucket(&self, b: usize, mut f: impl FnMut(u32, &K, &V, usize)) {
        let mut slots = Vec::with_capacity(7);
        let (_guard, tid) = self.pin();
        self.index.bucket_slots(b, &mut slots);
        let now = self.expiration.as_ref().map(|_| self.now());
        for s in slots {
            let slot = self.slot(s);
            // Acquire: as in `unlink_slot` (a removed entry is skipped).
            if slot.state.load(Ordering::Acquire) != LIVE {
                continue;
            }
            if let Some(now) = now {
                // Relaxed: see `lookup`.
                if expired(self.arena.deadline(s).at.load(Ordering::Relaxed), now) {
                    self.remove_slot(s, tid, RemovalCause::Expired, now);
                    continue;
                }
            }
            slot.writing.settled();
            // SAFETY: read from a published index word while pinned; not being written
            // (`settled`; updates in place wait for the pin to go).
            let (k, v) = unsafe { (slot.key(), slot.value()) };
            f(s, k, v, tid);
        }
    }

    /// Index buckets (for [`Cache::walk_bucket`]).
    pub(crate) fn buckets(&self) -> usize {
        self.index.buckets()
    }

    /// Calls `f` with `key`'s live, unexpired slot and value, if any (not a use), pinned.
    pub(crate) fn with_entry<Q, R>(
        &self,
        key: &Q,
        f: impl FnOnce(Option<(u32, &V)>, usize) -> R,
    ) -> R
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hash(key);
        let (_guard, tid) = self.pin();
        let found = self.lookup(hash, key, tid, Use::Peek, pinned).map(|(s, slot)| {
            slot.writing.settled();
            // SAFETY: found in the index while pinned; not being written (`settled`; updates
            // in place wait for the pin to go).
            (s, unsafe { slot.value() })
        });
        f(found, tid)
    }

    /// Removes every expired entry now (a walk of the whole index; the eviction sweep and
    /// lookups remove expired entries anyway as they meet them). Returns how many.
    pub fn purge_expired(&self) -> usize {
        let Some(e) = &self.expiration else { return 0 };
        let mut n = 0;
        let mut slots = Vec::with_capacity(7);
        for b in 0..self.index.buckets() {
            slots.clear();
            let (_guard, tid) = self.pin();
            self.index.bucket_slots(b, &mut slots);
            let now = e.now();
            for &s in &slots {
                // Relaxed: see `lookup`.
                if expired(self.arena.deadline(s).at.load(Ordering::Relaxed), now) {
                    n += self.remove_slot(s, tid, RemovalCause::Expired, now) as usize;
                }
            }
        }
        panics::resume();
        n
    }

    /// The expiry clock now (0 in caches without expiry, where nothing reads it).
    #[inline]
    pub(crate) fn now(&self) -> u64 {
        self.expiration.as_ref().map_or(0, |e| e.now())
    }

    /// Adds `n` to the calling thread's counter `c`.
    pub(crate) fn count(&self, c: Counter, n: u64) {
        self.stats.add(thread_id(), c, n);
    }

    pub(crate) fn loads(&self) -> &Loads<K, V> {
        &self.loads
    }

    pub(crate) fn hash_of<Q: Hash + ?Sized>(&self, key: &Q) -> u64 {
        self.hash(key)
    }

    /// A snapshot of the statistics (exact when no operation is in flight).
    ///
    /// ```
    /// use sifter::Cache;
    /// let cache: Cache<u64, u64> = Cache::builder().capacity(3).build();
    /// cache.insert(0, 0);
    /// cache.insert(1, 1);
    /// cache.insert(1, 11); // an update
    /// cache.insert(2, 2);
    /// cache.insert(3, 3); // the cache is full: one older entry is evicted
    /// let _ = cache.get(&3); // a hit
    /// let _ = cache.get(&9); // a miss
    /// let _ = cache.peek(&3); // not a use: not counted
    /// cache.remove(&3);
    /// let s = cache.stats();
    /// assert_eq!((s.hits, s.misses), (1, 1));
    /// assert_eq!((s.inserts, s.updates, s.evictions, s.removals), (4, 1, 1, 1));
    /// ```
    pub fn stats(&self) -> CacheStats {
        self.stats.snapshot()
    }

    /// Inserts or replaces the value for `key`, evicting as needed to stay within capacity.
    ///
    /// An entry heavier than the whole capacity (or than `u32::MAX` units) is not stored, and
    /// any previous value for the key is removed, like libCacheSim and most caches. An insert
    /// that cannot get room within a bounded number of attempts is not stored either (see
    /// [`Cache::rejected`]).
    pub fn insert(&self, key: K, value: V) {
        self.insert_inner(key, value, None, None);
        panics::resume();
    }

    /// Inserts like [`Cache::insert`], with this entry's own time to live (`None`: never
    /// expires), in place of the cache's time-to-live, time-to-idle or [`Expiry`](crate::Expiry).
    ///
    /// # Panics
    /// If the cache was built without expiry (see [`CacheBuilder::time_to_live`](crate::CacheBuilder::time_to_live),
    /// [`time_to_idle`](crate::CacheBuilder::time_to_idle), [`expiry`](crate::CacheBuilder::expiry) or
    /// [`per_entry_expiry`](crate::CacheBuilder::per_entry_expiry)): its entries have no room
    /// for an expiry time.
    ///
    /// ```
    /// use sifter::{Cache, ManualClock};
    /// use std::time::Duration;
    ///
    /// let clock = ManualClock::new();
    /// let cache: Cache<&str, u64> =
    ///     Cache::builder().capacity(100).per_entry_expiry().clock(clock.clone()).build();
    /// cache.insert_with_ttl("session", 1, Some(Duration::from_secs(30)));
    /// cache.insert_with_ttl("config", 2, None); // never expires
    /// cache.insert("plain", 3); // without a time: never expires either
    /// clock.advance(Duration::from_secs(30));
    /// assert!(!cache.contains_key(&"session"));
    /// assert_eq!((cache.get(&"config"), cache.get(&"plain")), (Some(2), Some(3)));
    /// ```
    pub fn insert_with_ttl(&self, key: K, value: V, ttl: Option<std::time::Duration>) {
        assert!(
            self.expiration.is_some(),
            "insert_with_ttl on a cache built without expiry: enable it with \
             CacheBuilder::per_entry_expiry (or time_to_live, time_to_idle, expiry)"
        );
        self.insert_inner(key, value, Some(ttl), None);
        panics::resume();
    }

    /// Inserts (`ttl`: an explicit lifetime). With `expect`, only if the key's slot is still
    /// `expect` (`Some(None)`: absent) when the home lock is taken: false if it was not (nothing
    /// changed). The caller resumes listener panics.
    pub(crate) fn insert_inner(
        &self,
        key: K,
        value: V,
        ttl: Option<Option<std::time::Duration>>,
        expect: Option<Option<u32>>,
    ) -> bool {
        let weight = match &self.weigher {
            Some(w) => w(&key, &value),
            None => 1,
        };
        if weight > self.capacity() || weight > u32::MAX as u64 {
            if let Some(Some(e)) = expect {
                let (_guard, tid) = self.pin();
                return self.remove_slot(e, tid, RemovalCause::Removed, self.now());
            }
            self.remove_with(&key, |_| (), RemovalCause::Removed);
            return true;
        }
        let now = self.now();
        let times =
            self.expiration.as_ref().map(|e| (now, e.on_write(&key, &value, now, None, ttl)));
        let hash = self.hash(&key);
        // The home bucket's line, for writing, while the tokens, evictions and allocation run:
        // a read-through's lookup left it shared, and other cores may hold it too (at small
        // sizes every core caches most of the index), so its lock would otherwise wait for
        // the other copies' invalidation. Measured: docs/BENCHMARKS.md, stop 62.
        self.index.prefetch_home(hash as u32);
        // Tokens, slot and policy need no pin: the policies touch only slot numbers and
        // atomics, and a thread preempted there (say, in an enqueue gap) must not hold back the
        // reuse of slots. Only reading other entries' keys in the index needs one.
        let tid = thread_id();
        // An update of a resident key writes over the old value when nobody reads it (not a
        // conditional insert's, nor where `in_place` says no).
        let (key, value) = if self.in_place && expect.is_none() && self.index.may_hold(hash) {
            match self.update_in_place(hash, key, value, times, tid) {
                Ok(()) => return true,
                Err(kv) => kv,
            }
        } else {
            (key, value)
        };
        // S3-FIFO: the ghost's bucket for the test below, fetched while the evictions run.
        let ghost_at = match &self.structure {
            Structure::S3(q) => {
                let at = q.ghost.at(hash as u32);
                at.prefetch(false);
                Some((q, at))
            }
            _ => None,
        };
        let st = self.stripe(tid);
        let mut victims = Victims::default();
        // The stripe's tokens if it has them (at steady state, 7 inserts in 8). Else, before
        // evicting for them: an update of a resident key (every weight 1) needs none, the old
        // version's pay for the new one, so a full cache does not evict for an update. Should
        // the old version leave (evicted, removed) before ours replaces it, ours is added and
        // takes its tokens after publication ([`Cache::pay_late`]).
        let took = Self::take(st, weight);
        let owes = !took && self.weigher.is_none() && self.resident(hash, &key, tid);
        let tokens = if owes { 0 } else { weight };
        if !took && !owes && !self.acquire(st, tid, now, weight, &mut victims) {
            let _ = self.retire_and_pop(st, victims.as_slice(), false, false);
            self.rejected.fetch_add(1, Ordering::Relaxed);
            return true;
        }
        let early = self.gathers_early();
        let Some(s) = self.alloc(st, tid, now, victims.as_slice(), early) else {
            self.credit(st, tokens);
            self.rejected.fetch_add(1, Ordering::Relaxed);
            return true;
        };
        #[cfg(all(feature = "test-hooks", not(loom)))]
        crate::raw::queue::hooks::unpublished();
        let slot = self.slot(s);
        self.prepare(slot);
        // Until the entry is published, a panic (a key's `Eq`) or a failed expectation gives
        // back its tokens and retires its slot (or leaves it DEAD to the queue holding it).
        // Armed once the slot is filled (a retired slot's contents are dropped at reuse), and
        // declared before the pin and the home lock, so that an unwinding drops them first.
        let mut undo =
            Unpublished { cache: self, tid, slot: s, tokens, armed: false, queued: early };
        if let Some((_, (at, limit))) = times {
            let d = self.arena.deadline(s);
            // Published with the slot by the index word's Release store.
            d.set(at, limit);
        }
        // Protected only if the index holds a word with the key's tag (a replacement, or a
        // rare false match): only then are other slots read.
        let mut pin = LazyPin::new(&self.epochs, tid);
        if self.expiration.as_ref().is_some_and(|e| e.custom.is_some()) {
            // An update under a custom expiry reads our entry again after publishing it
            // (`expire_after_update`, below), when an eviction may already have taken it: the
            // epoch, pinned before it is published, covers it (a hazard would cover only the
            // entry it replaces).
            pin.pin();
        }
        // The home lock before the slot's first store: its locked instruction then does not
        // wait for the stores filling the slot (a line that may still be on its way).
        let lock = self.index.lock(hash);
        // The meta word: the weight, or (every weight 1) the hash's low half.
        let meta = if self.weigher.is_some() { weight as u32 } else { hash as u32 };
        // SAFETY: `alloc` handed us slot `s` exclusively (a queue may hold it, but touches
        // only its atomics until it is LIVE), and `prepare` dropped its old contents.
        unsafe { slot.fill(key, value, meta) };
        undo.armed = true;
        let old = {
            // SAFETY: `s` is ours and filled.
            let key = unsafe { slot.key() };
            if let Some(e) = expect {
                // Under the home lock no other writer of this key runs; an eviction may still
                // remove its word (then we see it absent, or insert afresh below).
                let cur = self.index.find(hash, self.pin_at(&mut pin), |o| {
                    // SAFETY: a published slot, protected (`pin`, before the comparison).
                    let other = unsafe { self.slot(o).key() };
                    other == key
                });
                if cur != e {
                    drop(lock);
                    drop(pin);
                    return false; // `undo` retires the slot
                }
            }
            let inserted = self.index.insert(&lock, hash, s, self.pin_at(&mut pin), |o| {
                // SAFETY: a published slot, protected (`pin`, before the comparison).
                let other = unsafe { self.slot(o).key() };
                other == key
            });
            let old = match inserted {
                Inserted::Replaced(o) => Some(o),
                Inserted::Added => None,
            };
            undo.armed = false;
            // Release: after the index word, so whoever reads LIVE (Acquire) finds the word;
            // under the home lock, so no removal by key runs in between (and evictions and
            // expiry leave a NEW slot alone).
            slot.state.store(LIVE, Ordering::Release);
            let old = old.map(|o| {
                let marked = self.mark_removed(st, o);
                // Published, protected (`pin` covers the slot it found).
                (o, self.weight_of(o), marked)
            });
            drop(lock);
            old
        };
        match old {
            Some((o, w, marked)) => {
                // After the lock (a hint, no reason to hold the bucket for it); `o` is still
                // protected by `pin`.
                self.carry_use(o, slot);
                // The old version's tokens, less what the new one needs beyond those taken.
                debug_assert!(tokens + w >= weight, "an owing update replaced a heavier entry");
                let give = tokens + w - weight;
                if give > 0 {
                    self.credit(st, give);
                    self.spill(st);
                }
                // Relaxed (deadline): see `lookup`.
                let old_expired = times.is_some_and(|(now, _)| {
                    expired(self.arena.deadline(o).at.load(Ordering::Relaxed), now)
                });
                self.stats.add(
                    tid,
                    if old_expired { Counter::Inserts } else { Counter::Updates },
                    1,
                );
                if let (Some(e), Some((now, _)), None, false) =
                    (&self.expiration, times, ttl, old_expired)
                {
                    if e.custom.is_some() {
                        // An update: the custom expiry's `expire_after_update` decides.
                        let d = self.arena.deadline(s);
                        // Relaxed: a hint, see `lookup`.
                        let old_at = self.arena.deadline(o).at.load(Ordering::Relaxed);
                        let slot = self.slot(s);
                        // SAFETY: `s` is our filled slot, published, and the epoch was pinned
                        // before it was (see `pin` above). Nobody writes it in place: caches
                        // with a custom expiry have no updates in place (`in_place`).
                        let (k, v) = unsafe { (slot.key(), slot.value()) };
                        // A panicking `expire_after_update` leaves the creation-time expiry.
                        panics::defer(|| {
                            let (at, limit) = e.on_write(k, v, now, Some(old_at), None);
                            d.set(at, limit);
                        });
                    }
                }
                let cause =
                    if old_expired { RemovalCause::Expired } else { RemovalCause::Replaced };
                self.left(o, tid, cause);
                if marked {
                    // `o` is still protected by `pin`: its entry waits for us.
                    self.hollow_later(st, o);
                }
            }
            None => {
                self.count_live(st, 1);
                self.stats.add(tid, Counter::Inserts, 1);
            }
        }
        match &self.structure {
            Structure::Queues(q) => {
                // The replaced slot stays queued (DEAD) until the scan takes it. Unpinned for
                // the enqueue: a thread preempted there holds back no reclamation.
                drop(pin);
                if !early {
                    q.insert(&self.arena, s);
                }
            }
            Structure::Locked(l) => {
                l.insert(s);
                if let Some((o, _, _)) = old {
                    // Still protected (finding `o` protected it): `o` cannot have been retired
                    // *and reused* since we unlinked it, so the list's `o` is the entry we
                    // replaced.
                    if l.remove(o) {
                        self.retire(st, o);
                    }
                }
                drop(pin);
            }
            Structure::S3(q) => {
                drop(pin);
                // A key evicted from small lately (a ghost hit) goes to main; it leaves the
                // ghost now (after this insert's evictions, as in the one-at-a-time
                // algorithm), as late as can be: its line, prefetched when the insert began,
                // has had the whole insert to come (at 100k entries the line is usually not
                // in the L2, and tested right after the tokens it was 40 % of the insert's
                // time). Others go to small, gathered in chains like the other queue
                // policies' inserts.
                let ghost_hit = ghost_at
                    .is_some_and(|(q, at)| q.ghost.take(q.local(tid), at, tag(hash) as u32));
                // An update of an entry of main goes to main. Relaxed: our slot's place,
                // written by `carry_use` above (this thread).
                let to_main = ghost_hit || self.slot(s).place.load(Ordering::Relaxed) == MAIN;
                if self.batch == 1 || !q.to_small(weight, to_main) {
                    q.insert(&self.arena, q.local(tid), s, weight, to_main);
                } else {
                    // Counted into small before it is linked, as every insert into small.
                    q.count_small(q.local(tid), weight as i64);
                    self.gather(st, s);
                }
            }
        }
        if owes && old.is_none() {
            self.pay_late(st, tid, now, weight);
        }
        true
    }

    /// An update of a resident key that writes the new value over the old one in its slot: no
    /// new slot, no tokens, no queue operation, and the entry keeps its place in the policy
    /// (the update is a use, as a hit is, and as in the simulator). It applies when nobody can
    /// be reading the old value (`Epochs::exclusive`: no other thread has announced the slot,
    /// no thread is pinned) and the entry is still indexed and not expired; otherwise the key
    /// and value come back and the insert makes a new version, as before. Readers that come
    /// meanwhile wait for the move ([`Writing::settled`](crate::raw::writing::Writing::settled)), which runs no user code: the old
    /// value's `Drop` and the listener run after it.
    ///
    /// Out of line: most inserts are of new keys, which [`Index::may_hold`] sends the usual
    /// way first.
    #[inline(never)]
    fn update_in_place(
        &self,
        hash: u64,
        key: K,
        value: V,
        times: Option<(u64, (u64, u64))>,
        tid: usize,
    ) -> Result<(), (K, V)> {
        let mut pin = LazyPin::new(&self.epochs, tid);
        let lock = self.index.lock(hash);
        let found = self.index.find_locked(&lock, hash, self.pin_at(&mut pin), |o| {
            // SAFETY: a published slot, protected (`pin`, before the comparison).
            let other = unsafe { self.slot(o).key() };
            other == &key
        });
        let Some(found) = found else { return Err((key, value)) };
        let o = found.slot();
        let slot = self.slot(o);
        if let Some((now, _)) = times {
            // Relaxed: see `lookup`. An expired version is replaced the usual way (its
            // departure reported as an expiry, the insert counted as one).
            if expired(self.arena.deadline(o).at.load(Ordering::Relaxed), now) {
                return Err((key, value));
            }
        }
        slot.writing.begin();
        // Both after `begin`'s barrier: an eviction that unlinks the entry later waits in
        // `settled` before it reads the value.
        if !(self.epochs.exclusive(tid, o) && self.index.still(&found)) {
            slot.writing.end();
            return Err((key, value));
        }
        // SAFETY: LIVE (still indexed, checked after the barrier; we hold its home lock, so no
        // removal by key runs), and `exclusive` found no reader: readers to come wait in
        // `settled` until `end`.
        let old = unsafe { slot.replace_value(value) };
        if let Some((_, (at, limit))) = times {
            // Published like the value, by `Writing::end` (and a hint anyway, see `lookup`).
            self.arena.deadline(o).set(at, limit);
        }
        slot.writing.end();
        drop(lock);
        // After the lock (LRU's promotion takes the list's lock); `o` is still protected.
        let _ = self.mark_hit(o, slot);
        drop(pin);
        self.stats.add(tid, Counter::Updates, 1);
        if let Some(l) = &self.listener {
            panics::defer(|| l(&key, &old, RemovalCause::Replaced));
        }
        panics::defer(move || drop(old));
        panics::defer(move || drop(key));
        Ok(())
    }

    /// Whether `key` (hash `hash`) is in the index (a full lookup: an entry that overflowed
    /// its home bucket counts too, or its updates would evict). Out of line: only an insert
    /// that found no token in its stripe asks.
    #[inline(never)]
    fn resident(&self, hash: u64, key: &K, tid: usize) -> bool {
        let mut pin = LazyPin::new(&self.epochs, tid);
        // The home bucket decides most (a new key: usually no word with its tag there).
        let first = self.index.first(hash, self.pin_at(&mut pin), |s| {
            // SAFETY: `s` was read from a published index word after `pin` protected it.
            let k = unsafe { self.slot(s).key() };
            k == key
        });
        match first {
            First::Found(_) => true,
            First::Absent => false,
            First::Probe => self.find(hash, key, self.pin_at(&mut pin)).is_some(),
        }
    }

    /// The tokens of an update that was added after all (its old version left between
    /// [`Cache::resident`] and the index insert), taken after publication: meanwhile the
    /// cache holds one insert in flight beyond its capacity, as any insert may. Waits until
    /// it has them: the entry is published and in the policy (gathered chains are enqueued
    /// here), so an eviction can always free them, if need be by taking this very entry.
    #[cold]
    fn pay_late(&self, st: &Stripe, tid: usize, now: u64, w: u64) {
        let mut backoff = Backoff::default();
        loop {
            let mut victims = Victims::default();
            let paid = self.acquire(st, tid, now, w, &mut victims);
            let _ = self.retire_and_pop(st, victims.as_slice(), false, false);
            if paid {
                return;
            }
            self.flush_pending();
            backoff.snooze();
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
        V: Clone,
    {
        let r = self.remove_with(key, V::clone, RemovalCause::Removed);
        panics::resume();
        r
    }

    /// Removes `key` (reported with `cause`), applying `f` to its value while it is still
    /// readable. An expired entry is removed as expired, and `None` returned.
    fn remove_with<Q, R>(&self, key: &Q, f: impl FnOnce(&V) -> R, cause: RemovalCause) -> Option<R>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let tid = thread_id();
        // A hazard on the slot found (an epoch pin only if the search compares a second
        // slot): a removal then holds back neither the reuse of other slots nor, unlike an
        // epoch pin, other threads' updates in place (see `Epochs::exclusive`).
        let mut pin = LazyPin::new(&self.epochs, tid);
        let s = self.unlink_key(key, tid, self.pin_at(&mut pin))?;
        let expired = self.expiration.as_ref().is_some_and(|e| {
            // Relaxed: see `lookup`.
            expired(self.arena.deadline(s).at.load(Ordering::Relaxed), e.now())
        });
        // SAFETY: `pin` protected `s` before the unlinking read its key; it is not reused
        // before `pin` drops. No update is writing it: an update in place holds the key's
        // home lock throughout, and the unlinking took that lock after it (so no wait for the
        // write flag here).
        let r = (!expired).then(|| f(unsafe { self.slot(s).value() }));
        self.left(s, tid, if expired { RemovalCause::Expired } else { cause });
        self.release_removed(s, tid);
        drop(pin);
        r
    }

    /// Unlinks `key` from the index (LIVE → DEAD), crediting its tokens to the caller's stripe;
    /// returns its slot, which `pin` (as in [`Index::find`]) protected before its key was read.
    fn unlink_key<Q>(&self, key: &Q, tid: usize, pin: impl FnMut(u32) -> bool) -> Option<u32>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hash(key);
        let st = self.stripe(tid);
        let (s, marked) = {
            let lock = self.index.lock(hash);
            let s = self.index.remove(&lock, hash, pin, |s| {
                // SAFETY: a published slot, protected (`pin`, before the comparison).
                unsafe { self.slot(s).key() }.borrow() == key
            })?;
            (s, self.mark_removed(st, s))
        };
        if marked {
            // Out of the lock; `s` is still protected by `pin`.
            self.hollow_later(st, s);
        }
        // Published, pinned.
        self.credit(st, self.weight_of(s));
        self.count_live(st, -1);
        self.spill(st);
        Some(s)
    }

    /// After an unlink: a locked policy lets go of the slot at once.
    fn release_removed(&self, s: u32, tid: usize) {
        if let Structure::Locked(l) = &self.structure {
            if l.remove(s) {
                self.retire(self.stripe(tid), s);
            }
        }
    }

    /// Unlinks slot `v` from the index if it is still there (LIVE → DEAD); returns its weight
    /// if this call did (the caller then owns those tokens), `None` if another thread removed
    /// or replaced it first. The caller (`tid`, of stripe `st`) holds `v` through the policy
    /// or is pinned, so `v` is not reused under it.
    /// Reports the departure with `cause` (an expired entry evicted or cleared as
    /// [`RemovalCause::Expired`]). [`RemovalCause::Evicted`]: the caller took `v` from the
    /// policy, so no other thread will retire it and DEAD is a plain store; `ghost` (S3-FIFO's
    /// small-queue victims): its key's fingerprint goes to the ghost.
    #[inline(always)]
    fn unlink_slot(
        &self,
        v: u32,
        st: &Stripe,
        tid: usize,
        cause: RemovalCause,
        now: u64,
        ghost: bool,
    ) -> Unlink {
        let slot = self.slot(v);
        // Acquire: pairs with the Release DEAD store of whoever unlinked it, which orders that
        // unlinking before our retirement of the slot; and with the Release LIVE store of its
        // insert, after its index word (so a LIVE slot's word is there to be found).
        match slot.state.load(Ordering::Acquire) {
            LIVE => {}
            DEAD | HOLLOW => return Unlink::Gone,
            // An insert in flight (a queue may hold its slot from the allocation on), or a
            // slot found in the index while pinned that was retired since.
            _ => return Unlink::NotYet,
        }
        // With a weigher the hash is computed again: a key whose `Hash` panics cannot be found
        // then, and stays (the panic is resumed when the operation ends).
        let Some(home) = self.home_hash(v, slot) else {
            return Unlink::Kept;
        };
        let ghost_at = match (ghost, &self.structure) {
            (true, Structure::S3(q)) => {
                let at = q.ghost.at(home);
                // Fetched during the index removal.
                at.prefetch(true);
                Some((q, at))
            }
            _ => None,
        };
        let Some(tag) = self.index.remove_slot(home, v) else {
            return Unlink::Gone;
        };
        if let Some((q, at)) = ghost_at {
            q.ghost.add(q.local(tid), at, tag);
        }
        if cause == RemovalCause::Evicted {
            // Release: as in `mark_removed`; no CAS needed, nobody else retires our slot.
            slot.state.store(DEAD, Ordering::Release);
        } else if self.mark_removed(st, v) {
            self.hollow_later(st, v);
        }
        self.count_live(st, -1);
        let cause = match (&self.expiration, cause) {
            // Relaxed: see `lookup`.
            (Some(_), RemovalCause::Evicted | RemovalCause::Cleared)
                if expired(self.arena.deadline(v).at.load(Ordering::Relaxed), now) =>
            {
                RemovalCause::Expired
            }
            _ => cause,
        };
        self.left(v, tid, cause);
        Unlink::Done(self.weight_of(v))
    }

    /// Takes up to `want` victims from the policy (more than one only from the queue
    /// policies and S3-FIFO, in one scan) and unlinks them from the index: pushes them to
    /// `victims` (to be retired by the caller; it has room for `want`) and returns the tokens
    /// that freed (not credited anywhere yet), or `None` if the policy had nothing to give.
    #[inline(always)]
    fn evict_some(
        &self,
        st: &Stripe,
        tid: usize,
        now: u64,
        want: usize,
        victims: &mut Victims,
    ) -> Option<u64> {
        for _ in 0..4 {
            let mut taken = Taken::default();
            let to_ghost = match &self.expiration {
                None => self.take_victims(&self.arena, st, tid, want, &mut taken),
                Some(_) => {
                    self.take_victims(&Sweep { arena: &self.arena, now }, st, tid, want, &mut taken)
                }
            }?;
            self.prefetch_victims(&taken, to_ghost);
            let (mut freed, mut any) = (0, false);
            for &v in &taken.slots[..taken.len] {
                // An S3-FIFO small-queue victim's fingerprint goes to the ghost.
                match self.unlink_slot(v, st, tid, RemovalCause::Evicted, now, to_ghost) {
                    Unlink::Done(w) => {
                        victims.push(v);
                        freed += w;
                        any = true;
                    }
                    Unlink::Gone => {
                        self.count_garbage(st, -1);
                        if self.let_go(v) {
                            victims.push(v);
                        }
                        any = true;
                    }
                    // Its key could not be hashed, or its insert is still in flight (only a
                    // queue policy's gathered slot): it stays, back in the policy.
                    Unlink::Kept | Unlink::NotYet => match &self.structure {
                        Structure::Queues(q) => q.insert(&self.arena, v),
                        Structure::Locked(l) => l.insert(v),
                        Structure::S3(q) => {
                            q.insert(&self.arena, q.local(tid), v, self.weight_of(v), true)
                        }
                    },
                }
            }
            if any {
                return Some(freed);
            }
        }
        None
    }

    /// Asks the CPU for the home buckets of a batch of victims, for writing, before the
    /// unlink loop writes them one after another (each behind a locked CAS): their
    /// invalidations elsewhere overlap instead of following one another; and, for S3-FIFO's
    /// small-queue victims (`to_ghost`), their ghost buckets too (each gets a fingerprint in
    /// the loop; one at a time, each was a miss of its own: half of the insert path's stalls
    /// at 100k entries, docs/BENCHMARKS.md). Only without a weigher, whose slots keep the
    /// hash's low half (else the key would be hashed twice).
    #[inline]
    fn prefetch_victims(&self, taken: &Taken, to_ghost: bool) {
        if taken.len < 2 || self.weigher.is_some() {
            return;
        }
        let ghost = match (to_ghost, &self.structure) {
            (true, Structure::S3(q)) => Some(&q.ghost),
            _ => None,
        };
        for &v in &taken.slots[..taken.len] {
            let slot = self.slot(v);
            // Acquire: as in `unlink_slot` (a LIVE slot's meta word was written before it was
            // published, and is not written again until it is retired).
            if slot.state.load(Ordering::Acquire) == LIVE {
                // SAFETY: LIVE, and held through the policy by us: not reused under us.
                let home = unsafe { slot.meta() };
                self.index.prefetch_home(home);
                if let Some(g) = ghost {
                    g.at(home).prefetch(true);
                }
            }
        }
    }

    /// Up to `want` of the policy's victims (more than one only from the queue policies and
    /// S3-FIFO), seen through `n`, into `out`, for an insert of stripe `st`; whether their
    /// fingerprints go to the ghost (S3-FIFO's small queue); `None` if the policy had none.
    #[inline]
    fn take_victims<N: Nodes>(
        &self,
        n: &N,
        st: &Stripe,
        tid: usize,
        want: usize,
        out: &mut Taken,
    ) -> Option<bool> {
        match &self.structure {
            Structure::Queues(q) => {
                // A scan that reaches the tail first enqueues this stripe's gathered entries
                // (see `Queues::evict_many`); queues found empty take every stripe's chain.
                let at_tail = || self.batch > 1 && self.flush_stripe(st);
                (q.evict_many(n, want, out, at_tail)
                    || (self.flush_pending() && q.evict_many(n, want, out, at_tail)))
                .then_some(false)
            }
            Structure::Locked(l) => {
                out.slots[0] = l.evict(n)?;
                out.len = 1;
                Some(false)
            }
            Structure::S3(q) => {
                let local = q.local(tid);
                let weight = |s| self.weight_of(s);
                q.evict(n, local, weight, want, out).or_else(|| {
                    if self.flush_pending() {
                        q.evict(n, local, weight, want, out)
                    } else {
                        None
                    }
                })
            }
        }
    }

    /// Whether an insert gathers its slot into the stripe's pending chain with the allocation.
    ///
    /// Queue policies gathering new entries into chains take the slot into the stripe's
    /// pending chain with the allocation (one stripe lock for both): it is NEW until
    /// published, and an eviction that meets it before puts it back. S3-FIFO gathers an entry
    /// bound for small after publication, once the ghost has said where it goes (see
    /// `insert_inner`: the ghost test waits for its line as long as it can; stop 68 measured
    /// both).
    #[inline]
    fn gathers_early(&self) -> bool {
        self.batch > 1 && matches!(self.structure, Structure::Queues(_))
    }

    /// Adds new slot `s` to `st`'s pending chain; enqueues the chain when it is full.
    fn gather(&self, st: &Stripe, s: u32) {
        let full = self.pend(&mut st.lists.lock(), s);
        if let Some((first, last)) = full {
            self.enqueue_new(first, last);
        }
    }

    /// Under a stripe's lock: adds slot `s` (the caller's, in no queue) to the pending chain;
    /// returns the chain to enqueue if that filled it.
    #[inline(always)]
    fn pend(&self, l: &mut Lists, s: u32) -> Option<(u32, u32)> {
        reset(&self.arena, s);
        if l.pend_len == 0 {
            l.pend_first = s;
        } else {
            link_private(&self.arena, l.pend_last, s);
        }
        l.pend_last = s;
        l.pend_len += 1;
        (l.pend_len >= self.batch).then(|| {
            l.pend_len = 0;
            (l.pend_first, l.pend_last)
        })
    }

    /// Enqueues a gathered chain of new slots where new entries go.
    fn enqueue_new(&self, first: u32, last: u32) {
        match &self.structure {
            Structure::Queues(q) => q.insert_chain(&self.arena, first, last),
            Structure::S3(q) => q.enqueue_small_chain(&self.arena, first, last),
            Structure::Locked(_) => unreachable!("locked lists do not gather"),
        }
    }

    /// Enqueues every stripe's pending chain; true if there was any.
    fn flush_pending(&self) -> bool {
        if matches!(self.structure, Structure::Locked(_)) {
            return false;
        }
        let mut any = false;
        for st in self.stripes.iter() {
            any |= self.flush_stripe(st);
        }
        any
    }

    /// Enqueues `st`'s pending chain; true if there was one.
    fn flush_stripe(&self, st: &Stripe) -> bool {
        let chain = {
            let mut l = st.lists.lock();
            (l.pend_len > 0).then(|| {
                l.pend_len = 0;
                (l.pend_first, l.pend_last)
            })
        };
        if let Some((first, last)) = chain {
            self.enqueue_new(first, last);
        }
        chain.is_some()
    }

    /// Evicts one victim, crediting its tokens to `st` and retiring it there.
    fn evict_and_retire(&self, st: &Stripe, tid: usize, now: u64) -> bool {
        let mut victims = Victims::default();
        match self.evict_some(st, tid, now, 1, &mut victims) {
            Some(w) => {
                self.credit(st, w);
                let _ = self.retire_and_pop(st, victims.as_slice(), false, false);
                true
            }
            None => false,
        }
    }

    /// Retires slot `s` (out of the index and the policy) into `st`'s limbo.
    fn retire(&self, st: &Stripe, s: u32) {
        let _ = self.retire_and_pop(st, &[s], false, false);
    }

    /// Retires `victims` into `st`'s limbo and, if `pop`, takes a free slot — under one lock;
    /// with `gather` too, the slot joins the stripe's pending chain (see [`Cache::gather`])
    /// there, and a chain it fills is enqueued.
    #[inline(always)]
    fn retire_and_pop(&self, st: &Stripe, victims: &[u32], pop: bool, gather: bool) -> Option<u32> {
        if victims.is_empty() && !pop {
            return None;
        }
        for &s in victims {
            let state = &self.slot(s).state;
            // Relaxed: we own the slot; the epoch read below is ordered after its unlinking.
            // A hollowed slot stays EMPTY (its contents are gone).
            if !self.hollows || state.load(Ordering::Relaxed) != EMPTY {
                state.store(RETIRED, Ordering::Relaxed);
            }
        }
        // The epoch to retire with, and whether the victims may skip the limbo: with no thread
        // pinned, only a slot some hazard names must wait (see `Epochs::quiet`). A victim
        // reused at once is usually still in this core's cache (the free list hands out its
        // last slot first); one that waited two epoch advances rarely is.
        let (e, quiet) = if victims.is_empty() {
            (0, None)
        } else {
            (self.epochs.retire_epoch(), self.epochs.quiet())
        };
        let (advance, got, full) = {
            let mut l = st.lists.lock();
            let (mut advance, mut at_once) = (false, 0);
            for &s in victims {
                if quiet.is_some_and(|q| !q.may_name(s)) {
                    l.free.push(s);
                    at_once += 1;
                } else {
                    advance |= l.retire(s, e);
                }
            }
            if at_once > 0 {
                advance |= l.freed_at_once(at_once);
            }
            let got = if !pop {
                None
            } else if at_once > 0 && l.free.len() > at_once as usize {
                // Slots were free before these victims (collected from the limbo, or left by
                // removals), and may hold old contents that only a reuse drops: take the
                // oldest, else the victims pushed over them at every eviction would keep them
                // below for good (the victims serve the next inserts).
                Some(l.free.swap_remove(0))
            } else {
                l.free.pop()
            };
            let mut full = None;
            if let Some(s) = got {
                if let Some(&after) = l.free.last() {
                    // The stripe's next insert writes this one: fetch its (cold) line
                    // meanwhile.
                    self.arena.prefetch(after, true);
                }
                if gather {
                    full = self.pend(&mut l, s);
                }
            }
            (advance, got, full)
        };
        if let Some((first, last)) = full {
            self.enqueue_new(first, last);
        }
        if advance {
            let adv = self.epochs.try_advance();
            self.collect(st, &adv);
        }
        got
    }

    /// The policy let go of removed slot `s` (DEAD, HOLLOW, or LIVE with its index word
    /// gone): whether to retire it now. With hollowing, a DEAD slot whose contents are not
    /// dropped yet is left to its hollow entry (see `raw/slot.rs`).
    #[inline]
    fn let_go(&self, s: u32) -> bool {
        !self.hollows || let_go(&self.slot(s).state) == LetGo::Retire
    }

    #[inline]
    fn credit(&self, st: &Stripe, w: u64) {
        // Relaxed (all token moves): counters whose exactness comes from each move being one
        // RMW; no other memory is published through them.
        st.tokens.fetch_add(w, Ordering::Relaxed);
    }

    #[inline]
    fn count_live(&self, st: &Stripe, d: i64) {
        if self.weigher.is_some() {
            // Relaxed: a statistic.
            st.live.fetch_add(d, Ordering::Relaxed);
        }
    }

    /// LIVE → DEAD, by the thread whose CAS removed slot `s`'s index word, counted (in `st`)
    /// as a removed slot a queue policy still holds. A CAS, not a store: the policy may already
    /// have taken the slot and retired it (an eviction that found the word gone, which counted
    /// it out), and RETIRED must stay. True if this call marked it: the caller then calls
    /// [`Cache::hollow_later`] once out of the index's locks.
    fn mark_removed(&self, st: &Stripe, s: u32) -> bool {
        // Release: pairs with the Acquire in `unlink_slot`, which orders our unlinking before
        // the retirement that depends on it.
        let marked = self
            .slot(s)
            .state
            .compare_exchange(LIVE, DEAD, Ordering::Release, Ordering::Relaxed)
            .is_ok();
        self.count_garbage(st, 1);
        marked
    }

    /// Slot `s` was marked DEAD by the caller (its index word is gone) and stays in a queue:
    /// with hollowing, its contents are dropped once no reader can see them (a hollow entry in
    /// `st`'s limbo), not when the queue lets go of it (see `raw/slot.rs`). Called outside the
    /// index's locks: collecting may drop values, which runs their `Drop`.
    fn hollow_later(&self, st: &Stripe, s: u32) {
        if !self.hollows {
            return;
        }
        // After the unlinking (see `Epochs::retire_epoch`).
        let e = self.epochs.retire_epoch();
        let advance = st.lists.lock().retire_hollow(s, e);
        if advance {
            let adv = self.epochs.try_advance();
            self.collect(st, &adv);
        }
    }

    /// Collects `st`'s limbo for advance attempt `adv` (see [`Lists::collect`]), then drops
    /// the contents of the hollow entries that freed.
    fn collect(&self, st: &Stripe, adv: &Advance) {
        self.collect_then(st, adv, |_| ());
    }

    /// [`Cache::collect`], running `then` on the lists under the same lock (before the hollow
    /// entries' contents are dropped, outside it).
    fn collect_then<R>(&self, st: &Stripe, adv: &Advance, then: impl FnOnce(&mut Lists) -> R) -> R {
        let (r, hollow) = {
            let mut l = st.lists.lock();
            l.collect(adv);
            (then(&mut l), std::mem::take(&mut l.hollow))
        };
        self.hollow(st, hollow);
        r
    }

    /// Drops the contents of removed slots whose hollow entries' grace period is over, and
    /// retires those their queue let go of meanwhile (see `raw/slot.rs`, hollowing).
    #[cold]
    fn hollow(&self, st: &Stripe, slots: Vec<u32>) {
        if slots.is_empty() {
            return;
        }
        let mut retire = Vec::new();
        for &s in &slots {
            let slot = self.slot(s);
            // A panicking `Drop` is resumed when the operation ends.
            panics::defer(|| {
                // SAFETY: `s` was marked DEAD (LIVE → DEAD by its remover's CAS, which made
                // this hollow entry), so its contents are this entry's alone: the queue's
                // holder never drops a DEAD slot's contents (`let_go` hands it to us), and
                // the slot is not reused before both let go. The grace period is over: no
                // thread can still read them.
                unsafe { slot.drop_contents() }
            });
            if !hollowed(&slot.state) {
                retire.push(s);
            }
        }
        let _ = self.retire_and_pop(st, &retire, false, false);
    }

    /// Counts `d` removed slots left in (+) or taken out of (−) a queue policy.
    #[inline]
    fn count_garbage(&self, st: &Stripe, d: i64) {
        if !matches!(self.structure, Structure::Locked(_)) {
            // Relaxed: a count read to decide whether to sweep (and exact when quiescent).
            st.garbage.fetch_add(d, Ordering::Relaxed);
        }
    }

    /// Returns a stripe's tokens above `spill` to the pool.
    fn spill(&self, st: &Stripe) {
        let t = st.tokens.load(Ordering::Relaxed);
        if t > self.spill {
            let extra = t - self.spill;
            if st
                .tokens
                .compare_exchange(t, self.spill, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                self.pool.fetch_add(extra, Ordering::Relaxed);
            }
        }
    }

    /// Takes `w` tokens from `st`, if it has them.
    #[inline]
    fn take(st: &Stripe, w: u64) -> bool {
        let mut t = st.tokens.load(Ordering::Relaxed);
        while t >= w {
            match st.tokens.compare_exchange_weak(t, t - w, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => t = now,
            }
        }
        false
    }

    /// Moves up to `want` tokens from the pool into `st`; false if the pool was empty.
    fn refill(&self, st: &Stripe, want: u64) -> bool {
        let n = take_up_to(&self.pool, want);
        if n > 0 {
            self.credit(st, n);
        }
        n > 0
    }

    /// Gets `w` tokens for an insert: from the stripe, the pool, by evicting (victims go to
    /// `victims`, for the caller to retire), or from the other stripes. False if none came
    /// within the attempt bound.
    #[inline(always)]
    fn acquire(&self, st: &Stripe, tid: usize, now: u64, w: u64, victims: &mut Victims) -> bool {
        if Self::take(st, w) {
            return true;
        }
        // Eviction timing (feature `profile`) starts at the first eviction.
        #[cfg(feature = "profile")]
        let mut t0 = None;
        let mut backoff = Backoff::default();
        let mut got = false;
        // Scans that took only removed slots (no tokens, but progress: their slots are
        // reclaimed) do not count as attempts, up to about once round the arena: after many
        // updates the queues' fronts can hold more removed slots than the attempts would scan.
        let (mut attempt, mut removed_only) = (0, 0);
        // Computed only when a scan freed nothing (a division; most acquisitions end at their
        // first scan).
        let most_removed_only = || self.arena.count() / self.evict_batch + 1;
        while attempt < ATTEMPTS {
            attempt += 1;
            if self.refill(st, w.max(self.spill)) {
                if Self::take(st, w) {
                    got = true;
                    break;
                }
                continue;
            }
            #[cfg(feature = "profile")]
            if t0.is_none() {
                t0 = crate::profile::start();
            }
            if victims.len + self.evict_batch > victims.slots.len() {
                let _ = self.retire_and_pop(st, victims.as_slice(), false, false);
                victims.len = 0;
            }
            if let Some(freed) = self.evict_some(st, tid, now, self.evict_batch, victims) {
                // The common case at steady state: the victims free what we need (one of them
                // exactly that, the others the stripe's next inserts'), and our own tokens
                // never touch the stripe.
                if freed >= w {
                    if freed > w {
                        self.credit(st, freed - w);
                    }
                    got = true;
                    break;
                }
                self.credit(st, freed);
                if Self::take(st, w) {
                    got = true;
                    break;
                }
                if freed == 0 && removed_only < most_removed_only() {
                    removed_only += 1;
                    attempt -= 1;
                }
                continue;
            }
            // Nothing in the pool or the policy: the tokens are in other stripes, or held by
            // inserts in flight.
            for other in self.stripes.iter() {
                let t = other.tokens.swap(0, Ordering::Relaxed);
                if t > 0 {
                    self.credit(st, t);
                }
            }
            if Self::take(st, w) {
                got = true;
                break;
            }
            backoff.snooze();
        }
        #[cfg(feature = "profile")]
        crate::profile::stop(t0);
        got
    }

    /// A slot for a new entry, ours: EMPTY, or with old contents for [`Cache::prepare`] to
    /// drop; `None` if none could be had within the attempt bound and then [`SLOT_WAIT`]. With
    /// `gather`, the slot is in `st`'s pending chain (see [`Cache::gather`]).
    fn alloc(
        &self,
        st: &Stripe,
        tid: usize,
        now: u64,
        victims: &[u32],
        gather: bool,
    ) -> Option<u32> {
        let got = self.retire_and_pop(st, victims, true, gather);
        if let Some(s) = got {
            return Some(s);
        }
        let s = self.alloc_slow(st, tid, now)?;
        if gather {
            self.gather(st, s);
        }
        Some(s)
    }

    /// [`Cache::alloc`] when the stripe's free list is empty.
    #[cold]
    fn alloc_slow(&self, st: &Stripe, tid: usize, now: u64) -> Option<u32> {
        let mut backoff = Backoff::default();
        let mut deadline = None;
        let mut attempt = 0;
        loop {
            if attempt > 0 {
                let got = self.retire_and_pop(st, &[], true, false);
                if let Some(s) = got {
                    return Some(s);
                }
            }
            // Relaxed: uniqueness comes from the RMW; the slot was never published.
            // Never-used slots of the base array (grown chunks go to free lists directly).
            if self.fresh.load(Ordering::Relaxed) < self.arena.base_len() {
                let s = self.fresh.fetch_add(1, Ordering::Relaxed);
                if s < self.arena.base_len() {
                    return Some(s as u32);
                }
            }
            // Slots retired at epoch e are reusable at e + 2: up to two advances.
            let mut adv = self.epochs.try_advance();
            let mut got = None;
            for i in 0..2 {
                if i > 0 {
                    adv = self.epochs.try_advance();
                }
                got = self.collect_then(st, &adv, |l| l.free.pop());
                if got.is_some() {
                    break;
                }
            }
            if let Some(s) = got {
                return Some(s);
            }
            // Other stripes' free slots (those of idle threads).
            for other in self.stripes.iter() {
                if std::ptr::eq(&**other, st) {
                    continue;
                }
                let Some(mut l) = other.lists.try_lock() else { continue };
                l.collect(&adv);
                let hollow = std::mem::take(&mut l.hollow);
                let n = l.free.len().div_ceil(2);
                if hollow.is_empty() && n == 0 {
                    continue;
                }
                let at = l.free.len() - n;
                let taken: Vec<u32> = l.free.drain(at..).collect();
                drop(l);
                self.hollow(st, hollow);
                if n > 0 {
                    let mut mine = st.lists.lock();
                    mine.free.extend_from_slice(&taken);
                    let s = mine.free.pop();
                    drop(mine);
                    if let Some(s) = s {
                        return Some(s);
                    }
                }
            }
            // Removed entries still queued hold slots: sweep some out of the queues' fronts
            // (without evicting anything, the order kept) and go round again to reuse them
            // (the epoch advances above).
            if self.sweep_removed(st, tid, false) {
                attempt += 1;
                continue;
            }
            // Every slot is live, in limbo or held by the queues as removed (a thread
            // preempted while pinned holds the epochs back, or updates left removed slots
            // deep in the queues). Grow the arena by a chunk (up to twice its size) rather
            // than wait.
            if let Some(range) = self.arena.grow() {
                let mut l = st.lists.lock();
                l.free.extend(range.rev());
                if let Some(s) = l.free.pop() {
                    return Some(s);
                }
            }
            // Past that, sweep with rotation, which reaches removed slots anywhere (and gives
            // the live ones it passes a pass): updates of random keys leave removed slots all
            // along the queues, and without it inserts evicted live entries for slots. Only
            // then evict (the scan takes removed slots first where it finds them) and wait.
            if self.sweep_removed(st, tid, true) {
                attempt += 1;
                continue;
            }
            if attempt >= ATTEMPTS / 4 && self.evict_and_retire(st, tid, now) {
                self.spill(st);
            }
            if attempt + 1 >= ATTEMPTS {
                // Out of attempts: go on (yielding) until the deadline, then give up.
                let now = std::time::Instant::now();
                match deadline {
                    None => deadline = Some(now + SLOT_WAIT),
                    Some(d) if now >= d => return None,
                    Some(_) => {}
                }
            }
            backoff.snooze();
            attempt += 1;
        }
    }

    /// When the queues hold removed slots: sweeps up to [`SWEEP`] slots from the front of each
    /// queue (`rotate`: see [`Queues::sweep`](crate::policy::queues::Queues::sweep)) and
    /// retires the removed ones into `st`'s limbo; true if it retired any (reusable after two
    /// epoch advances).
    fn sweep_removed(&self, st: &Stripe, tid: usize, rotate: bool) -> bool {
        if self.garbage() <= 0 {
            return false;
        }
        let mut dead = Vec::new();
        // A rotating sweep goes on until it finds some (each round walks the next slots of
        // each queue), at most about once round the arena.
        let rounds = if rotate { self.arena.count() / SWEEP + 1 } else { 1 };
        for _ in 0..rounds {
            match &self.structure {
                Structure::Queues(q) => q.sweep(&self.arena, SWEEP, &mut dead, rotate),
                Structure::S3(q) => q.sweep(
                    &self.arena,
                    q.local(tid),
                    |s| self.weight_of(s),
                    SWEEP,
                    &mut dead,
                    rotate,
                ),
                Structure::Locked(_) => return false,
            }
            if !dead.is_empty() {
                break;
            }
        }
        self.count_garbage(st, -(dead.len() as i64));
        let any = !dead.is_empty();
        dead.retain(|&s| self.let_go(s));
        let _ = self.retire_and_pop(st, &dead, false, false);
        any
    }

    /// Drops the old contents of a slot [`Cache::alloc`] handed out (outside any lock), so
    /// that [`Slot::fill`] may overwrite it. Without drop glue there is nothing to drop: the
    /// old contents are overwritten as they are (and the slot is not written twice).
    #[inline(always)]
    fn prepare(&self, slot: &Slot<K, V>) {
        if std::mem::needs_drop::<K>() || std::mem::needs_drop::<V>() {
            // A panicking `Drop` of the old contents is resumed when the insert has finished.
            panics::defer(|| {
                // SAFETY: the slot came from `alloc`: never used, or from a free list (retired
                // at least two epochs ago, or freed at once when no thread was pinned and no
                // hazard named it: `Epochs::quiet`; either way no thread can still read it),
                // handed to us alone.
                unsafe { slot.clear() }
            });
        }
    }

    /// Removes every entry. Entries inserted concurrently with `clear` may or may not remain.
    /// Values are dropped once no reader can still be cloning them; with no other thread
    /// inside the cache, all are dropped before `clear` returns.
    pub fn clear(&self) {
        {
            let (_guard, tid) = self.pin();
            let st = self.stripe(tid);
            let now = self.now();
            for s in self.index.slots() {
                if let Unlink::Done(w) =
                    self.unlink_slot(s, st, tid, RemovalCause::Cleared, now, false)
                {
                    self.credit(st, w);
                    self.release_removed(s, tid);
                }
            }
            // The policy may still hold removed slots (queues always; a locked list one whose
            // removal raced with its insert): take them out now.
            while self.evict_and_retire(st, tid, now) {}
            self.spill(st);
        }
        self.reclaim();
        panics::resume();
    }

    /// Makes every retired slot that no pinned thread can see reusable, and drops its contents
    /// (and the contents of removed slots whose hollow entries that frees).
    fn reclaim(&self) {
        let mut adv = self.epochs.try_advance();
        for _ in 0..2 {
            adv = self.epochs.try_advance();
        }
        for st in self.stripes.iter() {
            let taken = self.collect_then(st, &adv, |l| std::mem::take(&mut l.free));
            for &s in &taken {
                panics::defer(|| {
                    // SAFETY: from a free list (see `prepare`); we hold these slots until they
                    // go back below.
                    unsafe { self.slot(s).clear() }
                });
            }
            st.lists.lock().free.extend_from_slice(&taken);
        }
    }

    /// Entries in the cache (reachable by `get`).
    ///
    /// Exact when no operation is in flight, and never above the capacity (entry-bounded
    /// caches). While inserts are in flight it may count their entries a little early.
    pub fn len(&self) -> usize {
        if self.weigher.is_none() {
            return self.weight() as usize;
        }
        // Relaxed: a statistic.
        let n: i64 = self.stripes.iter().map(|s| s.live.load(Ordering::Relaxed)).sum();
        n.clamp(0, self.arena.len() as i64) as usize
    }

    /// Whether the cache holds no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total weight of the entries in the cache (equals `len` without a weigher): the capacity
    /// minus the free tokens, so never above the capacity.
    pub fn weight(&self) -> u64 {
        self.capacity().saturating_sub(self.free_tokens())
    }

    /// The capacity, in entries (or in weight units with a weigher).
    #[inline]
    pub fn capacity(&self) -> u64 {
        // Relaxed: a bound read on its own; the tokens, not this number, enforce it.
        self.capacity.load(Ordering::Relaxed)
    }

    /// Changes the capacity to `capacity` (entries, or weight units with a weigher), up to the
    /// capacity the cache was built with (its storage is sized for that). Shrinking evicts, in
    /// the policy's order, until the live weight fits: when this returns, the weight is within
    /// the new capacity (plus inserts in flight, as always), and the evicted values are dropped
    /// (those no other thread may still be reading: with no other thread inside the cache,
    /// all). Growing makes room at once.
    ///
    /// The policy's own proportions that were derived from the capacity at build time keep
    /// their values, except S3-FIFO's small and main queue sizes, which follow the new
    /// capacity (its ghost keeps its size).
    pub fn set_capacity(&self, capacity: u64) -> Result<(), BuildError> {
        if capacity > self.max_capacity {
            return Err(BuildError::Resize { asked: capacity, max: self.max_capacity });
        }
        let _one = self.resize.lock();
        let old = self.capacity();
        // Relaxed: see `capacity`; the token moves below are what bound the weight.
        self.capacity.store(capacity, Ordering::Relaxed);
        if let Structure::S3(q) = &self.structure {
            q.set_capacity(capacity);
        }
        if capacity >= old {
            // Relaxed: token moves are single RMWs (see `credit`).
            self.pool.fetch_add(capacity - old, Ordering::Relaxed);
            return Ok(());
        }
        // Withdraw `old - capacity` tokens from circulation: free ones first (the pool, then
        // the stripes'), then those of evicted entries.
        {
            let (_guard, tid) = self.pin();
            let st = self.stripe(tid);
            let now = self.now();
            let mut owed = old - capacity;
            let mut backoff = Backoff::default();
            while owed > 0 {
                let mut got = 0;
                for t in std::iter::once(&*self.pool).chain(self.stripes.iter().map(|s| &s.tokens))
                {
                    got += take_up_to(t, owed - got);
                }
                owed -= got;
                if owed > 0 && got == 0 && !self.evict_and_retire(st, tid, now) {
                    // Every token is held by inserts in flight: they link or give theirs back.
                    backoff.snooze();
                }
            }
        }
        // The evicted entries' slots wait in free lists, where nothing may reuse them for a
        // long time (the cache is smaller now): drop their contents now, not at reuse.
        self.reclaim();
        panics::resume();
        Ok(())
    }

    /// The eviction policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// Whether Mobius uses consecutive detection.
    pub fn consecutive_detection(&self) -> bool {
        self.consecutive
    }

    /// Inserts that were not stored because no room could be made within the attempt bound
    /// (see the module docs of the capacity tokens in `DESIGN.md`); 0 in normal operation.
    pub fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }

    /// How many new entries a stripe gathers before one enqueue, and how many victims an
    /// eviction takes at once (both 1 in small caches and for the locked policies, which then
    /// keep the simulator's order exactly at one thread). For tests; not a stable interface.
    #[doc(hidden)]
    pub fn queue_batches(&self) -> (u32, usize) {
        match self.structure {
            Structure::Locked(_) => (1, 1),
            _ => (self.batch, self.evict_batch),
        }
    }

    /// Bytes of memory per entry beyond the key and value, at full capacity: the slot's header
    /// (and expiry times, with expiry), the index's share, and the spare slots' share.
    pub fn overhead_per_entry(&self) -> f64 {
        let slot = self.arena.stride();
        let kv = std::mem::size_of::<K>() + std::mem::size_of::<V>();
        let locked = match &self.structure {
            Structure::Locked(_) => 8 * self.arena.len(),
            Structure::Queues(_) => 0,
            Structure::S3(q) => q.ghost.bytes(),
        };
        let total = slot * self.arena.len() + self.index.bytes() + locked;
        let entries = (self.capacity() as usize).max(1);
        total as f64 / entries as f64 - kv as f64
    }

    /// Checks every invariant; call only when no other thread is using the cache (tests).
    ///
    /// Checks: the index's pass-through counts; every indexed slot is LIVE, with its key's
    /// hash, and keys are unique; the policy holds every LIVE slot exactly once and otherwise
    /// only DEAD slots; every slot is exactly once in the index-or-policy, a free list, a
    /// limbo, or never used; tokens are conserved (free tokens + live weight = capacity).
    pub fn validate(&self) -> Result<(), String> {
        let _guard = self.pin();
        let hash_of = |s: u32| {
            // SAFETY: quiescent by contract; indexed slots are published.
            self.hash(unsafe { self.slot(s).key() })
        };
        self.index.validate(hash_of)?;
        let indexed = self.index.slots();
        let mut keys = HashSet::new();
        let mut live_w = 0u64;
        for &s in &indexed {
            let slot = self.slot(s);
            if slot.state.load(Ordering::Relaxed) != LIVE {
                return Err(format!("indexed slot {s} is not LIVE"));
            }
            // SAFETY: quiescent, published.
            let k = unsafe { slot.key() };
            let w = self.weight_of(s);
            // SAFETY: as above.
            if self.weigher.is_none() && unsafe { slot.meta() } != self.hash(k) as u32 {
                return Err(format!("slot {s} does not keep its key's hash"));
            }
            if !keys.insert(k) {
                return Err("two indexed slots have the same key".into());
            }
            live_w += w;
        }
        // Slots gathered for a batched enqueue (held by the policy, counted in its weights).
        let mut pending = Vec::new();
        for st in self.stripes.iter() {
            let l = st.lists.lock();
            let mut s = l.pend_first;
            for i in 0..l.pend_len {
                pending.push(s);
                if i + 1 < l.pend_len {
                    s = crate::raw::queue::slot(self.arena.next_word(s));
                }
            }
        }
        let mut held = match &self.structure {
            Structure::Queues(q) => q.items(&self.arena),
            Structure::Locked(l) => l.items(),
            Structure::S3(q) => {
                // Quiescent by contract; gathered and queued slots are published.
                let pending_w = pending.iter().map(|&s| self.weight_of(s)).sum();
                q.validate(&self.arena, pending_w, |s| self.weight_of(s))?;
                q.items(&self.arena)
            }
        }
        .map_err(|e| format!("{e} ({})", self.debug_structure()))?;
        held.extend_from_slice(&pending);
        let mut where_ = vec![0u8; self.arena.len()];
        for &s in &held {
            if where_[s as usize] != 0 {
                return Err(format!("slot {s} is held by the policy twice"));
            }
            where_[s as usize] = 1;
            let st = self.slot(s).state.load(Ordering::Relaxed);
            if st != LIVE && st != DEAD && st != HOLLOW {
                return Err(format!("the policy holds slot {s} in state {st}"));
            }
        }
        for &s in &indexed {
            if where_[s as usize] != 1 {
                return Err(format!("indexed slot {s} is not held by the policy"));
            }
        }
        if !matches!(self.structure, Structure::Locked(_)) {
            let dead = held
                .iter()
                .filter(|&&s| matches!(self.slot(s).state.load(Ordering::Relaxed), DEAD | HOLLOW))
                .count() as i64;
            if dead != self.garbage() {
                return Err(format!(
                    "the queues hold {dead} removed slots, but {} are counted",
                    self.garbage()
                ));
            }
        }
        let live_count = (0..self.arena.len())
            .filter(|&s| self.slot(s as u32).state.load(Ordering::Relaxed) == LIVE)
            .count();
        if live_count != indexed.len() {
            return Err(format!("{live_count} LIVE slots, {} indexed", indexed.len()));
        }
        // Slots with a hollow entry (see `raw/slot.rs`).
        let mut hollowing = HashSet::new();
        let fresh = self.fresh.load(Ordering::Relaxed).min(self.arena.base_len());
        // Slots ever handed out: the used part of the base array, and every grown chunk.
        let known = |s: usize| s < fresh || s >= self.arena.base_len();
        for st in self.stripes.iter() {
            let l = st.lists.lock();
            let lists = l
                .free
                .iter()
                .chain(l.wait.iter())
                .chain(l.limbo.iter().flat_map(|(_, v)| v.iter()));
            if !l.hollow.is_empty() {
                return Err(format!("{} hollow entries collected, not processed", l.hollow.len()));
            }
            let mut hollow_entries = 0;
            for &e in lists {
                let s = e & !HOLLOW_ENTRY;
                let state = self.slot(s).state.load(Ordering::Relaxed);
                if e & HOLLOW_ENTRY != 0 {
                    // A removed slot whose contents wait: still queued (DEAD), or let go by
                    // its queue (TAKEN), when this entry is its only place.
                    hollow_entries += 1;
                    let ok = match state {
                        DEAD => where_[s as usize] == 1,
                        TAKEN => where_[s as usize] == 0,
                        _ => false,
                    };
                    if !ok || !known(s as usize) || !hollowing.insert(s) {
                        return Err(format!("hollow entry of slot {s} in state {state}"));
                    }
                    if state == TAKEN {
                        where_[s as usize] = 2;
                    }
                    continue;
                }
                if !known(s as usize) || where_[s as usize] != 0 {
                    return Err(format!("slot {s} is free or in limbo twice, or also held"));
                }
                where_[s as usize] = 2;
                if state != RETIRED && state != EMPTY {
                    return Err(format!("free or retired slot {s} is in state {state}"));
                }
            }
            if hollow_entries != l.hollow_entries {
                return Err(format!(
                    "{hollow_entries} hollow entries in limbo, {} counted",
                    l.hollow_entries
                ));
            }
        }
        if self.hollows {
            let unentered = held.iter().find(|&&s| {
                self.slot(s).state.load(Ordering::Relaxed) == DEAD && !hollowing.contains(&s)
            });
            if let Some(s) = unentered {
                return Err(format!(
                    "removed slot {s} is queued with its contents and no hollow entry"
                ));
            }
        }
        if let Some(s) = (0..self.arena.len()).find(|&s| known(s) && where_[s] == 0) {
            return Err(format!("slot {s} is lost: neither held, free nor in limbo"));
        }
        let free = self.free_tokens();
        if free + live_w != self.capacity() {
            return Err(format!(
                "tokens not conserved: {free} free + {live_w} live weight != capacity {}",
                self.capacity()
            ));
        }
        if self.weigher.is_some() && self.len() != indexed.len() {
            return Err(format!("len {} but {} entries indexed", self.len(), indexed.len()));
        }
        Ok(())
    }

    fn debug_structure(&self) -> String {
        match &self.structure {
            Structure::Queues(q) => q.debug_state(),
            Structure::Locked(_) => "locked list".into(),
            Structure::S3(q) => q.debug_state(),
        }
    }
}

/// An insert's filled slot before publication (see `insert_inner`).
struct Unpublished<'a, K, V, S>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Send + Sync + 'static,
    S: BuildHasher,
{
    cache: &'a Cache<K, V, S>,
    tid: usize,
    slot: u32,
    /// The capacity tokens it took (none for an update of a resident key).
    tokens: u64,
    armed: bool,
    /// A queue holds the slot already (gathered with its allocation).
    queued: bool,
}

impl<K, V, S> Drop for Unpublished<'_, K, V, S>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Send + Sync + 'static,
    S: BuildHasher,
{
    #[inline(always)]
    fn drop(&mut self) {
        if self.armed {
            self.undo();
        }
    }
}

impl<K, V, S> Unpublished<'_, K, V, S>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Send + Sync + 'static,
    S: BuildHasher,
{
    /// Gives back the tokens and the slot of an insert that did not publish.
    #[cold]
    fn undo(&mut self) {
        let st = self.cache.stripe(self.tid);
        self.cache.credit(st, self.tokens);
        if self.queued {
            // Never published, but a queue holds it: DEAD, the eviction that takes it retires
            // it. Release: pairs with the evictor's Acquire, as for any DEAD.
            self.cache.slot(self.slot).state.store(DEAD, Ordering::Release);
            self.cache.count_garbage(st, 1);
            // Filled: its contents go with a hollow entry, as a removed entry's.
            self.cache.hollow_later(st, self.slot);
        } else {
            // Never published: retire it (its contents are dropped at reuse).
            self.cache.retire(st, self.slot);
        }
    }
}

impl<K, V, S> Cache<K, V, S> {
    /// Removed slots the queues hold (see [`Stripe::garbage`]).
    fn garbage(&self) -> i64 {
        // Relaxed: see `count_garbage`.
        self.stripes.iter().map(|st| st.garbage.load(Ordering::Relaxed)).sum()
    }

    fn free_tokens(&self) -> u64 {
        // Relaxed: a snapshot of counters (see `len`).
        self.stripes.iter().map(|s| s.tokens.load(Ordering::Relaxed)).sum::<u64>()
            + self.pool.load(Ordering::Relaxed)
    }
}

impl<K, V, S> Drop for Cache<K, V, S> {
    fn drop(&mut self) {
        for s in 0..self.arena.len() {
            // Every slot is dropped even if some `Drop` panics; the first panic is resumed.
            panics::defer(|| {
                // SAFETY: `&mut self`: no other thread uses the cache; every non-EMPTY slot
                // holds contents that were never dropped, and each slot is visited once.
                unsafe { self.arena.get(s as u32).clear() }
            });
        }
        if !std::thread::panicking() {
            panics::resume();
        }
    }
}

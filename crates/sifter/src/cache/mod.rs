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
//! An insert that cannot get tokens (every entry held by inserts in flight, or the policy's
//! queues held up by a thread preempted in the middle of an enqueue) or a slot (reclamation
//! held up by threads preempted while pinned, with the arena grown to its limit) within
//! [`ATTEMPTS`] attempts and then [`WAIT`] is not stored; [`Cache::rejected`] counts them.
//!
//! # Where things are
//!
//! This file holds the types, construction and the whole-cache operations (`len`, `clear`,
//! `set_capacity`, ...); the paths of one operation are apart, each an `impl` block of
//! `Cache`:
//!
//! * `read`: lookups (`get`, `peek`, `contains_key`) and what a hit marks;
//! * `write`: inserts, updates in place, removals, and unlinking an entry from the index;
//! * `evict`: the tokens, slot allocation, the policy's victims, retirement and reclamation;
//! * `validate`: `validate()`, the invariant checker the tests call.

mod evict;
mod read;
mod validate;
mod write;

use crate::expiry::{expired, Expiration};
use crate::listener::{ListenerFn, RemovalCause};
use crate::loader::Loads;
use crate::panics;
use crate::policy::locked::{Kind, Locked};
use crate::policy::queues::Nodes;
use crate::policy::queues::{link_private, reset, Mode, Queues, Taken};
use crate::policy::s3fifo::{S3Fifo, MAIN, MAX_FREQ};
use crate::raw::epoch::{thread_id, Advance, Epochs, Guard, Held, LazyPin};
use crate::raw::ghost::Ghosts;
use crate::raw::index::{spread, First, Index, Inserted};
use crate::raw::queue::{slot as link_slot, Links};
use crate::raw::slot::{
    hollowed, let_go, Arena, LetGo, Slot, Times, DEAD, EMPTY, HOLLOW, LIVE, RETIRED, TAKEN,
};
use crate::raw::table::AllocError;
use crate::stats::{CacheStats, Counter, Stats};
use crate::sync::{AtomicU8, Backoff, SpinGuard, SpinLock};
use crate::{BuildError, Policy};
use crossbeam_utils::CachePadded;
use std::borrow::Borrow;
use std::collections::HashSet;
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};

type Weigher<K, V> = Box<dyn Fn(&K, &V) -> u64 + Send + Sync>;

/// Attempts an insert makes to get tokens or a slot before it gives up.
const ATTEMPTS: usize = 64;

/// How long an insert goes on trying (yielding) for tokens or a slot after [`ATTEMPTS`] before
/// it gives up: what it waits for (an enqueue to finish, so that the policy's queue has
/// victims again; reclamation, which threads preempted while pinned hold back) waits for a
/// preempted thread, which the scheduler runs again within a few scheduling periods. (The
/// attempts alone, mostly yields, pass in a few milliseconds: 80 threads computing over a
/// Mobius cache beside two busy loops on 2 cores had some refused in 3 runs of 100 when
/// only the slots waited.)
const WAIT: std::time::Duration = std::time::Duration::from_millis(200);

/// Whether an insert past its [`ATTEMPTS`] has tried for [`WAIT`] since the first call
/// (`deadline`: `None` before it, then the time to give up at). At once from user code the
/// cache called (a listener inserting into its own cache): what it waits for may be held by
/// the operation of this thread that called it, and waiting stalled each such insert into a
/// full cache of capacity 1 for the whole [`WAIT`].
fn waited_out(deadline: &mut Option<std::time::Instant>) -> bool {
    if panics::in_user_code() {
        return true;
    }
    let now = std::time::Instant::now();
    match *deadline {
        None => {
            *deadline = Some(now + WAIT);
            false
        }
        Some(d) => now >= d,
    }
}

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

/// How many links beyond the queue head the inserts between two evictions read ahead
/// ([`Cache::read_ahead`]): about the slots one batch of [`EVICT_BATCH`] victims scans.
const AHEAD: u64 = 8;

/// Bytes of slot records from which inserts read ahead of the eviction scans: a scan's
/// dependent loads miss the core's own caches only when the slots do not fit there (an L2
/// holds 0.5–2 MiB). At 100k u64 entries (3.2 MiB of slots) reading ahead measured 1.055× at
/// one thread and 1.034× at two for Mobius (S3-FIFO 1.049× and 1.021×, NbQ-CLOCK 1.072× and
/// 1.061×); at 10k (320 KiB) Mobius 0.93× and 0.98×, where identical caches in the same
/// processes spread over 0.98–1.05: docs/BENCHMARKS.md, stop 102.
const READ_AHEAD_FROM: usize = 1 << 20;

/// Mobius caches of fewer entries than this batch only while threads contend: an insert's eviction
/// takes [`EVICT_BATCH`] victims and its new entry joins a chain only while its stripe batches
/// ([`Cache::evict_batch_for`]: from the first eviction that finds another stripe's since its own
/// last, until it evicts [`ALONE_AFTER`] times in a row alone); otherwise one victim, and the new
/// entry is enqueued alone, as the one-at-a-time policy does. Mobius's victims are mostly entries
/// inserted moments ago (SIEVE's quick demotion), so its batches change its order where other
/// policies' do not: a batch takes them early, a chain gives them a grace. At one thread, on Zipf
/// 1.0 streams of 300–5,000 entries over 100 k keys, batches moved Mobius's miss ratio from the
/// simulator's by up to 0.009 (0.002 is issue 11's bound), and by at most 0.001 from about 3,000
/// entries on; one at a time it is the simulator's exactly. One thread pays for the order (0.69 of
/// quick_cache's throughput at 1,000 and 3,000 entries instead of 0.82 and 0.76 at stop 95;
/// 0.72–0.74 since its lone victim skips the stripe lock, stop 99; at 10k entries it would be
/// 0.69 instead of 0.90, so larger caches keep their batches; docs/BENCHMARKS.md). Two threads
/// batch as before: without batches, two threads inserting into a cache of a few hundred entries
/// meet on the queues' head and tail at every insert (see [`batches`]).
const ORDERED_BELOW: u64 = 4096;

/// Fewest entries per queue lane (see `policy/queues.rs`, "Lanes"): caches of `n` entries
/// have one lane per stripe up to `n / LANE_ENTRIES` lanes (a power of two), and caches below
/// [`ORDERED_BELOW`] one. A lane is a whole instance of the policy's queues, so each holds
/// enough entries for its own SIEVE/CLOCK order to be the whole queue's in small.
const LANE_ENTRIES: usize = 2048;

/// The number of queue lanes of a queue-policy cache of `entries` with `stripes` stripes.
fn lanes(entries: usize, stripes: usize) -> usize {
    if (entries as u64) < ORDERED_BELOW {
        return 1;
    }
    let most = (entries / LANE_ENTRIES).min(stripes).max(1);
    // The largest power of two not above `most`.
    1 << most.ilog2()
}

/// Evictions in a row with no other stripe's between after which a batching stripe of a small
/// Mobius cache goes back to one at a time (see [`ORDERED_BELOW`]): two threads whose
/// evictions do not alternate exactly (one batch each per 8 inserts) keep their batches.
const ALONE_AFTER: u8 = 4;

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

    /// Whether retired slots or hollow entries wait for the epochs (in `limbo` or `wait`).
    #[inline]
    fn retired_waiting(&self) -> bool {
        !self.wait.is_empty() || self.limbo.iter().any(|(_, v)| !v.is_empty())
    }

    /// Whether the free list, the limbo, `wait` or `hollow` holds any slot (see
    /// `Stripe::stocked`).
    #[inline]
    fn stocked(&self) -> bool {
        !self.free.is_empty() || !self.hollow.is_empty() || self.retired_waiting()
    }

    /// Counts `n` slots freed at once (reused without the limbo, see `Epochs::quiet`) toward
    /// the next advance attempt while retired slots or hollow entries wait in `limbo` or
    /// `wait`: they need the epochs to move, and at steady state the victims freed at once
    /// are what the stripe retires. True when it is time to try to advance.
    fn freed_at_once(&mut self, n: u32) -> bool {
        if !self.retired_waiting() {
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
    /// The slot lists, locked through [`Stripe::lists`] only (its unlock keeps `stocked`).
    slot_lists: SpinLock<Lists>,
    /// Whether the free list, the limbo, `wait` or `hollow` held any slot when the lists were
    /// last unlocked (all empty at the start): stored under the lock by every unlock
    /// ([`ListsGuard`]), read without it. A hint: an insert whose one victim is reusable at
    /// once takes it as its slot without the lock when it says `false`
    /// ([`Cache::retire_and_pop`]), which is the slot the lists would have handed it. Stale
    /// only while another thread of the stripe changes the lists.
    stocked: AtomicBool,
    /// Removed slots a queue policy still holds (garbage until a scan or a sweep reaches
    /// them): +1 for each unlink by this stripe's threads that leaves its slot queued, −1 for
    /// each such slot they take out of the queues. The sum over stripes is exact when
    /// quiescent.
    garbage: AtomicI64,
    /// Whether this stripe's evictions take batches (small Mobius caches: see
    /// [`Cache::evict_batch_for`]); its inserts gather their entries into chains meanwhile.
    batching: AtomicBool,
    /// Its evictions in a row since another stripe's while batching (see [`ALONE_AFTER`]).
    alone: std::sync::atomic::AtomicU8,
    /// Whether `lists` holds a pending chain (`pend_len > 0`), stored under the lock with
    /// each change and read without it: an eviction scan at the tail takes the lock only for
    /// a chain to enqueue (small Mobius caches at one thread gather none).
    pending: AtomicBool,
    /// This stripe's number (its place in `Cache::stripes`): the queue lane its threads use
    /// (see `policy/queues.rs`, "Lanes").
    index: usize,
    /// The scan-ahead cursors ([`Cache::read_ahead`]), one per queue a scan may start from
    /// (the queue policies use the first; S3-FIFO small's and main's): the slot whose line was
    /// last fetched ahead of the next eviction scan, plus one (0: none), and how many links
    /// from the queue's head it is (above bit 32). Only this stripe's threads touch them.
    ahead: [AtomicU64; 2],
}

impl Stripe {
    /// Locks the stripe's slot lists.
    #[inline]
    fn lists(&self) -> ListsGuard<'_> {
        ListsGuard { lists: self.slot_lists.lock(), stocked: &self.stocked }
    }

    /// Locks the stripe's slot lists if nobody holds them.
    fn try_lists(&self) -> Option<ListsGuard<'_>> {
        Some(ListsGuard { lists: self.slot_lists.try_lock()?, stocked: &self.stocked })
    }
}

/// Holds a stripe's slot lists; dropping it stores whether they hold any slot in the
/// stripe's `stocked` hint, then unlocks.
struct ListsGuard<'a> {
    lists: SpinGuard<'a, Lists>,
    stocked: &'a AtomicBool,
}

impl std::ops::Deref for ListsGuard<'_> {
    type Target = Lists;
    #[inline]
    fn deref(&self) -> &Lists {
        &self.lists
    }
}

impl std::ops::DerefMut for ListsGuard<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut Lists {
        &mut self.lists
    }
}

impl Drop for ListsGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        let stocked = self.lists.stocked();
        // Relaxed: a hint (see `Stripe::stocked`); stored only when it changes, so a thread
        // alone on its stripe does not write it at every unlock. Before the unlock (the field
        // `lists` drops after this), so the next holder reads it matching the lists.
        if self.stocked.load(Ordering::Relaxed) != stocked {
            self.stocked.store(stocked, Ordering::Relaxed);
        }
    }
}

/// The epochs of a new cache: the defaults, or what a test asked for (`hooks::epochs`).
fn new_epochs() -> Epochs {
    #[cfg(all(feature = "test-hooks", not(loom)))]
    if let Some((records, spares)) = crate::raw::queue::hooks::epochs_override() {
        return Epochs::with_records(records, spares);
    }
    Epochs::new()
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
    /// Small Mobius caches with batches: the stripe that evicted last (its address; 0 before
    /// the first eviction), read and written by each eviction (see [`ORDERED_BELOW`]).
    last_evictor: Option<CachePadded<AtomicUsize>>,
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
    /// Whether inserts read ahead of the eviction scans ([`Cache::read_ahead`]): queue
    /// policies and S3-FIFO whose slot records take [`READ_AHEAD_FROM`] bytes or more.
    reads_ahead: bool,
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
        // one per slot. S3-FIFO's index has more words per entry: its ghost lives there.
        let linked = if weigher.is_some() { arena.max_len() } else { slots };
        let per_bucket = if policy == Policy::S3Fifo { 3 } else { 4 };
        let index = Index::new(linked, per_bucket).map_err(no_memory)?;
        // Eight stripes per core: threads share a stripe (its token word and the spin lock of
        // its pending chain) only beyond 8 per core, so an oversubscribed thread preempted in
        // its stripe's lock rarely stalls another (at 16 threads on 2 cores, 16 stripes ran
        // Mobius 7–8 % faster than 8; docs/BENCHMARKS.md). The tokens idle stripes may hold are
        // bounded by the count (see the module docs).
        let n_stripes = std::thread::available_parallelism()
            .map_or(4, |n| n.get() * 8)
            .clamp(4, 64)
            .next_power_of_two();
        let lanes = lanes(entries, n_stripes);
        let structure = match policy {
            Policy::Mobius => Structure::Queues(Queues::new(Mode::Mobius { consecutive }, lanes)),
            Policy::Clock => Structure::Queues(Queues::new(Mode::Clock, lanes)),
            Policy::Fifo => Structure::Queues(Queues::new(Mode::Fifo, lanes)),
            Policy::Sieve => {
                Structure::Locked(Locked::new(Kind::Sieve, arena.max_len()).map_err(no_memory)?)
            }
            Policy::Lru | Policy::ProbLru => {
                Structure::Locked(Locked::new(Kind::Lru, arena.max_len()).map_err(no_memory)?)
            }
            Policy::S3Fifo => Structure::S3(S3Fifo::new(capacity, entries as u64, lanes)),
            Policy::NbqClock => {
                Structure::Queues(Queues::new(Mode::NbqClock { batched: consecutive }, lanes))
            }
        };
        let in_place =
            weigher.is_none() && extras.expiration.as_ref().is_none_or(|e| e.custom.is_none());
        let queues = matches!(structure, Structure::Queues(_) | Structure::S3(_));
        let (batch, evict_batch) = batches(capacity, n_stripes as u64, queues && weigher.is_none());
        let ordered = policy == Policy::Mobius && evict_batch > 1 && capacity < ORDERED_BELOW;
        let reads_ahead = queues && arena.base_len() * arena.stride() >= READ_AHEAD_FROM;
        Ok(Cache {
            arena,
            index,
            epochs: new_epochs(),
            structure,
            stripes: (0..n_stripes)
                .map(|index| CachePadded::new(Stripe { index, ..Stripe::default() }))
                .collect(),
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
            last_evictor: ordered.then(|| CachePadded::new(AtomicUsize::new(0))),
            stats: Stats::new(),
            listener: extras.listener,
            expiration: extras.expiration,
            loads: Loads::default(),
            promote_below: ((1.0 - extras.promotion_skip) * 4_294_967_296.0) as u64,
            in_place,
            reads_ahead,
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
            // Meaningful: see above.
            return Some(slot.meta());
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
        // Meaningful: see above.
        u64::from(self.slot(s).meta())
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

    /// Takes and releases the home lock of `hash` (see `Cache::invalidate_all_loads`).
    pub(crate) fn pass_home_lock(&self, hash: u64) {
        drop(self.index.lock(hash));
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

    /// Removes every entry. Entries inserted concurrently with `clear` may or may not remain.
    /// Values are dropped once no reader can still be cloning them; with no other thread
    /// inside the cache, all are dropped before `clear` returns.
    pub fn clear(&self) {
        self.invalidate_all_loads();
        {
            let (_guard, tid) = self.pin();
            let st = self.stripe(tid);
            let now = self.now();
            for s in self.index.slots() {
                if let Unlink::Done(w) =
                    self.unlink_slot(s, st, tid, RemovalCause::Cleared, now, None)
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
    /// and the wait after it (see "Capacity" in the crate docs); 0 in normal operation.
    pub fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }

    /// How many new entries a stripe gathers before one enqueue, and how many victims an
    /// eviction takes at once, when one thread uses the cache alone (both 1 in small caches,
    /// in Mobius caches below 4,096 entries (`ORDERED_BELOW`), which batch only while threads
    /// contend, and for the locked policies: these keep the simulator's order exactly at one
    /// thread). For tests; not a stable interface.
    #[doc(hidden)]
    pub fn queue_batches(&self) -> (u32, usize) {
        match self.structure {
            Structure::Locked(_) => (1, 1),
            _ if self.last_evictor.is_some() => (1, 1),
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
            Structure::Queues(_) | Structure::S3(_) => 0,
        };
        let total = slot * self.arena.len() + self.index.bytes() + locked;
        let entries = (self.capacity() as usize).max(1);
        total as f64 / entries as f64 - kv as f64
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
        // Slots ever handed out: the used part of the base array, and every grown chunk (the
        // rest are EMPTY, and a large arena's are pages never written: reading them would
        // only map zero pages in).
        let fresh = self.fresh.load(Ordering::Relaxed).min(self.arena.base_len());
        for s in (0..fresh).chain(self.arena.base_len()..self.arena.len()) {
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

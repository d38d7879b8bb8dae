//! Epoch-based reclamation of slots, one instance per cache.
//!
//! A slot that leaves the cache (evicted, or removed and unlinked from the policy) may still be
//! read by a thread that found it a moment earlier: a `get` comparing its key or cloning its
//! value, an evictor scanning past it. It is therefore *retired* with the current epoch and
//! reused only after every thread that could have seen it has finished its operation.
//!
//! Two kinds of protection, one record per thread:
//!
//! * **Slot hazards, for lookups and inserts** (the hot paths). A lookup or an insert probes
//!   the index unprotected and, at the first word with its key's tag, *announces the slot*:
//!   stores its number in its record's `hazard` word, then a full barrier, then reads the word
//!   again and reads the slot only if the word still holds it ([`LazyPin`], `Index::find`). A
//!   slot named by a hazard is never handed out for reuse. So a thread preempted in the middle
//!   of a `get` holds back one slot, not the reclamation of the whole cache: under
//!   oversubscription (more threads than cores), where some reader is nearly always
//!   descheduled mid-read, the epochs below keep advancing and the arena keeps its size.
//! * **Spare hazards, for threads without a hazard of their own** (beyond the records, or
//!   nested in another of their operations): such a thread claims one of [`SPARES`] shared
//!   hazard words by CAS. Two uses. To hold a slot across an operation (`compute` holds the
//!   slot its closure read until its store, [`Epochs::hold`]): the thread is pinned already
//!   (its pin covers the slot until the claim), so the claim needs no barrier of its own. To
//!   announce a slot about to be read, as a record's hazard does ([`Epochs::announce_spare`],
//!   through [`LazyPin`]): the claim is the announcement, with its full barrier. Scanners
//!   read the spares after the pins, and only while some spare is held (one count). (Pinning
//!   the epoch instead, the fallback when every spare is taken, blocks the reuse of every
//!   other slot while the thread is preempted: 80 threads of `compute` on 2 cores ran 27×
//!   slower and had computes rejected when the 16 beyond the records held their pins across
//!   the closure, and 1.5× slower when they pinned only to look up.)
//! * **Epochs, for everything else** (removals, iteration, `clear`, a second slot in one
//!   operation, a thread without a hazard when every spare is taken): a thread pins by storing the global epoch into its
//!   record, then a full barrier; unpinning stores 0. Nested pins of the same thread are free.
//!   Threads beyond the first [`RECORDS`] count themselves in one of three shared counters (one
//!   per epoch residue): correct for any number of threads, slower only for them.
//! * The global epoch advances from `e` to `e + 1` only when no thread is pinned at an older
//!   epoch; hazards do not hold it back. Each advance attempt ([`Epochs::try_advance`]) also
//!   reads every record's hazard, after the same fence: an [`Advance`]. A slot retired at epoch
//!   `r` (read after its unlinking, behind a `SeqCst` fence) may be reused once an advance
//!   attempt that saw the global epoch at `r + 1` or later names it in no hazard and the epoch
//!   is `r + 2` ([`Advance::covers`], [`Advance::free`]): every epoch-pinned thread pinned
//!   after the unlinking, and every hazard announced before that attempt's fence was seen.
//! * **Reuse at once.** Slots just unlinked need no wait at all when, read after the
//!   unlinking's barrier, no thread is pinned at any epoch and no hazard names them
//!   ([`Epochs::quiet`]): the cache's inserts reuse their victims that way at steady state.
//!
//! The fences pair as in every epoch or hazard-pointer scheme: a reader's record store + fence
//! before its loads, against the retirer's unlinking + fence before reading the epoch and the
//! advancer's fence before reading the records. Whichever fence comes first in the single
//! `SeqCst` order, either the advancer sees the reader's epoch or hazard (and waits, or keeps
//! that slot back), or the reader sees the slot unlinked (its second read of the index word).

use crate::sync::{fence, fence_after_locked_rmw, AtomicU64, AtomicUsize, FencedStore, Ordering};
use crossbeam_utils::CachePadded;

/// Threads (by [`thread_id`]) that get a private record in every cache.
pub(crate) const RECORDS: usize = 64;

/// Spare hazard words per cache, shared by the threads that have no hazard of their own to
/// hold a slot with ([`Epochs::hold`]); a thread that finds none free pins the epoch.
pub(crate) const SPARES: usize = 192;

/// Stores `v` into one of the thread's own record words (its epoch, or its hazard), ordered
/// before every load the thread then makes of the cache's structures (see the module docs):
/// [`FencedStore`]. Release, so an advancer whose Acquire load reads the new value also sees
/// the thread's earlier reads (of the slot it announced before this one).
#[inline]
fn announce(w: &AtomicU64, v: u64) {
    w.store_fenced(v);
}

/// One thread's record: both words on one line, written only by the thread (read by advancers).
#[derive(Debug, Default)]
struct Record {
    /// 0, or the epoch the thread is pinned at.
    epoch: AtomicU64,
    /// 0, or one more than the slot the thread has announced (see the module docs).
    hazard: AtomicU64,
}

/// The epochs of one cache.
#[derive(Debug)]
pub(crate) struct Epochs {
    /// The global epoch; starts at 1 (a record holding 0 is unpinned).
    global: CachePadded<AtomicU64>,
    /// Per-thread records.
    records: Box<[CachePadded<Record>]>,
    /// One more than the highest record index ever pinned (advancers scan only these).
    used: CachePadded<AtomicUsize>,
    /// Threads without a record: how many are pinned at an epoch of each residue mod 3.
    shared: [CachePadded<AtomicU64>; 3],
    /// Spare hazard words: 0, or one more than the slot held (see the module docs).
    spares: Box<[AtomicU64]>,
    /// How many threads hold (or are claiming) a spare: scanners read the spares only when
    /// this is not 0.
    spares_held: CachePadded<AtomicUsize>,
}

/// How a guard pinned.
#[derive(Debug)]
enum Pin<'a> {
    /// Through its own record's epoch word, cleared on drop.
    Record(&'a AtomicU64),
    /// The thread was already pinned in this cache: nothing to undo.
    Nested,
    /// Through this shared counter (the one of its epoch), decremented on drop.
    Shared(&'a AtomicU64),
}

/// Keeps every slot the thread reads from being reused until it is dropped.
#[derive(Debug)]
pub(crate) struct Guard<'a> {
    pin: Pin<'a>,
}

impl Epochs {
    pub fn new() -> Self {
        Self::with_records(RECORDS, SPARES)
    }

    /// As [`Epochs::new`] with `n` records and `spares` spare hazards (loom models use few).
    pub fn with_records(n: usize, spares: usize) -> Self {
        Epochs {
            global: CachePadded::new(AtomicU64::new(1)),
            records: (0..n).map(|_| CachePadded::new(Record::default())).collect(),
            used: CachePadded::new(AtomicUsize::new(0)),
            shared: [
                CachePadded::new(AtomicU64::new(0)),
                CachePadded::new(AtomicU64::new(0)),
                CachePadded::new(AtomicU64::new(0)),
            ],
            spares: (0..spares).map(|_| AtomicU64::new(0)).collect(),
            spares_held: CachePadded::new(AtomicUsize::new(0)),
        }
    }

    /// Pins the calling thread, whose id is `tid` ([`thread_id`]).
    #[inline]
    pub fn pin(&self, tid: usize) -> Guard<'_> {
        if let Some(r) = self.records.get(tid) {
            let r = &r.epoch;
            // Relaxed: only this thread writes its record, so it reads its own last store.
            if r.load(Ordering::Relaxed) != 0 {
                return Guard { pin: Pin::Nested };
            }
            self.register(tid);
            // Relaxed: a stale (older) epoch only makes us more conservative.
            let e = self.global.load(Ordering::Relaxed);
            announce(r, e);
            return Guard { pin: Pin::Record(r) };
        }
        loop {
            let e = self.global.load(Ordering::SeqCst);
            // SeqCst: announces us before the re-check and before our loads of the structures.
            self.shared[(e % 3) as usize].fetch_add(1, Ordering::SeqCst);
            // SeqCst fence: pairs with the advancer's and the retirer's fences. A `SeqCst`
            // read-modify-write alone orders nothing against another thread's fence in the
            // model (a locked instruction is a full barrier on x86-64, but not everywhere):
            // without it, loom finds an advancer that misses this count and a reader that
            // misses the unlinking (`epoch_reuse_shared_counters` with unpinned advancers).
            // Only threads beyond the records come here.
            fence(Ordering::SeqCst);
            if self.global.load(Ordering::SeqCst) == e {
                return Guard { pin: Pin::Shared(&self.shared[(e % 3) as usize]) };
            }
            // The epoch moved between the read and the announcement: retry at the new one.
            // Release: nothing was read under this announcement, any ordering would do.
            self.shared[(e % 3) as usize].fetch_sub(1, Ordering::Release);
        }
    }

    /// The epoch to retire a slot with, read after the unlinking stores (see the module docs).
    ///
    /// Every unlinking from the index is a locked read-modify-write (the word swap, under the
    /// home bucket's lock), done by this thread or observed by it through that lock; on x86-64
    /// such an instruction already drains the store buffer, so no later load of this thread
    /// (the epoch below) can pass it, and the `mfence` is left out there (it also waits for
    /// outstanding cache misses). Elsewhere, and under Miri and loom, the fence stays.
    #[inline]
    pub fn retire_epoch(&self) -> u64 {
        fence_after_locked_rmw();
        // SeqCst: ordered after the unlinking (fence or locked RMW, see above).
        self.global.load(Ordering::SeqCst)
    }

    /// Advances the global epoch if no thread is pinned at an older one; returns the epoch now
    /// and the hazards announced (see [`Advance`]).
    pub fn try_advance(&self) -> Advance {
        let seen = self.global.load(Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let mut adv =
            Advance { now: seen, seen, hazards: [0; RECORDS], len: 0, spares: Vec::new() };
        // Relaxed: read after the fence (see the module docs).
        let used = self.used.load(Ordering::Relaxed).min(self.records.len());
        let mut blocked = false;
        for r in &self.records[..used] {
            // Acquire (both): pairs with the Release clears (unpin, hazard drop) and the
            // Release hazard stores, so a reader's reads of a slot happen before the advance or
            // the reuse that this read allows (through the global epoch's RMW chain, or the
            // stripe lock of the free list).
            let v = r.epoch.load(Ordering::Acquire);
            blocked |= v != 0 && v != seen;
            let h = r.hazard.load(Ordering::Acquire);
            if h != 0 && adv.len < RECORDS {
                adv.hazards[adv.len] = (h - 1) as u32;
                adv.len += 1;
            }
        }
        // Counted threads pinned at e - 1 or e - 2 block the advance (none can be older).
        // Acquire: as for the records.
        blocked = blocked
            || self.shared[((seen + 1) % 3) as usize].load(Ordering::Acquire) != 0
            || self.shared[((seen + 2) % 3) as usize].load(Ordering::Acquire) != 0;
        // Acquire: as for the records; after them (see `Epochs::spares_named`).
        self.spares_named(Ordering::Acquire, |s| adv.spares.push(s as u32));
        adv.spares.sort_unstable();
        if !blocked {
            adv.now = match self.global.compare_exchange(
                seen,
                seen + 1,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => seen + 1,
                Err(now) => now,
            };
        }
        adv
    }

    /// Whether slots just unlinked may be reused at once, without waiting for the epochs: if
    /// no thread is pinned at any epoch, the slots announced in hazards (a slot that
    /// [`Announced::may_name`] denies is free); `None` if some thread is pinned. Called as
    /// [`Epochs::retire_epoch`] is, right after it: every slot in question was unlinked from
    /// the index by a locked read-modify-write of this thread, or of another that this thread
    /// observed through one, so the loads below come after the unlinking (on x86-64 that
    /// instruction is the full barrier; elsewhere `retire_epoch`'s fence is).
    ///
    /// Why that is enough (the hazard-pointer argument, with an epoch word as a hazard that
    /// names every slot): a reader stores its hazard or its epoch, then a full barrier, then
    /// reads the index word again before it reads the slot. Whichever barrier comes first,
    /// either this thread sees the reader's word (the slot is kept, or `None`) or the reader
    /// sees the slot unlinked (and does not read it). A reader whose word we see cleared did
    /// so with a Release store after its reads, and our load (SeqCst, so Acquire) makes those
    /// reads happen before the reuse. Threads that register later announce after our loads,
    /// so they too find the slot unlinked.
    ///
    /// Costs one read of each used record, as an advance attempt does. At steady state it
    /// lets an insert reuse the slots its evictions freed while their lines are still in the
    /// core's cache, where the epochs made them wait two advances (and the insert reuse older,
    /// colder ones): docs/BENCHMARKS.md, stop 72.
    #[inline]
    pub fn quiet(&self) -> Option<Announced> {
        let mut named = Announced(0);
        // Relaxed: read after the unlinking's barrier (see above).
        let used = self.used.load(Ordering::Relaxed).min(self.records.len());
        for r in &self.records[..used] {
            // SeqCst (both): ordered after the unlinking's locked RMW (see above); as Acquire,
            // pairs with the Release clears (unpin, hazard drop).
            if r.epoch.load(Ordering::SeqCst) != 0 {
                return None;
            }
            let h = r.hazard.load(Ordering::SeqCst);
            if h != 0 {
                named.0 |= Announced::bit(h - 1);
            }
        }
        // SeqCst: as above.
        if self.shared.iter().any(|c| c.load(Ordering::SeqCst) != 0) {
            return None;
        }
        // SeqCst: as above; after the pins (see `Epochs::spares_named`).
        self.spares_named(Ordering::SeqCst, |s| named.0 |= Announced::bit(s));
        Some(named)
    }

    /// Whether no thread but `tid` can be reading slot `s` now: no other thread has announced
    /// it, and no thread is pinned at an epoch (an epoch protects every slot; that includes
    /// `tid`'s own pin, which an outer operation of the caller may hold while it reads `s`).
    /// For an update in place (see `raw/writing.rs`): the caller has begun its write, whose
    /// full barrier orders the flag before these loads, as a reader's announcement is ordered
    /// before its check of the flag.
    pub fn exclusive(&self, tid: usize, s: u32) -> bool {
        // Relaxed: read after the caller's barrier, as in `try_advance` after its fence.
        let used = self.used.load(Ordering::Relaxed).min(self.records.len());
        let want = u64::from(s) + 1;
        for (i, r) in self.records[..used].iter().enumerate() {
            // Acquire (both): pairs with the Release clears (unpin, hazard drop), so a reader
            // that we see gone has finished its reads before our write. (A reader that
            // announces after our barrier waits for the write: see `Writing`.)
            if r.epoch.load(Ordering::Acquire) != 0
                || i != tid && r.hazard.load(Ordering::Acquire) == want
            {
                return false;
            }
        }
        // Acquire: as above.
        if self.shared.iter().any(|c| c.load(Ordering::Acquire) != 0) {
            return false;
        }
        // Acquire: as above; after the pins (see `Epochs::spares_named`).
        let mut named = false;
        self.spares_named(Ordering::Acquire, |h| named |= h == u64::from(s));
        !named
    }

    /// Calls `f` with each slot held in a spare hazard (none, usually: one load). Every
    /// scanner calls it after reading the pins (the records' epochs and the shared counters).
    /// A spare is claimed either by a pinned thread, before it unpins with a Release store
    /// ([`Epochs::hold`]), so a scanner that saw the pin gone (Acquire) sees the claim (the
    /// count and the word), and a scanner that saw the pin treats the slot as read by then
    /// anyway; or as an announcement, with its full barrier ([`Epochs::announce_spare`]), so
    /// that either the scanner's fence comes after it (and its loads see the count and the
    /// word) or the announcer's second read of the index word comes after the scanner's fence
    /// (and sees the slot unlinked), as for a record's hazard.
    #[inline]
    fn spares_named(&self, order: Ordering, mut f: impl FnMut(u64)) {
        // `order` (Acquire or SeqCst, the caller's): pairs with the Release decrement of a
        // holder that let go, so its reads of the slot happen before what the scan allows.
        if self.spares_held.load(order) == 0 {
            return;
        }
        for w in self.spares.iter() {
            // As above, with the Release clear of the word.
            let h = w.load(order);
            if h != 0 {
                f(h - 1);
            }
        }
    }

    /// Holds slot `s` for a caller pinned by `pin` (which covers `s` from its read on), so
    /// that the caller may let the pin go and still keep `s` from being reused or updated in
    /// place (an update in place needs [`Epochs::exclusive`]): thread `tid`'s own hazard if it
    /// is free, else a spare hazard, and the pin is dropped; else (every spare taken) the pin
    /// itself is kept, which holds back the immediate reuse of every slot (see the module
    /// docs). (Not a new pin: a thread pinned already gets a nested pin that protects nothing
    /// once the caller's goes, and a new shared-counter pin is at the epoch of now, which does
    /// not cover a slot retired since the caller's.)
    pub fn hold<'a>(&'a self, tid: usize, s: u32, pin: Guard<'a>) -> Held<'a> {
        if let Some(h) = self.hazard(tid) {
            let held = Held::Hazard(h.announce(s));
            drop(pin);
            return held;
        }
        // The claim is ordered before the scanners' loads of the spares by our unpin, a
        // Release store after it that they read first (see `Epochs::spares_named`); until
        // then the pin protects the slot.
        match self.claim_spare(tid, s) {
            Some(h) => {
                drop(pin);
                Held::Spare(h)
            }
            None => Held::Pin(pin),
        }
    }

    /// Announces slot `s` (about to be read, found in an index word) in a spare hazard, for a
    /// thread that has no hazard of its own to announce it in (beyond the records, or nested
    /// in another of its operations) and is not pinned: as [`FreeHazard::announce`], the
    /// caller must then read the index word again and read the slot only if the word still
    /// holds it. `None` if every spare is taken (the caller pins the epoch instead).
    ///
    /// So threads beyond the records read without pinning: pinned through the shared counters,
    /// any one of 80 such threads preempted mid-lookup on 2 cores held the epochs back and
    /// every retired slot waited (`tests/beyond_records.rs`, 80 threads computing over caches
    /// of each policy: 3.6–4.0 s a run with the pins, 2.4–2.5 s with spare hazards).
    pub fn announce_spare(&self, tid: usize, s: u32) -> Option<SpareHazard<'_>> {
        let claimed = self.claim_spare(tid, s)?;
        // The full barrier of an announcement (the claim's locked RMW on x86-64, a fence
        // elsewhere): orders the count and the word before the caller's second read of the
        // index word, against the scanners' fences before they read the count and the words
        // (see the module docs; [`Epochs::spares_named`] reads the count first, and ours is in
        // it from before the word).
        fence_after_locked_rmw();
        Some(claimed)
    }

    /// Counts the caller among the spares' holders and claims a free spare word for slot `s`
    /// (the orderings are the callers': [`Epochs::hold`], [`Epochs::announce_spare`]).
    fn claim_spare(&self, tid: usize, s: u32) -> Option<SpareHazard<'_>> {
        // SeqCst (the count and the claim): locked RMWs on x86-64 whatever the ordering; the
        // callers say what orders them.
        self.spares_held.fetch_add(1, Ordering::SeqCst);
        let n = self.spares.len();
        // Start where the thread's id points, so threads claim different words.
        let start = tid % n.max(1);
        for i in 0..n {
            let w = &self.spares[(start + i) % n];
            // Relaxed: a hint; the claim is the CAS.
            if w.load(Ordering::Relaxed) == 0
                && w.compare_exchange(0, u64::from(s) + 1, Ordering::SeqCst, Ordering::Relaxed)
                    .is_ok()
            {
                return Some(SpareHazard { word: w, held: &self.spares_held });
            }
        }
        // Relaxed: nothing was claimed.
        self.spares_held.fetch_sub(1, Ordering::Relaxed);
        None
    }

    /// The record of thread `tid`, if it has one.
    fn record(&self, tid: usize) -> Option<&Record> {
        self.records.get(tid).map(|r| &**r)
    }

    /// Thread `tid`'s hazard word, if it has a record whose hazard is not in use (else the
    /// caller pins the epoch: a thread beyond the records, or an operation nested in another of
    /// the same thread, say from a listener).
    #[inline]
    pub fn hazard(&self, tid: usize) -> Option<FreeHazard<'_>> {
        let r = self.record(tid)?;
        // Relaxed: only this thread writes its record. A hazard in use is an outer operation's
        // of this thread (from a listener, say), not to be overwritten. (A pinned epoch of an
        // outer operation does not matter: a hazard protects alone.)
        if r.hazard.load(Ordering::Relaxed) != 0 {
            return None;
        }
        self.register(tid);
        Some(FreeHazard(&r.hazard))
    }

    /// Makes advancers read record `tid` from now on (before the thread first uses it).
    #[inline]
    fn register(&self, tid: usize) {
        // Relaxed: the first use of a record raises the mark before it; `try_advance` reads
        // `used` after its fence, and the fence that follows every use of a record (the pin's
        // or the hazard's) orders this before the thread's loads of the structures.
        if tid >= self.used.load(Ordering::Relaxed) {
            self.used.fetch_max(tid + 1, Ordering::SeqCst);
        }
    }
}

/// What one [`Epochs::try_advance`] saw: the global epoch before its fence (`seen`) and after
/// the attempt (`now`), and the slots that threads had announced (hazards), read after the fence.
#[derive(Debug, Clone)]
pub(crate) struct Advance {
    pub now: u64,
    seen: u64,
    hazards: [u32; RECORDS],
    len: usize,
    /// The slots held in spare hazards, sorted (none, usually: no allocation then). Exact,
    /// not a filter as [`Epochs::quiet`]'s: many threads beyond the records each hold one
    /// while they read, and a 64-bit filter of 80 slots names most slots.
    spares: Vec<u32>,
}

impl Advance {
    /// Whether slots retired at epoch `retired` are past every epoch-pinned reader, and this
    /// attempt's hazards cover them: its fence came after their retirement (it saw the epoch
    /// at `retired + 1`, which came after the retirer read `retired` behind its fence).
    #[inline]
    pub fn covers(&self, retired: u64) -> bool {
        retired + 2 <= self.now.min(self.seen + 1)
    }

    /// Whether a slot that [`Advance::covers`] may be reused: no thread announced it.
    #[inline]
    pub fn free(&self, slot: u32) -> bool {
        !self.hazards[..self.len].contains(&slot)
            && (self.spares.is_empty() || self.spares.binary_search(&slot).is_err())
    }

    /// Whether any thread announced a slot.
    #[inline]
    pub fn any_hazard(&self) -> bool {
        self.len > 0 || !self.spares.is_empty()
    }
}

/// The slots announced in hazards when [`Epochs::quiet`] read them, as a 64-bit Bloom filter:
/// one bit per announced slot, so that a slot whose bit is clear was not announced (a set bit
/// may be another slot's: that slot only waits for the epochs, as every slot used to).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Announced(u64);

impl Announced {
    /// The bit of slot `s` (Fibonacci hashing: the top six bits of its product).
    #[inline]
    fn bit(s: u64) -> u64 {
        1 << (s.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)
    }

    /// Whether some hazard may have named slot `s` (none, usually: no multiply then).
    #[inline]
    pub fn may_name(self, s: u32) -> bool {
        self.0 != 0 && self.0 & Self::bit(u64::from(s)) != 0
    }
}

/// A thread's hazard word, free to announce a slot in ([`Epochs::hazard`]): the protection of
/// a read's fast path (`Cache::read_first`), and the first one a [`LazyPin`] takes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FreeHazard<'a>(&'a AtomicU64);

impl<'a> FreeHazard<'a> {
    /// Announces slot `s` (about to be read, found in an index word): the caller must then read
    /// the index word again and read the slot only if the word still holds it (see the module
    /// docs). The slot stays protected until the returned [`Hazard`] drops; one slot at a time
    /// (announcing another would end the first one's protection).
    #[inline]
    pub fn announce(self, s: u32) -> Hazard<'a> {
        announce(self.0, u64::from(s) + 1);
        Hazard(self.0)
    }
}

/// One announced slot (see [`FreeHazard::announce`]), cleared on drop.
#[derive(Debug)]
pub(crate) struct Hazard<'a>(&'a AtomicU64);

impl Drop for Hazard<'_> {
    #[inline]
    fn drop(&mut self) {
        // Release: every read this thread made of the slot happens before an advancer that
        // sees the hazard gone lets the slot be reused.
        self.0.store(0, Ordering::Release);
    }
}

/// A slot held in a spare hazard ([`Epochs::hold`]), let go on drop.
#[derive(Debug)]
pub(crate) struct SpareHazard<'a> {
    word: &'a AtomicU64,
    held: &'a AtomicUsize,
}

impl Drop for SpareHazard<'_> {
    #[inline]
    fn drop(&mut self) {
        // Release (both): every read this thread made of the slot happens before a scanner
        // that sees the word cleared, or the count without this holder, lets the slot be
        // reused or updated in place.
        self.word.store(0, Ordering::Release);
        self.held.fetch_sub(1, Ordering::Release);
    }
}

/// A slot held by [`Epochs::hold`] until dropped.
#[derive(Debug)]
#[allow(dead_code)] // held for its drop
pub(crate) enum Held<'a> {
    Hazard(Hazard<'a>),
    Spare(SpareHazard<'a>),
    Pin(Guard<'a>),
}

/// A slot announced by a [`LazyPin`]: in the thread's own hazard, or in a spare one
/// ([`Epochs::announce_spare`]).
#[derive(Debug)]
enum Announcement<'a> {
    Own(Hazard<'a>),
    Spare(SpareHazard<'a>),
}

impl<'a> From<Announcement<'a>> for Held<'a> {
    fn from(a: Announcement<'a>) -> Self {
        match a {
            Announcement::Own(h) => Held::Hazard(h),
            Announcement::Spare(h) => Held::Spare(h),
        }
    }
}

/// Protection taken on first need, for lookups and inserts: an operation that may not have to
/// read any slot (one that meets no index word with its key's tag, see `Index::find`) protects
/// nothing and skips the barrier. The first slot it is about to read is *announced* (a
/// [`Hazard`]: only that slot is held back from reuse, so a thread preempted here blocks no
/// reclamation); a second one, or a thread that gets no hazard, pins the epoch instead.
/// Released when dropped.
#[derive(Debug)]
pub(crate) struct LazyPin<'a> {
    epochs: &'a Epochs,
    tid: usize,
    /// The hazard that announced `slot`, if one did.
    hazard: Option<Announcement<'a>>,
    slot: u32,
    guard: Option<Guard<'a>>,
}

impl<'a> LazyPin<'a> {
    /// Nothing protected yet; [`LazyPin::protect`] protects for thread `tid`.
    #[inline]
    pub fn new(epochs: &'a Epochs, tid: usize) -> Self {
        LazyPin { epochs, tid, hazard: None, slot: 0, guard: None }
    }

    /// Whether slot `s` is protected already (no barrier needed to read it again).
    #[inline]
    pub fn covers(&self, s: u32) -> bool {
        self.guard.is_some() || (self.hazard.is_some() && self.slot == s)
    }

    /// Protects slot `s` (about to be read, found in an index word) unless it is protected
    /// already; true if it did just now: the caller must then read the index word again and
    /// read the slot only if the word still holds it (see the module docs). (The cache calls
    /// [`LazyPin::protect_uncovered`] after its own check; the loom models call this.)
    #[cfg_attr(not(loom), allow(dead_code))]
    #[inline]
    pub fn protect(&mut self, s: u32) -> bool {
        if self.covers(s) {
            return false;
        }
        self.protect_uncovered(s);
        true
    }

    /// [`LazyPin::protect`] for a slot not [covered](LazyPin::covers) yet.
    #[inline]
    pub fn protect_uncovered(&mut self, s: u32) {
        if self.hazard.is_none() {
            if let Some(h) = self.epochs.hazard(self.tid) {
                self.hazard = Some(Announcement::Own(h.announce(s)));
                self.slot = s;
                return;
            }
            if let Some(h) = self.spare(s) {
                self.hazard = Some(Announcement::Spare(h));
                self.slot = s;
                return;
            }
        }
        // A second slot, or no hazard to be had: the epoch.
        self.pin();
    }

    /// A spare hazard announcing `s`, for a thread without one of its own (out of line: the
    /// common path has its own).
    #[cold]
    #[inline(never)]
    fn spare(&self, s: u32) -> Option<SpareHazard<'a>> {
        self.epochs.announce_spare(self.tid, s)
    }

    /// Keeps slot `s` (which this protection covers) from being reused or updated in place
    /// after the protection is given up, as [`Epochs::hold`] does: the hazard that announced
    /// it if it did (no pin), else through the pin.
    pub fn hold(mut self, s: u32) -> Held<'a> {
        debug_assert!(self.covers(s), "holds a slot it protects");
        if self.slot == s {
            if let Some(h) = self.hazard.take() {
                // The pin, if any, goes when `self` drops.
                return h.into();
            }
        }
        // Pinned (a covered slot that no hazard names): our hazard, if any, names another
        // slot, so `hold` takes a spare, and ours goes when `self` drops, after it.
        let guard = self.guard.take().expect("a slot covered without a hazard is pinned");
        self.epochs.hold(self.tid, s, guard)
    }

    /// Pins the epoch (every slot protected from then on); true if it pinned just now.
    #[inline]
    pub fn pin(&mut self) -> bool {
        if self.guard.is_some() {
            return false;
        }
        self.guard = Some(self.epochs.pin(self.tid));
        true
    }
}

impl Drop for Guard<'_> {
    #[inline]
    fn drop(&mut self) {
        match self.pin {
            // Release: every read this thread made of a slot happens before an advancer that
            // sees the record cleared lets the slot be reused.
            Pin::Record(r) => r.store(0, Ordering::Release),
            Pin::Nested => {}
            // Release: as above.
            Pin::Shared(c) => {
                c.fetch_sub(1, Ordering::Release);
            }
        }
    }
}

/// A small, dense id of the calling thread, reused after the thread exits (so caches need few
/// records however many threads come and go).
#[cfg(not(loom))]
#[inline]
pub(crate) fn thread_id() -> usize {
    use std::cell::Cell;
    use std::sync::Mutex;

    static FREE: Mutex<Vec<usize>> = Mutex::new(Vec::new());
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// Gives the id back when the thread exits.
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            let id = ID.with(|c| c.replace(usize::MAX));
            if id != usize::MAX {
                // A poisoned lock only means another thread panicked while pushing: the list
                // itself is intact.
                FREE.lock().unwrap_or_else(|e| e.into_inner()).push(id);
            }
        }
    }
    thread_local! {
        // No destructor: reading it is one TLS load (the hot path of every operation).
        static ID: Cell<usize> = const { Cell::new(usize::MAX) };
        static RELEASE: Release = const { Release };
    }
    #[cold]
    fn fresh() -> usize {
        // Register the release first; during thread teardown (it is gone) use no record.
        if RELEASE.try_with(|_| ()).is_err() {
            return usize::MAX;
        }
        let reused = FREE.lock().unwrap_or_else(|e| e.into_inner()).pop();
        // Relaxed: only uniqueness matters, which the RMW gives.
        let id = reused.unwrap_or_else(|| NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        ID.with(|c| c.set(id));
        id
    }
    let v = ID.with(Cell::get);
    if v != usize::MAX {
        v
    } else {
        fresh()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// `quiet` lets slots be reused at once only while nobody is pinned, and never one that a
    /// hazard names; a hazard on another slot keeps back at most the slots sharing its bit.
    #[test]
    fn quiet_sees_pins_and_hazards() {
        let epochs = Epochs::with_records(4, 2);
        // Nobody protects anything: every slot is free.
        let q = epochs.quiet().expect("no pins");
        assert!((0..1000).all(|s| !q.may_name(s)));
        // Thread 1 announces slot 5: slot 5 is kept, a slot of another bit is free.
        let other = (0..1000).find(|&s| Announced::bit(s) != Announced::bit(5)).unwrap() as u32;
        let held = epochs.hazard(1).expect("a free hazard").announce(5);
        let q = epochs.quiet().expect("a hazard is no pin");
        assert!(q.may_name(5));
        assert!(!q.may_name(other));
        drop(held);
        assert!(!epochs.quiet().expect("no pins").may_name(5));
        // A pinned thread (a record's epoch) protects every slot.
        let guard = epochs.pin(2);
        assert!(epochs.quiet().is_none());
        drop(guard);
        assert!(epochs.quiet().is_some());
        // So does a thread beyond the records (the shared counters).
        let guard = epochs.pin(99);
        assert!(epochs.quiet().is_none());
        drop(guard);
        assert!(epochs.quiet().is_some());
    }

    /// A thread beyond the records protects a lookup's slot with a spare hazard, not a pin:
    /// the epochs advance and other slots stay free; with every spare taken it pins.
    #[test]
    fn lookups_beyond_the_records_announce_spares() {
        let epochs = Epochs::with_records(2, 2);
        let (a, b) = (7u32, 8u32);
        let mut lazy = LazyPin::new(&epochs, 99);
        assert!(lazy.protect(a));
        assert!(!lazy.protect(a), "covered already");
        let q = epochs.quiet().expect("a spare hazard is no pin");
        assert!(q.may_name(a));
        // Advances go on, and name exactly the announced slot.
        let start = epochs.try_advance().now;
        let adv = epochs.try_advance();
        assert!(adv.now > start, "not held back");
        assert!(!adv.free(a) && adv.free(b) && adv.any_hazard());
        // Held after the lookup: the same spare, no pin.
        let held = lazy.hold(a);
        assert!(matches!(held, Held::Spare(_)));
        assert!(!epochs.try_advance().free(a));
        // Two more threads beyond the records: one takes the last spare, the next pins.
        let mut second = LazyPin::new(&epochs, 100);
        second.protect(b);
        assert!(epochs.quiet().is_some());
        let mut third = LazyPin::new(&epochs, 101);
        third.protect(b);
        assert!(epochs.quiet().is_none(), "no spare left: pinned");
        drop((held, second, third));
        let adv = epochs.try_advance();
        assert!(adv.free(a) && adv.free(b) && !adv.any_hazard());
        assert!(epochs.quiet().is_some());
    }
}

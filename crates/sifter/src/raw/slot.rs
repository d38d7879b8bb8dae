//! The arena: every entry of a cache lives in a slot of one preallocated array, addressed by a
//! 32-bit slot number. No allocation per entry; a slot is reused for another entry only after
//! the epochs say no thread can still be reading it ([`epoch`](crate::raw::epoch)).
//!
//! # Slot life cycle
//!
//! ```text
//!            alloc (free list or never used), then the insert drops the old contents of a
//!            RETIRED slot if they have drop glue (else `fill` overwrites them)
//!   EMPTY/RETIRED ─────────────► (private*) ── fill ──► NEW ── index word stored, then
//!                                                             LIVE (under the home lock)
//!                                                              │ LIVE: in the index
//!                                                              │ and in the policy
//!        ┌───────────── index unlink (remove, replace, eviction) ┘
//!        ▼
//!      DEAD: out of the index, still held by the policy (a queue slot waits for the scan, or
//!            for a sweep when removed slots crowd the arena)
//!        │ the policy lets go (eviction, or a locked list's eager unlink)
//!        ▼
//!      RETIRED: in a stripe's limbo, tagged with the epoch; contents still readable by
//!               threads pinned before, or that announced it ── two epoch advances, and no
//!               hazard naming it ──► free list (reusable). An eviction's victims go to the
//!               free list at once when no thread is pinned and no hazard names them
//!               (`Epochs::quiet`).
//! ```
//!
//! **Hollowing** (queue policies, contents with drop glue): a slot removed or replaced out of
//! the index may wait in its queue for a long time (until a scan or a sweep reaches it), and
//! its key and value would wait with it — a memcached server updating the same keys kept every
//! old value, without bound. So the thread that marks it DEAD also puts it in its stripe's limbo
//! as a *hollow entry*; once no reader can see it (the same grace as a retirement), that entry's
//! collector drops the contents, and the slot's two holders hand it over by its state:
//!
//! ```text
//!   DEAD ── holder lets go first (`let_go`: CAS) ──► TAKEN ── contents dropped
//!    │                                                         (`hollowed` fails) ──► retired
//!    └─ contents dropped, `hollowed` (CAS) ──► HOLLOW ── holder lets go ──► retired (EMPTY)
//! ```
//!
//! Whoever comes second retires the slot, so it is reused only after both are done with it
//! (the contents dropped before, by the Release/Acquire of those CASes). A holder that meets
//! a slot still LIVE (its remover cleared the index word but has not marked it DEAD yet) takes
//! it as today: its CAS to RETIRED makes the remover's LIVE → DEAD fail, so no hollow entry is
//! made and the contents are dropped at reuse.
//!
//! (*) Queue policies that gather new entries into chains take the slot into the stripe's
//! pending chain with its allocation, so a queue may hold it from then on. An eviction that
//! takes a slot that is not LIVE or DEAD (its insert is in flight) puts it back in the queue;
//! an insert that fails before publication (a key's `Eq` panicked, a conditional insert lost)
//! leaves such a slot DEAD for the eviction to retire, and retires any other slot itself.
//!
//! `state` changes from LIVE to DEAD only by the thread whose CAS cleared or replaced the
//! slot's index word (Release; readers that act on DEAD load it with Acquire), so
//! exactly one thread unlinks an entry (and releases its capacity); exactly one thread takes a
//! slot from the policy (and retires it). The key, value and meta word are written by the
//! slot's owner while it is NEW and published by the Release store of its index word (read
//! with Acquire by lookups) and the Release LIVE store after it (read with Acquire by
//! evictions, which therefore find the word).

use crate::policy::queues::Nodes;
use crate::raw::queue::Links;
use crate::raw::table::{self, AllocError};
use crate::raw::writing::Writing;
use crate::sync::Mutex;
use crate::sync::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::alloc::{alloc, dealloc, Layout};
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, AtomicUsize};

pub(crate) use crate::raw::state::{
    hollowed, let_go, LetGo, DEAD, EMPTY, HOLLOW, LIVE, NEW, RETIRED, TAKEN,
};

/// One entry's storage.
#[derive(Debug)]
pub(crate) struct Slot<K, V> {
    /// The entry's weight in a cache with a weigher; in the others (every weight 1), the low
    /// half of its key's hash, which names its home bucket: an eviction finds the entry's
    /// index word without hashing the key again. Atomic (Relaxed loads and stores, plain moves
    /// on x86-64) because a thread may read it from a slot it does not own: S3-FIFO's scan
    /// reads the weights of the entries it passes before its detaching CAS decides whether
    /// they are its own, and another evictor may have taken, retired and reused one of them
    /// meanwhile (the CAS then fails and the value read is dropped). As a plain `u32` that
    /// read was a data race with the reuse's `fill` (Miri found it: `tests/chaos.rs`).
    meta: AtomicU32,
    /// Queue link (queue policies).
    pub next: AtomicU64,
    /// The SIEVE/CLOCK reference bit. Hits store 1 only when it reads 0.
    pub visited: AtomicU8,
    /// S3-FIFO: [`MAIN`](crate::policy::s3fifo::MAIN) once the entry has been in the main
    /// queue (a hint for where an update's new version belongs); 0 otherwise. In the slot's
    /// padding: no bytes added for the usual keys and values.
    pub place: AtomicU8,
    /// EMPTY, NEW, LIVE, DEAD or RETIRED (see the module docs).
    pub state: AtomicU8,
    /// Set while an update replaces the value of this LIVE slot in place (see [`Writing`]).
    /// In the slot's padding, like `place`.
    pub writing: Writing,
    key: UnsafeCell<MaybeUninit<K>>,
    value: UnsafeCell<MaybeUninit<V>>,
}

/// How many expiry words each slot record carries after the slot: none (no expiry), `at`,
/// or `at` and `limit` (time-to-live and time-to-idle both set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Times {
    None,
    At,
    AtAndLimit,
}

impl Times {
    fn words(self) -> usize {
        match self {
            Times::None => 0,
            Times::At => 1,
            Times::AtAndLimit => 2,
        }
    }
}

/// A slot's expiry times, in nanoseconds of the cache's [`Clock`](crate::Clock); 0 is
/// "never". Only caches with expiry have them: stored right after the slot (the arena's
/// stride grows by 8 or 16 bytes), so a lookup finds them on the slot's line or the next.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline<'a> {
    /// When the entry expires (moved forward by reads under time-to-idle).
    pub at: &'a AtomicU64,
    /// The latest `at` may become (creation + time-to-live), when both are set.
    limit: Option<&'a AtomicU64>,
}

impl Deadline<'_> {
    /// The limit (0: none).
    pub fn limit(&self) -> u64 {
        // Relaxed: written before publication (see `Cache::lookup`).
        self.limit.map_or(0, |l| l.load(Ordering::Relaxed))
    }

    /// Sets both times (the limit only where the record has one).
    pub fn set(&self, at: u64, limit: u64) {
        // Relaxed: published with the slot, or a hint (see `Cache::lookup`).
        self.at.store(at, Ordering::Relaxed);
        if let Some(l) = self.limit {
            l.store(limit, Ordering::Relaxed);
        }
    }
}

/// A block of `len` slot records of `stride` bytes each: a [`Slot`], then (with deadlines) a
/// [`Deadline`].
#[derive(Debug)]
struct Block {
    ptr: NonNull<u8>,
    len: usize,
}

/// The slots of one cache: a preallocated base block, and chunks added when retired slots
/// cannot be reused fast enough (a thread preempted while pinned holds the epochs back).
#[derive(Debug)]
pub(crate) struct Arena<K, V> {
    base: Block,
    /// Grown chunks of `1 << chunk_shift` slots each, in order; null until allocated.
    chunks: Box<[AtomicPtr<u8>]>,
    /// Bytes per slot record.
    stride: usize,
    times: Times,
    chunk_shift: u32,
    /// Chunks allocated so far (growth is serialised by this lock).
    grown: Mutex<usize>,
    /// Slots available: base plus allocated chunks.
    len: AtomicUsize,
    _slots: PhantomData<Slot<K, V>>,
}

/// A slot never used: every field zero (`state` EMPTY, `next` version 0 naming slot 0 — read
/// by nobody before the slot's first enqueue resets it), so that all-zero bytes are this slot
/// and large arenas need no writing at construction (see `raw/table.rs`, "Large tables").
fn empty_slot<K, V>() -> Slot<K, V> {
    Slot {
        meta: AtomicU32::new(0),
        next: AtomicU64::new(0),
        visited: AtomicU8::new(0),
        place: AtomicU8::new(0),
        state: AtomicU8::new(EMPTY),
        writing: Writing::default(),
        key: UnsafeCell::new(MaybeUninit::uninit()),
        value: UnsafeCell::new(MaybeUninit::uninit()),
    }
}

impl<K, V> Arena<K, V> {
    /// `n` preallocated slots, growable by up to about `extra` more in chunks.
    /// Every slot record carries `times` expiry words after the slot. An error if the
    /// allocator refuses the `n` slots.
    pub fn new(n: usize, extra: usize, times: Times) -> Result<Self, AllocError> {
        let chunk_shift = (n / 8).max(64).next_power_of_two().trailing_zeros();
        let chunk = 1usize << chunk_shift;
        let n_chunks = extra.div_ceil(chunk);
        let slot = std::mem::size_of::<Slot<K, V>>();
        let align = std::mem::align_of::<Slot<K, V>>();
        // A multiple of the slot's alignment (so every record's slot is aligned); the
        // deadline at offset `size_of::<Slot>()` is aligned too (a multiple of that alignment,
        // which is at least 8).
        let stride = (slot + 8 * times.words()).next_multiple_of(align);
        // The base block first: an `Arena` always owns its base block (see `Drop`).
        let base = Block { ptr: Self::alloc_block(stride, times, n)?, len: n };
        Ok(Arena {
            base,
            chunks: (0..n_chunks).map(|_| AtomicPtr::new(ptr::null_mut())).collect(),
            stride,
            times,
            chunk_shift,
            grown: Mutex::new(0),
            len: AtomicUsize::new(n),
            _slots: PhantomData,
        })
    }

    /// Whether a block of `n` records of `stride` bytes is allocated zeroed and left for its
    /// first writes to commit (`raw/table.rs`, "Large tables"): from [`table::LAZY`] bytes
    /// on, for slots aligned to at most 16 (what `calloc` gives without clearing by hand;
    /// larger alignments are written at construction, whatever their size). Never under loom,
    /// whose atomics are not all-zero bytes.
    fn lazy(stride: usize, n: usize) -> bool {
        !cfg!(loom)
            && std::mem::align_of::<Slot<K, V>>() <= 16
            && n.checked_mul(stride).is_some_and(|b| b >= table::LAZY)
    }

    /// The layout of a block of `n` records of `stride` bytes: huge-page aligned from 2 MiB
    /// on (`raw/table.rs`), except a lazy block (aligned for its slots only).
    fn layout(stride: usize, n: usize) -> Result<Layout, AllocError> {
        let align = std::mem::align_of::<Slot<K, V>>();
        if Self::lazy(stride, n) {
            return Layout::from_size_align(n * stride, align)
                .map_err(|_| AllocError { bytes: n * stride });
        }
        table::layout(n, stride, align)
    }

    /// Allocates `n` initialised records of `stride` bytes (EMPTY slots, "never" deadlines:
    /// all-zero bytes); an error if the allocator refuses them.
    fn alloc_block(stride: usize, times: Times, n: usize) -> Result<NonNull<u8>, AllocError> {
        let layout = Self::layout(stride, n)?;
        if Self::lazy(stride, n) {
            // Zeroed: every record is an empty slot (`empty_slot`) and "never" deadlines.
            return table::alloc_lazy(layout);
        }
        // SAFETY: the layout has a non-zero size (`n.max(1)` records of a non-zero stride).
        let p = unsafe { alloc(layout) };
        let p = NonNull::new(p).ok_or(AllocError { bytes: layout.size() })?;
        // Before the first write, which decides the pages' size.
        table::advise_huge(p.as_ptr(), layout.size());
        for i in 0..n {
            // SAFETY: record `i` lies within the allocation, and is aligned for a slot and
            // (at offset `size_of::<Slot>()`, present only with deadlines) for a deadline.
            unsafe {
                let r = p.as_ptr().add(i * stride);
                ptr::write(r as *mut Slot<K, V>, empty_slot());
                let t = r.add(std::mem::size_of::<Slot<K, V>>()) as *mut AtomicU64;
                for w in 0..times.words() {
                    ptr::write(t.add(w), AtomicU64::new(0));
                }
            }
        }
        Ok(p)
    }

    /// The record of slot `s`.
    #[inline]
    fn record(&self, s: u32) -> *mut u8 {
        let i = s as usize;
        if i < self.base.len {
            // SAFETY: within the base block (`i < len`).
            return unsafe { self.base.ptr.as_ptr().add(i * self.stride) };
        }
        let j = i - self.base.len;
        // Acquire: pairs with the Release store in `grow`. A slot number in a chunk is only
        // known to a thread after the chunk was published.
        let p = self.chunks[j >> self.chunk_shift].load(Ordering::Acquire);
        assert!(!p.is_null(), "slot {s} is in a chunk that was never allocated");
        // SAFETY: `p` points to a live chunk of `1 << chunk_shift` records (freed only in
        // Drop, which has `&mut self`), and the offset is below the chunk length.
        unsafe { p.add((j & ((1 << self.chunk_shift) - 1)) * self.stride) }
    }

    /// Asks the CPU to bring slot `s`'s record into the cache ahead of use (`write`: for
    /// writing). A hint: nothing is read or written, and slot numbers past the base block
    /// (grown chunks, rare) or out of range are ignored.
    #[inline]
    pub fn prefetch(&self, s: u32, write: bool) {
        if (s as usize) < self.base.len {
            crate::sync::prefetch(self.get(s), write);
        }
    }

    /// Bytes of slot records per slot (the slot, and its deadline in caches with expiry).
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// Slots available now.
    #[inline]
    pub fn len(&self) -> usize {
        // Acquire: pairs with the Release in `grow`, so the chunk pointers are visible.
        self.len.load(Ordering::Acquire)
    }

    /// A slot's queue link word (validation).
    pub fn next_word(&self, s: u32) -> u64 {
        self.get(s).next.load(Ordering::Relaxed)
    }

    /// Slots preallocated (numbers below this are in the base array).
    pub fn base_len(&self) -> usize {
        self.base.len
    }

    /// The most slots the arena can ever have.
    pub fn max_len(&self) -> usize {
        self.base.len + (self.chunks.len() << self.chunk_shift)
    }

    #[inline]
    pub fn get(&self, s: u32) -> &Slot<K, V> {
        // SAFETY: `record` points to an initialised slot that lives as long as `self`.
        unsafe { &*(self.record(s) as *const Slot<K, V>) }
    }

    /// Slot `s` and its expiry time (`at`), from one record address (the hit path needs
    /// both).
    ///
    /// # Panics
    /// If the arena was built without expiry times (a cache without expiry).
    #[inline]
    pub fn get_timed(&self, s: u32) -> (&Slot<K, V>, &AtomicU64) {
        assert!(self.times != Times::None, "slot {s} has no expiry time (a cache without expiry)");
        let r = self.record(s);
        // SAFETY: `r` is the start of an initialised slot record that lives as long as `self`;
        // both references derive from the record pointer, not from each other.
        unsafe { (&*(r as *const Slot<K, V>), &*Self::times_of(r)) }
    }

    /// The first expiry word of record `r` (right after its slot).
    ///
    /// # Safety
    /// `r` is a record of this arena, which was built with expiry times: every record then
    /// holds `times.words()` initialised, aligned `AtomicU64`s after the slot (see `new`).
    #[inline]
    unsafe fn times_of(r: *mut u8) -> *const AtomicU64 {
        // SAFETY: per the contract, the offset stays inside the record.
        unsafe { r.add(std::mem::size_of::<Slot<K, V>>()) as *const AtomicU64 }
    }

    /// Slot `s`'s expiry times.
    ///
    /// # Panics
    /// If the arena was built without them (a cache without expiry).
    #[inline]
    pub fn deadline(&self, s: u32) -> Deadline<'_> {
        assert!(self.times != Times::None, "slot {s} has no expiry time (a cache without expiry)");
        // SAFETY: every record holds `times.words()` initialised words after the slot (aligned,
        // see `new`), living as long as `self` (times checked above).
        unsafe {
            let t = Self::times_of(self.record(s));
            Deadline { at: &*t, limit: (self.times == Times::AtAndLimit).then(|| &*t.add(1)) }
        }
    }

    /// Adds a chunk of EMPTY slots; returns their numbers, or `None` at the growth limit or
    /// when the allocator refuses the chunk (the caller then waits for retired slots, as at
    /// the limit).
    pub fn grow(&self) -> Option<std::ops::Range<u32>> {
        let mut grown = self.grown.lock();
        if *grown == self.chunks.len() {
            return None;
        }
        let p = Self::alloc_block(self.stride, self.times, 1 << self.chunk_shift).ok()?;
        // Release: the chunk's initialised records are visible to whoever loads the pointer.
        self.chunks[*grown].store(p.as_ptr(), Ordering::Release);
        *grown += 1;
        let start = self.len.load(Ordering::Relaxed);
        let end = start + (1 << self.chunk_shift);
        // Release: pairs with the Acquire in `len`.
        self.len.store(end, Ordering::Release);
        Some(start as u32..end as u32)
    }
}

impl<K, V> Drop for Arena<K, V> {
    fn drop(&mut self) {
        // Slots and deadlines have no drop glue of their own (contents were dropped by the
        // cache with `clear`): freeing the blocks is all.
        let chunk = 1usize << self.chunk_shift;
        // The layouts were computed without error at allocation: the same computation now.
        let layout = |n| Self::layout(self.stride, n).expect("an allocated block's layout");
        // SAFETY: allocated in `new` with this layout, freed once here (`&mut self`).
        unsafe { dealloc(self.base.ptr.as_ptr(), layout(self.base.len)) };
        for c in self.chunks.iter() {
            let p = c.load(Ordering::Relaxed);
            if !p.is_null() {
                // SAFETY: allocated in `grow` with this layout, freed once here.
                unsafe { dealloc(p, layout(chunk)) };
            }
        }
    }
}

impl<K, V> Slot<K, V> {
    /// [`Nodes::marked`] for this slot: LIVE, with a reference count (bit) of at least
    /// `at_least`.
    #[inline]
    pub fn marked(&self, at_least: u8) -> bool {
        // Relaxed (all): as in `Arena::is_live`; the count is a hint.
        self.state.load(Ordering::Relaxed) == LIVE
            && self.visited.load(Ordering::Relaxed) >= at_least
    }

    /// # Safety
    /// The slot was published to the caller (found in the index or taken from the policy, or
    /// owned) and the caller is pinned, so it is not being refilled.
    #[inline]
    pub unsafe fn key(&self) -> &K {
        // SAFETY: per the contract the slot holds a published, initialised entry.
        unsafe { (*self.key.get()).assume_init_ref() }
    }

    /// # Safety
    /// As [`Slot::key`].
    #[inline]
    pub unsafe fn value(&self) -> &V {
        // SAFETY: as `key`.
        unsafe { (*self.value.get()).assume_init_ref() }
    }

    /// Replaces the value and returns the old one.
    ///
    /// # Safety
    /// The slot is LIVE and the caller has begun a write ([`Writing::begin`]) that found no
    /// reader: no other thread reads or writes the value until [`Writing::end`].
    #[inline]
    pub unsafe fn replace_value(&self, value: V) -> V {
        // SAFETY: per the contract the value is initialised and accessed by the caller alone.
        unsafe { std::mem::replace((*self.value.get()).assume_init_mut(), value) }
    }

    /// The meta word (see the field). Meaningful for a published slot that is not reused
    /// under the caller (pinned, or held through the policy); a thread that reads it otherwise
    /// gets some entry's word and must not act on it unless a later check says the slot was
    /// the one it meant (a scan's detaching CAS).
    #[inline]
    pub fn meta(&self) -> u32 {
        // Relaxed: written before the slot is published (ordered by the index word's or the
        // state's Release, read with Acquire by the readers that act on it), or read as a hint.
        self.meta.load(Ordering::Relaxed)
    }

    /// Drops the contents of a RETIRED (or, with `&mut`, any non-EMPTY) slot; it becomes EMPTY
    /// (even if a `Drop` panics, which then propagates).
    ///
    /// # Safety
    /// The caller owns this slot exclusively (taken from a free list, or `&mut` access to the
    /// cache) and no thread can still read it.
    pub unsafe fn clear(&self) {
        // Relaxed: the slot is the caller's alone.
        let state = self.state.load(Ordering::Relaxed);
        if state != EMPTY {
            // EMPTY first, and the value dropped even if the key's `Drop` panics: a panicking
            // `Drop` leaves the slot EMPTY and reusable, and nothing dropped twice or leaked.
            self.state.store(EMPTY, Ordering::Relaxed);
            if state != HOLLOW {
                // SAFETY: a slot neither EMPTY nor HOLLOW holds an initialised key and value
                // (filled before it left EMPTY), and per the contract nobody else reads them.
                unsafe { self.drop_contents() };
            }
        }
    }

    /// Drops the key and the value (the value even if the key's `Drop` panics, which then
    /// propagates); the state is left as it is.
    ///
    /// # Safety
    /// The slot holds an initialised key and value that nobody else reads, writes or drops,
    /// now or later (the caller owns them: see hollowing in the module docs, and `clear`).
    pub unsafe fn drop_contents(&self) {
        struct DropValue<'a, V>(&'a UnsafeCell<MaybeUninit<V>>);
        impl<V> Drop for DropValue<'_, V> {
            fn drop(&mut self) {
                // SAFETY: initialised and owned by the caller, per the contract; dropped only
                // here.
                unsafe { (*self.0.get()).assume_init_drop() }
            }
        }
        let _value = DropValue(&self.value);
        // SAFETY: as above.
        unsafe { (*self.key.get()).assume_init_drop() };
    }

    /// Writes an entry into this slot and marks it NEW (filled, not published).
    ///
    /// # Safety
    /// The caller owns this slot exclusively, and its contents need no drop: it is EMPTY, or
    /// `K` and `V` have no drop glue (old contents are overwritten as they are).
    pub unsafe fn fill(&self, key: K, value: V, meta: u32) {
        // SAFETY: exclusive, per the contract; no previous contents need a drop.
        unsafe {
            (*self.key.get()).write(key);
            (*self.value.get()).write(value);
        }
        // Relaxed (all four): published with the slot by the index's Release CAS.
        self.meta.store(meta, Ordering::Relaxed);
        self.visited.store(0, Ordering::Relaxed);
        self.place.store(0, Ordering::Relaxed);
        // Release: an evictor that takes the slot from a queue before it is published reads
        // NEW with Acquire and puts it back; the contents are ordered before LIVE anyway.
        self.state.store(NEW, Ordering::Release);
    }

    /// Marks a hit in a frequency policy: the count (in the reference byte) goes up by one,
    /// up to `max`. Test first, then a plain store: no store at the cap, no RMW (a racing hit
    /// may be lost, which costs one pass at most).
    /// True if it stored (the count was below `max`).
    #[inline]
    pub fn count_hit(&self, max: u8) -> bool {
        // Relaxed: a hint read by evictors.
        let f = self.visited.load(Ordering::Relaxed);
        let below = f < max;
        if below {
            self.visited.store(f + 1, Ordering::Relaxed);
        }
        below
    }

    /// Marks a hit in NbQ-CLOCK: the 8-bit counter goes up by one with one CAS (an atomic add,
    /// as issue 12 asks, saturating at `max`: a plain add could wrap a hot entry's count to 0;
    /// the report's §4 settled on non-atomic increments instead, for latency — a plain store
    /// here measured no faster, docs/BENCHMARKS.md stop 73). A
    /// CAS that loses a race drops this increment. True if it tried the CAS (the counter was
    /// below `max`): a CAS takes the line for writing whether or not it succeeds.
    #[inline]
    pub fn bump(&self, max: u8) -> bool {
        // Relaxed: a hint read by evictors.
        let c = self.visited.load(Ordering::Relaxed);
        let below = c < max;
        if below {
            let _ = self.visited.compare_exchange(c, c + 1, Ordering::Relaxed, Ordering::Relaxed);
        }
        below
    }

    /// Marks a hit: sets the reference bit if it is clear; true if it did.
    #[inline]
    pub fn touch(&self) -> bool {
        // Relaxed: the bit is a hint read by evictors; testing first keeps hot slots' lines
        // clean (Mobius's published code wrote a timestamp on every hit).
        let clear = self.visited.load(Ordering::Relaxed) == 0;
        if clear {
            self.visited.store(1, Ordering::Relaxed);
        }
        clear
    }
}

impl<K, V> Links for Arena<K, V> {
    #[inline]
    fn next(&self, s: u32) -> &AtomicU64 {
        &self.get(s).next
    }
}

impl<K, V> Nodes for Arena<K, V> {
    #[inline]
    fn visited(&self, s: u32) -> &AtomicU8 {
        &self.get(s).visited
    }
    #[inline]
    fn place(&self, s: u32) -> &AtomicU8 {
        &self.get(s).place
    }
    #[inline]
    fn is_live(&self, s: u32) -> bool {
        // Relaxed: a stale LIVE only gives a removed entry one more pass.
        self.get(s).state.load(Ordering::Relaxed) == LIVE
    }
    #[inline]
    fn is_dead(&self, s: u32) -> bool {
        // Acquire: pairs with the unlinker's Release DEAD store, ordering its unlinking before
        // the caller's retirement of the slot (and with a collector's Release HOLLOW).
        matches!(self.get(s).state.load(Ordering::Acquire), DEAD | HOLLOW)
    }
    #[inline]
    fn marked(&self, s: u32, at_least: u8) -> bool {
        self.get(s).marked(at_least)
    }
    fn count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn prefetch(&self, s: u32) {
        Arena::prefetch(self, s, false);
    }
}

//! Hooks for the loom model checks (`tests/loom.rs`), compiled only with `--cfg loom`: the
//! queue policies over a small array of slots, and the epochs, with a model arena whose slots
//! are really reused (so a reuse the epochs should have prevented shows up as a corrupted
//! value or a lost or duplicated slot).

use crate::policy::queues::{Mode, Nodes, Queues};
use crate::policy::s3fifo::S3Fifo;
use crate::raw::epoch::Epochs;
use crate::raw::queue::Links;
/// The model's own shared words: loom's `AtomicU64` with every access dependent on every
/// other, as the crate's (see `sync.rs`, tokio-rs/loom#392).
pub use crate::sync::AtomicU64;
use crate::sync::{AtomicU8, Ordering};

/// Model slots: queue link, reference bit, liveness.
#[derive(Debug)]
pub struct Slots {
    next: Vec<AtomicU64>,
    visited: Vec<AtomicU8>,
    place: Vec<AtomicU8>,
    live: Vec<AtomicU8>,
}

impl Slots {
    /// `n` slots, not visited, live.
    pub fn new(n: usize) -> Self {
        Slots {
            next: (0..n).map(|_| AtomicU64::new(u32::MAX as u64)).collect(),
            visited: (0..n).map(|_| AtomicU8::new(0)).collect(),
            place: (0..n).map(|_| AtomicU8::new(0)).collect(),
            live: (0..n).map(|_| AtomicU8::new(1)).collect(),
        }
    }
    /// A hit on slot `s`.
    pub fn touch(&self, s: u32) {
        self.visited[s as usize].store(1, Ordering::Relaxed);
    }
    /// Sets slot `s`'s reference bit.
    pub fn set_visited(&self, s: u32, v: bool) {
        self.visited[s as usize].store(v as u8, Ordering::Relaxed);
    }
    /// Sets slot `s`'s frequency / counter (S3-FIFO, NbQ-CLOCK).
    pub fn set_count(&self, s: u32, c: u8) {
        self.visited[s as usize].store(c, Ordering::Relaxed);
    }
    /// Marks slot `s` removed (a candidate without a second chance).
    pub fn kill(&self, s: u32) {
        // Release: a sweeper that reads it dead (Acquire) may retire the slot.
        self.live[s as usize].store(0, Ordering::Release);
    }
}

impl Links for Slots {
    fn next(&self, s: u32) -> &AtomicU64 {
        &self.next[s as usize]
    }
}

impl Nodes for Slots {
    fn visited(&self, s: u32) -> &AtomicU8 {
        &self.visited[s as usize]
    }
    fn place(&self, s: u32) -> &AtomicU8 {
        &self.place[s as usize]
    }
    fn is_live(&self, s: u32) -> bool {
        self.live[s as usize].load(Ordering::Relaxed) != 0
    }
    fn is_dead(&self, s: u32) -> bool {
        // Acquire: pairs with the Release in `kill`.
        self.live[s as usize].load(Ordering::Acquire) == 0
    }
    fn count(&self) -> usize {
        self.next.len()
    }
}

#[derive(Debug)]
enum Policy {
    Queues(Queues),
    /// S3-FIFO; both model threads count in the shared record (atomic adds), as threads
    /// beyond the first `RECORDS` ids do.
    S3(S3Fifo),
}

/// Mobius / CLOCK / FIFO / NbQ-CLOCK queues or S3-FIFO over [`Slots`].
#[derive(Debug)]
pub struct Core {
    q: Policy,
    /// The slots.
    pub slots: Slots,
}

impl Core {
    /// `mode`: "mobius", "mobius-wd", "clock", "nbq-clock", "nbq-clock-1", "s3fifo" (a cache
    /// of `n` entries) or "fifo"; `n` slots.
    pub fn new(mode: &str, n: usize) -> Core {
        Core::with_lanes(mode, n, 1)
    }
    /// [`Core::new`] with `lanes` queue lanes (a power of two; queue policies): the methods
    /// without a lane use lane 0.
    pub fn with_lanes(mode: &str, n: usize, lanes: usize) -> Core {
        let q = match mode {
            "s3fifo" => Policy::S3(S3Fifo::new(n as u64, n as u64, lanes)),
            _ => Policy::Queues(Queues::new(
                match mode {
                    "mobius" => Mode::Mobius { consecutive: true },
                    "mobius-wd" => Mode::Mobius { consecutive: false },
                    "clock" => Mode::Clock,
                    "nbq-clock" => Mode::NbqClock { batched: true },
                    "nbq-clock-1" => Mode::NbqClock { batched: false },
                    _ => Mode::Fifo,
                },
                lanes,
            )),
        };
        Core { q, slots: Slots::new(n) }
    }
    /// Enqueues slot `s` (which must be in no queue), reference bit cleared (S3-FIFO: into
    /// small).
    pub fn insert(&self, s: u32) {
        self.insert_into(0, s)
    }
    /// [`Core::insert`] by a thread of lane `lane`.
    pub fn insert_into(&self, lane: usize, s: u32) {
        self.slots.set_visited(s, false);
        match &self.q {
            Policy::Queues(q) => q.insert(&self.slots, lane, s),
            Policy::S3(q) => q.insert(&self.slots, q.local(usize::MAX), s, 1, false),
        }
    }
    /// Enqueues the slots `chain` (in no queue) in one enqueue, as a stripe enqueues its
    /// gathered new entries (queue policies).
    pub fn insert_chain(&self, chain: &[u32]) {
        let Policy::Queues(q) = &self.q else { panic!("queue policies only") };
        for (i, &s) in chain.iter().enumerate() {
            self.slots.set_visited(s, false);
            crate::policy::queues::reset(&self.slots, s);
            if i > 0 {
                crate::policy::queues::link_private(&self.slots, chain[i - 1], s);
            }
        }
        q.insert_chain(&self.slots, 0, chain[0], chain[chain.len() - 1], chain.len() as u32);
    }
    /// S3-FIFO: enqueues slot `s` into main (as after a ghost hit).
    pub fn insert_main(&self, s: u32) {
        self.slots.set_visited(s, false);
        if let Policy::S3(q) = &self.q {
            q.insert(&self.slots, q.local(usize::MAX), s, 1, true);
        }
    }
    /// Evicts one slot.
    pub fn evict(&self) -> Option<u32> {
        self.evict_many(1).first().copied()
    }
    /// Evicts up to `want` (1–8) slots in one scan, in eviction order (S3-FIFO: fewer where
    /// the one-at-a-time algorithm would turn to the other queue).
    pub fn evict_many(&self, want: usize) -> Vec<u32> {
        self.evict_many_for(0, want)
    }
    /// [`Core::evict_many`] by a thread of lane `lane` (queue policies: from its lane, else
    /// from another).
    pub fn evict_many_for(&self, lane: usize, want: usize) -> Vec<u32> {
        match &self.q {
            Policy::Queues(q) => {
                let mut t = crate::policy::queues::Taken::default();
                if q.evict_many(&self.slots, lane, want, &mut t, || false) {
                    t.slots[..t.len].to_vec()
                } else {
                    Vec::new()
                }
            }
            Policy::S3(q) => {
                let mut t = crate::policy::queues::Taken::default();
                match q.evict(&self.slots, q.local(usize::MAX), |_| 1, want, &mut t) {
                    Some(_) => t.slots[..t.len].to_vec(),
                    None => Vec::new(),
                }
            }
        }
    }
    /// As [`Core::evict_many`] (queue policies), holding back the new slots `held` (in no
    /// queue) as a stripe holds its gathered chain: a scan that reaches the tail enqueues them
    /// first (`Queues::evict_many`'s `at_tail`); if none does, they are enqueued after.
    pub fn evict_many_holding(&self, want: usize, held: &[u32]) -> Vec<u32> {
        let Policy::Queues(q) = &self.q else { panic!("queue policies only") };
        let enqueue_held = || self.insert_chain(held);
        let mut pending = !held.is_empty();
        let mut t = crate::policy::queues::Taken::default();
        let found = q.evict_many(&self.slots, 0, want, &mut t, || {
            let flush = std::mem::take(&mut pending);
            if flush {
                enqueue_held();
            }
            flush
        });
        if pending {
            enqueue_held();
        }
        if found {
            t.slots[..t.len].to_vec()
        } else {
            Vec::new()
        }
    }
    /// Sweeps removed (killed) slots out of the queues' fronts, up to `max` per queue, the
    /// others put back in front: returns them.
    pub fn sweep(&self, max: usize) -> Vec<u32> {
        self.sweep_with(max, false)
    }
    /// [`Core::sweep`] with rotation: the live slots swept go to their queue's tail.
    pub fn sweep_rotating(&self, max: usize) -> Vec<u32> {
        self.sweep_with(max, true)
    }
    fn sweep_with(&self, max: usize, rotate: bool) -> Vec<u32> {
        let mut dead = Vec::new();
        match &self.q {
            Policy::Queues(q) => q.sweep(&self.slots, max, &mut dead, rotate),
            Policy::S3(q) => {
                q.sweep(&self.slots, q.local(usize::MAX), |_| 1, max, &mut dead, rotate)
            }
        }
        dead
    }
    /// Slots in the queues (quiescent), or a broken-invariant error.
    pub fn items(&self) -> Result<Vec<u32>, String> {
        match &self.q {
            Policy::Queues(q) => q.items(&self.slots),
            Policy::S3(q) => {
                q.validate(&self.slots, 0, |_| 1)?;
                q.items(&self.slots)
            }
        }
    }
    /// Head and tail words, for failure messages.
    pub fn debug_state(&self) -> String {
        let next: Vec<String> = self
            .slots
            .next
            .iter()
            .map(|n| {
                let w = n.load(Ordering::Relaxed);
                format!("v{}:{}", w >> 32, w as u32 as i64 - (u32::MAX as i64))
            })
            .collect();
        let q = match &self.q {
            Policy::Queues(q) => q.debug_state(),
            Policy::S3(q) => q.debug_state(),
        };
        format!("{q} next(v:slot-NIL) [{}]", next.join(" "))
    }
}

/// The epochs, with few records (so the shared-counter path is modelled too).
#[derive(Debug)]
pub struct Ebr(Epochs);

impl Ebr {
    /// Epochs with `records` private records and two spare hazards.
    pub fn new(records: usize) -> Self {
        Self::with_spares(records, 2)
    }
    /// Epochs with `records` private records and `spares` spare hazards.
    pub fn with_spares(records: usize, spares: usize) -> Self {
        Ebr(Epochs::with_records(records, spares))
    }
    /// Pins thread `tid` while `f` runs.
    pub fn pinned<R>(&self, tid: usize, f: impl FnOnce() -> R) -> R {
        let _g = self.0.pin(tid);
        f()
    }
    /// Runs `f` with thread `tid` not protected yet and a `pin` closure that protects the slot
    /// it is given (a hazard for the first, the epoch for another; true if it protected it just
    /// then), as `Cache::get` does; releases after `f`.
    pub fn lazily<R>(&self, tid: usize, f: impl FnOnce(&mut dyn FnMut(u32) -> bool) -> R) -> R {
        let mut lazy = crate::raw::epoch::LazyPin::new(&self.0, tid);
        f(&mut |s| lazy.protect(s))
    }
    /// Runs `f` with a `pin` closure that announces the slot it is given in thread `tid`'s
    /// hazard and nothing else (true: protected just then), as `Cache::read_first` does; `None`
    /// (without running `f`) if the thread has no free hazard. Releases after `f`.
    pub fn hazard_only<R>(
        &self,
        tid: usize,
        f: impl FnOnce(&mut dyn FnMut(u32) -> bool) -> R,
    ) -> Option<R> {
        let free = self.0.hazard(tid)?;
        let mut held = None;
        let r = f(&mut |s| {
            assert!(held.is_none(), "one slot per hazard");
            held = Some(free.announce(s));
            true
        });
        drop(held);
        Some(r)
    }
    /// As `compute` holds the slot its closure reads (`Cache::with_entry`): `read` finds slot
    /// `s` with a `pin` closure as [`Ebr::lazily`]'s (a hazard, the thread's own or a spare
    /// one, else the epoch) and reads it, and says whether it was linked; if it was, holds `s`
    /// (`LazyPin::hold`: the hazard that announced it, else through the pin: `Epochs::hold`),
    /// lets the rest of the protection go and runs `after` with `s` still held. `late`: a
    /// mutant that lets the protection go, pins again and holds (a gap, and without hazards a
    /// pin that does not cover `s`).
    pub fn read_then_hold<R>(
        &self,
        tid: usize,
        s: u32,
        read: impl FnOnce(&mut dyn FnMut(u32) -> bool) -> bool,
        after: impl FnOnce() -> R,
        late: bool,
    ) -> Option<R> {
        let mut lazy = crate::raw::epoch::LazyPin::new(&self.0, tid);
        if !read(&mut |s| lazy.protect(s)) {
            return None;
        }
        let held = if late {
            drop(lazy);
            let again = self.0.pin(tid);
            self.0.hold(tid, s, again)
        } else {
            lazy.hold(s)
        };
        let r = after();
        drop(held);
        Some(r)
    }
    /// The epoch for a slot retired now.
    pub fn retire_epoch(&self) -> u64 {
        self.0.retire_epoch()
    }
    /// Whether slot `s`, unlinked just now by this thread's locked RMW, may be reused at once,
    /// as the cache's `retire_and_pop` decides: `retire_epoch`, then `quiet`.
    pub fn reusable_at_once(&self, s: u32) -> bool {
        let _ = self.0.retire_epoch();
        self.0.quiet().is_some_and(|q| !q.may_name(s))
    }
    /// Tries to advance; the epoch now and the hazards seen.
    pub fn try_advance(&self) -> Advance {
        Advance(self.0.try_advance())
    }
}

/// What one advance attempt saw (see `raw::epoch::Advance`).
#[derive(Debug)]
pub struct Advance(crate::raw::epoch::Advance);

impl Advance {
    /// The epoch after the attempt.
    pub fn now(&self) -> u64 {
        self.0.now
    }
    /// Whether slot `s`, retired at epoch `retired`, may be reused: the epochs are past it and
    /// no hazard names it (`Lists::collect` in the cache).
    pub fn reusable(&self, s: u32, retired: u64) -> bool {
        self.0.covers(retired) && self.0.free(s)
    }
}

/// The tagged index over model slots whose keys live in loom cells: a lookup that reads a key
/// its inserter has not published (a missing Release/Acquire pair) is reported by loom, and
/// a key overwritten while a pinned reader may still compare it is reported as a race.
///
/// Values live in loom cells too, with the slots' in-place write flags, for the updates in
/// place (`Cache::update_in_place`): a value read while an update writes it is reported.
#[derive(Debug)]
pub struct Idx {
    index: crate::raw::index::Index,
    keys: Vec<loom::cell::UnsafeCell<u64>>,
    values: Vec<loom::cell::UnsafeCell<u64>>,
    writing: Vec<crate::raw::writing::Writing>,
}

impl Idx {
    /// An index sized for `slots` slots (and that many model slots).
    pub fn new(slots: usize) -> Self {
        Idx {
            index: crate::raw::index::Index::new(slots, 4).expect("a tiny table"),
            keys: (0..slots).map(|_| loom::cell::UnsafeCell::new(0)).collect(),
            values: (0..slots).map(|_| loom::cell::UnsafeCell::new(0)).collect(),
            writing: (0..slots).map(|_| Default::default()).collect(),
        }
    }

    /// A hash whose home is `bucket` and whose tag is `tag` (keys with equal tags are told
    /// apart by their keys, as in the cache), with the tag's top seven bits as its byte tag
    /// (which comes from the hash's low seven bits).
    pub fn hash_in(&self, bucket: usize, tag: u32) -> u64 {
        let n = self.index.buckets() as u64;
        let low = ((bucket as u64) << 32).div_ceil(n).next_multiple_of(128) | u64::from(tag >> 25);
        let h = (u64::from(tag) << 32) | low;
        assert_eq!(self.index.home(h), bucket, "hash {h:#x} is not homed at {bucket}");
        h
    }

    /// Writes `key` into slot `s` (the caller's: unpublished, or reusable by the epochs).
    pub fn write_key(&self, s: u32, key: u64) {
        // SAFETY: the caller owns `s` (see above); loom checks it.
        self.keys[s as usize].with_mut(|p| unsafe { *p = key });
    }

    /// Reads slot `s`'s key (the caller found `s` in the index, pinned).
    pub fn key(&self, s: u32) -> u64 {
        // SAFETY: a published slot, not reused while the caller is pinned; loom checks it.
        self.keys[s as usize].with(|p| unsafe { *p })
    }

    /// Publishes slot `s` holding `key` under the home lock of `hash`, as `Cache::insert` does:
    /// returns the slot it replaced.
    pub fn insert(&self, hash: u64, s: u32, key: u64) -> Option<u32> {
        use crate::raw::index::Inserted;
        self.write_key(s, key);
        let lock = self.index.lock(hash);
        match self.index.insert(
            &lock,
            hash,
            s,
            crate::raw::index::pinned,
            |o| self.key(o) == key,
            None,
        ) {
            Inserted::Replaced(o) => Some(o),
            Inserted::Added | Inserted::Revived => None,
        }
    }

    /// [`Idx::insert`] as S3-FIFO's insert makes it, with the ghost's clock at `now` and its
    /// length `len`: the slot it replaced, and whether it took the key's ghost word.
    pub fn insert_ghost(
        &self,
        hash: u64,
        s: u32,
        key: u64,
        now: u32,
        len: u32,
    ) -> (Option<u32>, bool) {
        use crate::raw::index::Inserted;
        self.write_key(s, key);
        let lock = self.index.lock(hash);
        let g = crate::raw::ghost::Ghosts { now, len };
        match self.index.insert(
            &lock,
            hash,
            s,
            crate::raw::index::pinned,
            |o| self.key(o) == key,
            Some(g),
        ) {
            Inserted::Replaced(o) => (Some(o), false),
            Inserted::Added => (None, false),
            Inserted::Revived => (None, true),
        }
    }

    /// The slot of `key` (the caller is pinned).
    pub fn find(&self, hash: u64, key: u64) -> Option<u32> {
        self.index.find(hash, crate::raw::index::pinned, |s| self.key(s) == key)
    }

    /// The slot of `key`, as `Cache::get` finds it: `pin` is called with each slot before its
    /// key is compared and returns true if it protected it just then.
    pub fn find_pinning(&self, hash: u64, key: u64, pin: impl FnMut(u32) -> bool) -> Option<u32> {
        self.index.find(hash, pin, |s| self.key(s) == key)
    }

    /// The slot of `key` as `Cache::read_first` decides in the home bucket alone: `Ok` with
    /// the answer, or `Err(())` if the full probe ([`Idx::find_pinning`]) must decide.
    pub fn first_pinning(
        &self,
        hash: u64,
        key: u64,
        pin: impl FnMut(u32) -> bool,
    ) -> Result<Option<u32>, ()> {
        match self.index.first(hash, pin, |s| self.key(s) == key) {
            crate::raw::index::First::Absent => Ok(None),
            crate::raw::index::First::Found(s) => Ok(Some(s)),
            crate::raw::index::First::Probe => Err(()),
        }
    }

    /// Writes slot `s`'s value (the caller owns `s`: unpublished).
    pub fn write_value(&self, s: u32, v: u64) {
        // SAFETY: the caller owns `s`; loom checks it.
        self.values[s as usize].with_mut(|p| unsafe { *p = v });
    }

    /// Reads slot `s`'s value as every reader does: after its protection (found while
    /// protected, or unlinked by the caller), waiting for an update in place to end.
    pub fn value(&self, s: u32) -> u64 {
        self.writing[s as usize].settled();
        self.value_unsettled(s)
    }

    /// [`Idx::value`] for the thread that unlinked `s` without a lock (an eviction reading
    /// the value for a listener, as `Cache::left` does).
    pub fn value_unlinked(&self, s: u32) -> u64 {
        self.writing[s as usize].settled_after_unlink();
        self.value_unsettled(s)
    }

    /// [`Idx::value`] without the wait: a mutant, for the models that show the wait matters.
    pub fn value_unsettled(&self, s: u32) -> u64 {
        // SAFETY: protected (see `value`); loom reports a write racing with this read.
        self.values[s as usize].with(|p| unsafe { *p })
    }

    /// Updates `key`'s value to `value` in place as `Cache::update_in_place` does, as thread
    /// `tid` of `ebr`: true if it wrote. `check_readers: false` is a mutant that ignores what
    /// `Epochs::exclusive` found.
    pub fn update_in_place(
        &self,
        ebr: &Ebr,
        tid: usize,
        hash: u64,
        key: u64,
        value: u64,
        check_readers: bool,
    ) -> bool {
        let mut pin = crate::raw::epoch::LazyPin::new(&ebr.0, tid);
        let lock = self.index.lock(hash);
        let found = self.index.find_locked(&lock, hash, |s| pin.protect(s), |s| self.key(s) == key);
        let Some(found) = found else { return false };
        let o = found.slot();
        let w = &self.writing[o as usize];
        w.begin();
        let exclusive = ebr.0.exclusive(tid, o);
        if !((exclusive || !check_readers) && self.index.still(&found)) {
            w.end();
            return false;
        }
        // SAFETY: no reader (`exclusive`), and readers to come wait (`settled`); loom checks it.
        self.values[o as usize].with_mut(|p| unsafe { *p = value });
        w.end();
        true
    }

    /// Removes `key` under its home lock (the caller is pinned): its slot.
    pub fn remove(&self, hash: u64, key: u64) -> Option<u32> {
        self.remove_pinning(hash, key, crate::raw::index::pinned)
    }

    /// Removes `key` under its home lock, as `Cache::remove` does: `pin` as in
    /// [`Idx::find_pinning`] (the returned slot is protected by it).
    pub fn remove_pinning(&self, hash: u64, key: u64, pin: impl FnMut(u32) -> bool) -> Option<u32> {
        let lock = self.index.lock(hash);
        self.index.remove(&lock, hash, pin, |s| self.key(s) == key)
    }

    /// Removes slot `s`'s word without a lock, as an eviction does: true if this call did.
    pub fn remove_slot(&self, hash: u64, s: u32) -> bool {
        self.index.remove_slot(hash as u32, s, None).is_some()
    }

    /// [`Idx::remove_slot`] as an eviction from S3-FIFO's small queue makes it, leaving the
    /// key's ghost word stamped `stamp` (in its home bucket): `None` if the word was gone,
    /// else whether a ghost word was left.
    pub fn remove_slot_ghost(&self, hash: u64, s: u32, stamp: u32) -> Option<bool> {
        self.index.remove_slot(hash as u32, s, Some(stamp))
    }

    /// The slots linked now (quiescent).
    pub fn slots(&self) -> Vec<u32> {
        let mut v = self.index.slots();
        v.sort_unstable();
        v
    }

    /// The pass-through counts against the entries (quiescent); `hash_of` gives each linked
    /// slot's hash.
    pub fn validate(&self, hash_of: impl Fn(u32) -> u64) -> Result<(), String> {
        self.index.validate(hash_of)
    }
}

/// Sets slot `s`'s incarnation (the version of its `next` word) to `v`, slot NIL: the model
/// starts a slot just below the 32-bit wrap, so the next enqueue's reset wraps it.
impl Slots {
    pub fn set_incarnation(&self, s: u32, v: u32) {
        self.next[s as usize].store((u64::from(v) << 32) | u64::from(u32::MAX), Ordering::Relaxed);
    }
}

/// One removed slot handed over between its queue's holder and the collector of its hollow
/// entry (`raw/slot.rs`, hollowing), with its contents in a loom cell: dropping them and the
/// slot's reuse (its refill) are writes of that cell, so loom reports two parties that both
/// think they own them, and `drops` counts the contents dropped.
#[derive(Debug)]
pub struct Hollowing {
    state: AtomicU8,
    /// The remover cleared the entry's index word (a holder lets go of a slot only after).
    unlinked: AtomicU8,
    contents: loom::cell::UnsafeCell<u64>,
    drops: crate::sync::AtomicUsize,
    reuses: crate::sync::AtomicUsize,
}

impl Default for Hollowing {
    fn default() -> Self {
        Hollowing {
            state: AtomicU8::new(crate::raw::state::LIVE),
            unlinked: AtomicU8::new(0),
            contents: loom::cell::UnsafeCell::new(1),
            drops: crate::sync::AtomicUsize::new(0),
            reuses: crate::sync::AtomicUsize::new(0),
        }
    }
}

impl Hollowing {
    /// The remover: clears the index word, then LIVE → DEAD as `Cache::mark_removed`; true if
    /// that made a hollow entry (the caller then plays its collector, the grace period past).
    pub fn remove(&self) -> bool {
        // SeqCst: as the index word's clearing CAS.
        self.unlinked.store(1, Ordering::SeqCst);
        self.state
            .compare_exchange(
                crate::raw::state::LIVE,
                crate::raw::state::DEAD,
                Ordering::Release,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// The queue's holder, once the word is gone: `let_go`, and a retirement if it says so.
    /// `follow`: false is the mutant that retires every removed slot at once (the core before
    /// hollowing, whose retired slots' contents were dropped at reuse).
    pub fn holder(&self, follow: bool) {
        while self.unlinked.load(Ordering::Acquire) == 0 {
            loom::thread::yield_now();
        }
        let retire = if follow {
            crate::raw::state::let_go(&self.state) == crate::raw::state::LetGo::Retire
        } else {
            self.state.store(crate::raw::state::RETIRED, Ordering::Release);
            true
        };
        if retire {
            self.reuse();
        }
    }

    /// The collector of the hollow entry: drops the contents, then `hollowed`; retires the
    /// slot if its holder let go first.
    pub fn collect(&self) {
        self.drop_contents();
        if !crate::raw::state::hollowed(&self.state) {
            self.reuse();
        }
    }

    /// A retirement and the reuse after it: `prepare` drops RETIRED contents, `fill` writes.
    fn reuse(&self) {
        // Relaxed: the slot is the caller's alone (as in `Slot::clear`).
        if self.state.load(Ordering::Relaxed) == crate::raw::state::RETIRED {
            self.drop_contents();
        }
        // SAFETY: a loom cell: loom checks every access for races.
        self.contents.with_mut(|c| unsafe { *c = 2 });
        self.reuses.fetch_add(1, Ordering::Relaxed);
    }

    fn drop_contents(&self) {
        // SAFETY: a loom cell: loom checks every access for races.
        self.contents.with_mut(|c| unsafe {
            assert_eq!(*c, 1, "contents dropped twice or after the reuse");
            *c = 0;
        });
        self.drops.fetch_add(1, Ordering::Relaxed);
    }

    /// Checks, after both threads: the contents dropped once, the slot reused once.
    pub fn check(&self) {
        assert_eq!(self.drops.load(Ordering::Relaxed), 1, "contents dropped");
        assert_eq!(self.reuses.load(Ordering::Relaxed), 1, "slot reused");
    }
}

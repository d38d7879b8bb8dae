//! Lookups: `get`, `peek`, `contains_key`, and what a hit does to the policy, the statistics
//! and the expiry time. A read takes no lock and writes nothing shared but the policy's mark
//! (see the crate docs); the slot it reads is protected by a hazard or an epoch pin.

use super::*;

impl<K, V, S> Cache<K, V, S>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Send + Sync + 'static,
    S: BuildHasher,
{
    /// Finds the slot of `key`, and the slot itself (its address computed once for the key
    /// comparison and the caller's reads); `pin` protects the slot about to be compared (see
    /// [`Index::find`]; the cache's callers pass [`Cache::pin_at`] of a [`LazyPin`]).
    #[inline]
    pub(super) fn find<Q>(
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
            // SAFETY: `s` was read from a published index word after `pin` protected it.
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
    pub(super) fn read<Q>(&self, key: &Q, how: Use) -> Option<V>
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
    pub(super) fn read_probe<Q>(&self, hash: u64, key: &Q, tid: usize, how: Use) -> Option<V>
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
    pub(super) fn read_first<Q>(&self, hash: u64, key: &Q, tid: usize, how: Use) -> Quick<V>
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
    pub(super) fn lookup<Q>(
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
    pub(super) fn mark_hit(&self, s: u32, slot: &Slot<K, V>) -> bool {
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
    pub(super) fn hit(&self, tid: usize, s: u32, slot: &Slot<K, V>) {
        self.stats.add(tid, Counter::Hits, 1);
        if self.mark_hit(s, slot) {
            self.hit_wrote(tid);
        }
    }

    /// Counts a hit that wrote the policy's state: out of line, so that the common hit (which
    /// writes nothing under the FIFO-family policies) carries only the test.
    #[cold]
    #[inline(never)]
    pub(super) fn hit_wrote(&self, tid: usize) {
        self.stats.add(tid, Counter::HitWrites, 1);
    }

    /// [`Cache::mark_hit`] for the LRU lists (out of line: the common path of the others then
    /// saves fewer registers). True if it took the list's lock (a write of the lock word, and
    /// of the links unless the entry was at the head already).
    #[inline(never)]
    pub(super) fn promote(&self, s: u32) -> bool {
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
    pub(super) fn expire_found(&self, s: u32, tid: usize, now: u64, how: Use) {
        self.remove_slot(s, tid, RemovalCause::Expired, now);
        if how == Use::Get {
            self.stats.add(tid, Counter::Misses, 1);
        }
        panics::resume();
    }

    /// A hit under time-to-idle or a custom read expiry: moves slot `s`'s expiry time.
    pub(super) fn read_moves_expiry(&self, exp: &Expiration<K, V>, s: u32, now: u64, at: u64) {
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

    /// As [`Cache::walk_bucket`], but `f` runs unpinned, with only its entry's slot held
    /// ([`Epochs::hold`]), for user code that may take its time (`retain`'s predicate: run
    /// pinned, a slow one held back every slot's reuse, as `compute`'s closure did: see
    /// [`Cache::with_entry`]). The bucket's slots are read once, pinned; then each is pinned
    /// again, looked for in the bucket (it may have been reused since, for an entry inserted
    /// during the walk, which may or may not be visited) and held for `f`: a pin, a look at the
    /// bucket's words and a hold per entry. Entries inserted in new slots during the walk are
    /// not visited (so a predicate that inserts its key again is not called for the new
    /// version).
    pub(crate) fn walk_bucket_held(&self, b: usize, mut f: impl FnMut(u32, &K, &V, usize)) {
        let mut first = Vec::with_capacity(7);
        {
            let (_guard, _) = self.pin();
            self.index.bucket_slots(b, &mut first);
        }
        let mut now_in = Vec::with_capacity(7);
        for s in first {
            let (held, tid) = {
                let (guard, tid) = self.pin();
                now_in.clear();
                self.index.bucket_slots(b, &mut now_in);
                // Acquire: as in `unlink_slot` (a removed entry is skipped).
                if !now_in.contains(&s) || self.slot(s).state.load(Ordering::Acquire) != LIVE {
                    continue;
                }
                if let Some(e) = &self.expiration {
                    let now = e.now();
                    // Relaxed: see `lookup`.
                    if expired(self.arena.deadline(s).at.load(Ordering::Relaxed), now) {
                        self.remove_slot(s, tid, RemovalCause::Expired, now);
                        continue;
                    }
                }
                (self.epochs.hold(tid, s, guard), tid)
            };
            let slot = self.slot(s);
            // After the hold, as in `with_entry`.
            slot.writing.settled();
            // SAFETY: read from a published index word while pinned and held since
            // (`Epochs::hold`: not reused, not updated in place while `held` lives); not being
            // written (`settled`).
            let (k, v) = unsafe { (slot.key(), slot.value()) };
            f(s, k, v, tid);
            drop(held);
        }
    }

    /// Index buckets (for [`Cache::walk_bucket`]).
    pub(crate) fn buckets(&self) -> usize {
        self.index.buckets()
    }

    /// Calls `f` with `key`'s live, unexpired slot and value, if any (not a use); returns
    /// `f`'s result and the hold on that slot ([`Epochs::hold`]), which keeps it from being
    /// reused or updated in place until dropped. The lookup protects as a `get`'s does; `f`
    /// runs with the slot held by a hazard only (unless every spare hazard is taken, or the
    /// lookup met another slot first: then pinned, until `hold` finds a spare), so user code
    /// in `f` (`compute`'s closure, `remove_if`'s predicate) may take its time without holding
    /// back the reuse of every other slot: a pin held by a `compute` closure that slept 20 ms
    /// cut another thread's read-through to a fiftieth and the cache to a third of its
    /// entries (docs/BENCHMARKS.md, stop 91).
    pub(crate) fn with_entry<Q, R>(
        &self,
        key: &Q,
        f: impl FnOnce(Option<(u32, &V)>, usize) -> R,
    ) -> (R, Option<Held<'_>>)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hash(key);
        let tid = thread_id();
        // The lookup protects as a `get`'s does (a hazard, a thread's own or a spare one, for
        // the first slot it reads: a thread preempted here holds back that slot alone); the
        // hold keeps the found slot's protection, and a miss lets go of it first: `f` runs
        // unpinned.
        let mut pin = LazyPin::new(&self.epochs, tid);
        let Some((s, slot)) = self.lookup(hash, key, tid, Use::Peek, self.pin_at(&mut pin)) else {
            drop(pin);
            return (f(None, tid), None);
        };
        let held = pin.hold(s);
        // After the hold: the updates in place that began before it are waited for; later
        // ones see it and replace the entry instead (`Epochs::exclusive`).
        slot.writing.settled();
        // SAFETY: found in the index while pinned and held since (`Epochs::hold`: not reused,
        // not updated in place while `held` lives); not being written (`settled`).
        let v = unsafe { slot.value() };
        (f(Some((s, v)), tid), Some(held))
    }
}

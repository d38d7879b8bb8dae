//! Inserts, updates and removals: publishing an entry in the index under its home bucket's
//! lock, updating in place, unlinking an entry (by key, by slot, by eviction), and undoing an
//! insert that did not publish.

use super::*;

impl<K, V, S> Cache<K, V, S>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Send + Sync + 'static,
    S: BuildHasher,
{
    /// An update is a use of its entry, as in the simulator (a request for a cached key is a
    /// hit, whatever it does): the new version `new` starts with the reference bit, frequency
    /// or counter of the old one (slot `o`, readable: the caller is protected) raised as a hit
    /// raises it. (LRU's new version goes to the head anyway; FIFO keeps no use.) Without this
    /// an updated entry restarted cold, and a key updated often was evicted as if never read.
    /// S3-FIFO's new version also inherits the old one's place: an entry of main stays in main
    /// (see [`MAIN`]), as in the one-at-a-time algorithm; before,
    /// it restarted in small and usually left through the ghost.
    #[inline]
    pub(super) fn carry_use(&self, o: u32, new: &Slot<K, V>) {
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

    /// Removes slot `s` (found while the caller is pinned) from the index if it is still
    /// there, reported with `cause` (not an eviction: the policy still holds `s`); true if
    /// this call removed it.
    pub(crate) fn remove_slot(&self, s: u32, tid: usize, cause: RemovalCause, now: u64) -> bool {
        debug_assert!(cause != RemovalCause::Evicted, "evictions unlink what they took");
        let st = self.stripe(tid);
        match self.unlink_slot(s, st, tid, cause, now, None) {
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
    pub(super) fn left(&self, s: u32, tid: usize, cause: RemovalCause) {
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

    /// Inserts or replaces the value for `key`, evicting as needed to stay within capacity.
    ///
    /// An entry heavier than the whole capacity (or than `u32::MAX` units) is not stored, and
    /// any previous value for the key is removed, like libCacheSim and most caches. An insert
    /// that cannot get room within a bounded number of attempts is not stored either (see
    /// [`Cache::rejected`]).
    pub fn insert(&self, key: K, value: V) {
        self.insert_inner(key, value, None, None, None);
        panics::resume();
    }

    /// Inserts like [`Cache::insert`], with this entry's own time to live (`None`: never
    /// expires), in place of the cache's time-to-live, time-to-idle or [`Expiry`](crate::Expiry).
    ///
    /// # Panics
    /// If the cache was built without expiry (see
    /// [`CacheBuilder::time_to_live`](crate::CacheBuilder::time_to_live),
    /// [`time_to_idle`](crate::CacheBuilder::time_to_idle),
    /// [`expiry`](crate::CacheBuilder::expiry) or
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
        self.insert_inner(key, value, Some(ttl), None, None);
        panics::resume();
    }

    /// Inserts (`ttl`: an explicit lifetime); whether the value was stored (not if it was too
    /// heavy, which removes the key's entry instead, or if no room could be made). With
    /// `expect`, only if the key's slot is still `expect` (`Some(None)`: absent)
    /// when the home lock is taken: `None` if it was not (nothing changed); likewise if
    /// `cancel` is set by then (a loader's flag, set by a removal of the key before it takes
    /// the home lock: see `Cache::invalidate_loads`). The caller resumes listener panics.
    pub(crate) fn insert_inner(
        &self,
        key: K,
        value: V,
        ttl: Option<Option<std::time::Duration>>,
        expect: Option<Option<u32>>,
        cancel: Option<&std::sync::atomic::AtomicBool>,
    ) -> Option<bool> {
        let weight = match &self.weigher {
            Some(w) => w(&key, &value),
            None => 1,
        };
        if weight > self.capacity() || weight > u32::MAX as u64 {
            return self.too_heavy(&key, expect);
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
        // `may_hold`: whether the index may hold the key (a hint, see `Index::may_hold`),
        // asked once for the write in place and the tokens below.
        let mut may_hold = None;
        let (key, value) =
            if self.in_place && expect.is_none() && *may_hold.insert(self.index.may_hold(hash)) {
                match self.update_in_place(hash, key, value, times, tid) {
                    Ok(()) => return Some(true),
                    Err(kv) => kv,
                }
            } else {
                (key, value)
            };
        let st = self.stripe(tid);
        let mut victims = Victims::default();
        // The stripe's tokens if it has them (at steady state, 7 inserts in 8). Else, before
        // evicting for them: an update of a resident key (every weight 1) needs none, the old
        // version's pay for the new one, so a full cache does not evict for an update. Should
        // the old version leave (evicted, removed) before ours replaces it, ours is added and
        // takes its tokens after publication ([`Cache::pay_late`]). A key the hint calls
        // absent is new (one thread: exactly; several: it was absent a moment ago, and an
        // insert racing ours may make one eviction too many, as any race between two inserts
        // of a key may).
        let took = Self::take(st, weight);
        if took {
            self.read_ahead(st);
        }
        let owes = !took
            && self.weigher.is_none()
            && *may_hold.get_or_insert_with(|| self.index.may_hold(hash))
            && self.resident(hash, &key, tid);
        let tokens = if owes { 0 } else { weight };
        if !took
            && !owes
            && !self.acquire(st, tid, now, weight, &mut victims)
            && !self.acquire_waiting(st, tid, now, weight, &mut victims)
        {
            let _ = self.retire_and_pop(st, victims.as_slice(), false, false);
            self.rejected.fetch_add(1, Ordering::Relaxed);
            return Some(false);
        }
        // S3-FIFO: the ghost's clock, for the ghost tests the insert makes (after this
        // insert's evictions, as in the one-at-a-time algorithm): the early look below and
        // the index's under the home lock.
        let ghost = match &self.structure {
            Structure::S3(q) => Some(q.ghost.now(q.local(tid))),
            _ => None,
        };
        let early = self.gathers_early(st, hash, weight, ghost);
        if let (true, Structure::S3(q)) = (early, &self.structure) {
            // Counted into small before it is linked, as every insert into small (the
            // allocation may link its chain).
            q.count_small(q.local(tid), weight as i64);
        }
        let Some(s) = self.alloc(st, tid, now, victims.as_slice(), early) else {
            if let (true, Structure::S3(q)) = (early, &self.structure) {
                // Counted into small above, and never gathered.
                q.count_small(q.local(tid), -(weight as i64));
            }
            self.credit(st, tokens);
            self.rejected.fetch_add(1, Ordering::Relaxed);
            return Some(false);
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
        let (old, ghost_hit) = {
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
                // Relaxed (the flag): set before the remover took this lock, whose Acquire
                // (ours, after its Release) orders it before this load; a remover that takes
                // the lock after us finds our entry and removes it.
                if cur != e || cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    drop(lock);
                    drop(pin);
                    return None; // `undo` retires the slot
                }
            }
            let inserted = self.index.insert(
                &lock,
                hash,
                s,
                self.pin_at(&mut pin),
                |o| {
                    // SAFETY: a published slot, protected (`pin`, before the comparison).
                    let other = unsafe { self.slot(o).key() };
                    other == key
                },
                ghost,
            );
            let (old, ghost_hit) = match inserted {
                Inserted::Replaced(o) => (Some(o), false),
                Inserted::Added => (None, false),
                Inserted::Revived => (None, true),
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
            (old, ghost_hit)
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
                    q.insert(&self.arena, st.index, s);
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
                // Unless gathered into small with its allocation (`gathers_early`): a key
                // evicted from small lately (a ghost hit: the index insert took its ghost
                // word) goes to main, and so does an update of an entry of main. Others go to
                // small, gathered in chains like the other queue policies' inserts. Relaxed:
                // our slot's place, written by `carry_use` above (this thread).
                if !early {
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
        }
        if owes && old.is_none() {
            self.pay_late(st, tid, now, weight);
        }
        Some(true)
    }

    /// [`Cache::insert_inner`] of a value too heavy to store: the key's entry leaves, as a
    /// stored value would have replaced it. Out of line: the insert path keeps few registers.
    #[cold]
    #[inline(never)]
    fn too_heavy(&self, key: &K, expect: Option<Option<u32>>) -> Option<bool> {
        let Some(e) = expect else {
            self.remove_with(key, |_| (), RemovalCause::Removed);
            return Some(false);
        };
        // A conditional insert: only the entry the caller decided on, if it is still the key's
        // (by key, under its home lock: the slot number alone may name another key's entry by
        // now, the slot reused since the caller saw it).
        self.invalidate_loads(key);
        let mut seen = None;
        let accept = |s| {
            seen = Some(s);
            Some(s) == e
        };
        let removed = self.remove_matching(key, accept, |_| (), RemovalCause::Removed);
        (removed.is_some() || (e.is_none() && seen.is_none())).then_some(false)
    }

    /// An update of a resident key that writes the new value over the old one in its slot: no
    /// new slot, no tokens, no queue operation, and the entry keeps its place in the policy
    /// (the update is a use, as a hit is, and as in the simulator). It applies when nobody can
    /// be reading the old value (`Epochs::exclusive`: no other thread has announced the slot,
    /// no thread is pinned) and the entry is still indexed and not expired; otherwise the key
    /// and value come back and the insert makes a new version, as before. Readers that come
    /// meanwhile wait for the move
    /// ([`Writing::settled`](crate::raw::writing::Writing::settled)), which runs no user
    /// code: the old value's `Drop` and the listener run after it.
    ///
    /// Out of line: most inserts are of new keys, which [`Index::may_hold`] sends the usual
    /// way first.
    #[inline(never)]
    pub(super) fn update_in_place(
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
    /// that found no token in its stripe, of a key [`Index::may_hold`] calls possible, asks.
    #[inline(never)]
    pub(super) fn resident(&self, hash: u64, key: &K, tid: usize) -> bool {
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
    pub(super) fn pay_late(&self, st: &Stripe, tid: usize, now: u64, w: u64) {
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
    /// readable. An expired entry is removed as expired, and `None` returned. Loads of `key`
    /// in flight are invalidated first (see `Cache::invalidate_loads`).
    pub(super) fn remove_with<Q, R>(
        &self,
        key: &Q,
        f: impl FnOnce(&V) -> R,
        cause: RemovalCause,
    ) -> Option<R>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.invalidate_loads(key);
        self.remove_matching(key, |_| true, f, cause).flatten()
    }

    /// [`Cache::remove_with`] if `accept` takes the key's slot (asked only of slots holding
    /// the key): `None` if nothing was removed, else `f`'s result (`None` for an expired entry).
    pub(crate) fn remove_matching<Q, R>(
        &self,
        key: &Q,
        accept: impl FnMut(u32) -> bool,
        f: impl FnOnce(&V) -> R,
        cause: RemovalCause,
    ) -> Option<Option<R>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let tid = thread_id();
        // A hazard on the slot found (an epoch pin only if the search compares a second
        // slot): a removal then holds back neither the reuse of other slots nor, unlike an
        // epoch pin, other threads' updates in place (see `Epochs::exclusive`).
        let mut pin = LazyPin::new(&self.epochs, tid);
        let s = self.unlink_key(key, tid, self.pin_at(&mut pin), accept)?;
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
        Some(r)
    }

    /// Unlinks `key` from the index (LIVE → DEAD), crediting its tokens to the caller's stripe;
    /// returns its slot, which `pin` (as in [`Index::find`]) protected before its key was read.
    pub(super) fn unlink_key<Q>(
        &self,
        key: &Q,
        tid: usize,
        pin: impl FnMut(u32) -> bool,
        mut accept: impl FnMut(u32) -> bool,
    ) -> Option<u32>
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
                unsafe { self.slot(s).key() }.borrow() == key && accept(s)
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
    pub(super) fn release_removed(&self, s: u32, tid: usize) {
        if let Structure::Locked(l) = &self.structure {
            if l.remove(s) {
                self.retire(self.stripe(tid), s);
            }
        }
    }

    /// Unlinks slot `v` from the index if it is still there (LIVE → DEAD); returns its weight
    /// if this call did (the caller then owns those tokens), `None` if another thread removed
    /// or replaced it first. The caller (`tid`, of stripe `st`) holds `v` through the policy,
    /// is pinned, or holds it with a hazard (`Epochs::hold`), so `v` is not reused under it.
    /// Reports the departure with `cause` (an expired entry evicted or cleared as
    /// [`RemovalCause::Expired`]). [`RemovalCause::Evicted`]: the caller took `v` from the
    /// policy, so no other thread will retire it and DEAD is a plain store; `ghost` (S3-FIFO's
    /// small-queue victims): its key's fingerprint goes to the ghost with this stamp, and the
    /// stamp moves on by one (the caller counts the fingerprints into the ghost's clock:
    /// [`Ghost::added`](crate::policy::s3fifo::Ghost::added), once per batch).
    #[inline(always)]
    pub(super) fn unlink_slot(
        &self,
        v: u32,
        st: &Stripe,
        tid: usize,
        cause: RemovalCause,
        now: u64,
        ghost: Option<&mut u32>,
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
        // The index word becomes the key's ghost word (in its home bucket).
        let Some(ghosted) = self.index.remove_slot(home, v, ghost.as_deref().copied()) else {
            return Unlink::Gone;
        };
        if let (true, Some(stamp)) = (ghosted, ghost) {
            *stamp = stamp.wrapping_add(1);
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

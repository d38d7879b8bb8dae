//! Capacity tokens, slot allocation, eviction and reclamation: the stripes' tokens and lists,
//! the policy's victims, the pending chains of new entries, retirement to the limbo and the
//! free lists, hollowing removed entries (see the module docs of [`super`]).

use super::*;

impl<K, V, S> Cache<K, V, S>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Send + Sync + 'static,
    S: BuildHasher,
{
    /// Takes up to `want` victims from the policy (more than one only from the queue
    /// policies and S3-FIFO, in one scan) and unlinks them from the index: pushes them to
    /// `victims` (to be retired by the caller; it has room for `want`) and returns the tokens
    /// that freed (not credited anywhere yet), or `None` if the policy had nothing to give.
    #[inline(always)]
    pub(super) fn evict_some(
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
            self.prefetch_victims(&taken);
            self.aim_ahead(st, tid, to_ghost);
            let (mut freed, mut any) = (0, false);
            // An S3-FIFO small-queue victim's fingerprint goes to the ghost: the batch's
            // stamps follow one another from the clock as this thread sees it (as one victim
            // after another would read it), counted into the clock once, after the batch.
            let ghost = match (to_ghost, &self.structure) {
                (true, Structure::S3(q)) => Some((q, q.ghost.next_stamp(q.local(tid)))),
                _ => None,
            };
            // The next victim's stamp (`None`: no ghost for this batch).
            let mut stamp = ghost.map(|(_, first)| first);
            for &v in &taken.slots[..taken.len] {
                match self.unlink_slot(v, st, tid, RemovalCause::Evicted, now, stamp.as_mut()) {
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
                    // Its key could not be hashed, or its insert is still in flight (a slot
                    // gathered with its allocation): it stays, back in the policy.
                    Unlink::Kept | Unlink::NotYet => match &self.structure {
                        Structure::Queues(q) => q.insert(&self.arena, st.index, v),
                        Structure::Locked(l) => l.insert(v),
                        Structure::S3(q) => {
                            q.insert(&self.arena, q.local(tid), v, self.weight_of(v), true)
                        }
                    },
                }
            }
            if let (Some((q, first)), Some(next)) = (ghost, stamp) {
                let added = next.wrapping_sub(first);
                if added != 0 {
                    q.ghost.added(q.local(tid), added);
                }
            }
            if any {
                return Some(freed);
            }
        }
        None
    }

    /// Sets `st`'s scan-ahead cursor of the queue an eviction just scanned (S3-FIFO's small
    /// if `small`, else main; the queue policies' active queue) at that queue's head, in a
    /// cache that reads ahead: its scan asked for the lines before it already. S3-FIFO's other
    /// cursor keeps its place (that queue's head did not move, unless a scan passed a run
    /// there meanwhile: its lines are then useless, until a scan of it re-aims it), or starts
    /// at its head if it has none.
    #[inline]
    pub(super) fn aim_ahead(&self, st: &Stripe, tid: usize, small: bool) {
        if !self.reads_ahead {
            return;
        }
        let aim = |c: &AtomicU64, front: u32| {
            // Relaxed: a hint, the stripe's own.
            c.store(u64::from(front.wrapping_add(1)), Ordering::Relaxed);
        };
        match &self.structure {
            Structure::Queues(q) => aim(&st.ahead[0], q.front(st.index)),
            Structure::S3(q) => {
                let local = q.local(tid);
                let (scanned, other) = (usize::from(!small), usize::from(small));
                aim(&st.ahead[scanned], q.head(local, !small));
                // Relaxed: as above.
                if st.ahead[other].load(Ordering::Relaxed) == 0 {
                    aim(&st.ahead[other], q.head(local, small));
                }
            }
            // Locked policies have no queue links to follow (and never read ahead).
            Structure::Locked(_) => {}
        }
    }

    /// In a cache that reads ahead (its slots do not fit a core's caches, see
    /// [`READ_AHEAD_FROM`]), an insert that does not evict follows one link beyond each of
    /// `st`'s scan-ahead cursors (a line an earlier insert asked for) and asks for the slot it
    /// names: the stripe's next eviction scan, which follows the same links one dependent load
    /// after another, each a miss in such a cache, then finds its first [`AHEAD`] slots
    /// fetched. S3-FIFO's scans follow 1.3 links per victim at 100k entries, more than the one
    /// an insert could read ahead in one queue; its two queues are two chains whose loads
    /// overlap, and each of them needs fewer than one per insert. A hint only: if a queue
    /// changed meanwhile the lines fetched are merely useless, and nothing is written but the
    /// cursors. (Only slots of the arena's base block are followed: any number below its
    /// length names a slot that exists, and the link is an atomic word.)
    #[inline]
    pub(super) fn read_ahead(&self, st: &Stripe) {
        if !self.reads_ahead {
            return;
        }
        self.step_ahead(&st.ahead[0]);
        if matches!(self.structure, Structure::S3(_)) {
            self.step_ahead(&st.ahead[1]);
        }
    }

    /// [`Cache::read_ahead`] on one cursor.
    #[inline]
    fn step_ahead(&self, cursor: &AtomicU64) {
        // Relaxed (both): hints, the stripe's own.
        let c = cursor.load(Ordering::Relaxed);
        let (cur, steps) = ((c as u32).wrapping_sub(1), c >> 32);
        let base = self.arena.base_len();
        if steps >= AHEAD || cur as usize >= base {
            return;
        }
        // Relaxed: a hint (a stale link fetches a useless line).
        let next = link_slot(self.arena.get(cur).next.load(Ordering::Relaxed));
        if (next as usize) < base {
            self.arena.prefetch(next, false);
            cursor.store(((steps + 1) << 32) | u64::from(next + 1), Ordering::Relaxed);
        } else {
            cursor.store(0, Ordering::Relaxed);
        }
    }

    /// Asks the CPU for the home buckets of a batch of victims, for writing, before the
    /// unlink loop writes them one after another (each behind a locked CAS): their
    /// invalidations elsewhere overlap instead of following one another (S3-FIFO's ghost
    /// words go to the same lines). Only without a weigher, whose slots keep the hash's low
    /// half (else the key would be hashed twice).
    #[inline]
    pub(super) fn prefetch_victims(&self, taken: &Taken) {
        if taken.len < 2 || self.weigher.is_some() {
            return;
        }
        for &v in &taken.slots[..taken.len] {
            let slot = self.slot(v);
            // Acquire: as in `unlink_slot` (a LIVE slot's meta word was written before it was
            // published, and is not written again until it is retired).
            if slot.state.load(Ordering::Acquire) == LIVE {
                // LIVE, and held through the policy by us: not reused under us.
                let home = slot.meta();
                self.index.prefetch_home(home);
            }
        }
    }

    /// Up to `want` of the policy's victims (more than one only from the queue policies and
    /// S3-FIFO), seen through `n`, into `out`, for an insert of stripe `st`; whether their
    /// fingerprints go to the ghost (S3-FIFO's small queue); `None` if the policy had none.
    #[inline]
    pub(super) fn take_victims<N: Nodes>(
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
                // Relaxed: a hint; a chain another thread of the stripe gathered a moment
                // ago and missed here is enqueued by a later scan or when full.
                let at_tail = || {
                    self.batch > 1 && st.pending.load(Ordering::Relaxed) && self.flush_stripe(st)
                };
                (q.evict_many(n, st.index, want, out, at_tail)
                    || (self.flush_pending() && q.evict_many(n, st.index, want, out, at_tail)))
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

    /// Whether an insert of `hash` with weight `w` gathers its slot into the stripe's pending
    /// chain with the allocation (one stripe lock for both): the slot is NEW until published,
    /// and an eviction that meets it before puts it back.
    ///
    /// The queue policies do whenever they batch (small Mobius caches: while their stripe's
    /// evictions batch, see [`ORDERED_BELOW`]). S3-FIFO does for an entry bound for small,
    /// without a weigher (its queue counts then read no slot, which may still be filling):
    /// the look ahead at the key's home bucket ([`Index::bound_for_small`], after this insert's
    /// evictions, as the insert's own ghost test) finds no entry of the key and no alive ghost
    /// word of it; the caller counts the entry into small before its chain can be linked. The
    /// others (a ghost hit, a replacement, a weighted entry) are placed after publication, by
    /// what the index insert found. One thread: the look says what the insert finds. Several:
    /// a change between the two (another thread's insert or eviction of the same key) leaves
    /// the entry where the look sent it. (Stop 37 gathered S3-FIFO's entries this way; stop 41
    /// moved the ghost into a table of its own, whose line the look would have waited for,
    /// and stop 68 placed every S3-FIFO entry after publication; stop 94, the ghost back in
    /// the index since stop 93, looks again: the home bucket is a line the insert reads anyway.)
    #[inline]
    pub(super) fn gathers_early(
        &self,
        st: &Stripe,
        hash: u64,
        w: u64,
        ghost: Option<Ghosts>,
    ) -> bool {
        if self.batch == 1 {
            return false;
        }
        match &self.structure {
            // Relaxed: a hint, this stripe's own (see `ORDERED_BELOW`).
            Structure::Queues(_) => {
                self.last_evictor.is_none() || st.batching.load(Ordering::Relaxed)
            }
            Structure::Locked(_) => false,
            Structure::S3(q) => {
                self.weigher.is_none()
                    && q.to_small(w, false)
                    && ghost.is_some_and(|g| self.index.bound_for_small(hash, g))
            }
        }
    }

    /// Adds new slot `s` to `st`'s pending chain; enqueues the chain when it is full.
    pub(super) fn gather(&self, st: &Stripe, s: u32) {
        let full = self.pend(st, &mut st.lists(), s);
        if let Some((first, last, len)) = full {
            self.enqueue_new(st, first, last, len);
        }
    }

    /// Under a stripe's lock: adds slot `s` (the caller's, in no queue) to the pending chain;
    /// returns the chain to enqueue if that filled it.
    #[inline(always)]
    pub(super) fn pend(&self, st: &Stripe, l: &mut Lists, s: u32) -> Option<(u32, u32, u32)> {
        reset(&self.arena, s);
        if l.pend_len == 0 {
            l.pend_first = s;
        } else {
            link_private(&self.arena, l.pend_last, s);
        }
        l.pend_last = s;
        l.pend_len += 1;
        let full = l.pend_len >= self.batch;
        if full {
            l.pend_len = 0;
        }
        // Relaxed: a hint beside the lock's data (see `Stripe::pending`), stored only when it
        // changes (a chain of one is full at once in a cache of batches of one).
        if st.pending.load(Ordering::Relaxed) == full {
            st.pending.store(!full, Ordering::Relaxed);
        }
        full.then_some((l.pend_first, l.pend_last, self.batch))
    }

    /// Enqueues a gathered chain of `len` new slots of stripe `st` where new entries go.
    pub(super) fn enqueue_new(&self, st: &Stripe, first: u32, last: u32, len: u32) {
        match &self.structure {
            Structure::Queues(q) => q.insert_chain(&self.arena, st.index, first, last, len),
            Structure::S3(q) => q.enqueue_small_chain(&self.arena, st.index, first, last, len),
            Structure::Locked(_) => unreachable!("locked lists do not gather"),
        }
    }

    /// Enqueues every stripe's pending chain; true if there was any.
    pub(super) fn flush_pending(&self) -> bool {
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
    pub(super) fn flush_stripe(&self, st: &Stripe) -> bool {
        let chain = {
            let mut l = st.lists();
            (l.pend_len > 0).then(|| {
                let len = std::mem::take(&mut l.pend_len);
                // Relaxed: a hint (see `Stripe::pending`).
                st.pending.store(false, Ordering::Relaxed);
                (l.pend_first, l.pend_last, len)
            })
        };
        if let Some((first, last, len)) = chain {
            self.enqueue_new(st, first, last, len);
        }
        chain.is_some()
    }

    /// Evicts one victim, crediting its tokens to `st` and retiring it there.
    pub(super) fn evict_and_retire(&self, st: &Stripe, tid: usize, now: u64) -> bool {
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
    pub(super) fn retire(&self, st: &Stripe, s: u32) {
        let _ = self.retire_and_pop(st, &[s], false, false);
    }

    /// Retires `victims` into `st`'s limbo and, if `pop`, takes a free slot — under one lock;
    /// with `gather` too, the slot joins the stripe's pending chain (see [`Cache::gather`])
    /// there, and a chain it fills is enqueued.
    #[inline(always)]
    pub(super) fn retire_and_pop(
        &self,
        st: &Stripe,
        victims: &[u32],
        pop: bool,
        gather: bool,
    ) -> Option<u32> {
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
        // One victim, reusable at once, and nothing in the lists (one thread alone in a small
        // Mobius cache, or a locked policy, at every insert): the lists would take it in and
        // hand it straight back (no older free slot to prefer, no limbo for `freed_at_once`
        // to count toward), so it is our slot without the lock. Its reuse rests on `quiet`,
        // as in the lists; the lock orders nothing for it (we push and pop it ourselves).
        // Relaxed (`stocked`): a hint; a stale `false` (another thread of the stripe just
        // filled the lists) only leaves their slots to the stripe's next allocation.
        if let (true, false, &[s], Some(q)) = (pop, gather, victims, quiet) {
            if !q.may_name(s) && !st.stocked.load(Ordering::Relaxed) {
                return Some(s);
            }
        }
        let (advance, got, full) = {
            let mut l = st.lists();
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
                    full = self.pend(st, &mut l, s);
                }
            }
            (advance, got, full)
        };
        if let Some((first, last, len)) = full {
            self.enqueue_new(st, first, last, len);
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
    pub(super) fn let_go(&self, s: u32) -> bool {
        !self.hollows || let_go(&self.slot(s).state) == LetGo::Retire
    }

    #[inline]
    pub(super) fn credit(&self, st: &Stripe, w: u64) {
        // Relaxed (all token moves): counters whose exactness comes from each move being one
        // RMW; no other memory is published through them.
        st.tokens.fetch_add(w, Ordering::Relaxed);
    }

    #[inline]
    pub(super) fn count_live(&self, st: &Stripe, d: i64) {
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
    pub(super) fn mark_removed(&self, st: &Stripe, s: u32) -> bool {
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
    pub(super) fn hollow_later(&self, st: &Stripe, s: u32) {
        if !self.hollows {
            return;
        }
        // After the unlinking (see `Epochs::retire_epoch`).
        let e = self.epochs.retire_epoch();
        let advance = st.lists().retire_hollow(s, e);
        if advance {
            let adv = self.epochs.try_advance();
            self.collect(st, &adv);
        }
    }

    /// Collects `st`'s limbo for advance attempt `adv` (see [`Lists::collect`]), then drops
    /// the contents of the hollow entries that freed.
    pub(super) fn collect(&self, st: &Stripe, adv: &Advance) {
        self.collect_then(st, adv, |_| ());
    }

    /// [`Cache::collect`], running `then` on the lists under the same lock (before the hollow
    /// entries' contents are dropped, outside it).
    pub(super) fn collect_then<R>(
        &self,
        st: &Stripe,
        adv: &Advance,
        then: impl FnOnce(&mut Lists) -> R,
    ) -> R {
        let (r, hollow) = {
            let mut l = st.lists();
            l.collect(adv);
            (then(&mut l), std::mem::take(&mut l.hollow))
        };
        self.hollow(st, hollow);
        r
    }

    /// Drops the contents of removed slots whose hollow entries' grace period is over, and
    /// retires those their queue let go of meanwhile (see `raw/slot.rs`, hollowing).
    #[cold]
    pub(super) fn hollow(&self, st: &Stripe, slots: Vec<u32>) {
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
    pub(super) fn count_garbage(&self, st: &Stripe, d: i64) {
        if !matches!(self.structure, Structure::Locked(_)) {
            // Relaxed: a count read to decide whether to sweep (and exact when quiescent).
            st.garbage.fetch_add(d, Ordering::Relaxed);
        }
    }

    /// Returns a stripe's tokens above `spill` to the pool.
    pub(super) fn spill(&self, st: &Stripe) {
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

    /// The victims an eviction of stripe `st` takes at once: [`EVICT_BATCH`] (fewer in small
    /// caches), or in small Mobius caches one unless another stripe evicted since `st` last
    /// did or `st` batched and has evicted fewer than [`ALONE_AFTER`] times in a row since;
    /// that decides whether `st`'s inserts gather their entries too (see [`ORDERED_BELOW`]).
    #[inline]
    pub(super) fn evict_batch_for(&self, st: &Stripe) -> usize {
        let Some(last) = &self.last_evictor else {
            return self.evict_batch;
        };
        let me = (st as *const Stripe).addr();
        // Relaxed (all): a heuristic that decides only how many victims to take and whether to
        // gather; any value read is safe. Stored only when it changes: one thread alone never
        // writes the line again.
        let before = last.load(Ordering::Relaxed);
        let was = st.batching.load(Ordering::Relaxed);
        let mut batching = was;
        if before != me {
            last.store(me, Ordering::Relaxed);
            if before != 0 {
                batching = true;
                st.alone.store(0, Ordering::Relaxed);
            }
        } else if batching {
            // Threads sharing the stripe may lose a count (they only delay the switch) or add
            // one past the switch (saturating: a count, never a wrap).
            let alone = st.alone.load(Ordering::Relaxed).saturating_add(1);
            st.alone.store(alone, Ordering::Relaxed);
            batching = alone < ALONE_AFTER;
        }
        if batching != was {
            st.batching.store(batching, Ordering::Relaxed);
        }
        if batching {
            self.evict_batch
        } else {
            1
        }
    }

    /// Takes `w` tokens from `st`, if it has them.
    #[inline]
    pub(super) fn take(st: &Stripe, w: u64) -> bool {
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
    pub(super) fn refill(&self, st: &Stripe, want: u64) -> bool {
        let n = take_up_to(&self.pool, want);
        if n > 0 {
            self.credit(st, n);
        }
        n > 0
    }

    /// Gets `w` tokens for an insert: from the stripe, the pool, by evicting (victims go to
    /// `victims`, for the caller to retire), or from the other stripes. False if none came
    /// within the attempt bound (then [`Cache::acquire_waiting`]).
    #[inline(always)]
    pub(super) fn acquire(
        &self,
        st: &Stripe,
        tid: usize,
        now: u64,
        w: u64,
        victims: &mut Victims,
    ) -> bool {
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
        let want = self.evict_batch_for(st);
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
            if let Some(freed) = self.evict_some(st, tid, now, want, victims) {
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

    /// [`Cache::acquire`] again, after its attempts failed, until it gets the tokens or
    /// [`WAIT`] has passed (at once from user code the cache called: see `waited_out`). Out
    /// of line: the common path keeps the attempts' code alone.
    #[cold]
    #[inline(never)]
    pub(super) fn acquire_waiting(
        &self,
        st: &Stripe,
        tid: usize,
        now: u64,
        w: u64,
        victims: &mut Victims,
    ) -> bool {
        let mut deadline = None;
        while !waited_out(&mut deadline) {
            if self.acquire(st, tid, now, w, victims) {
                return true;
            }
        }
        false
    }

    /// A slot for a new entry, ours: EMPTY, or with old contents for [`Cache::prepare`] to
    /// drop; `None` if none could be had within the attempt bound and then [`WAIT`]. With
    /// `gather`, the slot is in `st`'s pending chain (see [`Cache::gather`]).
    pub(super) fn alloc(
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
    pub(super) fn alloc_slow(&self, st: &Stripe, tid: usize, now: u64) -> Option<u32> {
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
                let Some(mut l) = other.try_lists() else { continue };
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
                    let mut mine = st.lists();
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
                let mut l = st.lists();
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
            // Out of attempts: go on (yielding) until the deadline, then give up.
            if attempt + 1 >= ATTEMPTS && waited_out(&mut deadline) {
                return None;
            }
            backoff.snooze();
            attempt += 1;
        }
    }

    /// When the queues hold removed slots: sweeps up to [`SWEEP`] slots from the front of each
    /// queue (`rotate`: see [`Queues::sweep`](crate::policy::queues::Queues::sweep)) and
    /// retires the removed ones into `st`'s limbo; true if it retired any (reusable after two
    /// epoch advances).
    pub(super) fn sweep_removed(&self, st: &Stripe, tid: usize, rotate: bool) -> bool {
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
    pub(super) fn prepare(&self, slot: &Slot<K, V>) {
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

    /// Makes every retired slot that no pinned thread can see reusable, and drops its contents
    /// (and the contents of removed slots whose hollow entries that frees).
    pub(super) fn reclaim(&self) {
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
            st.lists().free.extend_from_slice(&taken);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::raw::queue::NIL;

    /// A small Mobius cache batches only after another stripe evicted (see `ORDERED_BELOW`);
    /// larger caches and other policies always do.
    #[test]
    fn small_mobius_batches_only_while_stripes_take_turns() {
        // 4,000 entries: batches of more than one on machines of up to 64 stripes.
        let c: Cache<u64, u64> = Cache::builder().capacity(4_000).policy(Policy::Mobius).build();
        assert!(c.evict_batch > 1 && c.last_evictor.is_some());
        assert_eq!(c.queue_batches(), (1, 1));
        let (a, b) = (&*c.stripes[0], &*c.stripes[1]);
        let batching = |st: &Stripe| st.batching.load(Ordering::Relaxed);
        // Alone: one victim at a time, new entries not gathered.
        assert_eq!(c.evict_batch_for(a), 1);
        assert_eq!(c.evict_batch_for(a), 1);
        assert!(!batching(a) && !c.gathers_early(a, 1, 1, None));
        // Another stripe's eviction after ours: it batches, and so do we at our next.
        assert_eq!(c.evict_batch_for(b), c.evict_batch);
        assert!(batching(b) && c.gathers_early(b, 1, 1, None));
        assert_eq!(c.evict_batch_for(a), c.evict_batch);
        assert!(batching(a) && c.gathers_early(a, 1, 1, None));
        // Alone again: one at a time again after `ALONE_AFTER` evictions in a row.
        for _ in 1..ALONE_AFTER {
            assert_eq!(c.evict_batch_for(a), c.evict_batch);
        }
        assert_eq!(c.evict_batch_for(a), 1);
        assert!(!batching(a) && !c.gathers_early(a, 1, 1, None));
        assert_eq!(c.evict_batch_for(a), 1);
        // The other stripe's turn starts the count again.
        assert_eq!(c.evict_batch_for(b), c.evict_batch);
        assert_eq!(c.evict_batch_for(a), c.evict_batch);
        assert_eq!(c.evict_batch_for(b), c.evict_batch);
        for _ in 1..ALONE_AFTER {
            assert_eq!(c.evict_batch_for(b), c.evict_batch);
        }
        assert_eq!(c.evict_batch_for(b), 1);

        for (cap, policy) in [(100_000, Policy::Mobius), (4_000, Policy::Clock)] {
            let c: Cache<u64, u64> = Cache::builder().capacity(cap).policy(policy).build();
            assert!(c.last_evictor.is_none(), "{policy:?} at {cap}");
            assert_eq!(c.evict_batch_for(&c.stripes[0]), c.evict_batch);
            assert!(c.gathers_early(&c.stripes[0], 1, 1, None));
        }
    }

    /// In a cache of 1 MiB of slots or more, an eviction aims the stripe's scan-ahead cursor
    /// of the queue it scanned at that queue's head (S3-FIFO: its other cursor too, if it had
    /// none, and else leaves it); each insert that does not evict moves each cursor one link
    /// on, up to `AHEAD` links; a cursor naming no slot of the base block (stale, garbage)
    /// moves nowhere and reads nothing.
    #[test]
    fn reading_ahead_follows_the_queue_from_its_head() {
        for policy in [Policy::Mobius, Policy::Clock, Policy::Fifo, Policy::S3Fifo] {
            // 100k entries: 3.2 MB of slots.
            let c: Cache<u64, u64> = Cache::builder().capacity(100_000).policy(policy).build();
            assert!(c.reads_ahead, "{policy:?}");
            for k in 0..300_000 {
                c.insert(k, k);
                // S3-FIFO: a third of the keys seen twice more while in small, so main has
                // entries too.
                if k % 3 == 0 {
                    c.get(&k);
                    c.get(&k);
                }
            }
            let tid = thread_id();
            let st = c.stripe(tid);
            let s3 = matches!(c.structure, Structure::S3(_));
            let cursors = if s3 { 2 } else { 1 };
            let cursor = |i: usize| {
                let w = st.ahead[i].load(Ordering::Relaxed);
                ((w as u32).wrapping_sub(1), w >> 32)
            };
            for a in &st.ahead {
                a.store(0, Ordering::Relaxed);
            }
            // An eviction from small (S3-FIFO; the queue policies' scan has one cursor).
            c.aim_ahead(st, tid, true);
            let queued = match &c.structure {
                Structure::Queues(q) => q.items(&c.arena),
                Structure::S3(q) => q.items(&c.arena),
                Structure::Locked(_) => unreachable!(),
            }
            .expect("queues");
            let mut at = [NIL; 2];
            for (i, at) in at.iter_mut().enumerate().take(cursors) {
                let (head, steps) = cursor(i);
                assert_eq!(steps, 0, "{policy:?} cursor {i}");
                // A queued slot, and the first of its queue: no queued slot links to it.
                assert!(queued.contains(&head), "{policy:?}: cursor {i} names a queued slot");
                assert!(
                    !queued.iter().any(|&s| link_slot(c.arena.next_word(s)) == head),
                    "{policy:?}: cursor {i} is at a queue's head"
                );
                *at = head;
            }
            if s3 {
                assert_ne!(at[0], at[1], "S3-FIFO's cursors follow small and main");
            } else {
                assert_eq!(st.ahead[1].load(Ordering::Relaxed), 0, "{policy:?}: one cursor");
            }
            for k in 1..=AHEAD {
                c.read_ahead(st);
                for (i, at) in at.iter_mut().enumerate().take(cursors) {
                    let next = link_slot(c.arena.next_word(*at));
                    assert_eq!(cursor(i), (next, k), "{policy:?}: cursor {i}, link {k}");
                    *at = next;
                }
            }
            c.read_ahead(st);
            for (i, &at) in at.iter().enumerate().take(cursors) {
                assert_eq!(cursor(i), (at, AHEAD), "{policy:?}: no further than AHEAD");
            }
            if s3 {
                // An eviction from main re-aims main's cursor only.
                c.aim_ahead(st, tid, false);
                assert_eq!(cursor(0), (at[0], AHEAD), "small's cursor keeps its place");
                assert_eq!(cursor(1).1, 0, "main's cursor back at its head");
                assert!(queued.contains(&cursor(1).0));
            }
            let base = c.arena.base_len() as u64;
            for garbage in [0, u64::MAX, u64::from(u32::MAX), base + 1, (base + 1) | (3 << 32)] {
                for a in &st.ahead {
                    a.store(garbage, Ordering::Relaxed);
                }
                c.read_ahead(st);
                for (i, a) in st.ahead.iter().enumerate() {
                    assert_eq!(a.load(Ordering::Relaxed), garbage, "{policy:?} {i}: {garbage:#x}");
                }
            }
        }
        // Slots that fit a core's caches: no reading ahead.
        let c: Cache<u64, u64> = Cache::builder().capacity(10_000).policy(Policy::Mobius).build();
        assert!(!c.reads_ahead);
    }

    /// A thread that starts inserting into a cache another thread filled (its own lane
    /// empty) keeps its new entries: its lane takes from the full one until it holds half its
    /// share, instead of evicting its own new entries at once.
    #[test]
    fn a_thread_joining_a_full_cache_keeps_its_entries() {
        use std::sync::{mpsc, Arc};
        for policy in [Policy::Mobius, Policy::S3Fifo] {
            let c: Arc<Cache<u64, u64>> =
                Arc::new(Cache::builder().capacity(8_192).policy(policy).build());
            let lanes = match &c.structure {
                Structure::Queues(q) => q.lanes(),
                Structure::S3(q) => q.lanes(),
                Structure::Locked(_) => unreachable!(),
            };
            assert!(lanes > 1, "{policy:?}: {lanes} lanes");
            let lane = move |tid: usize| tid & (lanes - 1);
            // The filler stays alive, so the joiner's thread id differs from its own.
            let (done, wait) = mpsc::channel::<()>();
            let (filled, is_filled) = mpsc::channel();
            let c1 = c.clone();
            let filler = std::thread::spawn(move || {
                for k in 0..8_192 {
                    c1.insert(k, k);
                }
                filled.send(lane(thread_id())).expect("main waits");
                wait.recv().ok();
            });
            let filler_lane = is_filled.recv().expect("filler");
            // Threads until one is in another lane (the others wait, so ids are not reused).
            let mut parked = Vec::new();
            let hits = loop {
                let (go, ready) = mpsc::channel::<()>();
                let (report, reported) = mpsc::channel();
                let c2 = c.clone();
                let h = std::thread::spawn(move || {
                    let mine = lane(thread_id());
                    report.send(mine).expect("main waits");
                    if mine == filler_lane {
                        ready.recv().ok();
                        return 0;
                    }
                    // 2,000 new keys, read through, five times: the last round should hit.
                    let mut hits = 0;
                    for round in 0..5 {
                        for k in 1_000_000..1_002_000u64 {
                            if c2.get(&k).is_some() {
                                hits += (round == 4) as u32;
                            } else {
                                c2.insert(k, k);
                            }
                        }
                    }
                    hits
                });
                if reported.recv().expect("joiner") == filler_lane {
                    parked.push((go, h));
                    continue;
                }
                break h.join().expect("joiner");
            };
            for (go, h) in parked {
                drop(go);
                h.join().expect("parked");
            }
            drop(done);
            filler.join().expect("filler");
            assert!(hits >= 1_800, "{policy:?}: {hits} hits of 2,000 in the last round");
            c.validate().expect("consistent");
        }
    }
}

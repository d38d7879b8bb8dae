//! A lock-free FIFO queue of slots for eviction, linked through the slots themselves: Mobius's
//! queue (Dong et al., POMACS 2025, Appendix A/B) with the published defects fixed and without
//! an enqueue gap.
//!
//! # Algorithm
//!
//! A singly linked list of slot numbers from `head` (oldest) to `tail` (newest), linked by each
//! slot's `next` ([`Links`]); no dummy node, an empty queue has `head == NIL`. The slot *is* the
//! node: enqueueing allocates nothing, and a slot given a second chance (or reused for another
//! entry) is enqueued again, so `head`, `tail` and every `next` are **versioned words**
//! (`version << 32 | slot`): every change of `head`/`tail` bumps its version, and each time a
//! slot is (re-)enqueued its `next` is reset to NIL with a new version (a new *incarnation*).
//! A CAS against a word read earlier therefore fails if anything happened in between, even if
//! the same slot came back (up to 2^32 changes while one thread is preempted between its read
//! and its CAS). Each read of a `next` that a CAS will depend on is validated by re-reading the
//! `head` or `tail` word that led to it, so the version read is that of the right incarnation.
//!
//! * **Enqueue a chain** `first..=last` (Michael–Scott): read `tail = t`; if `t.next` is NIL,
//!   CAS it to `first` — the chain is now reachable, the enqueue has taken effect — then CAS
//!   `tail` forward to `last`. Anyone who finds `tail.next` set helps: CASes `tail` forward a
//!   step at a time until it is at the last node (a helper that stopped after one step would
//!   leave the tail inside a chain whose enqueuer's CAS it made fail). So a thread preempted
//!   anywhere in an enqueue blocks no one (the old core's *enqueue gap*, between a tail swap
//!   and the link, hid every later entry from the scan), and at rest the tail is the last node.
//! * **Enqueue into an empty queue**: CAS `head` from NIL to `first` (effect), then `tail` from
//!   NIL to `last`; whoever finds a head with a NIL tail sets the tail to the head (helping).
//! * **Detach a prefix** `start..=cur` where `cur.next` is set: one CAS of `head` from the word
//!   read at the start of the scan to `cur.next`. Success proves nothing was detached since, so
//!   the links the scan followed (which never change while their slots are queued) were real.
//!   Detaching never passes `tail`: a lagging tail is helped forward first.
//! * **Take the last node** `L` (`head == L`, `L.next == NIL`, `tail == L`): CAS `L.next` from
//!   NIL to TAKEN (same incarnation) — no enqueue can link after `L` any more, `L` is ours —
//!   then CAS `tail` and `head` to NIL. Anyone who meets TAKEN helps finish those two CASes,
//!   checking the incarnation first.
//!
//! A scanner may follow links of slots that were detached and enqueued elsewhere meanwhile: the
//! view is stale, and its CAS on `head` fails.

use crate::sync::{AtomicU64, Ordering};
use crossbeam_utils::CachePadded;

/// No slot.
pub(crate) const NIL: u32 = u32::MAX;
/// `next` of a node taken as the last of its queue (no enqueue may link after it).
pub(crate) const TAKEN: u32 = u32::MAX - 1;

/// The versioned `next` words of the slots a queue links.
pub(crate) trait Links {
    fn next(&self, slot: u32) -> &AtomicU64;
}

/// The slot of a versioned word.
#[inline]
pub(crate) fn slot(w: u64) -> u32 {
    w as u32
}

/// `w`'s version plus one, with slot `to`.
#[inline]
fn bump(w: u64, to: u32) -> u64 {
    ((w >> 32).wrapping_add(1) << 32) | to as u64
}

/// `w`'s version, with slot `to`.
#[inline]
fn same(w: u64, to: u32) -> u64 {
    (w & !0xffff_ffff) | to as u64
}

/// Starts a new incarnation of slot `s`, which the caller owns and is about to enqueue:
/// `next` becomes NIL with a new version.
#[inline]
pub(crate) fn reset<L: Links>(links: &L, s: u32) {
    let n = links.next(s);
    // Release: a thread that reads the new incarnation's word (Acquire) also sees everything
    // before it — the take or detach that freed the slot moved `head`/`tail` — so its
    // re-validation of the tail or head word fails instead of acting on a stale view. (The
    // load is Relaxed: the slot is ours.)
    n.store(bump(n.load(Ordering::Relaxed), NIL), Ordering::Release);
}

/// Links `a.next` to `b` in a chain that is still the caller's (not enqueued): published by
/// the chain's enqueue.
#[inline]
pub(crate) fn link_private<L: Links>(links: &L, a: u32, b: u32) {
    let n = links.next(a);
    // Relaxed: private until the enqueue's Release CAS.
    n.store(same(n.load(Ordering::Relaxed), b), Ordering::Relaxed);
}

/// Test-only stall points (feature `test-hooks`): lets a test park a thread mid-enqueue.
#[cfg(all(feature = "test-hooks", not(loom)))]
pub mod hooks {
    use std::cell::Cell;
    use std::thread::LocalKey;

    /// A thread's hook: the function a test installed at one point of the cache's code.
    type Slot = LocalKey<Cell<Option<fn()>>>;

    thread_local! {
        static GAP: Cell<Option<fn()>> = const { Cell::new(None) };
        static UNPUBLISHED: Cell<Option<fn()>> = const { Cell::new(None) };
        static PROTECTED: Cell<Option<fn()>> = const { Cell::new(None) };
        static DECIDED: Cell<Option<fn()>> = const { Cell::new(None) };
        static EPOCHS: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
    }

    /// Caches this thread builds from now on get `records` per-thread records and `spares`
    /// spare hazards (`Some((records, spares))`; `None`: the defaults, 64 and 192), so that a
    /// test with few threads runs the paths of threads beyond the records: `Some((0, 1))`
    /// sends every thread through the shared epoch counters, and `compute`'s holds through
    /// one spare hazard (and a pin when it is taken).
    pub fn epochs(records_spares: Option<(usize, usize)>) {
        EPOCHS.with(|e| e.set(records_spares));
    }
    pub(crate) fn epochs_override() -> Option<(usize, usize)> {
        EPOCHS.with(Cell::get)
    }

    /// Runs `slot`'s hook, if any: every time, or (`once`) taken out before it runs, so that
    /// cache operations it makes do not run it again.
    fn run(slot: &'static Slot, once: bool) {
        let f = if once { slot.with(Cell::take) } else { slot.with(Cell::get) };
        if let Some(f) = f {
            f();
        }
    }

    /// Runs `f` in this thread's enqueues between the link and the tail CAS (where the old
    /// core's enqueue gap was: a thread preempted there must block no one).
    pub fn on_enqueue_gap(f: Option<fn()>) {
        GAP.with(|g| g.set(f));
    }
    pub(crate) fn gap() {
        run(&GAP, false);
    }
    /// Runs `f` in this thread's inserts between the slot's allocation (a queue policy has
    /// it in a pending chain from then on) and its publication in the index. `f` may use
    /// the cache (no lock is held there); it is taken out before it runs, so the inserts it
    /// makes do not run it again.
    pub fn on_unpublished(f: Option<fn()>) {
        UNPUBLISHED.with(|g| g.set(f));
    }
    pub(crate) fn unpublished() {
        run(&UNPUBLISHED, true);
    }
    /// Runs `f` in this thread's `get`s between finding the entry's slot (protected from
    /// reuse from then on) and reading its value: a reader preempted mid-read. Taken out
    /// before it runs.
    pub fn on_protected(f: Option<fn()>) {
        PROTECTED.with(|g| g.set(f));
    }
    pub(crate) fn protected() {
        run(&PROTECTED, true);
    }
    /// Runs `f` in this thread's `compute` calls between the closure's decision (the entry
    /// it saw no longer protected) and the store or removal that acts on it: a thread
    /// preempted there. Taken out before it runs.
    pub fn on_decided(f: Option<fn()>) {
        DECIDED.with(|g| g.set(f));
    }
    pub(crate) fn decided() {
        run(&DECIDED, true);
    }
}

/// A prefix detached by [`Queue::detach_prefix`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Detached {
    /// Its first slot.
    pub first: u32,
    /// Its slots.
    pub len: usize,
    /// The head word the detach installed.
    head: u64,
}

/// The queue.
#[derive(Debug)]
pub(crate) struct Queue {
    head: CachePadded<AtomicU64>,
    tail: CachePadded<AtomicU64>,
}

impl Default for Queue {
    fn default() -> Self {
        Queue {
            head: CachePadded::new(AtomicU64::new(NIL as u64)),
            tail: CachePadded::new(AtomicU64::new(NIL as u64)),
        }
    }
}

impl Queue {
    /// The head word (its [`slot`] is NIL if empty).
    #[inline]
    pub fn head(&self) -> u64 {
        // Acquire: pairs with the Release RMWs that install heads, so the links written before
        // (and the nodes' resets) are visible.
        self.head.load(Ordering::Acquire)
    }

    /// The tail word.
    #[inline]
    pub fn tail(&self) -> u64 {
        // Acquire: as for the head.
        self.tail.load(Ordering::Acquire)
    }

    /// Appends the chain `first..=last`, linked through `next` (each node reset by [`reset`]
    /// before it was linked), with `last.next` NIL. The chain's slots are the caller's.
    pub fn enqueue_chain<L: Links>(&self, links: &L, first: u32, last: u32) {
        loop {
            let t = self.tail();
            let ti = slot(t);
            // The enqueue takes effect with one of two CASes: `head` (empty queue) or the tail
            // node's `next`; then the tail is swung, by us or by a helper.
            let linked = if ti == NIL {
                let h = self.head();
                if self.tail() != t {
                    continue; // `t` is stale: the tail CAS must use the tail word of now
                }
                if slot(h) != NIL {
                    self.help_empty_tail(links, t, h);
                    continue;
                }
                // Empty: from here until our head CAS nobody can move a NIL tail (helpers need
                // a head). AcqRel: Release publishes the chain (Acquire in `head()`).
                self.head
                    .compare_exchange(h, bump(h, first), Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
            } else {
                // Acquire: pairs with the Release link CAS (or the publication of the reset).
                let nw = links.next(ti).load(Ordering::Acquire);
                if self.tail() != t {
                    continue; // `nw` may belong to another incarnation
                }
                match slot(nw) {
                    TAKEN => {
                        self.finish_take(links, ti, nw);
                        continue;
                    }
                    // Release: publishes the chain to scanners (Acquire loads of `next`).
                    NIL => links
                        .next(ti)
                        .compare_exchange(nw, same(nw, first), Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok(),
                    // The tail lags behind a linked chain: help it forward.
                    n => {
                        self.cas_tail(t, n);
                        continue;
                    }
                }
            };
            if linked {
                #[cfg(all(feature = "test-hooks", not(loom)))]
                hooks::gap();
                // Fails harmlessly if a helper swung the tail already.
                self.cas_tail(t, last);
                return;
            }
        }
    }

    /// CAS `tail` from `t` to `to` (new version); failure means someone else moved it.
    #[inline]
    fn cas_tail(&self, t: u64, to: u32) -> bool {
        // AcqRel: the tail's history is a chain of synchronising RMWs; Release publishes the
        // links before it to whoever loads the tail.
        self.tail.compare_exchange(t, bump(t, to), Ordering::AcqRel, Ordering::Relaxed).is_ok()
    }

    /// `head` (word `h`) is set but `tail` (word `t`) is NIL: an enqueue into the empty queue
    /// is between its two CASes, or a take is. Help either along: true if the tail may now be
    /// set (the caller goes on: the head may have a successor, and the tail must reach the
    /// last slot, see [`Queue::tail_settled`]), false if a take was finished.
    fn help_empty_tail<L: Links>(&self, links: &L, t: u64, h: u64) -> bool {
        let hi = slot(h);
        // Acquire: as in `enqueue_chain`.
        let nw = links.next(hi).load(Ordering::Acquire);
        if self.head() != h {
            return true;
        }
        if slot(nw) == TAKEN {
            self.finish_take(links, hi, nw);
            false
        } else {
            self.cas_tail(t, hi);
            true
        }
    }

    /// Completes the take of `node`, whose `next` was read as `taken` (TAKEN): tail, then head,
    /// to NIL — each only while the node is still in that incarnation.
    fn finish_take<L: Links>(&self, links: &L, node: u32, taken: u64) {
        let t = self.tail();
        // Acquire: a later incarnation's reset is visible once its tail word is.
        if slot(t) == node && links.next(node).load(Ordering::Acquire) == taken {
            self.cas_tail(t, NIL);
        }
        let h = self.head();
        if slot(h) == node && links.next(node).load(Ordering::Acquire) == taken {
            // AcqRel: as for the tail.
            let _ =
                self.head.compare_exchange(h, bump(h, NIL), Ordering::AcqRel, Ordering::Relaxed);
        }
    }

    /// Before detaching from the head: true once the tail is at the last slot (so it is not
    /// among the slots about to be detached, all of which have a successor), helping a lagging
    /// tail forward as far as it lags; false if the queue is empty or a take of its last slot
    /// was under way (helped to its end: the caller retries).
    ///
    /// Whoever moves a tail carries it to the last slot: an enqueue of a chain links the whole
    /// chain with one CAS and then swings the tail to the chain's end, and when that CAS fails
    /// because a helper moved the tail one step (onto the chain's first slot), only the
    /// helper's going on leaves the tail at the end. (A helper that gave up after one step
    /// left a tail lagging at rest, which `walk` reports: found by the chaos test with more
    /// threads than cores, loom `chain_enqueue_vs_tail_helper`.)
    #[inline(always)]
    pub fn tail_settled<L: Links>(&self, links: &L) -> bool {
        loop {
            let t = self.tail();
            let ti = slot(t);
            if ti == NIL {
                let h = self.head();
                if slot(h) == NIL {
                    return false;
                }
                if !self.help_empty_tail(links, t, h) {
                    return false;
                }
                continue;
            }
            // Acquire: as in `enqueue_chain`.
            let nw = links.next(ti).load(Ordering::Acquire);
            if self.tail() != t {
                continue; // `nw` may belong to another incarnation
            }
            match slot(nw) {
                NIL => return true,
                TAKEN => {
                    self.finish_take(links, ti, nw);
                    return false;
                }
                // Lagging: one step forward (fails harmlessly if someone else moved it), and on.
                n => {
                    self.cas_tail(t, n);
                }
            }
        }
    }

    /// Detaches the prefix up to (not including) `new_head` if `head` is still `start`. The
    /// caller checked [`Queue::tail_settled`] after its scan.
    #[inline]
    pub fn detach(&self, start: u64, new_head: u32) -> bool {
        debug_assert!(new_head != NIL && new_head != TAKEN);
        // AcqRel: Acquire orders our use of the detached slots after the CAS; Release keeps
        // the head's history a chain of synchronising RMWs.
        self.head
            .compare_exchange(start, bump(start, new_head), Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The end of a batched scan: detaches `start..after` (the victims found and the runs of
    /// slots that get another pass between them, `runs`, each `(first, last)`) with one CAS,
    /// once the tail has settled, and joins the runs into one chain across the victims (each
    /// join a new incarnation of the run's last slot, as any re-enqueued slot gets). Returns
    /// the chain's ends (`None`: no run), now the caller's to re-enqueue, or `Err` if the view
    /// was stale (the caller rescans).
    #[inline(always)]
    pub fn detach_batch<L: Links>(
        &self,
        links: &L,
        start: u64,
        after: u32,
        runs: &[(u32, u32)],
    ) -> Result<Option<(u32, u32)>, ()> {
        if !self.tail_settled(links) || !self.detach(start, after) {
            return Err(());
        }
        let (Some(&(first, _)), Some(&(_, last))) = (runs.first(), runs.last()) else {
            return Ok(None);
        };
        for w in runs.windows(2) {
            reset(links, w[0].1);
            link_private(links, w[0].1, w[1].0);
        }
        Ok(Some((first, last)))
    }

    /// Detaches a prefix of up to `max` slots from the head, always leaving at least two slots
    /// (so the new head has a successor: no take of a lone last node can start on it while
    /// the head stays as this call left it, see [`Queue::restore_prefix`]). Returns the
    /// detached prefix — its first slot and length, now the caller's (their links inside the
    /// prefix are stable: no enqueue links after a slot that has a successor) — and the head
    /// word installed; `None` if the queue has fewer than three slots or the head moved under
    /// the walk (the caller may retry).
    pub fn detach_prefix<L: Links>(&self, links: &L, max: usize) -> Option<Detached> {
        let hw = self.head();
        let first = slot(hw);
        if first == NIL || max == 0 {
            return None;
        }
        // Walk until `max` slots are behind `cur` or `cur` has no successor; the new head is
        // then the slot before `cur` (whose successor is `cur`), and the prefix is what lies
        // before the new head.
        let (mut prev, mut cur, mut seen) = (NIL, first, 0usize);
        loop {
            // Acquire: pairs with the Release link in `enqueue_chain`.
            let next = slot(links.next(cur).load(Ordering::Acquire));
            if next == TAKEN {
                return None;
            }
            if next == NIL || seen == max + 1 {
                break;
            }
            (prev, cur, seen) = (cur, next, seen + 1);
        }
        // `seen` slots precede `cur`; the last of them (`prev`) becomes the head.
        let len = seen.checked_sub(1).filter(|&l| l > 0)?;
        let head = bump(hw, prev);
        (self.tail_settled(links) && self.detach(hw, prev)).then_some(Detached { first, len, head })
    }

    /// Puts the chain `first..=last` (the caller's: each node [`reset`], linked with
    /// [`link_private`]) back in front of the head, if the head is still the word `d.head` that
    /// [`Queue::detach_prefix`] installed — nothing was detached or taken since, so the order
    /// is exactly as before the detach minus what the caller kept. False (nothing changed) if
    /// the head moved: the caller enqueues the chain at the tail instead.
    pub fn restore_prefix<L: Links>(&self, links: &L, d: &Detached, first: u32, last: u32) -> bool {
        link_private(links, last, slot(d.head));
        // AcqRel: Release publishes the chain's links to scanners (Acquire in `head()`).
        self.head
            .compare_exchange(d.head, bump(d.head, first), Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }

    /// Takes the lone node of the queue whose head word the caller read as `start` (and whose
    /// `next` it saw NIL). False if an enqueue linked after it, or another thread took it.
    pub fn take_last<L: Links>(&self, links: &L, start: u64) -> bool {
        let node = slot(start);
        if self.head() != start {
            return false;
        }
        let t = self.tail();
        if slot(t) != node {
            // The tail lags (NIL: an enqueue into the empty queue is halfway), or an enqueue
            // linked after the node: help the tail to the end, retry.
            self.tail_settled(links);
            return false;
        }
        // Acquire: as in `enqueue_chain`.
        let nw = links.next(node).load(Ordering::Acquire);
        if slot(nw) != NIL || self.head() != start {
            return false;
        }
        let taken = same(nw, TAKEN);
        // AcqRel: success makes us the owner — no enqueue can link after the node any more.
        if links
            .next(node)
            .compare_exchange(nw, taken, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        self.finish_take(links, node, taken);
        true
    }

    /// The slots from head to tail (quiescent use), or a broken invariant.
    pub fn walk<L: Links>(&self, links: &L, limit: usize) -> Result<Vec<u32>, String> {
        let mut out = Vec::new();
        let mut cur = slot(self.head());
        while cur != NIL {
            if cur == TAKEN {
                return Err("a taken slot is still queued".into());
            }
            if out.len() > limit {
                return Err(format!("queue longer than {limit} slots: a cycle?"));
            }
            out.push(cur);
            cur = slot(links.next(cur).load(Ordering::Acquire));
        }
        let tail = slot(self.tail());
        if out.last().copied().unwrap_or(NIL) != tail {
            return Err(match out.iter().position(|&s| s == tail) {
                Some(i) => format!(
                    "the tail lags: slot {tail} is {} slots before the last one reachable",
                    out.len() - 1 - i
                ),
                None => format!(
                    "the tail (slot {tail}) is not reachable from head ({} slots reachable)",
                    out.len()
                ),
            });
        }
        Ok(out)
    }
}

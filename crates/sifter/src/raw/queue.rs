//! A lock-free FIFO queue of slots for eviction, linked through the slots themselves: Mobius's
//! queue (Dong et al., POMACS 2025, Appendix A/B) with the published defects fixed.
//!
//! # Algorithm
//!
//! A singly linked list of slot numbers from `head` (oldest) to `tail` (newest), linked by each
//! slot's `next` ([`Links`]); no dummy node, an empty queue has `head == tail == NIL`. The slot
//! *is* the node: enqueueing allocates nothing, and a slot given a second chance is enqueued
//! again, so `head` and `tail` are **versioned words** (`version << 32 | slot`): every change
//! bumps the version, so a CAS against a word read earlier fails if anything happened in
//! between, even if the same slot came back (ABA is excluded by construction, up to 2^32
//! changes while one thread is preempted between its read and its CAS).
//!
//! * **Enqueue a chain** `first..=last`: CAS `tail` from `t` to `last` (new version); then
//!   link: `head = first` if `t` was empty, else `t.next = first`. Between the CAS and the link
//!   (the *enqueue gap*) the chain is not reachable from `head`: a scanner that reaches `t`
//!   sees `t.next == NIL` and `tail != t`, and must not take `t` (the enqueuer will write into
//!   it). Scanners skip to the other queue, or retry; nothing is lost, and the cache's
//!   capacity never depends on the gap closing (see `cache.rs`: tokens).
//! * **Detach a prefix** `start..=cur` where `cur.next` is set: one CAS of `head` from the word
//!   read at the start of the scan to `cur.next`. Success proves nothing was detached since, so
//!   the links the scan followed (which never change while their slots are queued) were real.
//! * **Take the last node** `L` (`head == L`, `L.next == NIL`): check `tail == L` and that
//!   `head` is still the word read (so `tail`'s `L` is the same incarnation), CAS `tail` to
//!   empty — no enqueue got past `L` — then CAS `head` from the word read to empty (failing
//!   harmlessly if an enqueuer that saw the empty tail already set it).
//!
//! A scanner may follow links of slots that were detached and enqueued elsewhere meanwhile: the
//! view is stale, and its CAS fails. It never follows into a *reused* slot, because slots are
//! reused only after every thread pinned when they were retired has unpinned
//! ([`epoch`](crate::raw::epoch)).

use crate::sync::{AtomicU32, AtomicU64, Ordering};
use crossbeam_utils::CachePadded;

/// No slot.
pub(crate) const NIL: u32 = u32::MAX;

/// The `next` links of the slots a queue links.
pub(crate) trait Links {
    fn next(&self, slot: u32) -> &AtomicU32;
}

#[inline]
pub(crate) fn slot(w: u64) -> u32 {
    w as u32
}

#[inline]
fn bump(w: u64, to: u32) -> u64 {
    ((w >> 32).wrapping_add(1) << 32) | to as u64
}

/// Test-only stall points (feature `test-hooks`): lets a test park a thread inside a gap.
#[cfg(all(feature = "test-hooks", not(loom)))]
pub mod hooks {
    use std::cell::Cell;
    thread_local! {
        static GAP: Cell<Option<fn()>> = const { Cell::new(None) };
    }
    /// Runs `f` in this thread's enqueues, between the tail CAS and the link (the gap).
    pub fn on_enqueue_gap(f: Option<fn()>) {
        GAP.with(|g| g.set(f));
    }
    pub(crate) fn gap() {
        if let Some(f) = GAP.with(Cell::get) {
            f();
        }
    }
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
        // Acquire: pairs with the Release that installed this head (a detach, or an enqueue
        // into an empty queue), so the links written before it are visible.
        self.head.load(Ordering::Acquire)
    }

    /// The tail word.
    #[inline]
    pub fn tail(&self) -> u64 {
        // Acquire: pairs with the AcqRel CAS in `enqueue_chain`.
        self.tail.load(Ordering::Acquire)
    }

    /// Appends the chain `first..=last`, linked through `next`, with `last.next == NIL`.
    /// The chain's slots are the caller's (in no queue).
    pub fn enqueue_chain<L: Links>(&self, links: &L, first: u32, last: u32) {
        // Relaxed: the first read only seeds the CAS.
        let mut t = self.tail.load(Ordering::Relaxed);
        loop {
            // AcqRel: Release publishes the chain's links to whoever loads the tail; Acquire
            // orders our write into the old tail's `next` after its enqueuer's.
            match self.tail.compare_exchange_weak(
                t,
                bump(t, last),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => t = now,
            }
        }
        #[cfg(all(feature = "test-hooks", not(loom)))]
        hooks::gap();
        if slot(t) == NIL {
            // AcqRel RMW (not a store): a `take_last` of the previous lone node may be about
            // to CAS `head` to empty; the RMWs are ordered, and that CAS then fails. Release:
            // the chain is reachable from `head` (Acquire in `head()`).
            let _ = self
                .head
                .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |h| Some(bump(h, first)));
        } else {
            // Release: pairs with the Acquire load of `next` by scanners. The old tail is
            // still queued: it leaves only once a scanner reads a link we write now, or by
            // `take_last`, which would have made our CAS see an empty tail.
            links.next(slot(t)).store(first, Ordering::Release);
        }
    }

    /// Detaches the prefix up to (not including) `new_head` if `head` is still `start`.
    #[inline]
    pub fn detach(&self, start: u64, new_head: u32) -> bool {
        debug_assert_ne!(new_head, NIL);
        // AcqRel: Acquire orders our use of the detached slots after the CAS; Release keeps
        // the head's history a chain of synchronising RMWs.
        self.head
            .compare_exchange(start, bump(start, new_head), Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Takes the lone node of the queue whose head word the caller read as `start` (and whose
    /// `next` it saw NIL). False if an enqueue got past it (the gap) or another thread took it.
    pub fn take_last(&self, start: u64) -> bool {
        let t = self.tail();
        if slot(t) != slot(start) || self.head() != start {
            return false;
        }
        // AcqRel: success makes us the owner (no enqueuer got past the node).
        if self.tail.compare_exchange(t, bump(t, NIL), Ordering::AcqRel, Ordering::Acquire).is_err()
        {
            return false;
        }
        // Fails harmlessly if an enqueuer saw the empty tail and already set its own head.
        let _ = self.head.compare_exchange(
            start,
            bump(start, NIL),
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        true
    }

    /// The slots from head to tail (quiescent use), or a broken invariant.
    pub fn walk<L: Links>(&self, links: &L, limit: usize) -> Result<Vec<u32>, String> {
        let mut out = Vec::new();
        let mut cur = slot(self.head());
        while cur != NIL {
            if out.len() > limit {
                return Err(format!("queue longer than {limit} slots: a cycle?"));
            }
            out.push(cur);
            cur = links.next(cur).load(Ordering::Acquire);
        }
        if out.last().copied().unwrap_or(NIL) != slot(self.tail()) {
            return Err("the last slot reachable from head is not the tail".into());
        }
        Ok(out)
    }
}

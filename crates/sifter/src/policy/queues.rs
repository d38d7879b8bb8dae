//! Queue-based policies: Mobius (two lock-free FIFO queues in rotation, SIEVE semantics),
//! CLOCK (one lock-free queue, FIFO-Reinsertion) and FIFO (one lock-free queue).
//!
//! # Mobius (Dong, Wang, Jiang, Feng, "Mobius", POMACS/SIGMETRICS 2025, §4 and App. A–B)
//!
//! ```text
//! insert(x):  x.visited = 0; enqueue x at the tail of Q[active]
//! hit(x):     if !x.visited { x.visited = 1 }          (no lock, no RMW)
//! evict():    loop (bounded, no recursion):
//!   A = Q[active], D = Q[!active]; start = A.head
//!   scan from start while nodes are visited (consecutive detection), up to the first
//!   unvisited (or removed) node `cur`:
//!     cur has a successor:   CAS A.head: start -> cur.next       (detaches start..=cur at once)
//!                            relink the visited run start..cur-1 to D's tail in ONE enqueue,
//!                            bits cleared; `cur` is the victim
//!     cur is A's last node:  if a visited run precedes it, detach just the run (relink to D);
//!                            if cur is alone, take it with the last-node protocol (victim)
//!   every node to the end was visited: switch queues (CAS active), the winner clears the
//!   bits of the scanned nodes (they stay at the front of the now-dormant queue, as SIEVE's
//!   hand wraps to the tail)
//! ```
//!
//! `consecutive_detection = false` is the paper's "Mobius-w/d" ablation: visited nodes are
//! detached and relinked one at a time.
//!
//! # Fixes of the published code (see `../shared/design/reference-implementations.md` §1.7–1.9)
//!
//! * ABA-free head: a relinked item gets a *new* queue node; see `raw/queue.rs`.
//! * `next` is atomic with Release/Acquire publication.
//! * No recursion: one loop, bounded attempts with backoff and `yield`; when both queues are
//!   down to single nodes the last-node protocol still evicts, and an empty cache returns
//!   `None` instead of spinning.
//! * A candidate is always evicted (entries are never pinned: readers clone values under an
//!   epoch guard), so nothing is dropped from the queues; a removed entry is a candidate too,
//!   and its memory is reclaimed when the scan reaches it.
//! * Size is not kept here: the cache counts what enters and leaves the policy exactly.
//!
//! CLOCK and FIFO use the same machinery on one queue: CLOCK relinks visited runs to the tail of
//! the same queue (and, when everything to the end is visited, clears the bits in place, like
//! the hand wrapping); FIFO always takes the head.

use crate::raw::queue::{QNode, Queue, Reclaim};
use crate::sync::{yield_now, AtomicBool, AtomicUsize, Ordering};
use crossbeam_utils::{Backoff, CachePadded};
use std::ptr;

/// What the queues need from an item.
pub(crate) trait QueueItem: Sized {
    /// The item's embedded node (its first queue position), whose `item` field points back to
    /// the item.
    ///
    /// # Safety
    /// `this` is a valid item.
    unsafe fn embedded_node(this: *const Self) -> *mut QNode<Self>;
    /// The SIEVE/CLOCK reference bit.
    fn visited(&self) -> &AtomicBool;
    /// False once the item was removed or replaced (it is then evicted without a second chance).
    fn is_live(&self) -> bool;
}

/// Which queue discipline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Always evict the oldest.
    Fifo,
    /// One queue; visited items are reinserted at the tail with the bit cleared.
    Clock,
    /// Two queues in rotation.
    Mobius {
        /// Detach visited runs in one CAS (true) or one node at a time (false).
        consecutive: bool,
    },
}

/// Attempts per `evict` call before giving up (the caller then lets the cache overshoot until
/// its next insert). Each failed attempt backs off; after `YIELD_AFTER` it yields the CPU.
#[cfg(not(loom))]
const MAX_ATTEMPTS: usize = 4096;
#[cfg(not(loom))]
const YIELD_AFTER: usize = 16;
// Small bounds under loom, so the model explores the give-up path too.
#[cfg(loom)]
const MAX_ATTEMPTS: usize = 5;
#[cfg(loom)]
const YIELD_AFTER: usize = 0;

/// The queue structure of Mobius, CLOCK or FIFO.
#[derive(Debug)]
pub(crate) struct Queues<T> {
    q: [Queue<T>; 2],
    /// Index of the active queue (0 or 1); only Mobius switches it, with a CAS.
    active: CachePadded<AtomicUsize>,
    mode: Mode,
}

/// Outcome of one scan attempt.
enum Step<T> {
    Victim(*const T),
    Retry,
    Empty,
}

impl<T: QueueItem> Queues<T> {
    pub fn new(mode: Mode) -> Self {
        Queues {
            q: [Queue::default(), Queue::default()],
            active: CachePadded::new(AtomicUsize::new(0)),
            mode,
        }
    }

    /// Enqueues a new item (the policy now holds a link to it).
    ///
    /// # Safety
    /// `item` was never inserted before (its embedded node is enqueued at most once) and stays
    /// allocated until `evict` hands it back; the caller is pinned.
    pub unsafe fn insert(&self, item: *const T) {
        // Relaxed: any queue is a correct place for a new item; `active` only steers it.
        let w = self.active.load(Ordering::Relaxed);
        // SAFETY: valid item; its embedded node has never been enqueued (one insert per item).
        let n = unsafe { T::embedded_node(item) };
        // SAFETY: `n` is fresh and private, its `next` is null.
        unsafe { self.q[w].enqueue_chain(n, n) };
    }

    /// Detaches one victim and returns its item (the policy's link to it is now the caller's),
    /// or `None` if the queues are empty or no victim was found within the attempt bound.
    ///
    /// # Safety
    /// `r` is the caller's epoch guard (pinned for the whole call).
    pub unsafe fn evict<R: Reclaim>(&self, r: &R) -> Option<*const T> {
        let backoff = Backoff::new();
        for attempt in 0..MAX_ATTEMPTS {
            // SAFETY: forwarded from the caller.
            match unsafe { self.try_evict(r) } {
                Step::Victim(v) => return Some(v),
                Step::Empty => return None,
                Step::Retry => {
                    if attempt >= YIELD_AFTER {
                        yield_now();
                    } else {
                        backoff.spin();
                    }
                }
            }
        }
        None
    }

    fn queues(&self) -> (usize, &Queue<T>, &Queue<T>) {
        match self.mode {
            Mode::Mobius { .. } => {
                // Acquire: pairs with the AcqRel switch CAS, so the switcher's bit clearing
                // happened before we scan the queue it made active.
                let w = self.active.load(Ordering::Acquire);
                (w, &self.q[w], &self.q[1 - w])
            }
            _ => (0, &self.q[0], &self.q[0]),
        }
    }

    /// One scan from the active head.
    ///
    /// # Safety
    /// As `evict`.
    unsafe fn try_evict<R: Reclaim>(&self, r: &R) -> Step<T> {
        let (w, a, d) = self.queues();
        let start = a.head();
        if start.is_null() {
            if let Mode::Mobius { .. } = self.mode {
                if !d.head().is_null() {
                    self.switch(w);
                    return Step::Retry;
                }
            }
            // Empty, unless an enqueue into an empty queue is between its two steps.
            let pending = !a.tail().is_null() || !d.tail().is_null();
            return if pending { Step::Retry } else { Step::Empty };
        }
        let one_at_a_time = matches!(self.mode, Mode::Mobius { consecutive: false });
        let mut cur = start;
        let mut run_end: *mut QNode<T> = ptr::null_mut();
        loop {
            // SAFETY: `cur` was reached from the head while we are pinned; detached nodes are
            // only retired through the epoch, so it is still allocated.
            let node = unsafe { &*cur };
            // SAFETY: an item outlives every queue node that points to it (the cache frees
            // an entry only after the policy gave up its link, i.e. after it was detached).
            let item = unsafe { &*node.item };
            // Acquire: pairs with the Release link in `enqueue_chain`.
            let next = node.next.load(Ordering::Acquire);
            // Relaxed: the bit is a hint; a race with a hit only costs one second chance.
            let keep =
                self.mode != Mode::Fifo && item.is_live() && item.visited().load(Ordering::Relaxed);
            if keep {
                if next.is_null() {
                    // Everything from `start` to the end is visited.
                    if a.head() != start {
                        return Step::Retry;
                    }
                    match self.mode {
                        Mode::Mobius { .. } => {
                            if self.switch(w) {
                                // SAFETY: the chain start..=cur was reachable and its links
                                // never change; we are pinned.
                                unsafe { clear_bits(start, cur) };
                            }
                        }
                        // The hand wraps: clear in place, the next pass finds a victim.
                        // SAFETY: as above.
                        _ => unsafe { clear_bits(start, cur) },
                    }
                    return Step::Retry;
                }
                if one_at_a_time {
                    // Mobius-w/d: move this single visited node, then rescan.
                    if a.detach(start, next) {
                        // SAFETY: we own the detached `start` (== cur).
                        unsafe { self.relink(start, start, d, r) };
                    }
                    return Step::Retry;
                }
                run_end = cur;
                cur = next;
                continue;
            }
            // `cur` is the victim candidate.
            if !next.is_null() {
                if !a.detach(start, next) {
                    return Step::Retry;
                }
                if !run_end.is_null() {
                    // SAFETY: we own start..=cur now.
                    unsafe { self.relink(start, run_end, d, r) };
                }
                // SAFETY: `cur` is detached and ours; released once.
                unsafe { r.release_node(cur) };
                return Step::Victim(node.item);
            }
            // `cur` is the last node of the active queue.
            if !run_end.is_null() {
                if a.detach(start, cur) {
                    // SAFETY: we own start..=run_end.
                    unsafe { self.relink(start, run_end, d, r) };
                }
                return Step::Retry;
            }
            if a.take_last(cur) {
                // SAFETY: take_last made `cur` ours.
                unsafe { r.release_node(cur) };
                return Step::Victim(node.item);
            }
            return Step::Retry;
        }
    }

    /// Makes the other queue active; true if this thread did it.
    fn switch(&self, w: usize) -> bool {
        // AcqRel: orders the winner's bit clearing (after) with scanners' Acquire loads.
        self.active.compare_exchange(w, 1 - w, Ordering::AcqRel, Ordering::Relaxed).is_ok()
    }

    /// Moves the detached run `first..=last` to the tail of `to` with new nodes (so no node is
    /// ever enqueued twice), clearing the items' bits, and retires the old nodes.
    ///
    /// # Safety
    /// The run is detached and owned by the caller; `r` is its pinned guard.
    unsafe fn relink<R: Reclaim>(
        &self,
        first: *mut QNode<T>,
        last: *mut QNode<T>,
        to: &Queue<T>,
        r: &R,
    ) {
        let mut new_first: *mut QNode<T> = ptr::null_mut();
        let mut new_last: *mut QNode<T> = ptr::null_mut();
        let mut cur = first;
        loop {
            // SAFETY: owned, allocated run.
            let node = unsafe { &*cur };
            // SAFETY: the item outlives its queue nodes (see try_evict).
            unsafe { (*node.item).visited().store(false, Ordering::Relaxed) };
            let n = QNode::alloc(node.item);
            if new_last.is_null() {
                new_first = n;
            } else {
                // Relaxed: the chain is private until `enqueue_chain` publishes it (Release).
                // SAFETY: `new_last` is our private fresh node.
                unsafe { (*new_last).next.store(n, Ordering::Relaxed) };
            }
            new_last = n;
            let next = node.next.load(Ordering::Acquire);
            // SAFETY: detached, owned, released once; readers are protected by the epoch.
            unsafe { r.release_node(cur) };
            if cur == last {
                break;
            }
            cur = next;
        }
        // SAFETY: private fresh chain; we are pinned.
        unsafe { to.enqueue_chain(new_first, new_last) };
    }

    /// Every item in the queues, head to tail, active queue first (quiescent use only).
    ///
    /// # Safety
    /// No concurrent operation.
    pub unsafe fn items(&self, limit: usize) -> Result<Vec<*const T>, String> {
        let (w, _, _) = self.queues();
        let mut out = Vec::new();
        let order = if matches!(self.mode, Mode::Mobius { .. }) { vec![w, 1 - w] } else { vec![0] };
        for i in order {
            // SAFETY: forwarded.
            for n in unsafe { self.q[i].walk(limit)? } {
                // SAFETY: quiescent, allocated.
                out.push(unsafe { (*n).item });
            }
        }
        Ok(out)
    }

    /// Head chains (node address and item) and tails, for loom failure messages.
    ///
    /// # Safety
    /// Quiescent; nodes allocated.
    #[cfg(loom)]
    pub unsafe fn debug_state(&self) -> String
    where
        T: std::fmt::Debug,
    {
        let mut s = String::new();
        for q in &self.q {
            let mut c = q.head();
            s.push_str("[");
            let mut n = 0;
            while !c.is_null() && n < 10 {
                // SAFETY: per the contract.
                unsafe { s.push_str(&format!("{:p}:{:?} ", c, &*(*c).item)) };
                c = unsafe { (*c).next.load(Ordering::Acquire) };
                n += 1;
            }
            let t = q.tail();
            if t.is_null() {
                s.push_str("] tail null; ");
            } else {
                // SAFETY: per the contract.
                unsafe {
                    s.push_str(&format!(
                        "] tail {:p}:{:?} next {:p}; ",
                        t,
                        &*(*t).item,
                        (*t).next.load(Ordering::Acquire)
                    ))
                };
            }
        }
        s
    }

    /// Removes every node (exclusive access) and returns the items; frees the nodes.
    #[cfg_attr(loom, allow(dead_code))]
    pub fn drain(&mut self) -> Vec<*const T> {
        let mut out = Vec::new();
        for q in &mut self.q {
            for n in q.take_all() {
                // SAFETY: exclusive access; the node is allocated and now unreachable.
                let (item, heap) = unsafe { ((*n).item, (*n).heap) };
                if heap {
                    // SAFETY: a heap node from QNode::alloc, freed once.
                    drop(unsafe { Box::from_raw(n) });
                }
                out.push(item);
            }
        }
        out
    }
}

/// Clears the visited bits of `first..=last` (following `next`).
///
/// # Safety
/// `last` is reachable from `first`; the caller is pinned.
unsafe fn clear_bits<T: QueueItem>(first: *mut QNode<T>, last: *mut QNode<T>) {
    let mut cur = first;
    while !cur.is_null() {
        // SAFETY: reachable nodes are allocated while we are pinned; items outlive nodes.
        let node = unsafe { &*cur };
        // SAFETY: items outlive their queue nodes. Relaxed: a hint bit.
        unsafe { (*node.item).visited().store(false, Ordering::Relaxed) };
        if cur == last {
            break;
        }
        cur = node.next.load(Ordering::Acquire);
    }
}

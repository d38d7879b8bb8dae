//! Queue-based policies: Mobius (two lock-free FIFO queues in rotation, SIEVE semantics),
//! CLOCK (one lock-free queue, FIFO-Reinsertion) and FIFO (one lock-free queue), over slot
//! numbers.
//!
//! # Mobius (Dong, Wang, Jiang, Feng, "Mobius", POMACS/SIGMETRICS 2025, §4 and App. A–B)
//!
//! ```text
//! insert(x):  x.visited = 0; enqueue x at the tail of Q[active]
//! hit(x):     if !x.visited { x.visited = 1 }          (no lock, no RMW)
//! evict():    loop (bounded, no recursion):
//!   A = Q[active], D = Q[!active]; start = A.head
//!   scan from start while slots are visited (consecutive detection), up to the first
//!   unvisited (or removed) slot `cur`:
//!     cur has a successor:   CAS A.head: start -> cur.next       (detaches start..=cur at once)
//!                            re-enqueue the visited run start..cur-1 at D's tail in ONE
//!                            enqueue, bits cleared; `cur` is the victim
//!     cur is A's last slot:  if a visited run precedes it, detach just the run (to D);
//!                            if cur is alone, take it with the last-node protocol (victim)
//!   every slot to the end was visited: switch queues (CAS active), the winner clears the
//!   bits of the scanned slots (they stay at the front of the now-dormant queue, as SIEVE's
//!   hand wraps to the tail)
//! ```
//!
//! `consecutive_detection = false` is the paper's "Mobius-w/d" ablation: visited slots are
//! detached and re-enqueued one at a time.
//!
//! # Fixes of the published code (see `../shared/design/reference-implementations.md` §1.7–1.9)
//!
//! * ABA-free head and tail: versioned words, see `raw/queue.rs`; a slot is re-enqueued as it
//!   is (the slot is the node), so a second chance allocates nothing.
//! * `next` is atomic with Release/Acquire publication.
//! * No recursion: one loop, bounded attempts with backoff and `yield`; when both queues are
//!   down to single slots the last-node protocol still evicts, enqueues and takes are helped
//!   along by whoever meets them half done, and an empty cache returns `None`.
//! * A candidate is always evicted (readers never pin slots: they are protected by epochs), so
//!   nothing is dropped from the queues; a removed slot is a candidate at once.
//!
//! CLOCK and FIFO use the same machinery on one queue: CLOCK re-enqueues visited runs at the
//! tail of the same queue (and, when everything to the end is visited, clears the bits in
//! place, like the hand wrapping); FIFO always takes the head.

pub(crate) use crate::raw::queue::{link_private, reset};
use crate::raw::queue::{slot, Links, Queue, NIL, TAKEN};
use crate::sync::{AtomicU8, AtomicUsize, Backoff, Ordering};
use crossbeam_utils::CachePadded;

/// What the queues need from the slots.
pub(crate) trait Nodes: Links {
    /// The SIEVE/CLOCK reference bit (0 or 1).
    fn visited(&self, slot: u32) -> &AtomicU8;
    /// S3-FIFO's mark of an entry that has been in main (see `Slot::place`).
    fn place(&self, slot: u32) -> &AtomicU8;
    /// False once the slot's entry was removed or replaced: evicted without a second chance.
    fn is_live(&self, slot: u32) -> bool;
    /// True once the slot's entry was unlinked from the index (removed or replaced): it stays
    /// unlinked, so its holder may retire it. Unlike [`Nodes::is_live`] this is exact and
    /// ordered (Acquire: after the unlinking).
    fn is_dead(&self, slot: u32) -> bool;
    /// Whether the slot is [live](Nodes::is_live) with a reference count (bit) of at least
    /// `at_least` (Relaxed, a hint): a scan's keep decision, from one slot address.
    #[inline]
    fn marked(&self, slot: u32, at_least: u8) -> bool {
        // Relaxed: see `is_live`; the count is a hint.
        self.is_live(slot) && self.visited(slot).load(Ordering::Relaxed) >= at_least
    }
    /// The number of slots (bounds a scan).
    fn count(&self) -> usize;
    /// A hint that `slot` will be scanned soon (the next head after an eviction).
    #[inline]
    fn prefetch(&self, _slot: u32) {}
}

/// Which queue discipline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Always evict the oldest.
    Fifo,
    /// One queue; visited slots are re-enqueued at the tail with the bit cleared.
    Clock,
    /// NbQ-CLOCK: Generalized CLOCK with 8-bit counters circulating through one queue;
    /// `batched`: visited runs are re-enqueued in one enqueue (the report's batched
    /// re-insert), else one at a time.
    NbqClock { batched: bool },
    /// Two queues in rotation.
    Mobius {
        /// Detach visited runs in one CAS (true) or one slot at a time (false).
        consecutive: bool,
    },
}

/// Attempts per `evict` call before giving up (the caller decides what then).
#[cfg(not(loom))]
const MAX_ATTEMPTS: usize = 256;
#[cfg(loom)]
const MAX_ATTEMPTS: usize = 4;

/// The queue structure of Mobius, CLOCK or FIFO.
#[derive(Debug)]
pub(crate) struct Queues {
    q: [Queue; 2],
    /// Index of the active queue (0 or 1); only Mobius switches it, with a CAS.
    active: CachePadded<AtomicUsize>,
    mode: Mode,
}

/// Outcome of one scan attempt.
enum Step {
    /// Victims are in the caller's [`Taken`].
    Victim,
    Retry,
    /// The queue grew at its tail (the caller's `at_tail` enqueued its entries): scan again
    /// at once.
    Rescan,
    Empty,
}

/// Victims detached by one [`Queues::evict_many`]: `slots[..len]`.
#[derive(Debug, Default)]
pub(crate) struct Taken {
    pub slots: [u32; 8],
    pub len: usize,
}

impl Queues {
    pub fn new(mode: Mode) -> Self {
        Queues { q: [Queue::default(), Queue::default()], active: Default::default(), mode }
    }

    /// Enqueues `s` (the caller's, in no queue): the policy now holds it.
    pub fn insert<N: Nodes>(&self, n: &N, s: u32) {
        reset(n, s);
        self.insert_chain(n, s, s);
    }

    /// Enqueues the chain `first..=last` of new slots (each [`reset`], linked with
    /// [`link_private`], the caller's): the policy now holds them.
    pub fn insert_chain<N: Nodes>(&self, n: &N, first: u32, last: u32) {
        // Relaxed: any queue is a correct place for new slots; `active` only steers them.
        let w = self.active.load(Ordering::Relaxed);
        self.q[w].enqueue_chain(n, first, last);
    }

    /// Detaches up to `want` (1–8) victims in one scan and one head CAS into `out` (the policy
    /// no longer holds them); false if the queues are empty or no victim was found within the
    /// attempt bound. The victims are the first `want` the policy would evict one at a time,
    /// in order; visited slots met before the last of them get their pass as usual (one
    /// re-enqueue for all of them).
    ///
    /// `at_tail` is called when a scan reaches the last slot of the active queue, before the
    /// scan decides anything there (whether that slot is the last one matters: a visited
    /// queue to its end switches Mobius's queues, and the last slot is taken by another
    /// protocol): the caller enqueues the new entries it holds back in a chain, and says
    /// whether it did (the scan then starts again, with them at the tail). So no scan decides
    /// at a tail that the caller's new entries have already passed (the order is still not
    /// quite the one-at-a-time one: a run re-enqueued or a switch made earlier in the chain's
    /// life comes before it).
    #[inline(always)]
    pub fn evict_many<N: Nodes>(
        &self,
        n: &N,
        want: usize,
        out: &mut Taken,
        mut at_tail: impl FnMut() -> bool,
    ) -> bool {
        debug_assert!((1..=out.slots.len()).contains(&want));
        let mut backoff = Backoff::default();
        for _ in 0..MAX_ATTEMPTS {
            match self.try_evict(n, want, out, &mut at_tail) {
                Step::Victim => return true,
                Step::Empty => return false,
                Step::Retry => backoff.snooze(),
                Step::Rescan => {}
            }
        }
        false
    }

    #[inline(always)]
    fn queues(&self) -> (usize, &Queue, &Queue) {
        match self.mode {
            Mode::Mobius { .. } => {
                // Acquire: pairs with the AcqRel switch CAS, so the switcher's bit clearing
                // is visible before we scan (a hint only: the bits are not synchronised data).
                let w = self.active.load(Ordering::Acquire);
                (w, &self.q[w], &self.q[1 - w])
            }
            _ => (0, &self.q[0], &self.q[0]),
        }
    }

    /// One scan from the active head, for up to `want` victims (into `out`).
    #[inline(always)]
    fn try_evict<N: Nodes>(
        &self,
        n: &N,
        want: usize,
        out: &mut Taken,
        at_tail: &mut impl FnMut() -> bool,
    ) -> Step {
        let mobius = matches!(self.mode, Mode::Mobius { .. });
        let (w, a, d) = self.queues();
        let hw = a.head();
        let start = slot(hw);
        if start == NIL {
            if mobius && slot(d.head()) != NIL {
                self.switch(w);
                return Step::Retry;
            }
            // Empty, unless a take is finishing (help it).
            if slot(a.tail()) != NIL {
                a.tail_settled(n);
                return Step::Retry;
            }
            return Step::Empty;
        }
        let one_at_a_time = matches!(
            self.mode,
            Mode::Mobius { consecutive: false } | Mode::NbqClock { batched: false }
        );
        // Visited runs closed by a victim after them (first, last), the run still open, the
        // victims found and the successor of the last one (the new head).
        let mut runs = [(NIL, NIL); 8];
        let mut closed = 0;
        let (mut run_first, mut run_end) = (NIL, NIL);
        let (mut found, mut after) = (0, NIL);
        let mut cur = start;
        for _ in 0..n.count() + 1 {
            // Acquire: pairs with the Release link in `enqueue_chain`.
            let next = slot(n.next(cur).load(Ordering::Acquire));
            if next == NIL && at_tail() {
                return Step::Rescan;
            }
            if next == TAKEN {
                if found > 0 {
                    break; // detach what we have (the CAS checks the view)
                }
                // Being taken by another evictor (or a stale view): help, then rescan.
                a.tail_settled(n);
                return Step::Retry;
            }
            // Relaxed: the bit is a hint; a race with a hit only costs one second chance.
            let keep = self.mode != Mode::Fifo && n.marked(cur, 1);
            if keep {
                if found > 0 && (next == NIL || one_at_a_time) {
                    break; // this run stays in front, for the next scan
                }
                if next == NIL {
                    // Everything from `start` to the end is visited.
                    if a.head() != hw {
                        return Step::Retry;
                    }
                    if !mobius || self.switch(w) {
                        // Mobius: the switch winner; CLOCK: the hand wraps. Clear in place.
                        self.age(n, start, cur);
                    }
                    return Step::Retry;
                }
                if one_at_a_time {
                    if a.tail_settled(n) && a.detach(hw, next) {
                        self.requeue(n, start, start, d);
                    }
                    return Step::Retry;
                }
                if run_first == NIL {
                    run_first = cur;
                }
                run_end = cur;
                cur = next;
                continue;
            }
            // `cur` is a victim candidate.
            if next != NIL {
                if run_first != NIL {
                    runs[closed] = (run_first, run_end);
                    closed += 1;
                    (run_first, run_end) = (NIL, NIL);
                }
                out.slots[found] = cur;
                found += 1;
                after = next;
                if found == want {
                    break;
                }
                cur = next;
                continue;
            }
            if found > 0 {
                break; // `cur`, the last slot, waits for the next scan
            }
            // `cur` is the last slot of the active queue.
            if run_first != NIL {
                if a.tail_settled(n) && a.detach(hw, cur) {
                    self.requeue(n, start, run_end, d);
                }
                return Step::Retry;
            }
            if a.take_last(n, hw) {
                out.slots[0] = cur;
                out.len = 1;
                return Step::Victim;
            }
            return Step::Retry;
        }
        if found == 0 {
            // Longer than the arena: a stale view (links changed under the scan).
            return Step::Retry;
        }
        // Detach `start..after` (every victim and the runs between them) in one CAS.
        let Ok(chain) = a.detach_batch(n, hw, after, &runs[..closed]) else {
            return Step::Retry;
        };
        // The next eviction starts its scan at `after`: fetch its line meanwhile.
        n.prefetch(after);
        if let Some((first, last)) = chain {
            self.requeue(n, first, last, d);
        }
        out.len = found;
        Step::Victim
    }

    /// Collects removed slots (replaced or removed entries, still queued until a scan reaches
    /// them) from the fronts of the queues without evicting anything: from each queue (Mobius:
    /// the dormant one first, where replaced hot entries wait for the next switch, then the
    /// active one) detaches up to `max` slots from its head, pushes the removed ones to `dead`
    /// (now the caller's, to retire) and puts the others back, in their order, reference bits
    /// and counters untouched. Without `rotate` they go back in front of the head, so the
    /// order is as if the removed slots had been unlinked where they were (if an eviction
    /// moved the head meanwhile, they go to the tail instead: they come round later than they
    /// would have). With `rotate` they go to the tail, so that successive sweeps walk all of
    /// each queue and find removed slots wherever they are — updates of random keys leave
    /// them everywhere, not only near the heads — at the price of a pass for the live slots
    /// swept, without a look at their bits (the caller's last resort before evicting live
    /// entries for slots, see `Cache::alloc_slow`). Mobius's dormant queue always rotates: its
    /// order only matters from the next switch on, and every slot in it has had its pass.
    pub fn sweep<N: Nodes>(&self, n: &N, max: usize, dead: &mut Vec<u32>, rotate: bool) {
        let (_, a, d) = self.queues();
        if !std::ptr::eq(a, d) {
            sweep_queue(d, n, max, dead, true);
        }
        sweep_queue(a, n, max, dead, rotate);
    }

    /// The pass a visited run gets: CLOCK and Mobius clear the reference bits, NbQ-CLOCK
    /// lowers the counters by one.
    fn age<N: Nodes>(&self, n: &N, first: u32, last: u32) {
        if matches!(self.mode, Mode::NbqClock { .. }) {
            walk_run(n, first, last, |b| {
                // Relaxed: a hint (see `try_evict`). A racing hit's increment may be lost or
                // land after ours: a pass more or less.
                let c = b.load(Ordering::Relaxed);
                if c != 0 {
                    b.store(c - 1, Ordering::Relaxed);
                }
            });
        } else {
            clear_bits(n, first, last);
        }
    }

    /// Makes the other queue active; true if this thread did it.
    fn switch(&self, w: usize) -> bool {
        // AcqRel: orders the winner's bit clearing after, and scanners' Acquire loads.
        self.active.compare_exchange(w, 1 - w, Ordering::AcqRel, Ordering::Relaxed).is_ok()
    }

    /// Re-enqueues the detached run `first..=last` (the caller's) at the tail of `to`, bits
    /// cleared: the run's own links stay, its last link is cut.
    fn requeue<N: Nodes>(&self, n: &N, first: u32, last: u32, to: &Queue) {
        self.age(n, first, last);
        reset(n, last);
        to.enqueue_chain(n, first, last);
    }

    /// Every slot in the queues, head to tail, active queue first (quiescent use only).
    pub fn items<N: Nodes>(&self, n: &N) -> Result<Vec<u32>, String> {
        let (w, _, _) = self.queues();
        let mut out = Vec::new();
        let order: &[usize] =
            if matches!(self.mode, Mode::Mobius { .. }) { &[w, 1 - w][..] } else { &[0][..] };
        for &i in order {
            out.extend(self.q[i].walk(n, n.count())?);
        }
        Ok(out)
    }

    /// Head and tail words of each queue, for failure messages.
    pub fn debug_state(&self) -> String {
        self.q
            .iter()
            .map(|q| format!("[head {:#x} tail {:#x}]", q.head(), q.tail()))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// [`Queues::sweep`] on one queue (also S3-FIFO's); `rotate`: the kept slots go to the tail.
pub(crate) fn sweep_queue<N: Nodes>(
    q: &Queue,
    n: &N,
    max: usize,
    dead: &mut Vec<u32>,
    rotate: bool,
) {
    let Some(d) = q.detach_prefix(n, max) else { return };
    let (mut keep_first, mut keep_last) = (NIL, NIL);
    let mut cur = d.first;
    for _ in 0..d.len {
        // Acquire: as in the scan (the prefix is ours: its links are stable).
        let next = slot(n.next(cur).load(Ordering::Acquire));
        if n.is_dead(cur) {
            dead.push(cur);
        } else {
            // Live, or an insert in flight: back in the queue.
            reset(n, cur);
            if keep_first == NIL {
                keep_first = cur;
            } else {
                link_private(n, keep_last, cur);
            }
            keep_last = cur;
        }
        cur = next;
    }
    // Back where they were (the usual case: nobody evicted meanwhile), else at the tail.
    if keep_first != NIL && (rotate || !q.restore_prefix(n, &d, keep_first, keep_last)) {
        reset(n, keep_last);
        q.enqueue_chain(n, keep_first, keep_last);
    }
}

/// Clears the visited bits of `first..=last` (following `next`; at most `count` slots).
fn clear_bits<N: Nodes>(n: &N, first: u32, last: u32) {
    walk_run(n, first, last, |b| {
        // Relaxed: a hint bit. Test first: no write to lines that need none.
        if b.load(Ordering::Relaxed) != 0 {
            b.store(0, Ordering::Relaxed);
        }
    });
}

/// Applies `f` to the reference byte of each slot of `first..=last` (following `next`; at
/// most `count` slots).
fn walk_run<N: Nodes>(n: &N, first: u32, last: u32, f: impl Fn(&AtomicU8)) {
    let mut cur = first;
    for _ in 0..n.count() {
        if cur == NIL {
            break;
        }
        f(n.visited(cur));
        if cur == last {
            break;
        }
        // Acquire: as in the scan.
        cur = slot(n.next(cur).load(Ordering::Acquire));
        if cur == TAKEN {
            break;
        }
    }
}

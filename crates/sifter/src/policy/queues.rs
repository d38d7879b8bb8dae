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
//!
//! # Lanes
//!
//! A cache of 4,096 entries or more has several *lanes* (one per stripe, at most one per 2,048
//! entries, a power of two): each a whole instance of the policy's queues. A thread enqueues
//! its new entries into its stripe's lane and evicts from that lane, so the queue words and
//! the `next` links a scan reads were mostly written by the same core: with one queue for
//! all, every scan step of one thread read a link the other core had written (at two threads
//! and 10k entries, 18.7 % of the time went to the scan, two thirds of it on that load;
//! docs/BENCHMARKS.md, stop 101). One thread uses one lane, so its order is the one-queue
//! policy's exactly (the simulator's).
//!
//! With lanes, each lane is its own SIEVE (CLOCK, FIFO) over the entries its threads
//! inserted, and evicting for its own inserts keeps a lane's length where it is. Two cases
//! need another lane's evictions, and [`Steer::from`] sends them there (it looks every
//! `LOOK_EVERY` eviction batches of a lane's threads):
//! * a lane whose threads stopped inserting keeps its entries for good: once it received no
//!   new entry for 200 ms and while another lane received its own length's worth, that
//!   lane's threads drain it (its entries are the oldest; the time keeps lanes of preempted
//!   threads from being drained);
//! * a lane emptied by its own evictions stays empty (a thread that starts inserting into a
//!   cache another thread filled evicts its own new entries at once): a lane below half its
//!   share of the entries takes from the longest lane.
//!
//! Lanes are not steered to shares of the insert rate: a lane evicted for another's inserts
//! keeps its own new entries longer than SIEVE's quick demotion would, and steering by
//! rates (stop 101's first form) cost Mobius 1.6 points of hit ratio at two threads and
//! 10k entries, and 8 points with the threads preempted. A lane found empty sends the
//! eviction to the next lane. The lanes' counts are hints (Relaxed), kept only when there is
//! more than one lane; each lane's length is exact at rest, and `validate` checks it.

pub(crate) use crate::raw::queue::{link_private, reset};
use crate::raw::queue::{slot, Links, Queue, NIL, TAKEN};
use crate::sync::{AtomicU8, AtomicUsize, Backoff, Ordering};
use crossbeam_utils::CachePadded;
// The lanes' counts are hints outside the model (as S3-FIFO's): plain atomics under loom too.
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize as Count};

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

/// How often (in eviction batches of a lane's threads) a lane looks at the other lanes to
/// decide where its evictions come from (see [`Steer::from`]).
const LOOK_EVERY: u32 = 32;

/// Fewest new entries into a lane, with none into another lane meanwhile, after which that
/// other lane counts as idle (see [`Steer::from`]); more when the lane is longer.
const IDLE_AFTER: u64 = 1024;

/// And the least time. Threads preempted for a while are not idle: at 16 threads on 2 cores a
/// lane's 4 threads may all wait for a core for tens of milliseconds, and draining their
/// lanes then cost Mobius 8 points of hit ratio at 10k entries (stop 101).
const IDLE_TIME: std::time::Duration = std::time::Duration::from_millis(200);

/// The queue structure of Mobius, CLOCK or FIFO: one or more *lanes*, each a whole instance of
/// the policy's queues (see the module docs, "Lanes").
#[derive(Debug)]
pub(crate) struct Queues {
    lanes: Box<[Queues1]>,
    steer: Steer,
}

/// The lanes' counts, and where each lane's threads evict from (see the module docs, "Lanes";
/// also S3-FIFO's).
#[derive(Debug)]
pub(crate) struct Steer {
    tallies: Box<[CachePadded<Tally>]>,
    /// The number of lanes minus one (a power of two minus one).
    mask: usize,
    /// The lanes' clock: `mark_time`s are nanoseconds since this.
    born: std::time::Instant,
    /// How long a lane must have received no new entry to count as idle ([`IDLE_TIME`]).
    idle_nanos: u64,
}

/// A lane's counts (Relaxed throughout: hints that only steer which lane an eviction takes
/// from; its length, `inserted - removed`, is exact at rest and checked there by `validate`).
#[derive(Debug)]
struct Tally {
    /// Slots enqueued into the lane, ever (new entries, and victims put back; its insert rate,
    /// by differences).
    inserted: AtomicU64,
    /// Slots taken out of the lane, ever: the lane holds `inserted - removed`.
    removed: AtomicU64,
    /// Eviction batches of this lane's threads since they last looked at the other lanes.
    since: AtomicU32,
    /// The lane those threads evict from until they look again.
    from: Count,
    /// Every lane's `inserted` as this lane's threads saw it at their last look.
    seen: Box<[AtomicU64]>,
    /// This lane's `inserted` when they last saw each lane's `inserted` change.
    mark: Box<[AtomicU64]>,
    /// And the time then (nanoseconds since `Steer::born`).
    mark_time: Box<[AtomicU64]>,
}

impl Steer {
    /// `lanes`: a power of two.
    pub fn new(lanes: usize) -> Self {
        assert!(lanes.is_power_of_two(), "lanes must be a power of two, not {lanes}");
        let tallies = (0..lanes)
            .map(|i| {
                CachePadded::new(Tally {
                    inserted: AtomicU64::new(0),
                    removed: AtomicU64::new(0),
                    since: AtomicU32::new(0),
                    from: Count::new(i),
                    seen: (0..lanes).map(|_| AtomicU64::new(0)).collect(),
                    mark: (0..lanes).map(|_| AtomicU64::new(0)).collect(),
                    mark_time: (0..lanes).map(|_| AtomicU64::new(0)).collect(),
                })
            })
            .collect();
        Steer {
            tallies,
            mask: lanes - 1,
            born: std::time::Instant::now(),
            idle_nanos: IDLE_TIME.as_nanos() as u64,
        }
    }

    /// The number of lanes.
    pub fn lanes(&self) -> usize {
        self.mask + 1
    }

    /// The lane of a thread that passes `lane` (its stripe's or thread's number).
    #[inline(always)]
    pub fn lane(&self, lane: usize) -> usize {
        lane & self.mask
    }

    /// Whether the lanes are counted: with one lane nothing is steered, so nothing is counted
    /// (no read-modify-write per insert in small caches, which enqueue one entry at a time).
    #[inline(always)]
    pub fn counts(&self) -> bool {
        self.mask != 0
    }

    /// Counts `len` slots into lane `lane`.
    #[inline]
    pub fn added(&self, lane: usize, len: u32) {
        if self.counts() {
            // Relaxed: a count (see `Tally`).
            self.tallies[lane].inserted.fetch_add(len as u64, Ordering::Relaxed);
        }
    }

    /// Counts `len` slots out of lane `lane`.
    #[inline]
    pub fn removed(&self, lane: usize, len: usize) {
        if self.counts() {
            // Relaxed: a count (see `Tally`).
            self.tallies[lane].removed.fetch_add(len as u64, Ordering::Relaxed);
        }
    }

    /// The slots lane `lane` holds by its counts (exact at rest; a hint otherwise; 0 when
    /// not [counted](Steer::counts)).
    pub fn len(&self, lane: usize) -> i64 {
        let t = &self.tallies[lane];
        // Relaxed: see `Tally`.
        let removed = t.removed.load(Ordering::Relaxed);
        t.inserted.load(Ordering::Relaxed).wrapping_sub(removed) as i64
    }

    /// The first lane a thread of lane `me` evicts from (the others follow in order, when it
    /// has no victim): its own, unless at the last of its lane's looks (every [`LOOK_EVERY`]
    /// eviction batches) another lane was idle — it received no new entry for [`IDLE_TIME`]
    /// and while this lane received as many as it holds, at least [`IDLE_AFTER`]: its
    /// entries are the oldest, the longest idle lane is drained — or their own lane held less
    /// than half its share of the entries (an equal share of the lanes that hold any): the
    /// longest lane gives.
    #[inline(always)]
    pub fn from(&self, me: usize) -> usize {
        if self.mask == 0 {
            return 0;
        }
        let t = &self.tallies[me];
        // Relaxed (all): hints. Threads sharing the lane may lose a count (a look comes a
        // little later) or look twice.
        let since = t.since.load(Ordering::Relaxed);
        if since + 1 < LOOK_EVERY {
            t.since.store(since + 1, Ordering::Relaxed);
            return t.from.load(Ordering::Relaxed);
        }
        t.since.store(0, Ordering::Relaxed);
        let from = self.look(me);
        t.from.store(from, Ordering::Relaxed);
        from
    }

    /// See [`Steer::from`].
    #[cold]
    #[inline(never)]
    fn look(&self, me: usize) -> usize {
        let t = &self.tallies[me];
        // The clocks: new entries into this lane (which this lane's threads evict for), and
        // time (a lane of preempted threads receives nothing for a while, but is not idle).
        let clock = t.inserted.load(Ordering::Relaxed);
        let now = self.born.elapsed().as_nanos() as u64;
        let own = self.len(me).max(0) as u64;
        let (mut total, mut active) = (0u64, 0u64);
        let (mut longest, mut longest_len) = (me, 0u64);
        let (mut idle, mut idle_len) = (me, 0u64);
        for j in 0..self.tallies.len() {
            let len = self.len(j).max(0) as u64;
            total += len;
            active += (len > 0 || j == me) as u64;
            if j == me {
                continue;
            }
            if len > longest_len {
                (longest, longest_len) = (j, len);
            }
            // Relaxed (all): hints (see `Tally`). Lane j is idle when it received no new
            // entry for IDLE_TIME while this lane received a lane's worth (at least
            // IDLE_AFTER).
            let ins = self.tallies[j].inserted.load(Ordering::Relaxed);
            if t.seen[j].swap(ins, Ordering::Relaxed) != ins {
                t.mark[j].store(clock, Ordering::Relaxed);
                t.mark_time[j].store(now, Ordering::Relaxed);
            } else if len > idle_len
                && clock.wrapping_sub(t.mark[j].load(Ordering::Relaxed)) >= own.max(IDLE_AFTER)
                && now.saturating_sub(t.mark_time[j].load(Ordering::Relaxed)) >= self.idle_nanos
            {
                (idle, idle_len) = (j, len);
            }
        }
        if idle != me {
            idle
        } else if own * 2 * active < total {
            // Below half its share of the entries: take from the longest lane.
            longest
        } else {
            me
        }
    }
}

/// The queues of one lane.
#[derive(Debug)]
struct Queues1 {
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
    /// The number of lanes.
    #[cfg(test)]
    pub fn lanes(&self) -> usize {
        self.steer.lanes()
    }

    /// `lanes`: a power of two (1: the plain policy).
    pub fn new(mode: Mode, lanes: usize) -> Self {
        Queues { lanes: (0..lanes).map(|_| Queues1::new(mode)).collect(), steer: Steer::new(lanes) }
    }

    /// Enqueues `s` (the caller's, in no queue) into lane `lane` (taken modulo the lane
    /// count: a thread passes its stripe's number): the policy now holds it.
    pub fn insert<N: Nodes>(&self, n: &N, lane: usize, s: u32) {
        reset(n, s);
        self.insert_chain(n, lane, s, s, 1);
    }

    /// Enqueues the chain `first..=last` of `len` new slots (each [`reset`], linked with
    /// [`link_private`], the caller's) into lane `lane`: the policy now holds them.
    pub fn insert_chain<N: Nodes>(&self, n: &N, lane: usize, first: u32, last: u32, len: u32) {
        let l = self.steer.lane(lane);
        self.lanes[l].insert_chain(n, first, last);
        self.steer.added(l, len);
    }

    /// Detaches up to `want` (1–8) victims into `out` for a thread of lane `lane`, from the
    /// lane [`Steer::from`] says, else from any lane that has one; false if every lane is
    /// empty or gave no victim within the attempt bound. `at_tail`: see
    /// [`Queues1::evict_many`] (called for the thread's own lane only: its gathered entries
    /// go there).
    #[inline(always)]
    pub fn evict_many<N: Nodes>(
        &self,
        n: &N,
        lane: usize,
        want: usize,
        out: &mut Taken,
        mut at_tail: impl FnMut() -> bool,
    ) -> bool {
        let me = self.steer.lane(lane);
        let from = self.steer.from(me);
        for i in 0..self.lanes.len() {
            let j = self.steer.lane(from + i);
            let got = if j == me {
                self.lanes[j].evict_many(n, want, out, &mut at_tail)
            } else {
                self.lanes[j].evict_many(n, want, out, || false)
            };
            if got {
                self.steer.removed(j, out.len);
                return true;
            }
        }
        false
    }

    /// The slot at the head of the queue a thread of lane `lane` scans next (as far as its
    /// own lane says), or NIL: a hint for reading ahead.
    #[inline]
    pub fn front(&self, lane: usize) -> u32 {
        let (_, a, _) = self.lanes[self.steer.lane(lane)].queues();
        slot(a.head())
    }

    /// [`Queues1::sweep`] on every lane: removed slots go to `dead`.
    pub fn sweep<N: Nodes>(&self, n: &N, max: usize, dead: &mut Vec<u32>, rotate: bool) {
        for (j, l) in self.lanes.iter().enumerate() {
            let before = dead.len();
            l.sweep(n, max, dead, rotate);
            self.steer.removed(j, dead.len() - before);
        }
    }

    /// Every slot in the queues, lane by lane (quiescent use only); an error if a lane's
    /// count is not the number of slots it holds.
    pub fn items<N: Nodes>(&self, n: &N) -> Result<Vec<u32>, String> {
        let mut out = Vec::new();
        for (j, l) in self.lanes.iter().enumerate() {
            let items = l.items(n)?;
            let len = self.steer.len(j);
            if self.steer.counts() && len != items.len() as i64 {
                return Err(format!("lane {j} counts {len} slots but holds {}", items.len()));
            }
            out.extend(items);
        }
        Ok(out)
    }

    /// Head and tail words of each queue, for failure messages.
    pub fn debug_state(&self) -> String {
        self.lanes.iter().map(|l| l.debug_state()).collect::<Vec<_>>().join(" | ")
    }
}

impl Queues1 {
    fn new(mode: Mode) -> Self {
        Queues1 { q: [Queue::default(), Queue::default()], active: Default::default(), mode }
    }

    /// Enqueues the chain `first..=last` of new slots (each [`reset`], linked with
    /// [`link_private`], the caller's): the policy now holds them.
    fn insert_chain<N: Nodes>(&self, n: &N, first: u32, last: u32) {
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
    fn evict_many<N: Nodes>(
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
    fn sweep<N: Nodes>(&self, n: &N, max: usize, dead: &mut Vec<u32>, rotate: bool) {
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
    fn items<N: Nodes>(&self, n: &N) -> Result<Vec<u32>, String> {
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
    fn debug_state(&self) -> String {
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Slots for the queues alone: links and reference bits, every slot live.
    struct Slots {
        next: Vec<AtomicU64>,
        bits: Vec<AtomicU8>,
    }

    impl Links for Slots {
        fn next(&self, s: u32) -> &AtomicU64 {
            &self.next[s as usize]
        }
    }

    impl Nodes for Slots {
        fn visited(&self, s: u32) -> &AtomicU8 {
            &self.bits[s as usize]
        }
        fn place(&self, s: u32) -> &AtomicU8 {
            &self.bits[s as usize]
        }
        fn is_live(&self, _: u32) -> bool {
            true
        }
        fn is_dead(&self, _: u32) -> bool {
            false
        }
        fn count(&self) -> usize {
            self.next.len()
        }
    }

    /// A model of two lanes' threads: `rounds` rounds in which lane `l` inserts `rates[l]`
    /// new entries and evicts as many (one at a time), from a cache that starts with lane 0
    /// holding `start0` entries and lane 1 `start1`; returns for each lane how many of its
    /// evictions took another lane's entry, and the lanes' lengths at the end. With
    /// `idle_at_once` a lane may count as idle at once (no `IDLE_TIME`).
    fn run(
        start: [usize; 2],
        rates: [usize; 2],
        rounds: usize,
        idle_at_once: bool,
    ) -> ([usize; 2], [usize; 2]) {
        let n = start[0] + start[1] + 64;
        let slots = Slots {
            next: (0..n).map(|_| AtomicU64::new(NIL as u64)).collect(),
            bits: (0..n).map(|_| AtomicU8::new(0)).collect(),
        };
        let mut q = Queues::new(Mode::Mobius { consecutive: true }, 2);
        if idle_at_once {
            q.steer.idle_nanos = 0;
        }
        let mut lane_of = HashMap::new();
        let mut free: Vec<u32> = (0..n as u32).rev().collect();
        for (l, &k) in start.iter().enumerate() {
            for _ in 0..k {
                let s = free.pop().expect("a free slot");
                q.insert(&slots, l, s);
                lane_of.insert(s, l);
            }
        }
        let mut stolen = [0; 2];
        for _ in 0..rounds {
            for l in 0..2 {
                for _ in 0..rates[l] {
                    let s = free.pop().expect("a free slot");
                    q.insert(&slots, l, s);
                    lane_of.insert(s, l);
                    let mut t = Taken::default();
                    assert!(q.evict_many(&slots, l, 1, &mut t, || false), "no victim");
                    let v = t.slots[0];
                    stolen[l] += (lane_of.remove(&v).expect("a queued slot") != l) as usize;
                    free.push(v);
                }
            }
        }
        assert_eq!(q.items(&slots).expect("consistent lanes").len(), lane_of.len());
        let mut len = [0; 2];
        for &l in lane_of.values() {
            len[l] += 1;
        }
        (stolen, len)
    }

    /// Lanes whose threads insert at the same rate each evict their own entries.
    #[test]
    fn even_lanes_evict_their_own() {
        let (stolen, len) = run([500, 500], [1, 1], 5_000, true);
        assert_eq!(stolen, [0, 0]);
        assert_eq!(len, [500, 500]);
    }

    /// So do lanes of unequal rates: each keeps its length.
    #[test]
    fn uneven_lanes_keep_their_lengths() {
        let (stolen, len) = run([400, 400], [3, 1], 4_000, true);
        assert_eq!((stolen, len), ([0, 0], [400, 400]));
    }

    /// A lane whose threads went idle is drained by the others once their own lane received
    /// its length's worth of new entries (and `IDLE_TIME` passed): its entries are the oldest.
    #[test]
    fn an_idle_lanes_entries_go_first() {
        let (_, len) = run([3_000, 1_000], [0, 1], 5_000, true);
        assert_eq!(len, [0, 4_000]);
        // Not before (the first look finds the lane has not been idle long enough).
        let (_, len) = run([3_000, 1_000], [0, 1], 500, true);
        assert_eq!(len, [3_000, 1_000]);
        // Nor before `IDLE_TIME`: its threads may be waiting for a core.
        let (_, len) = run([3_000, 1_000], [0, 1], 5_000, false);
        assert_eq!(len, [3_000, 1_000]);
    }

    /// A lane below half its share of the entries (its thread started inserting into a cache
    /// another filled) takes from the longest lane until it holds half its share.
    #[test]
    fn a_starved_lane_grows_back() {
        let (stolen, len) = run([1_000, 0], [1, 1], 2_000, true);
        assert!((250..=300).contains(&len[1]), "lane lengths {len:?}, stolen {stolen:?}");
    }
}

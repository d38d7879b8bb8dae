//! S3-FIFO (Yang, Zhang, Qiu, Yue, Vinayak, "FIFO queues are all you need for cache
//! eviction", SOSP'23) on two lock-free queues of slot numbers and a ghost of hash fingerprints.
//!
//! ```text
//! hit:          freq = min(freq + 1, 3)                   (test first: no store at 3; no RMW)
//! insert(x):    if fingerprint(x) in ghost: remove it; x → main (freq 0)
//!               else x → small (freq 0)                   (weight ≥ |small|: → main)
//! update(x):    a hit: the new version x' gets min(freq + 1, 3) and x's queue (x' is a new
//!               node: if x was in main, x' goes to main, see MAIN)
//! evict:        if main's weight > |main| or small is empty: from main, else from small
//!   small:      pop the head h; freq(h) ≥ 2: h → main (freq 0), again
//!                               else: fingerprint(h) → ghost; h is the victim
//!   main:       pop the head h; freq(h) ≥ 1: freq -= 1, h → main's tail, again
//!                               else: h is the victim
//! ```
//!
//! Removed entries (DEAD slots) are victims as soon as they reach a head, without a second
//! chance and without a ghost entry. |small| = ⌊capacity × 0.1⌋ (at least 1), |main| = the rest;
//! the ghost remembers the last ⌊capacity × 0.9⌋ fingerprints evicted from small, like
//! libCacheSim's `S3FIFO.c` (whose simulator twin is `sifter-sim`'s `s3fifo`). One deliberate
//! difference: an entry at least as heavy as |small| goes to main here, where libCacheSim does
//! not admit it. So below 20 entries (|small| ≤ 1) this cache keeps every entry in main, where
//! the simulator's twin, as libCacheSim, caches nothing at all (a miss ratio of exactly 1: a
//! cache of 10–19 entries that stores nothing helps nobody). The one-thread equality with
//! the simulator (`sifter-sim/tests/concurrent_equivalence.rs`) is checked from 60 entries up.
//!
//! The queues are the same Michael–Scott-style queues as Mobius's (`raw/queue.rs`), scanned
//! the way Mobius's consecutive detection scans: the runs of entries at a head that get another
//! pass, and up to 8 victims between them (a batch, ending where the one-at-a-time algorithm
//! would turn to the other queue), are detached with one CAS, and the runs move to main's tail
//! with one enqueue (a lone last entry is taken with the last-node protocol). The slot is the
//! node, so nothing is allocated.
//! In caches of 4,096 entries or more the queues come in lanes, as the queue policies' do
//! (`policy/queues.rs`, "Lanes"): each lane its own small and main queue, a thread's inserts
//! and evictions in its own lane unless the steering sends its evictions elsewhere, the
//! queue weights, the small/main decision and the ghost whole-cache (so a lane whose small
//! queue is empty when small is over its size evicts from its main, as an empty queue does).
//! Queue weights are counted per thread ([`Local`], a record per thread id, written with plain
//! stores: no read-modify-write) and flushed to two shared
//! counters past a threshold (1/16 of the small queue), so inserts and evictions do not all
//! write one shared line; a decision reads the shared counters plus the caller's record —
//! exact with one thread, within a flush threshold per other thread otherwise.

use crate::policy::queues::{reset, sweep_queue, Nodes, Steer, Taken};
use crate::raw::epoch::RECORDS;
use crate::raw::ghost::Ghosts;
use crate::raw::queue::{slot, Queue, NIL, TAKEN};
use crate::sync::{Backoff, Ordering};
use crossbeam_utils::CachePadded;
use std::sync::atomic::AtomicI64;

/// Attempts per `evict` call before giving up (the caller decides what then).
const MAX_ATTEMPTS: usize = 1024;

/// The largest frequency a hit records.
pub(crate) const MAX_FREQ: u8 = 3;

/// Frequency at which a small-queue entry moves to main.
const TO_MAIN: u8 = 2;

/// A slot's `place` once its entry has been in main. An update's new version inherits it
/// ([`Cache::carry_use`](crate::cache::Cache)) and goes to main, with the old version's
/// frequency raised as a hit raises it — as the one-at-a-time algorithm leaves an updated
/// entry of main in main. (An insert gathers into small's chain with its allocation only
/// when a look at its home bucket finds no entry of its key and no alive ghost word of it,
/// `Cache::gathers_early`; the others decide after publication, so with one thread an entry
/// bound for main never waits in small's chain. Until stop 68 an S3-FIFO insert could gather
/// into small before it knew it replaced, and small's scan passed such entries on.)
pub(crate) const MAIN: u8 = 1;

/// The marks of slot `s` as it moves from small to main: it restarts at frequency 0, an entry
/// of main from now on. (Relaxed, both: hints, as a hit's; the slot is the caller's.)
fn enter_main<N: Nodes>(n: &N, s: u32) {
    n.visited(s).store(0, Ordering::Relaxed);
    n.place(s).store(MAIN, Ordering::Relaxed);
}

/// The queue weights as the one-at-a-time algorithm would see them before the next victim of
/// a batch: those before the scan, changed by the runs and victims the scan has passed.
#[derive(Debug, Clone, Copy)]
struct Budget {
    main_cap: i64,
    main: i64,
    small: i64,
}

impl Budget {
    /// Whether the next victim comes from main.
    #[inline]
    fn next_in_main(&self) -> bool {
        self.main > self.main_cap || self.small <= 0
    }

    /// An entry of weight `w` passes from small to main.
    #[inline]
    fn passes_to_main(&mut self, w: i64) {
        self.small -= w;
        self.main += w;
    }

    /// A victim of weight `w` leaves main (`in_main`) or small.
    #[inline]
    fn evicted(&mut self, in_main: bool, w: i64) {
        if in_main {
            self.main -= w;
        } else {
            self.small -= w;
        }
    }
}

/// Outcome of one scan.
enum Scan {
    /// Detached: the victims (in the caller's [`Taken`]) and their weight.
    Victims(i64),
    /// The queue's lone entry, detached; it may deserve another pass.
    Single(u32),
    /// A run was moved; no victim yet.
    Progress,
    Empty,
    Retry,
}

/// One thread's unflushed changes of the queue weights and of the ghost's insertion count.
#[derive(Debug, Default)]
pub(crate) struct Local {
    small: AtomicI64,
    main: AtomicI64,
    ghost: AtomicI64,
}

/// The counters a thread counts in: its own record (`owned`: only this thread writes it, so a
/// plain load and store, no read-modify-write), or the record shared by the threads beyond
/// the first [`RECORDS`] ids (atomic adds).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mine<'a> {
    local: &'a Local,
    owned: bool,
    /// The thread's queue lane.
    lane: usize,
}

impl Mine<'_> {
    /// Adds `d` to counter `c` of this record and, once the record's value reaches `flush` in
    /// magnitude, moves it to the shared counter `shared`; returns the record's value after
    /// the add (before any move).
    #[inline]
    fn add(&self, c: &AtomicI64, d: i64, shared: &AtomicI64, flush: i64) -> i64 {
        // Relaxed (all record and shared counters): steering counters; no memory is published
        // through them. Owned: only this thread writes `c` (thread ids are unique among live
        // threads, and a reused id's previous owner exited — its writes happen before through
        // the id free list's lock), so the loads and stores lose nothing; shared: the RMWs keep
        // it exact.
        let v = if self.owned {
            let v = c.load(Ordering::Relaxed).wrapping_add(d);
            c.store(v, Ordering::Relaxed);
            v
        } else {
            c.fetch_add(d, Ordering::Relaxed).wrapping_add(d)
        };
        if v.abs() >= flush {
            let t = if self.owned {
                c.store(0, Ordering::Relaxed);
                v
            } else {
                c.swap(0, Ordering::Relaxed)
            };
            shared.fetch_add(t, Ordering::Relaxed);
        }
        v
    }
}

/// One lane's queues.
#[derive(Debug, Default)]
struct S3Lane {
    small: Queue,
    main: Queue,
}

/// The S3-FIFO structure.
#[derive(Debug)]
pub(crate) struct S3Fifo {
    /// Each lane's small and main queues (see `policy/queues.rs`, "Lanes").
    lanes: Box<[S3Lane]>,
    steer: Steer,
    /// Weight queued in each (entries, in an entry-bounded cache).
    small_w: CachePadded<AtomicI64>,
    main_w: CachePadded<AtomicI64>,
    /// Queue sizes (10 % / 90 % of the capacity); changed by [`S3Fifo::set_capacity`].
    small_cap: AtomicI64,
    main_cap: AtomicI64,
    /// A thread's delta is flushed to the shared counters when it reaches this.
    flush: i64,
    pub ghost: Ghost,
    /// The first [`RECORDS`] thread ids' counters, then the one the others share.
    locals: Box<[CachePadded<Local>; RECORDS + 1]>,
}

impl S3Fifo {
    /// Queues for `capacity` (weight units) in `lanes` lanes (a power of two) and a ghost of
    /// 90 % of `entries` fingerprints (the entries the cache can hold: its capacity without a
    /// weigher, its estimate with one — the ghost counts keys, not weight).
    pub fn new(capacity: u64, entries: u64, lanes: usize) -> Self {
        let small_cap = ((capacity as f64 * 0.1) as i64).max(1);
        S3Fifo {
            lanes: (0..lanes).map(|_| S3Lane::default()).collect(),
            steer: Steer::new(lanes),
            small_w: Default::default(),
            main_w: Default::default(),
            small_cap: AtomicI64::new(small_cap),
            main_cap: AtomicI64::new(capacity as i64 - small_cap),
            flush: (small_cap / 16).max(1),
            ghost: Ghost::new((entries as f64 * 0.9) as u64),
            locals: Box::new(std::array::from_fn(|_| CachePadded::default())),
        }
    }

    /// The number of lanes.
    #[cfg(test)]
    pub fn lanes(&self) -> usize {
        self.steer.lanes()
    }

    /// The counters thread `tid` ([`thread_id`](crate::raw::epoch::thread_id)) counts in.
    #[inline]
    pub fn local(&self, tid: usize) -> Mine<'_> {
        // The last record is shared by the threads beyond the first `RECORDS` ids.
        Mine {
            local: &self.locals[tid.min(RECORDS)],
            owned: tid < RECORDS,
            lane: self.steer.lane(tid),
        }
    }

    /// Enqueues new slot `s` (the caller's) of weight `w`; `to_main`: its key's fingerprint
    /// was in the ghost (the caller removed it), or it replaces an entry of main, so it goes
    /// to main.
    pub fn insert<N: Nodes>(&self, n: &N, local: Mine<'_>, s: u32, w: u64, to_main: bool) {
        reset(n, s);
        let lane = &self.lanes[local.lane];
        if !self.to_small(w, to_main) {
            // Relaxed: a hint, read by a later update of the key (see `MAIN`).
            n.place(s).store(MAIN, Ordering::Relaxed);
            self.add(local, true, w as i64);
            lane.main.enqueue_chain(n, s, s);
        } else {
            self.add(local, false, w as i64);
            lane.small.enqueue_chain(n, s, s);
        }
        self.steer.added(local.lane, 1);
    }

    /// Whether a new entry of weight `w` goes to small.
    #[inline]
    pub fn to_small(&self, w: u64, ghost_hit: bool) -> bool {
        // Relaxed: a size read on its own (a resize racing with this only sends an entry to
        // the other queue).
        !ghost_hit && (w as i64) < self.small_cap.load(Ordering::Relaxed)
    }

    /// Resizes the queues to 10 % / 90 % of `capacity` (the ghost and the flush threshold
    /// keep their sizes).
    pub fn set_capacity(&self, capacity: u64) {
        let small = ((capacity as f64 * 0.1) as i64).max(1);
        // Relaxed: as in `to_small`.
        self.small_cap.store(small, Ordering::Relaxed);
        self.main_cap.store(capacity as i64 - small, Ordering::Relaxed);
    }

    /// Counts a new entry of weight `w` into small before it is enqueued (gathered in a chain
    /// by the cache, with its allocation or after publication, then
    /// [`S3Fifo::enqueue_small_chain`]); a negative `w` takes back a count whose entry was
    /// never gathered.
    #[inline]
    pub fn count_small(&self, local: Mine<'_>, w: i64) {
        self.add(local, false, w);
    }

    /// Enqueues the gathered chain `first..=last` of `len` new slots (counted) at the tail of
    /// small in lane `lane` (taken modulo the lane count: a thread passes its stripe's
    /// number).
    pub fn enqueue_small_chain<N: Nodes>(
        &self,
        n: &N,
        lane: usize,
        first: u32,
        last: u32,
        len: u32,
    ) {
        let lane = self.steer.lane(lane);
        self.lanes[lane].small.enqueue_chain(n, first, last);
        self.steer.added(lane, len);
    }

    /// The slot at the head of main (`main`) or small in the lane of the thread counting in
    /// `local`, or NIL: a hint for reading ahead.
    #[inline]
    pub fn head(&self, local: Mine<'_>, main: bool) -> u32 {
        let lane = &self.lanes[local.lane];
        slot(if main { lane.main.head() } else { lane.small.head() })
    }

    /// The queue weights and main's size as the thread counting in `local` sees them now.
    #[inline]
    fn budget(&self, local: Mine<'_>) -> Budget {
        Budget {
            // Relaxed: as in `to_small`.
            main_cap: self.main_cap.load(Ordering::Relaxed),
            main: self.weight(local, true),
            small: self.weight(local, false),
        }
    }

    /// Adds `d` to a queue's weight through the caller's delta.
    #[inline]
    fn add(&self, local: Mine<'_>, main: bool, d: i64) {
        let (l, g) = self.counters(local.local, main);
        local.add(l, d, g, self.flush);
    }

    /// A queue's counter in record `local` and its shared counter.
    #[inline]
    fn counters<'a>(&'a self, local: &'a Local, main: bool) -> (&'a AtomicI64, &'a AtomicI64) {
        if main {
            (&local.main, &self.main_w)
        } else {
            (&local.small, &self.small_w)
        }
    }

    /// A queue's weight as the caller sees it.
    #[inline]
    fn weight(&self, local: Mine<'_>, main: bool) -> i64 {
        let (l, g) = self.counters(local.local, main);
        // Relaxed: see `add`.
        g.load(Ordering::Relaxed) + l.load(Ordering::Relaxed)
    }

    /// Detaches up to `want` victims (1–8, into `out`; the policy no longer holds them) and
    /// returns whether they came from the small queue (the fingerprints of those still live go
    /// to the ghost), or `None` if the queues are empty or none was found within the attempt
    /// bound. The victims are those the one-at-a-time algorithm would take next, in order:
    /// a batch stops where it would turn to the other queue (see [`Budget`]). `weight` gives a
    /// slot's weight.
    pub fn evict<N: Nodes>(
        &self,
        n: &N,
        local: Mine<'_>,
        weight: impl Fn(u32) -> u64,
        want: usize,
        out: &mut Taken,
    ) -> Option<bool> {
        debug_assert!((1..=out.slots.len()).contains(&want));
        // From the lane the steering says, else from any lane that has a victim.
        let from = self.steer.from(local.lane);
        for i in 0..self.steer.lanes() {
            let lane = self.steer.lane(from + i);
            if let Some(small) = self.evict_lane(n, local, lane, &weight, want, out) {
                self.steer.removed(lane, out.len);
                return Some(small);
            }
        }
        None
    }

    /// [`S3Fifo::evict`] from lane `lane`.
    #[inline(always)]
    fn evict_lane<N: Nodes>(
        &self,
        n: &N,
        local: Mine<'_>,
        lane: usize,
        weight: &impl Fn(u32) -> u64,
        want: usize,
        out: &mut Taken,
    ) -> Option<bool> {
        let mut backoff = Backoff::default();
        let mut empty = 0;
        for _ in 0..MAX_ATTEMPTS {
            let budget = self.budget(local);
            let mut in_main = budget.next_in_main();
            let mut step = self.scan(n, local, lane, in_main, budget, want, out, weight);
            if matches!(step, Scan::Empty) {
                // The counters lag the queues (an insert counts before it links, an eviction
                // after it detaches), and the lane's queues are not the whole: look at the
                // other queue before giving up.
                in_main = !in_main;
                step = self.scan(n, local, lane, in_main, budget, want, out, weight);
            }
            match step {
                Scan::Victims(gone) => {
                    self.add(local, in_main, -gone);
                    return Some(!in_main);
                }
                Scan::Single(h) => {
                    if let Some(v) = self.decide(n, local, lane, h, in_main, weight) {
                        out.slots[0] = v;
                        out.len = 1;
                        return Some(!in_main);
                    }
                }
                Scan::Progress => {}
                Scan::Retry => backoff.snooze(),
                Scan::Empty => {
                    empty += 1;
                    if empty >= 2 {
                        return None;
                    }
                }
            }
        }
        None
    }

    /// One scan of main (`in_main`) or small from its head, Mobius-style: the runs of entries
    /// that get another pass (live, with frequency ≥ 1 in main, ≥ 2 in small) and up to `want`
    /// victims between them (those that do not) are detached with one CAS, the victims into
    /// `out`, and the runs move to main's tail in one enqueue ([`S3Fifo::pass`]). The batch
    /// ends early where `budget` (the queue weights before the scan) says the one-at-a-time
    /// algorithm would turn to the other queue, so with one thread this takes exactly the
    /// victims that algorithm takes, and the runs land at main's tail in the same order.
    /// The weights are read before the detaching CAS makes the slots ours: another evictor
    /// may have taken, retired and reused one meanwhile, whose weight is then another entry's;
    /// the CAS then fails (the head moved) and the scan's figures are dropped. (So the weight
    /// is an atomic word: `raw/slot.rs`.)
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn scan<N: Nodes>(
        &self,
        n: &N,
        local: Mine<'_>,
        lane: usize,
        in_main: bool,
        mut budget: Budget,
        want: usize,
        out: &mut Taken,
        weight: &impl Fn(u32) -> u64,
    ) -> Scan {
        let lanes = &self.lanes[lane];
        let q = if in_main { &lanes.main } else { &lanes.small };
        let hw = q.head();
        let start = slot(hw);
        if start == NIL {
            // Empty, unless a take or an enqueue into the empty queue is halfway (help it).
            if slot(q.tail()) != NIL {
                q.tail_settled(n);
                return Scan::Retry;
            }
            return Scan::Empty;
        }
        let threshold = if in_main { 1 } else { TO_MAIN };
        // Runs closed by a victim after them (first, last), the run still open, the victims
        // found, their weight and the successor of the last one (the new head).
        let mut runs = [(NIL, NIL); 8];
        let mut closed = 0;
        let (mut run_first, mut run_end) = (NIL, NIL);
        let (mut found, mut gone, mut after) = (0, 0i64, NIL);
        let mut cur = start;
        for _ in 0..n.count() + 1 {
            // Acquire: pairs with the Release link in `enqueue_chain`.
            let next = slot(n.next(cur).load(Ordering::Acquire));
            if next == TAKEN {
                if found > 0 {
                    break; // detach what we have (the CAS checks the view)
                }
                // Being taken by another evictor (or a stale view): help, then rescan.
                q.tail_settled(n);
                return Scan::Retry;
            }
            // Relaxed: the frequency is a hint (a racing hit may be lost: one pass less).
            let keep = n.marked(cur, threshold);
            if keep {
                if next != NIL {
                    if run_first == NIL {
                        run_first = cur;
                    }
                    run_end = cur;
                    if !in_main {
                        budget.passes_to_main(weight(cur) as i64);
                    }
                    cur = next;
                    continue;
                }
                if found > 0 {
                    break; // this run stays in front, for the next scan
                }
                // Everything from `start` to the end gets another pass.
                if run_first == NIL {
                    // A lone entry: take it; the caller decides.
                    return if q.take_last(n, hw) { Scan::Single(cur) } else { Scan::Retry };
                }
                // Move the run before the last entry (which a later scan meets alone).
                if q.tail_settled(n) && q.detach(hw, cur) {
                    self.pass(n, local, lane, in_main, start, run_end, weight);
                    return Scan::Progress;
                }
                return Scan::Retry;
            }
            // `cur` is a victim.
            if next != NIL {
                if run_first != NIL {
                    runs[closed] = (run_first, run_end);
                    closed += 1;
                    (run_first, run_end) = (NIL, NIL);
                }
                out.slots[found] = cur;
                found += 1;
                after = next;
                let w = weight(cur) as i64;
                gone += w;
                budget.evicted(in_main, w);
                if found == want || budget.next_in_main() != in_main {
                    break;
                }
                cur = next;
                continue;
            }
            if found > 0 {
                break; // `cur`, the last entry, waits for the next scan
            }
            if run_first != NIL {
                // The victim is the last entry: move the run now, take the victim alone later.
                if q.tail_settled(n) && q.detach(hw, cur) {
                    self.pass(n, local, lane, in_main, start, run_end, weight);
                    return Scan::Progress;
                }
                return Scan::Retry;
            }
            if !q.take_last(n, hw) {
                return Scan::Retry;
            }
            out.slots[0] = cur;
            out.len = 1;
            return Scan::Victims(weight(cur) as i64);
        }
        if found == 0 {
            // Longer than the arena: a stale view (links changed under the scan).
            return Scan::Retry;
        }
        // Detach `start..after` (every victim and the runs between them) in one CAS.
        let Ok(chain) = q.detach_batch(n, hw, after, &runs[..closed]) else {
            return Scan::Retry;
        };
        // The next eviction starts its scan at `after`: fetch its line meanwhile.
        n.prefetch(after);
        if let Some((first, last)) = chain {
            self.pass(n, local, lane, in_main, first, last, weight);
        }
        out.len = found;
        Scan::Victims(gone)
    }

    /// Gives the detached run `start..=end` (the caller's) its next pass at main's tail: from
    /// main with its frequency lowered by one, from small with it reset (and its weight moved).
    #[allow(clippy::too_many_arguments)]
    fn pass<N: Nodes>(
        &self,
        n: &N,
        local: Mine<'_>,
        lane: usize,
        in_main: bool,
        start: u32,
        end: u32,
        weight: &impl Fn(u32) -> u64,
    ) {
        let mut moved = 0i64;
        let mut cur = start;
        for _ in 0..=n.count() {
            // Relaxed: hints (see `scan`).
            if in_main {
                let f = n.visited(cur).load(Ordering::Relaxed);
                n.visited(cur).store(f.min(MAX_FREQ).saturating_sub(1), Ordering::Relaxed);
            } else {
                enter_main(n, cur);
                moved += weight(cur) as i64;
            }
            if cur == end {
                break;
            }
            // Acquire: as in `scan` (the run is ours now; its links are stable).
            cur = slot(n.next(cur).load(Ordering::Acquire));
        }
        if !in_main {
            self.add(local, false, -moved);
            self.add(local, true, moved);
        }
        reset(n, end);
        self.lanes[lane].main.enqueue_chain(n, start, end);
    }

    /// Collects removed slots from both queues without evicting anything, as
    /// [`Queues::sweep`](crate::policy::queues::Queues::sweep) does (up to `max` slots of each
    /// queue, from its head; the live ones back in front of the head, or with `rotate` at the
    /// tail of their queue, frequencies untouched), and takes their weight out of their
    /// queue's count; the removed slots go to `dead` (now the caller's, to retire).
    pub fn sweep<N: Nodes>(
        &self,
        n: &N,
        local: Mine<'_>,
        weight: impl Fn(u32) -> u64,
        max: usize,
        dead: &mut Vec<u32>,
        rotate: bool,
    ) {
        for (j, lane) in self.lanes.iter().enumerate() {
            for (main, q) in [(false, &lane.small), (true, &lane.main)] {
                let before = dead.len();
                sweep_queue(q, n, max, dead, rotate);
                let w: i64 = dead[before..].iter().map(|&s| weight(s) as i64).sum();
                if w != 0 {
                    self.add(local, main, -w);
                }
                self.steer.removed(j, dead.len() - before);
            }
        }
    }

    /// The detached lone entry `h` of main (`in_main`) or small: the victim, or `None` if it
    /// was given another pass (re-enqueued).
    fn decide<N: Nodes>(
        &self,
        n: &N,
        local: Mine<'_>,
        lane: usize,
        h: u32,
        in_main: bool,
        weight: &impl Fn(u32) -> u64,
    ) -> Option<u32> {
        let w = weight(h) as i64;
        if in_main {
            // Relaxed: the frequency is a hint (a racing hit may be lost: one pass less).
            let f = n.visited(h).load(Ordering::Relaxed);
            if n.is_live(h) && f >= 1 {
                n.visited(h).store(f.min(MAX_FREQ) - 1, Ordering::Relaxed);
                reset(n, h);
                self.lanes[lane].main.enqueue_chain(n, h, h);
                return None;
            }
            self.add(local, true, -w);
            return Some(h);
        }
        self.add(local, false, -w);
        // The scan's keep decision for small.
        if n.marked(h, TO_MAIN) {
            enter_main(n, h);
            self.add(local, true, w);
            reset(n, h);
            self.lanes[lane].main.enqueue_chain(n, h, h);
            return None;
        }
        Some(h)
    }

    /// Every slot in the queues, lane by lane, small then main (quiescent use only); an
    /// error if a lane's count is not the number of slots it holds.
    pub fn items<N: Nodes>(&self, n: &N) -> Result<Vec<u32>, String> {
        let mut out = Vec::new();
        for (j, lane) in self.lanes.iter().enumerate() {
            let before = out.len();
            out.extend(lane.small.walk(n, n.count())?);
            out.extend(lane.main.walk(n, n.count())?);
            let (len, held) = (self.steer.len(j), out.len() - before);
            if self.steer.counts() && len != held as i64 {
                return Err(format!("S3-FIFO lane {j} counts {len} slots but holds {held}"));
            }
        }
        Ok(out)
    }

    /// Queue weights (shared part) and ends, for failure messages.
    pub fn debug_state(&self) -> String {
        let ends = |q: &Queue| format!("head {:#x} tail {:#x}", q.head(), q.tail());
        let lanes: Vec<String> = self
            .lanes
            .iter()
            .map(|l| format!("small [{}] main [{}]", ends(&l.small), ends(&l.main)))
            .collect();
        format!(
            "weights small {}+ main {}+, {}",
            self.small_w.load(Ordering::Relaxed),
            self.main_w.load(Ordering::Relaxed),
            lanes.join(" | ")
        )
    }

    /// Checks the queue weights (shared counters plus every thread's delta) against the
    /// queued slots (quiescent use only).
    pub fn validate<N: Nodes>(
        &self,
        n: &N,
        pending_small: u64,
        weight: impl Fn(u32) -> u64,
    ) -> Result<(), String> {
        for (name, main) in [("small", false), ("main", true)] {
            let mut sum = 0;
            for lane in self.lanes.iter() {
                let q = if main { &lane.main } else { &lane.small };
                sum += q.walk(n, n.count())?.into_iter().map(&weight).sum::<u64>();
            }
            if !main {
                sum += pending_small;
            }
            let shared = self.counters(&self.locals[0], main).1;
            // Relaxed: quiescent.
            let have = shared.load(Ordering::Relaxed)
                + self
                    .locals
                    .iter()
                    .map(|l| self.counters(l, main).0.load(Ordering::Relaxed))
                    .sum::<i64>();
            if have != sum as i64 {
                return Err(format!("S3-FIFO {name} queue weighs {sum}, counted {have}"));
            }
        }
        Ok(())
    }
}

/// The ghost: the fingerprints of the last `len` entries evicted from small, as a FIFO of
/// bounded length without a queue, kept as *ghost words* in the index (see `raw/ghost.rs`):
/// each is stamped with the ghost's insertion count when its entry left, and it is in the
/// ghost while fewer than `len` insertions came after it. Every insert takes its key's ghost
/// word if it is there (a ghost hit: the entry goes to main, stored over the word); an
/// eviction from small leaves its victim's (its unlinking CAS writes it).
///
/// This struct is the ghost's clock. Each thread counts its own insertions ([`Local`]) and
/// adds them to the shared count in steps of `flush` (1/256 of the ghost, at least 1, at most
/// 64), so evictions do not all write one shared line. A thread's view of the count (shared +
/// its own) is exact with one thread and behind by less than `flush` per other thread
/// otherwise: the ghost then keeps a few more or fewer fingerprints than `len`, by at most
/// that much.
#[derive(Debug)]
pub(crate) struct Ghost {
    len: u32,
    /// Insertions so far, less those still counted in threads' records.
    clock: CachePadded<AtomicI64>,
    /// A thread's insertions are added to `clock` when they reach this.
    flush: i64,
}

impl Ghost {
    /// A ghost of `len` fingerprints (at most 2^31 − 1).
    pub fn new(len: u64) -> Self {
        let len = len.min(i32::MAX as u64) as u32;
        Ghost { len, clock: Default::default(), flush: (len / 256).clamp(1, 64) as i64 }
    }

    /// The clock as the thread counting in `local` sees it (for an insert's ghost test:
    /// [`Index::insert`](crate::raw::index::Index::insert)).
    #[inline]
    pub fn now(&self, local: Mine<'_>) -> Ghosts {
        // Relaxed (both): the ghost is a hint; a count seen stale only moves one entry's age.
        let now = self
            .clock
            .load(Ordering::Relaxed)
            .wrapping_add(local.local.ghost.load(Ordering::Relaxed));
        Ghosts { now: now as u32, len: self.len }
    }

    /// The stamp of the next fingerprint the thread counting in `local` puts in (for
    /// [`Index::remove_slot`](crate::raw::index::Index::remove_slot)); [`Ghost::added`] counts
    /// it once it is in.
    #[inline]
    pub fn next_stamp(&self, local: Mine<'_>) -> u32 {
        self.now(local).now.wrapping_add(1)
    }

    /// Counts `n` fingerprints put in by the thread counting in `local` (a batch of victims,
    /// stamped [`Ghost::next_stamp`] onwards).
    #[inline]
    pub fn added(&self, local: Mine<'_>, n: u32) {
        local.add(&local.local.ghost, i64::from(n), &self.clock, self.flush);
    }
}

//! Model checks (loom) of the lock-free core with 2–3 threads and tiny queues: the queue
//! policies over slots that are *re-enqueued and reused* (so the head/tail ABA, the enqueue gap,
//! the last-node race and the queue switch are all reachable), and the epochs against a slot
//! that is really overwritten when they say it may be.
//!
//! The slot life cycle through the real index (tagged words, home locks, the lock-free
//! eviction CAS, pass-through counts) is checked too: keys live in loom cells, so a lookup that
//! reads a key its inserter did not publish, or a slot overwritten while a pinned reader may
//! compare it, is reported.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p sifter --release --test loom`
//! (`scripts/loom.sh`). Queue checks assert conservation: every slot is, at the end, either
//! evicted exactly once or still queued exactly once — never lost, never duplicated.
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::atomic::Ordering;
use loom::thread;
use sifter::loom_api::{AtomicU64, Core, Ebr, Hollowing, Idx};
use std::sync::Arc;

fn conserved(core: &Core, n: usize, evicted: Vec<Option<u32>>) {
    let mut seen = vec![0u32; n];
    for s in evicted.iter().flatten().copied() {
        seen[s as usize] += 1;
    }
    let dbg = format!("{evicted:?} {}", core.debug_state());
    for s in core.items().unwrap_or_else(|e| panic!("queue invariants: {e}; evicted {dbg}")) {
        seen[s as usize] += 1;
    }
    assert!(seen.iter().all(|&c| c == 1), "lost or duplicated slots: {seen:?} ({dbg})");
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    model_preempting(2, f);
}

/// As [`model`] with at most `bound` preemptions per execution (unless `LOOM_MAX_PREEMPTIONS`
/// says otherwise).
fn model_preempting(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(bound);
    }
    // How many executions the model explored (shown with `--nocapture`): a model that
    // explores a handful cannot have reached the interleavings it is about.
    let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let r2 = runs.clone();
    b.check(move || {
        r2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f()
    });
    let (name, runs) = (
        std::thread::current().name().unwrap_or("model").to_string(),
        runs.load(std::sync::atomic::Ordering::Relaxed),
    );
    eprintln!("{name}: {runs} executions");
    // One execution means loom saw nothing to reorder: the model checks no race at all. (It
    // happened: loom 0.7's reduction checks a write against the atomic's last access only, so
    // a thread that loads before its CAS hid another thread's earlier load, tokio-rs/loom#392;
    // `mobius_evict_vs_insert_near_empty` explored one execution. The core's atomics under
    // loom now make every two accesses dependent, see `sync.rs`, `dpor`.)
    assert!(runs > 1, "{name}: loom explored one execution; the model checks no race");
}

fn filled(mode: &str, visited: &[bool]) -> Arc<Core> {
    let core = Arc::new(Core::new(mode, visited.len() + 1));
    for (s, &v) in visited.iter().enumerate() {
        core.insert(s as u32);
        core.slots.set_visited(s as u32, v);
    }
    core
}

/// Two batched evictions race on `core`'s `n` slots (up to three victims here, two in the
/// other thread); every slot ends evicted once or queued once.
fn race_two_batches(core: Arc<Core>, n: usize) {
    let c2 = core.clone();
    let t = thread::spawn(move || c2.evict_many(2));
    let a = core.evict_many(3);
    let b = t.join().expect("thread");
    assert!(!a.is_empty() || !b.is_empty(), "neither batch found a victim");
    let evicted: Vec<Option<u32>> = a.iter().chain(&b).map(|&s| Some(s)).collect();
    conserved(&core, n, evicted);
}

/// A batched eviction of up to four victims from `core` races an insert of slot `new` (the
/// enqueue gap), then reuses its first victim at once, as the arena does; `new + 1` slots.
fn batch_and_reuse_vs_insert(core: Arc<Core>, new: u32) {
    let c2 = core.clone();
    let t = thread::spawn(move || c2.insert(new));
    let mut a = core.evict_many(4);
    if let Some(&s) = a.first() {
        core.insert(s);
        a.remove(0);
    }
    t.join().expect("thread");
    conserved(&core, new as usize + 1, a.into_iter().map(Some).collect());
}

/// A scan that reaches the tail first enqueues the new slots its stripe holds back in a chain
/// (`Queues::evict_many`'s `at_tail`), while another evictor races it on a queue of visited
/// slots (where Mobius would switch queues and CLOCK clear the bits): every slot ends evicted
/// once or queued once. Alone, the held slot is the victim (new and unvisited), not a slot
/// whose bit a switch cleared: the order of a queue that had it all along.
#[test]
fn tail_flush_vs_evictor() {
    for mode in ["mobius", "clock"] {
        loom::model(move || {
            let core = filled(mode, &[true, true]);
            assert_eq!(core.evict_many_holding(1, &[2]), vec![2], "{mode}");
        });
        model(move || {
            let core = filled(mode, &[true, true]);
            let c2 = core.clone();
            let t = thread::spawn(move || c2.evict_many(1));
            let a = core.evict_many_holding(2, &[2]);
            let b = t.join().expect("thread");
            conserved(&core, 3, a.iter().chain(&b).map(|&s| Some(s)).collect());
        });
    }
}

/// Two evictors race on the head of a short queue with a visited run (consecutive detection).
#[test]
fn mobius_two_evictors() {
    model(|| {
        let core = filled("mobius", &[true, false, true, false]);
        let c2 = core.clone();
        let t = thread::spawn(move || c2.evict());
        let a = core.evict();
        let b = t.join().expect("thread");
        assert!(a.is_some() || b.is_some());
        conserved(&core, 4, vec![a, b]);
    });
}

/// Lanes: a thread of lane 1 (empty) evicts from lane 0 while lane 0's own thread inserts
/// into it and evicts: every slot ends evicted once or queued once, and each lane's count is
/// the number of slots it holds (`items` checks).
#[test]
fn lanes_steal_vs_owner() {
    model(|| {
        let core = Arc::new(Core::with_lanes("mobius", 4, 2));
        for s in 0..2 {
            core.insert_into(0, s);
        }
        core.slots.set_visited(0, true);
        let c2 = core.clone();
        let t = thread::spawn(move || c2.evict_many_for(1, 1).first().copied());
        core.insert_into(0, 2);
        let a = core.evict_many_for(0, 1).first().copied();
        let b = t.join().expect("thread");
        assert!(a.is_some() || b.is_some(), "three slots gave no victim");
        conserved(&core, 3, vec![a, b]);
    });
}

/// An evictor against an inserter on a queue with two slots: the enqueue gap and the
/// last-node protocol. (It explored one execution before the core's atomics were made
/// dependent under loom, see `model_preempting`; 154 now, 65 with the two threads' roles
/// swapped.)
#[test]
fn mobius_evict_vs_insert_near_empty() {
    model(|| {
        let core = filled("mobius", &[false, true]);
        let c2 = core.clone();
        let t = thread::spawn(move || c2.evict());
        core.insert(2);
        let a = t.join().expect("thread");
        conserved(&core, 3, vec![a]);
    });
}

/// An evictor against an inserter into an empty queue and a lone unvisited slot: the evictor
/// reaches the tail exactly while the enqueue is in its gap.
#[test]
fn evict_at_the_gap() {
    for mode in ["mobius", "clock", "fifo"] {
        model(move || {
            let core = filled(mode, &[false]);
            let c2 = core.clone();
            let t = thread::spawn(move || c2.insert(1));
            let a = core.evict();
            let b = core.evict();
            t.join().expect("thread");
            conserved(&core, 2, vec![a, b]);
        });
    }
}

/// Everything visited: both evictors reach the end and race to switch the queues.
#[test]
fn mobius_switch_race() {
    model(|| {
        let core = filled("mobius", &[true, true, true]);
        let c2 = core.clone();
        let t = thread::spawn(move || c2.evict());
        let a = core.evict();
        let b = t.join().expect("thread");
        conserved(&core, 3, vec![a, b]);
    });
}

/// One slot left: two evictors race for the last node while a third thread inserts.
#[test]
fn mobius_last_node_three_threads() {
    model(|| {
        let core = filled("mobius", &[false]);
        let (c2, c3) = (core.clone(), core.clone());
        let t2 = thread::spawn(move || c2.evict());
        let t3 = thread::spawn(move || c3.insert(1));
        let a = core.evict();
        let b = t2.join().expect("thread");
        t3.join().expect("thread");
        conserved(&core, 2, vec![a, b]);
    });
}

/// The w/d ablation re-enqueues single slots; CLOCK re-enqueues into the same queue; FIFO
/// takes heads.
#[test]
fn single_queue_modes_and_wd() {
    for mode in ["mobius-wd", "clock", "fifo"] {
        model(move || {
            let core = filled(mode, &[true, true, false]);
            let c2 = core.clone();
            let t = thread::spawn(move || c2.evict());
            let a = core.evict();
            let b = t.join().expect("thread");
            conserved(&core, 3, vec![a, b]);
        });
    }
}

/// A hit racing with an eviction pass that clears bits.
#[test]
fn hit_during_eviction() {
    model(|| {
        let core = filled("mobius", &[false, false, false]);
        let c2 = core.clone();
        let t = thread::spawn(move || c2.slots.touch(0));
        let a = core.evict();
        t.join().expect("thread");
        conserved(&core, 3, vec![a]);
    });
}

/// Two evictors on every mode and queue length 1..=3 (all but the last slot visited).
#[test]
fn two_evictors_every_mode_and_length() {
    for mode in ["fifo", "clock", "mobius-wd", "mobius", "nbq-clock", "nbq-clock-1"] {
        for n in 1..=3usize {
            model(move || {
                let v: Vec<bool> = (0..n).map(|i| i + 1 < n).collect();
                let core = filled(mode, &v);
                let c2 = core.clone();
                let t = thread::spawn(move || c2.evict());
                let a = core.evict();
                let b = t.join().expect("thread");
                conserved(&core, n, vec![a, b]);
            });
        }
    }
}

/// Batched eviction: one scan takes several victims with one head CAS, the visited slots
/// between them re-enqueued as one chain (joined across the victims). Two batched evictors
/// race on a queue of alternating visited and unvisited slots (so one scan closes two visited
/// runs, which must be joined across the victim between them).
#[test]
fn batched_evictors() {
    for mode in ["mobius", "clock", "fifo", "nbq-clock"] {
        model(move || race_two_batches(filled(mode, &[true, false, true, false, true, false]), 6));
    }
}

/// A batched eviction that reaches the tail while an insert is in its enqueue gap, and then
/// reuses its first victim at once (enqueues the same slot again, as the arena does) while the
/// other thread's enqueue completes.
#[test]
fn batched_evict_reuse_vs_insert() {
    for mode in ["mobius", "clock", "fifo"] {
        model(move || batch_and_reuse_vs_insert(filled(mode, &[false, true, false]), 3));
    }
}

/// The published code's ABA: a thread evicts a slot and at once enqueues *the same slot*
/// again (reuse, as the arena does) while another thread scans from a head it read earlier.
/// With unversioned head/tail words this loses or duplicates slots.
#[test]
fn evict_and_reuse_same_slot_race() {
    for mode in ["mobius", "clock", "fifo"] {
        model(move || {
            let core = filled(mode, &[false, true, false]);
            let c2 = core.clone();
            let t = thread::spawn(move || c2.evict());
            let a = core.evict();
            if let Some(s) = a {
                core.insert(s);
            }
            let b = t.join().expect("thread");
            // `a` went back in, so only `b` counts as evicted.
            conserved(&core, 3, vec![b]);
        });
    }
}

/// A removed (dead) slot is a victim at once, whatever its bit.
#[test]
fn removed_slot_is_taken_first() {
    model(|| {
        let core = filled("mobius", &[true, true]);
        core.slots.kill(0);
        let c2 = core.clone();
        let t = thread::spawn(move || c2.evict());
        let a = core.evict();
        let b = t.join().expect("thread");
        assert!(a == Some(0) || b == Some(0), "the dead slot was not taken: {a:?} {b:?}");
        conserved(&core, 2, vec![a, b]);
    });
}

/// Sweeps (in place, or with `rotate`) while another thread evicts and then enqueues slot
/// `n - 1` (the one evicted before, or never queued); checks that only slots of `dead` were
/// swept and that every one of the `n` slots ends swept, evicted or queued exactly once.
fn sweep_while_evicting(core: &Arc<Core>, n: usize, dead: &[u32], rotate: bool) {
    let c2 = core.clone();
    let t = thread::spawn(move || {
        let e = c2.evict();
        c2.insert(n as u32 - 1);
        e
    });
    let swept = if rotate { core.sweep_rotating(4) } else { core.sweep(4) };
    let e = t.join().expect("thread");
    assert!(swept.iter().all(|s| dead.contains(s)), "a live slot was swept: {swept:?}");
    let mut out: Vec<Option<u32>> = swept.into_iter().map(Some).collect();
    out.push(e);
    conserved(core, n, out);
}

/// A sweep for removed slots against an evictor and an enqueuer: the sweeper detaches a
/// prefix, keeps the live slots and puts them back in front of the head (or at the tail if the
/// head moved); the evictor scans the same head; the enqueuer links at the tail. Every slot
/// ends swept (only dead ones), evicted, or queued, exactly once.
#[test]
fn sweep_vs_evict_and_enqueue() {
    for mode in ["mobius", "clock"] {
        model(move || {
            let core = filled(mode, &[false, true, false, true]);
            core.slots.kill(1);
            sweep_while_evicting(&core, 5, &[1], false);
        });
    }
}

/// [`sweep_while_evicting`] with the sweep that rotates (the live slots it passes go to the
/// tail, so successive sweeps reach removed slots anywhere): the sweeper's enqueue of the kept
/// slots races the evictor's scan of the same head and the inserter's enqueue at the tail.
#[test]
fn rotating_sweep_vs_evict_and_enqueue() {
    for mode in ["mobius", "clock"] {
        model(move || {
            let core = filled(mode, &[false, true, false, true]);
            core.slots.kill(1);
            sweep_while_evicting(&core, 5, &[1], true);
        });
    }
}

/// S3-FIFO's sweep (both queues, in place or rotating) against an evictor and an enqueuer into
/// small: only removed slots are swept, every slot ends swept, evicted or queued exactly once,
/// and the queue weights add up (the sweep takes the removed slots' weight out of their queue).
#[test]
fn s3fifo_sweep_vs_evict_and_enqueue() {
    for rotate in [false, true] {
        model(move || {
            let core = Arc::new(Core::new("s3fifo", 6));
            for s in 0..3 {
                core.insert(s);
            }
            core.slots.set_count(2, 2);
            core.insert_main(3);
            core.insert_main(4);
            core.slots.set_count(3, 1);
            core.slots.kill(1);
            core.slots.kill(4);
            sweep_while_evicting(&core, 6, &[1, 4], rotate);
        });
    }
}

/// Two sweepers and a dead slot in each half of the active queue: no slot is lost or swept
/// twice, and only dead ones are swept.
#[test]
fn two_sweepers() {
    model(|| {
        let core = filled("mobius", &[false, false, false, false, false]);
        core.slots.kill(0);
        core.slots.kill(2);
        let c2 = core.clone();
        let t = thread::spawn(move || c2.sweep(2));
        let a = core.sweep(3);
        let b = t.join().expect("thread");
        let out: Vec<Option<u32>> = a.into_iter().chain(b).map(Some).collect();
        assert!(out.iter().all(|s| matches!(s, Some(0 | 2))), "a live slot was swept: {out:?}");
        conserved(&core, 5, out);
    });
}

/// An enqueue of a chain of two new slots races a sweep, whose walk of the queue's front helps
/// a lagging tail forward: whoever moves a tail must carry it to the last slot. A build whose
/// helpers move it one step and give up leaves the tail on the chain's first slot when the
/// enqueuer's own tail CAS then fails (it fails on that build: the queue at rest has a tail
/// that lags behind the last slot, "the tail lags").
#[test]
fn chain_enqueue_vs_tail_helper() {
    for mode in ["mobius", "mobius-wd", "clock", "fifo"] {
        model(move || {
            let core = Arc::new(Core::new(mode, 3));
            core.insert(0);
            let c2 = core.clone();
            let t = thread::spawn(move || c2.sweep(4));
            core.insert_chain(&[1, 2]);
            let swept = t.join().expect("thread");
            assert!(swept.is_empty(), "{mode}: a live slot was swept: {swept:?}");
            conserved(&core, 3, vec![]);
        });
    }
}

/// Mobius's dormant queue (the visited run an eviction moved there) is swept while another
/// thread evicts — which finds the active queue empty and switches, so the two race on the
/// same queue whether the sweep sees it dormant (rotation) or active (restored in place) —
/// and enqueues.
#[test]
fn sweep_dormant_vs_evict() {
    model(|| {
        let core = filled("mobius", &[true, true, true, true, false]);
        // Moves 0..=3 to the dormant queue (bits cleared) and evicts 4: the active one is empty.
        assert_eq!(core.evict(), Some(4));
        core.slots.kill(1);
        sweep_while_evicting(&core, 5, &[1], false);
    });
}

/// The slot life cycle's last step against real reuse: a reader finds the slot through a
/// published word and reads its contents; a writer unlinks the word, retires the slot, tries to
/// advance (unpinned, as an insert does) and — only if its last attempt allows it — overwrites
/// the contents. loom's `UnsafeCell` reports any read that races with the overwrite, so a broken
/// protocol fails here. The reader either pins the epoch first (`hazard` false), or protects as
/// `Cache::get` does: it announces the slot it found (`lazily`'s closure: a hazard with a
/// private record, without one a spare hazard if there are `spares`, else the epoch), reads
/// the word again and reads the slot only if the word still holds it.
fn slot_reuse(records: usize, spares: usize, hazard: bool) {
    model(move || {
        let ebr = Arc::new(Ebr::with_spares(records, spares));
        // word: 1 = the slot is linked, 0 = unlinked.
        let word = Arc::new(AtomicU64::new(1));
        let slot = Arc::new(UnsafeCell::new(7u64));
        let reader = spawn_reader(&ebr, &word, &slot, hazard);
        unlink_and_reuse(&ebr, &word, &slot, false);
        reader.join().expect("reader");
    });
}

/// The retirer's side of the reuse models: unlinks slot 0 (`word` to 0) and reuses it (writes
/// 8) if the epochs allow, by advances (`at_once` false: unpinned, as the cache's inserts
/// advance; pinned advancers hide a missing fence in the shared counters' pin, their own
/// counts synchronising with the reader's) or at once (`at_once`: the unlinking is the cache's
/// locked RMW, a SeqCst swap here, then `retire_epoch` and `quiet`, no advance).
fn unlink_and_reuse(ebr: &Ebr, word: &AtomicU64, slot: &UnsafeCell<u64>, at_once: bool) {
    let reusable = if at_once {
        word.swap(0, Ordering::SeqCst);
        ebr.reusable_at_once(0)
    } else {
        word.store(0, Ordering::Release);
        let r = ebr.retire_epoch();
        let mut adv = ebr.try_advance();
        for _ in 0..2 {
            adv = ebr.try_advance();
        }
        adv.reusable(0, r)
    };
    if reusable {
        // SAFETY: a valid cell; a race with the reader is what loom reports.
        slot.with_mut(|p| unsafe { *p = 8 });
    }
}

/// A thread that looks slot 0 up through `word` and reads it if linked, protected by a hazard
/// as `Cache::get` is (`lazily`'s closure: a hazard with a private record, the epoch without
/// one; it reads the word again after announcing) or by a pinned epoch; it asserts that the
/// slot still holds its first contents.
fn spawn_reader(
    ebr: &Arc<Ebr>,
    word: &Arc<AtomicU64>,
    slot: &Arc<UnsafeCell<u64>>,
    hazard: bool,
) -> thread::JoinHandle<()> {
    let (e2, w2, s2) = (ebr.clone(), word.clone(), slot.clone());
    thread::spawn(move || {
        let read = || {
            // SAFETY: a valid cell; a race with the writer is what loom reports.
            let v = s2.with(|p| unsafe { *p });
            assert_eq!(v, 7, "read a reused slot");
        };
        if hazard {
            e2.lazily(0, |pin| {
                if w2.load(Ordering::Acquire) == 1 && (!pin(0) || w2.load(Ordering::Acquire) == 1) {
                    read();
                }
            })
        } else {
            e2.pinned(0, || {
                if w2.load(Ordering::Acquire) == 1 {
                    read();
                }
            })
        }
    })
}

/// As [`slot_reuse`], but the slot is reused at once when `Epochs::quiet` allows it (no
/// thread pinned, no hazard naming it), as an insert reuses its victims: the unlinking is the
/// cache's locked RMW (a SeqCst swap here), then `retire_epoch` and `quiet`, no advance.
fn slot_reuse_at_once(records: usize, spares: usize, hazard: bool) {
    model(move || {
        let ebr = Arc::new(Ebr::with_spares(records, spares));
        let word = Arc::new(AtomicU64::new(1));
        let slot = Arc::new(UnsafeCell::new(7u64));
        let reader = spawn_reader(&ebr, &word, &slot, hazard);
        unlink_and_reuse(&ebr, &word, &slot, true);
        reader.join().expect("reader");
    });
}

/// Reuse at once against a hazard (a private record).
#[test]
fn reuse_at_once_vs_hazard() {
    slot_reuse_at_once(4, 2, true);
}

/// Reuse at once against a pinned epoch (a private record).
#[test]
fn reuse_at_once_vs_pin() {
    slot_reuse_at_once(4, 2, false);
}

/// Reuse at once against a reader without a record: a spare hazard announced.
#[test]
fn reuse_at_once_vs_spare_hazard() {
    slot_reuse_at_once(0, 2, true);
}

/// Reuse at once against a reader without a record or a spare (the shared counters).
#[test]
fn reuse_at_once_vs_shared_counters() {
    slot_reuse_at_once(0, 0, true);
}

/// A reader with a private record: a hazard.
#[test]
fn hazard_reuse_records() {
    slot_reuse(4, 2, true);
}

/// A reader without a record: a spare hazard announced (`Epochs::announce_spare`).
#[test]
fn hazard_reuse_spare() {
    slot_reuse(0, 2, true);
}

/// A reader without a record or a spare: the epoch, through the shared counters.
#[test]
fn hazard_reuse_without_records() {
    slot_reuse(0, 0, true);
}

/// A slot found and read as a lookup protects it (`LazyPin`), then held after the lookup
/// (`compute` holds the slot its closure read until its store): never reused while held,
/// whether it is held by the thread's own hazard (`records` 1), a spare hazard (`records` 0,
/// `spares` 2) or a pin (no spares).
/// The retirer reuses it by the epochs (`at_once` false) or at once (`Epochs::quiet`).
fn held_slot_reuse(records: usize, spares: usize, at_once: bool, late: bool) {
    // Three preemptions: the reader's re-pin must fall between two of the retirer's advances.
    model_preempting(3, move || {
        let ebr = Arc::new(Ebr::with_spares(records, spares));
        let word = Arc::new(AtomicU64::new(1));
        let slot = Arc::new(UnsafeCell::new(7u64));
        let (e2, w2, s2) = (ebr.clone(), word.clone(), slot.clone());
        let reader = thread::spawn(move || {
            let read = || {
                // SAFETY: a valid cell; a race with the writer is what loom reports.
                let v = s2.with(|p| unsafe { *p });
                assert_eq!(v, 7, "read a reused slot");
            };
            // As a lookup: the word, the announcement, the word again, then the slot.
            let linked = |pin: &mut dyn FnMut(u32) -> bool| {
                let linked =
                    w2.load(Ordering::Acquire) == 1 && (!pin(0) || w2.load(Ordering::Acquire) == 1);
                if linked {
                    read();
                }
                linked
            };
            e2.read_then_hold(0, 0, linked, read, late);
        });
        unlink_and_reuse(&ebr, &word, &slot, at_once);
        reader.join().expect("reader");
    });
}

#[test]
fn held_by_own_hazard_vs_reuse() {
    held_slot_reuse(1, 2, false, false);
    held_slot_reuse(1, 2, true, false);
}

#[test]
fn held_by_spare_hazard_vs_reuse() {
    held_slot_reuse(0, 2, false, false);
    held_slot_reuse(0, 2, true, false);
}

#[test]
fn held_by_pin_vs_reuse() {
    held_slot_reuse(0, 0, false, false);
    held_slot_reuse(0, 0, true, false);
}

/// Mutant: the spare hazard claimed after the unpin (the slot unprotected in between).
#[test]
#[should_panic(expected = "Causality violation")]
fn mutant_spare_claimed_after_the_unpin() {
    held_slot_reuse(0, 2, false, true);
}

/// Mutant: as above, against reuse at once.
#[test]
#[should_panic(expected = "Causality violation")]
fn mutant_spare_claimed_after_the_unpin_at_once() {
    held_slot_reuse(0, 2, true, true);
}

/// Mutant: a holder without hazards that pins again after its read instead of keeping the
/// pin it read under (`Epochs::hold` once did): the new pin is at the epoch of now, which does
/// not cover a slot retired since the first (found with three preemptions, not two).
#[test]
#[should_panic(expected = "Causality violation")]
fn mutant_pin_taken_again_after_the_read() {
    held_slot_reuse(0, 0, false, true);
}

/// An update in place (by thread 0, which has a record) racing with a `compute` on thread 1
/// that read the value as a lookup protects it and then holds the slot (its own hazard with 2
/// records, a spare one with 1, a pin without spares): the value stays the one the closure read while
/// held (`Epochs::exclusive` sees the holder), and no read races with the write.
fn update_in_place_vs_held(records: usize, spares: usize) {
    model(move || {
        let idx = Arc::new(Idx::new(4));
        let ebr = Arc::new(Ebr::with_spares(records, spares));
        let h = idx.hash_in(0, 1);
        idx.write_value(0, 10);
        idx.insert(h, 0, 1);
        let (i2, e2) = (idx.clone(), ebr.clone());
        let t = thread::spawn(move || {
            let first = std::cell::Cell::new(0);
            let read = |pin: &mut dyn FnMut(u32) -> bool| match i2.find_pinning(h, 1, pin) {
                Some(s) => {
                    first.set(i2.value(s));
                    true
                }
                None => false,
            };
            let later = e2.read_then_hold(1, 0, read, || i2.value(0), false);
            assert_eq!(later, Some(first.get()), "an update in place while the slot was held");
        });
        idx.update_in_place(&ebr, 0, h, 1, 20, true);
        t.join().expect("holder");
    });
}

#[test]
fn update_in_place_vs_own_hazard_hold() {
    update_in_place_vs_held(2, 2);
}

#[test]
fn update_in_place_vs_spare_hold() {
    update_in_place_vs_held(1, 2);
}

#[test]
fn update_in_place_vs_pin_hold() {
    update_in_place_vs_held(1, 0);
}

/// An advance attempt frees only what its hazards cover: slots retired before its fence. Here
/// one thread (the advancer) decides and another retires, as two threads of one stripe do (the
/// limbo is shared under a lock): the advancer's hazards may have been read before the
/// retirement — before the reader announced — while the retirer's own advances move the epoch
/// past it, so the attempt's CAS fails with a newer epoch. Freeing by that newer epoch alone
/// (`r + 2 <= now`) reuses the slot under the reader; `Advance::covers` also requires the
/// attempt to have seen `r + 1` before its fence.
#[test]
fn hazard_snapshot_older_than_the_retirement() {
    model(|| {
        let ebr = Arc::new(Ebr::new(4));
        let word = Arc::new(AtomicU64::new(1));
        let slot = Arc::new(UnsafeCell::new(7u64));
        let limbo = Arc::new(loom::sync::Mutex::new(None::<u64>));
        let (e2, w2, s2) = (ebr.clone(), word.clone(), slot.clone());
        let reader = thread::spawn(move || {
            e2.lazily(0, |pin| {
                if w2.load(Ordering::Acquire) == 1 && (!pin(0) || w2.load(Ordering::Acquire) == 1) {
                    let v = s2.with(|p| unsafe { *p });
                    assert_eq!(v, 7, "read a reused slot");
                }
            })
        });
        let (e3, s3, l3) = (ebr.clone(), slot.clone(), limbo.clone());
        let advancer = thread::spawn(move || {
            let adv = e3.try_advance();
            if let Some(r) = l3.lock().unwrap().take() {
                if adv.reusable(0, r) {
                    s3.with_mut(|p| unsafe { *p = 8 });
                }
            }
        });
        word.store(0, Ordering::Release);
        let r = ebr.retire_epoch();
        *limbo.lock().unwrap() = Some(r);
        ebr.try_advance();
        ebr.try_advance();
        reader.join().expect("reader");
        advancer.join().expect("advancer");
    });
}

/// A thread stopped while it holds a hazard blocks no epoch advance, and only the slot it
/// announced is kept from reuse: whatever the reader does meanwhile, the writer's attempts
/// advance the epoch, and another retired slot becomes reusable.
#[test]
fn hazard_holds_back_only_its_slot() {
    model(|| {
        let ebr = Arc::new(Ebr::new(4));
        let announced = Arc::new(AtomicU64::new(0));
        let (e2, a2) = (ebr.clone(), announced.clone());
        let reader = thread::spawn(move || {
            e2.lazily(0, |pin| {
                assert!(pin(0), "a first slot is announced");
                a2.store(1, Ordering::Release);
                while a2.load(Ordering::Acquire) == 1 {
                    thread::yield_now();
                }
            })
        });
        while announced.load(Ordering::Acquire) == 0 {
            thread::yield_now();
        }
        let r = ebr.retire_epoch();
        let mut adv = ebr.try_advance();
        for _ in 0..2 {
            adv = ebr.try_advance();
        }
        assert!(adv.now() >= r + 2, "a hazard held the epoch back");
        assert!(adv.reusable(1, r), "a slot nobody announced is reusable");
        assert!(!adv.reusable(0, r), "the announced slot is kept");
        announced.store(2, Ordering::Release);
        reader.join().expect("reader");
    });
}

/// Reader and writer with private records.
#[test]
fn epoch_reuse_records() {
    slot_reuse(4, 2, false);
}

/// Reader and writer without records (the shared counters of threads beyond the records).
#[test]
fn epoch_reuse_shared_counters() {
    slot_reuse(0, 2, false);
}

/// A lone slot is taken and at once re-enqueued (reused) while another thread's enqueue meets
/// it half-way: the enqueuer's stale view of the taken slot (its `next`, the TAKEN marker it
/// helps finish) must not act on the slot's new incarnation. Catches a reset that does not
/// start a new incarnation, and a take-helper that does not check the incarnation.
#[test]
fn take_and_reuse_vs_enqueue() {
    for mode in ["fifo", "mobius"] {
        model(move || {
            let core = filled(mode, &[false]);
            let c2 = core.clone();
            let t = thread::spawn(move || c2.insert(1));
            let a = core.evict();
            if let Some(s) = a {
                core.insert(s);
            }
            t.join().expect("thread");
            conserved(&core, 2, vec![]);
        });
    }
}

/// S3-FIFO: two evictors on small (one entry frequent enough for main, one not) and main (one
/// entry with a pass left, one without): runs detached and moved, victims taken, the ghost
/// written — every slot ends evicted once or queued once, and the queue weights add up.
#[test]
fn s3fifo_two_evictors() {
    model(|| {
        let core = Arc::new(Core::new("s3fifo", 4));
        core.insert(0);
        core.insert(1);
        core.slots.set_count(0, 2);
        core.insert_main(2);
        core.insert_main(3);
        core.slots.set_count(2, 1);
        let c2 = core.clone();
        let t = thread::spawn(move || c2.evict());
        let a = core.evict();
        let b = t.join().expect("thread");
        assert!(a.is_some() || b.is_some());
        conserved(&core, 4, vec![a, b]);
    });
}

/// S3-FIFO batches: two evictors take up to three and two victims in one scan of a small queue
/// whose entries alternate between ones frequent enough for main and ones that are not, so a
/// scan closes two runs that must be joined across the victim between them and moved to main
/// as one chain, while the other evictor's scan races for the same head.
#[test]
fn s3fifo_batched_evictors() {
    model(|| {
        let core = Arc::new(Core::new("s3fifo", 6));
        for s in 0..6 {
            core.insert(s);
        }
        core.slots.set_count(1, 2);
        core.slots.set_count(3, 2);
        race_two_batches(core, 6);
    });
}

/// S3-FIFO: a batched eviction that reaches small's tail while an insert is in its enqueue
/// gap, then reuses its first victim at once (as the arena does).
#[test]
fn s3fifo_batched_evict_reuse_vs_insert() {
    model(|| {
        let core = Arc::new(Core::new("s3fifo", 4));
        for s in 0..3 {
            core.insert(s);
        }
        core.slots.set_count(1, 2);
        batch_and_reuse_vs_insert(core, 3);
    });
}

/// S3-FIFO: an eviction racing an insert into small (the enqueue gap against a small queue
/// whose lone entry moves to main).
#[test]
fn s3fifo_evict_vs_insert() {
    model(|| {
        let core = Arc::new(Core::new("s3fifo", 3));
        core.insert(0);
        core.slots.set_count(0, 3);
        core.insert_main(1);
        let c2 = core.clone();
        let t = thread::spawn(move || c2.insert(2));
        let a = core.evict();
        t.join().expect("thread");
        conserved(&core, 3, vec![a]);
    });
}

/// S3-FIFO: a victim detached while an enqueue is in its gap, and at once reused (inserted
/// again, as the arena does) — the detach must wait for the tail to settle, or the tail can
/// be left on the reused slot and a later enqueue lost.
#[test]
fn s3fifo_evict_reuse_vs_insert() {
    model(|| {
        let core = Arc::new(Core::new("s3fifo", 2));
        core.insert(0);
        let c2 = core.clone();
        let t = thread::spawn(move || c2.insert(1));
        let a = core.evict();
        if let Some(v) = a {
            core.insert(v);
        }
        t.join().expect("thread");
        conserved(&core, 2, vec![None]);
    });
}

/// Eviction racing a replace of the same key: the evictor clears the victim's word by CAS
/// without a lock, the writer replaces it under the home lock. Exactly one of them unlinks
/// the old slot (and so owns its capacity and its retirement); the new slot ends linked.
#[test]
fn index_eviction_racing_replace() {
    model(|| {
        let idx = Arc::new(Idx::new(4));
        let h = idx.hash_in(1, 3);
        assert_eq!(idx.insert(h, 0, 9), None);
        let i2 = idx.clone();
        let evictor = thread::spawn(move || i2.remove_slot(h, 0));
        let replaced = idx.insert(h, 1, 9);
        let evicted = evictor.join().expect("evictor");
        assert!(
            evicted != (replaced == Some(0)),
            "slot 0 unlinked by both or by neither: evicted {evicted}, replaced {replaced:?}"
        );
        assert_eq!(idx.slots(), vec![1]);
        assert_eq!(idx.find(h, 9), Some(1));
        idx.validate(|_| h).expect("index");
    });
}

/// S3-FIFO's ghost words: an eviction from small (its unlinking CAS leaves the key's ghost
/// word) races an insert of the same key under its home lock, and a lookup. Exactly one of
/// them unlinks the old entry: the insert replaces it, or the eviction does and the insert
/// then takes the ghost word (a ghost hit); the lookup finds the old or the new slot or
/// nothing, never the ghost word; the index is valid after.
#[test]
fn ghost_word_made_by_an_eviction_racing_the_keys_insert() {
    model(|| {
        let idx = Arc::new(Idx::new(4));
        let h = idx.hash_in(0, 0xABCD_1235);
        idx.insert(h, 0, 11);
        let (i2, i3) = (idx.clone(), idx.clone());
        let evictor = thread::spawn(move || i2.remove_slot_ghost(h, 0, 1));
        let reader = thread::spawn(move || i3.find(h, 11));
        let (replaced, revived) = idx.insert_ghost(h, 1, 11, 1, 100);
        let evicted = evictor.join().expect("evictor");
        let found = reader.join().expect("reader");
        assert!(found.is_none() || found == Some(0) || found == Some(1), "found {found:?}");
        match evicted {
            Some(ghosted) => {
                assert!(ghosted, "a victim in its home bucket leaves a ghost word");
                assert_eq!((replaced, revived), (None, true), "the insert missed the ghost word");
            }
            None => assert_eq!((replaced, revived), (Some(0), false)),
        }
        assert_eq!(idx.slots(), vec![1]);
        assert_eq!(idx.find(h, 11), Some(1));
        idx.validate(|_| h).expect("index");
    });
}

/// A full home bucket: an eviction turns one of its entries into a ghost word while an insert
/// of a new key looks for a word there. The insert takes the ghost word or overflows into the
/// next bucket (if it read the word before the CAS); either way no entry is overwritten and
/// the pass-through counts stay right.
#[test]
fn ghost_word_made_while_an_insert_claims_a_word() {
    model(|| {
        let idx = Arc::new(Idx::new(8));
        let h = |t: u32| idx.hash_in(0, (t + 1) << 8 | 1);
        for t in 0..7u32 {
            idx.insert(h(t), t, u64::from(t));
        }
        let h3 = h(3);
        let i2 = idx.clone();
        let evictor = thread::spawn(move || i2.remove_slot_ghost(h3, 3, 1));
        let (replaced, revived) = idx.insert_ghost(h(7), 7, 7, 1, 100);
        assert_eq!(evictor.join().expect("evictor"), Some(true));
        assert_eq!((replaced, revived), (None, false));
        assert_eq!(idx.slots(), vec![0, 1, 2, 4, 5, 6, 7]);
        for t in [0, 1, 2, 4, 5, 6, 7] {
            assert_eq!(idx.find(h(t), u64::from(t)), Some(t));
        }
        let hashes: Vec<u64> = (0..8).map(h).collect();
        idx.validate(|s| hashes[s as usize]).expect("index");
    });
}

/// Removal by key racing an eviction of the same slot: one of them unlinks it, never both.
#[test]
fn index_remove_racing_eviction() {
    model(|| {
        let idx = Arc::new(Idx::new(4));
        let h = idx.hash_in(0, 5);
        idx.insert(h, 2, 11);
        let i2 = idx.clone();
        let evictor = thread::spawn(move || i2.remove_slot(h, 2));
        let removed = idx.remove(h, 11);
        let evicted = evictor.join().expect("evictor");
        assert!(evicted != (removed == Some(2)), "evicted {evicted}, removed {removed:?}");
        assert!(idx.slots().is_empty());
        idx.validate(|_| h).expect("index");
    });
}

/// A hash homed at bucket 1 of `idx` for key `k`, with a byte tag of its own (`hash_in` makes
/// the tag's top seven bits the byte tag).
fn home1(idx: &Idx, k: u32) -> u64 {
    idx.hash_in(1, (k << 25) | 1)
}

/// Fills bucket 1 (seven words) with keys 0..7 in slots 0..7.
fn fill_bucket1(idx: &Idx) {
    for k in 0..7 {
        assert_eq!(idx.insert(home1(idx, k), k, u64::from(k)), None);
    }
}

/// Byte tags are hints that must never hide an entry. Bucket 1 is full and one of its words is
/// stale (its entry evicted, its byte tag left behind), so an insert homed there finds no zero
/// byte and claims the stale word (the unlock flips its byte) — while another entry of the
/// bucket is evicted and a third is looked up. The lookup always finds its key, the new key is
/// found once its insert returned, and every byte tag and count checks out at the end.
#[test]
fn index_stale_word_reuse() {
    model(|| {
        let idx = Arc::new(Idx::new(8));
        fill_bucket1(&idx);
        assert!(idx.remove_slot(home1(&idx, 0), 0));
        let i2 = idx.clone();
        let writer = thread::spawn(move || i2.insert(home1(&i2, 7), 7, 7));
        assert!(idx.remove_slot(home1(&idx, 1), 1));
        assert_eq!(idx.find(home1(&idx, 2), 2), Some(2), "a byte tag hid an entry");
        assert_eq!(writer.join().expect("writer"), None);
        assert_eq!(idx.find(home1(&idx, 7), 7), Some(7));
        assert_eq!(idx.slots(), vec![2, 3, 4, 5, 6, 7]);
        idx.validate(|s| home1(&idx, s)).expect("index");
    });
}

/// The control word's parts under concurrent change: with bucket 1 full and one entry (key 7)
/// already overflowed into bucket 2, an insert homed at bucket 1 holds its lock and overflows
/// too (raising bucket 1's pass-through count, claiming a word of bucket 2 under that bucket's
/// lock) while an eviction removes key 7 (lowering the same count under bucket 1's lock).
/// Only the lock holder changes a control word, with plain stores (the unlock too): loom
/// checks each such store with a CAS that asserts the word did not change since the holder
/// read it, and a build whose eviction lowers the count without the lock fails here.
#[test]
fn index_overflow_racing_eviction() {
    model(|| {
        let idx = Arc::new(Idx::new(12));
        fill_bucket1(&idx);
        assert_eq!(idx.insert(home1(&idx, 7), 7, 7), None);
        let i2 = idx.clone();
        let writer = thread::spawn(move || i2.insert(home1(&i2, 8), 8, 8));
        assert!(idx.remove_slot(home1(&idx, 7), 7));
        assert_eq!(writer.join().expect("writer"), None);
        assert_eq!(idx.find(home1(&idx, 8), 8), Some(8));
        assert_eq!(idx.find(home1(&idx, 6), 6), Some(6));
        assert_eq!(idx.slots(), vec![0, 1, 2, 3, 4, 5, 6, 8]);
        idx.validate(|s| home1(&idx, s)).expect("index");
    });
}

/// The slot life cycle end to end: a reader finds a key through the index and reads the
/// slot's key; a writer removes the key, retires the slot, advances the epochs and — only when
/// they allow it — reuses the slot for another key (overwrites it and publishes it again). loom
/// reports a reuse that races with the reader's read, or a read of a key not published to it.
/// `lazy`: the reader pins as `Cache::get` does — it probes the index unpinned and pins only at
/// a word with its tag, then reads that word again — so the writer may remove, retire, advance
/// twice and reuse before the reader pins. `same_tag`: the reuse is for a key with the same tag
/// in the same bucket, so the reader's second read can see the very same word again (ABA): the
/// slot it then reads is the new, published entry, which the key comparison rejects.
/// `Reader::First`: the reader decides in the home bucket first, as `Cache::read` does
/// (`Index::first`, protected by its hazard alone), and takes the lazy probe only when that is
/// undecided.
fn remove_racing_reuse(reader: Reader, same_tag: bool) {
    model(move || {
        let idx = Arc::new(Idx::new(4));
        let ebr = Arc::new(Ebr::new(4));
        let ha = idx.hash_in(0, 1);
        let hb = if same_tag { ha } else { idx.hash_in(1, 2) };
        idx.insert(ha, 0, 1);
        let (i2, e2) = (idx.clone(), ebr.clone());
        let reader = thread::spawn(move || {
            let check = |found: Option<u32>| {
                if let Some(s) = found {
                    assert_eq!((s, i2.key(s)), (0, 1), "read a reused slot");
                }
            };
            match reader {
                Reader::Pinned => e2.pinned(0, || check(i2.find(ha, 1))),
                Reader::Lazy => e2.lazily(0, |pin| check(i2.find_pinning(ha, 1, pin))),
                Reader::First => {
                    let first = e2.hazard_only(0, |pin| {
                        let r = i2.first_pinning(ha, 1, pin);
                        if let Ok(found) = r {
                            check(found);
                        }
                        r
                    });
                    if !matches!(first, Some(Ok(_))) {
                        e2.lazily(0, |pin| check(i2.find_pinning(ha, 1, pin)));
                    }
                }
            }
        });
        let s = ebr.pinned(1, || idx.remove(ha, 1)).expect("present");
        retire_and_reuse(&idx, &ebr, s, hb);
        reader.join().expect("reader");
    });
}

/// The unlinker's side of a reuse race: retires slot `s`, advances the epochs as far as they
/// go, and, if they let it, reuses `s` for key 2 (hash `hb`).
fn retire_and_reuse(idx: &Idx, ebr: &Ebr, s: u32, hb: u64) {
    let r = ebr.retire_epoch();
    let mut adv = ebr.try_advance();
    for _ in 0..2 {
        adv = ebr.try_advance();
    }
    if adv.reusable(s, r) {
        assert_eq!(idx.insert(hb, s, 2), None);
    }
}

/// How the reader of [`remove_racing_reuse`] protects what it reads.
#[derive(Clone, Copy)]
enum Reader {
    /// Pinned for the whole probe.
    Pinned,
    /// Protects lazily, at the first word with its tag.
    Lazy,
    /// The home bucket's first tagged word first, then the lazy probe if undecided.
    First,
}

#[test]
fn index_remove_racing_reuse() {
    remove_racing_reuse(Reader::Pinned, false);
}

#[test]
fn lazy_pin_vs_remove_and_reuse() {
    remove_racing_reuse(Reader::Lazy, false);
    remove_racing_reuse(Reader::Lazy, true);
}

#[test]
fn home_bucket_read_vs_remove_and_reuse() {
    remove_racing_reuse(Reader::First, false);
    remove_racing_reuse(Reader::First, true);
}

/// A removal protects the slot it unlinks lazily, by its hazard (as `Cache::remove` does), and
/// reads it after the unlinking (the value for the caller and the listener). Meanwhile an
/// evictor takes that slot from the policy (its unlinking CAS wins, and the removal finds
/// nothing, or loses to the removal's), retires it, and reuses it for another key as soon as
/// the epochs allow. The removal must read its own entry. `protect: false` is the mutant: a
/// removal that protects nothing.
fn remove_vs_eviction_and_reuse(protect: bool) {
    model(move || {
        let idx = Arc::new(Idx::new(4));
        let ebr = Arc::new(Ebr::new(4));
        let ha = idx.hash_in(0, 1);
        let hb = idx.hash_in(1, 2);
        idx.insert(ha, 0, 1);
        let (i2, e2) = (idx.clone(), ebr.clone());
        let remover = thread::spawn(move || {
            let read = |found: Option<u32>| {
                if let Some(s) = found {
                    assert_eq!((s, i2.key(s)), (0, 1), "read a reused slot");
                }
            };
            if protect {
                e2.lazily(0, |pin| read(i2.remove_pinning(ha, 1, pin)));
            } else {
                read(i2.remove(ha, 1));
            }
        });
        let _ = idx.remove_slot(ha, 0);
        retire_and_reuse(&idx, &ebr, 0, hb);
        remover.join().expect("remover");
    });
}

#[test]
fn remove_with_a_hazard_vs_eviction_and_reuse() {
    remove_vs_eviction_and_reuse(true);
}

/// Mutant: a removal that protects nothing reads a reused slot.
#[test]
#[should_panic(expected = "Causality violation")]
fn mutant_unprotected_remove_vs_eviction_and_reuse() {
    remove_vs_eviction_and_reuse(false);
}

/// Incarnation wrap-around: the victim's `next` version starts at `u32::MAX`, so re-enqueueing
/// it wraps its version to 0 while another thread's enqueue meets it half-way (as in
/// `take_and_reuse_vs_enqueue`). Versions are compared for equality only, so the wrap is an
/// incarnation like any other: nothing lost, nothing duplicated.
#[test]
fn incarnation_wrap_around() {
    for mode in ["fifo", "mobius"] {
        model(move || {
            let core = Arc::new(Core::new(mode, 2));
            core.slots.set_incarnation(0, u32::MAX - 1);
            core.slots.set_incarnation(1, u32::MAX);
            core.insert(0); // version MAX
            let c2 = core.clone();
            let t = thread::spawn(move || c2.insert(1)); // version 0 (wrapped)
            let a = core.evict();
            if let Some(s) = a {
                core.insert(s); // a new incarnation, across the wrap for slot 0 too
            }
            t.join().expect("thread");
            conserved(&core, 2, vec![]);
        });
    }
}

/// How the reader of [`update_in_place_vs_read`] protects the slot it reads.
#[derive(Clone, Copy, Debug)]
enum ValueReader {
    /// `Cache::read_first`: the home bucket under a hazard, else the lazy probe.
    Hazard,
    /// An epoch pin (iteration, `with_entry`).
    Pinned,
    /// An eviction: unlinks the word without a lock, then reads the value (for a listener).
    Evictor,
}

/// An update in place (`Cache::update_in_place`) racing with a reader of the same entry's
/// value: the reader sees the old value or the new one, never a value being written (loom
/// reports a write racing with a read of the value's cell). `settle`: the reader waits for the
/// write flag; `check_readers`: the updater looks for readers. Either off is a mutant that
/// must fail.
fn update_in_place_vs_read(reader: ValueReader, settle: bool, check_readers: bool) {
    model(move || {
        let idx = Arc::new(Idx::new(4));
        let ebr = Arc::new(Ebr::new(4));
        let h = idx.hash_in(0, 1);
        idx.write_value(0, 10);
        idx.insert(h, 0, 1);
        let (i2, e2) = (idx.clone(), ebr.clone());
        let t = thread::spawn(move || {
            let read = |s: u32| {
                let v = if settle { i2.value(s) } else { i2.value_unsettled(s) };
                assert!(v == 10 || v == 20, "read a value being written: {v}");
            };
            match reader {
                ValueReader::Hazard => {
                    let first = e2.hazard_only(0, |pin| {
                        let r = i2.first_pinning(h, 1, pin);
                        if let Ok(Some(s)) = r {
                            read(s);
                        }
                        r
                    });
                    if !matches!(first, Some(Ok(_))) {
                        e2.lazily(0, |pin| i2.find_pinning(h, 1, pin).map(read));
                    }
                }
                ValueReader::Pinned => e2.pinned(0, || i2.find(h, 1).map(read)).unwrap_or(()),
                ValueReader::Evictor => {
                    if i2.remove_slot(h, 0) {
                        let v = if settle { i2.value_unlinked(0) } else { i2.value_unsettled(0) };
                        assert!(v == 10 || v == 20, "read a value being written: {v}");
                    }
                }
            }
        });
        let wrote = idx.update_in_place(&ebr, 1, h, 1, 20, check_readers);
        t.join().expect("reader");
        if wrote {
            assert_eq!(idx.value(0), 20, "an update in place that said it wrote");
        }
    });
}

#[test]
fn update_in_place_vs_hazard_reader() {
    update_in_place_vs_read(ValueReader::Hazard, true, true);
}

#[test]
fn update_in_place_vs_pinned_reader() {
    update_in_place_vs_read(ValueReader::Pinned, true, true);
}

#[test]
fn update_in_place_vs_eviction() {
    update_in_place_vs_read(ValueReader::Evictor, true, true);
}

/// Mutant: a reader that does not wait for the write flag.
#[test]
#[should_panic(expected = "Causality violation")]
fn mutant_reader_ignores_the_write_flag() {
    update_in_place_vs_read(ValueReader::Hazard, false, true);
}

/// Mutant: an updater that writes whoever reads.
#[test]
#[should_panic(expected = "Causality violation")]
fn mutant_update_ignores_readers() {
    update_in_place_vs_read(ValueReader::Hazard, true, false);
}

/// Mutant: an eviction that reads the value it unlinked without waiting for the flag.
#[test]
#[should_panic(expected = "Causality violation")]
fn mutant_evictor_ignores_the_write_flag() {
    update_in_place_vs_read(ValueReader::Evictor, false, true);
}

/// Hollowing (`raw/slot.rs`): a removed slot's remover (which then collects its hollow entry:
/// drops its contents) and the queue's holder (which lets go of it) race; the contents must be
/// dropped exactly once, before the slot's one reuse, whoever comes first. `follow`: false is
/// the mutant whose holder retires every removed slot at once.
fn hollowing(follow: bool) {
    model(move || {
        let h = Arc::new(Hollowing::default());
        let h2 = h.clone();
        let t = thread::spawn(move || h2.holder(follow));
        if h.remove() {
            h.collect();
        }
        t.join().expect("holder");
        h.check();
    });
}

#[test]
fn hollowing_vs_letting_go() {
    hollowing(true);
}

/// Mutant: a holder that retires a removed slot whose contents wait for their hollow entry.
#[test]
#[should_panic(expected = "Causality violation")]
fn mutant_holder_ignores_hollowing() {
    hollowing(false);
}

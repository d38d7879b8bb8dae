//! Threads beyond the per-thread records of a cache (the first 64 live threads get one; the
//! others pin the epoch through shared counters). `compute` holds the slot its closure read
//! until its store with a hazard; a thread without a record of its own claims a spare one.
//! (Before the spares such a thread held the epoch pinned across its insert, which held back
//! the immediate reuse of every slot: 80 threads of `compute` on 2 cores ran 27× slower and
//! had thousands of computes refused.)
//!
//! One test, alone in its binary, so that its threads are the only ones holding records: 64
//! threads take them and wait while the checks run on threads beyond them.

#[path = "common/gap.rs"]
mod gap;

use sifter::{Cache, Policy};
use std::cell::RefCell;
use std::sync::mpsc;
use std::sync::{Arc, Barrier};

/// Records per cache (`raw::epoch::RECORDS`).
const RECORDS: usize = 64;

fn configs() -> Vec<(Policy, bool)> {
    let mut v: Vec<(Policy, bool)> = Policy::ALL.iter().map(|&p| (p, true)).collect();
    v.push((Policy::Mobius, false));
    v
}

type Shared = Arc<Cache<u64, u64>>;
/// A request to the updater thread: the cache, and where to say it is done.
type Ask = mpsc::Sender<(Shared, mpsc::Sender<()>)>;

/// A thread with a record, updating a cache's key when asked (the hook below asks it).
struct Updater {
    ask: Ask,
}

thread_local! {
    static GAP: RefCell<Option<(Shared, Ask)>> = const { RefCell::new(None) };
}

/// In the gap of a `compute` (its decision taken, the store to come), the updater thread,
/// which has a record, sets the key (in place when it can); this thread waits for it.
fn update_in_the_gap() {
    let (c, ask) = GAP.with(|g| g.borrow().clone()).expect("gap set");
    let (done, wait) = mpsc::channel();
    ask.send((c, done)).expect("the updater is alive");
    wait.recv().expect("the updater answers");
}

#[test]
#[cfg_attr(miri, ignore = "80 threads")]
fn computes_beyond_the_records() {
    // The updater first (it takes a record), then holders for the other records, all kept
    // alive until the end; this thread and the computing threads come after them.
    let (ask, asked) = mpsc::channel::<(Shared, mpsc::Sender<()>)>();
    let touch: Cache<u64, u64> = Cache::builder().capacity(8).build();
    let touch = Arc::new(touch);
    let ready = Arc::new(Barrier::new(RECORDS + 1));
    let updater = {
        let (touch, ready) = (touch.clone(), ready.clone());
        std::thread::spawn(move || {
            let _ = touch.get(&0);
            ready.wait();
            for (c, done) in asked {
                c.insert(1, 100);
                done.send(()).expect("the computing thread waits");
            }
        })
    };
    let release = Arc::new(Barrier::new(RECORDS));
    let holders: Vec<_> = (1..RECORDS)
        .map(|_| {
            let (touch, ready, release) = (touch.clone(), ready.clone(), release.clone());
            std::thread::spawn(move || {
                let _ = touch.get(&0);
                ready.wait();
                release.wait();
            })
        })
        .collect();
    ready.wait();
    let updater_handle = Updater { ask };

    an_update_in_the_gap_is_seen(&updater_handle);
    many_computes_reject_nothing();

    release.wait();
    for h in holders {
        h.join().expect("holder");
    }
    drop(updater_handle);
    updater.join().expect("updater");
}

/// `compute` on a thread without a record is atomic for its key: an update in place by a
/// thread with a record, landing between the closure's decision and the store, must see the
/// spare hazard and replace the entry instead, so the closure runs again on the new value.
fn an_update_in_the_gap_is_seen(updater: &Updater) {
    for (p, cd) in configs() {
        let c: Arc<Cache<u64, u64>> =
            Arc::new(Cache::builder().capacity(8).policy(p).consecutive_detection(cd).build());
        c.insert(1, 1);
        GAP.with(|g| *g.borrow_mut() = Some((c.clone(), updater.ask.clone())));
        let tag = format!("{p:?} cd={cd}");
        gap::compute_sees_the_update_in_its_gap(&c, update_in_the_gap, &tag);
        GAP.with(|g| *g.borrow_mut() = None);
    }
}

/// 80 threads without records `compute` over a full cache at once: none is refused.
fn many_computes_reject_nothing() {
    const THREADS: u64 = 80;
    for (p, cd) in configs() {
        let c: Arc<Cache<u64, u64>> =
            Arc::new(Cache::builder().capacity(1000).policy(p).consecutive_detection(cd).build());
        gap::computes_reject_nothing(&c, THREADS, 10_000, &format!("{p:?} cd={cd}"));
    }
}

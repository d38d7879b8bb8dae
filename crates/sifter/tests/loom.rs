//! Model checks (loom) of the lock-free queue policies with 2–3 threads and tiny queues, where
//! the head ABA, the enqueue gap, the last-node race and the queue switch live.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p sifter --release --test loom`
//! (`scripts/loom.sh`). Each check asserts conservation: every item is, at the end, either
//! evicted exactly once or still queued exactly once — never lost, never duplicated.
#![cfg(loom)]

use loom::thread;
use sifter::loom_api::{Core, Item};
use std::sync::Arc;

fn conserved(core: &Core, n: usize, evicted: Vec<Option<usize>>) {
    let mut seen = vec![0u32; n];
    for id in evicted.iter().flatten().copied() {
        seen[id] += 1;
    }
    let dbg = format!("{evicted:?} {}", core.debug_state());
    for id in core.items().unwrap_or_else(|e| panic!("queue invariants: {e}; evicted {dbg}")) {
        seen[id] += 1;
    }
    assert!(seen.iter().all(|&c| c == 1), "lost or duplicated items: {seen:?}");
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(2);
    }
    b.check(f);
}

/// Two evictors race on the head of a short queue with a visited run (consecutive detection).
#[test]
fn mobius_two_evictors() {
    model(|| {
        let core = Arc::new(Core::new("mobius"));
        for (id, v) in [(0, true), (1, false), (2, true), (3, false)] {
            core.insert(Item::new(id, v));
        }
        let c2 = core.clone();
        let t = thread::spawn(move || c2.evict());
        let a = core.evict();
        let b = t.join().expect("thread");
        assert!(a.is_some() || b.is_some());
        conserved(&core, 4, vec![a, b]);
    });
}

/// An evictor against an inserter on a queue with two items: the enqueue gap and the
/// last-node protocol.
#[test]
fn mobius_evict_vs_insert_near_empty() {
    model(|| {
        let core = Arc::new(Core::new("mobius"));
        core.insert(Item::new(0, false));
        core.insert(Item::new(1, true));
        let c2 = core.clone();
        let t = thread::spawn(move || c2.insert(Item::new(2, false)));
        let a = core.evict();
        t.join().expect("thread");
        conserved(&core, 3, vec![a]);
    });
}

/// Everything visited: both evictors reach the end and race to switch the queues.
#[test]
fn mobius_switch_race() {
    model(|| {
        let core = Arc::new(Core::new("mobius"));
        for id in 0..3 {
            core.insert(Item::new(id, true));
        }
        let c2 = core.clone();
        let t = thread::spawn(move || c2.evict());
        let a = core.evict();
        let b = t.join().expect("thread");
        conserved(&core, 3, vec![a, b]);
    });
}

/// One item left: two evictors race for the last node while a third thread inserts.
#[test]
fn mobius_last_node_three_threads() {
    model(|| {
        let core = Arc::new(Core::new("mobius"));
        core.insert(Item::new(0, false));
        let (c2, c3) = (core.clone(), core.clone());
        let t2 = thread::spawn(move || c2.evict());
        let t3 = thread::spawn(move || c3.insert(Item::new(1, false)));
        let a = core.evict();
        let b = t2.join().expect("thread");
        t3.join().expect("thread");
        conserved(&core, 2, vec![a, b]);
    });
}

/// The w/d ablation relinks single nodes; CLOCK relinks into the same queue; FIFO takes heads.
#[test]
fn single_queue_modes_and_wd() {
    for mode in ["mobius-wd", "clock", "fifo"] {
        model(move || {
            let core = Arc::new(Core::new(mode));
            for (id, v) in [(0, true), (1, true), (2, false)] {
                core.insert(Item::new(id, v));
            }
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
        let core = Arc::new(Core::new("mobius"));
        let hot = Item::new(0, false);
        core.insert(hot);
        core.insert(Item::new(1, false));
        core.insert(Item::new(2, false));
        let t = thread::spawn(move || hot.touch());
        let a = core.evict();
        t.join().expect("thread");
        conserved(&core, 3, vec![a]);
    });
}

/// Two evictors on every mode and queue length 1..=3 (all but the last item visited).
#[test]
fn two_evictors_every_mode_and_length() {
    for mode in ["fifo", "clock", "mobius-wd", "mobius"] {
        for n in 1..=3 {
            model(move || {
                let core = Arc::new(Core::new(mode));
                for id in 0..n {
                    core.insert(Item::new(id, id + 1 < n));
                }
                let c2 = core.clone();
                let t = thread::spawn(move || c2.evict());
                let a = core.evict();
                let b = t.join().expect("thread");
                conserved(&core, n, vec![a, b]);
            });
        }
    }
}

/// The published code's ABA scenario: a thread evicts a key and immediately inserts it again
/// (CacheLib recycles the item's memory at once) while another thread scans from a head it read
/// earlier. In sifter a re-insert is a new item (the old one's memory is epoch-protected), so
/// the model inserts a fresh item with the same id.
#[test]
fn evict_and_reinsert_race() {
    model(|| {
        let core = Arc::new(Core::new("mobius"));
        for id in 0..3 {
            core.insert(Item::new(id, id == 1));
        }
        let c2 = core.clone();
        let t = thread::spawn(move || c2.evict());
        let a = core.evict();
        if let Some(id) = a {
            core.insert(Item::new(id, false));
        }
        let b = t.join().expect("thread");
        // `a` went back in, so only `b` counts as evicted.
        conserved(&core, 3, vec![b]);
    });
}

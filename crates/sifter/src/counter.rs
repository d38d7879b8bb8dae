//! A striped counter: each thread adds to its own cache line, readers sum the stripes. Exact
//! when no update is in flight; updates never contend across cores (the single shared counter
//! it replaces was the hottest cache line of the insert path with two threads).

use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

const STRIPES: usize = 16;

static NEXT_ID: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
}

fn stripe() -> usize {
    STRIPE.with(|s| {
        let v = s.get();
        if v != usize::MAX {
            return v;
        }
        // Relaxed: only spreads threads over stripes.
        let v = NEXT_ID.fetch_add(1, Ordering::Relaxed) % STRIPES;
        s.set(v);
        v
    })
}

#[derive(Debug)]
pub(crate) struct Striped {
    cells: Box<[CachePadded<AtomicI64>]>,
}

impl Striped {
    pub fn new() -> Self {
        Striped { cells: (0..STRIPES).map(|_| CachePadded::new(AtomicI64::new(0))).collect() }
    }

    #[inline]
    pub fn add(&self, delta: i64) {
        // Relaxed: a statistic; each update is one RMW so the sum is exact at rest.
        self.cells[stripe()].fetch_add(delta, Ordering::Relaxed);
    }

    /// The sum (never negative: a transient negative sum, seen mid-update, reads as 0).
    pub fn sum(&self) -> u64 {
        // Relaxed: see `add`.
        self.cells.iter().map(|c| c.load(Ordering::Relaxed)).sum::<i64>().max(0) as u64
    }
}

//! Hooks for the loom model checks (`tests/loom.rs`), compiled only with `--cfg loom`: the
//! queue policies over a small array of slots, and the epochs, with a model arena whose slots
//! are really reused (so a reuse the epochs should have prevented shows up as a corrupted
//! value or a lost or duplicated slot).

use crate::policy::queues::{Mode, Nodes, Queues};
use crate::raw::epoch::Epochs;
use crate::raw::queue::Links;
use crate::sync::{AtomicU64, AtomicU8, Ordering};

/// Model slots: queue link, reference bit, liveness.
#[derive(Debug)]
pub struct Slots {
    next: Vec<AtomicU64>,
    visited: Vec<AtomicU8>,
    live: Vec<AtomicU8>,
}

impl Slots {
    /// `n` slots, not visited, live.
    pub fn new(n: usize) -> Self {
        Slots {
            next: (0..n).map(|_| AtomicU64::new(u32::MAX as u64)).collect(),
            visited: (0..n).map(|_| AtomicU8::new(0)).collect(),
            live: (0..n).map(|_| AtomicU8::new(1)).collect(),
        }
    }
    /// A hit on slot `s`.
    pub fn touch(&self, s: u32) {
        self.visited[s as usize].store(1, Ordering::Relaxed);
    }
    /// Sets slot `s`'s reference bit.
    pub fn set_visited(&self, s: u32, v: bool) {
        self.visited[s as usize].store(v as u8, Ordering::Relaxed);
    }
    /// Marks slot `s` removed (a candidate without a second chance).
    pub fn kill(&self, s: u32) {
        self.live[s as usize].store(0, Ordering::Relaxed);
    }
}

impl Links for Slots {
    fn next(&self, s: u32) -> &AtomicU64 {
        &self.next[s as usize]
    }
}

impl Nodes for Slots {
    fn visited(&self, s: u32) -> &AtomicU8 {
        &self.visited[s as usize]
    }
    fn is_live(&self, s: u32) -> bool {
        self.live[s as usize].load(Ordering::Relaxed) != 0
    }
    fn count(&self) -> usize {
        self.next.len()
    }
}

/// Mobius / CLOCK / FIFO queues over [`Slots`].
#[derive(Debug)]
pub struct Core {
    q: Queues,
    /// The slots.
    pub slots: Slots,
}

impl Core {
    /// `mode`: "mobius", "mobius-wd", "clock" or "fifo"; `n` slots.
    pub fn new(mode: &str, n: usize) -> Core {
        Core {
            q: Queues::new(match mode {
                "mobius" => Mode::Mobius { consecutive: true },
                "mobius-wd" => Mode::Mobius { consecutive: false },
                "clock" => Mode::Clock,
                _ => Mode::Fifo,
            }),
            slots: Slots::new(n),
        }
    }
    /// Enqueues slot `s` (which must be in no queue), reference bit cleared.
    pub fn insert(&self, s: u32) {
        self.slots.set_visited(s, false);
        self.q.insert(&self.slots, s);
    }
    /// Evicts one slot.
    pub fn evict(&self) -> Option<u32> {
        self.q.evict(&self.slots)
    }
    /// Slots in the queues (quiescent), or a broken-invariant error.
    pub fn items(&self) -> Result<Vec<u32>, String> {
        self.q.items(&self.slots)
    }
    /// Head and tail words, for failure messages.
    pub fn debug_state(&self) -> String {
        let next: Vec<String> = self
            .slots
            .next
            .iter()
            .map(|n| {
                let w = n.load(Ordering::Relaxed);
                format!("v{}:{}", w >> 32, w as u32 as i64 - (u32::MAX as i64))
            })
            .collect();
        format!("{} next(v:slot-NIL) [{}]", self.q.debug_state(), next.join(" "))
    }
}

/// The epochs, with few records (so the shared-counter path is modelled too).
#[derive(Debug)]
pub struct Ebr(Epochs);

impl Ebr {
    /// Epochs with `records` private records.
    pub fn new(records: usize) -> Self {
        Ebr(Epochs::with_records(records))
    }
    /// Pins thread `tid` while `f` runs.
    pub fn pinned<R>(&self, tid: usize, f: impl FnOnce() -> R) -> R {
        let _g = self.0.pin(tid);
        f()
    }
    /// The epoch for a slot retired now.
    pub fn retire_epoch(&self) -> u64 {
        self.0.retire_epoch()
    }
    /// Tries to advance; the epoch now.
    pub fn try_advance(&self) -> u64 {
        self.0.try_advance()
    }
    /// Whether a slot retired at `retired` is reusable at `now`.
    pub fn reusable(retired: u64, now: u64) -> bool {
        Epochs::reusable(retired, now)
    }
}

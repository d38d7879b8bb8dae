//! Hooks for the loom model checks (`tests/loom.rs`), compiled only with `--cfg loom`: the
//! queue policies over a minimal item type, with nodes leaked instead of epoch-reclaimed (loom
//! models the atomics; reclamation is crossbeam-epoch's, tested separately under Miri).

use crate::policy::queues::{Mode, QueueItem, Queues};
use crate::raw::queue::{QNode, Reclaim};
use crate::sync::{AtomicBool, Ordering};

/// A queue item: an id and a reference bit.
#[derive(Debug)]
pub struct Item {
    node: QNode<Item>,
    /// Identity.
    pub id: usize,
    visited: AtomicBool,
}

impl Item {
    /// A leaked item (lives for the whole model run).
    pub fn new(id: usize, visited: bool) -> &'static Item {
        let p = Box::into_raw(Box::new(Item {
            node: QNode::embedded(),
            id,
            visited: AtomicBool::new(visited),
        }));
        // SAFETY: fresh, unshared.
        unsafe {
            (*p).node.item = p;
            &*p
        }
    }
    /// A hit.
    pub fn touch(&self) {
        self.visited.store(true, Ordering::Relaxed);
    }
}

impl QueueItem for Item {
    unsafe fn embedded_node(this: *const Self) -> *mut QNode<Self> {
        // SAFETY: valid item; no reference created.
        unsafe { std::ptr::addr_of!((*this).node).cast_mut() }
    }
    fn visited(&self) -> &AtomicBool {
        &self.visited
    }
    fn is_live(&self) -> bool {
        true
    }
}

struct Leak;
impl Reclaim for Leak {
    unsafe fn retire_node<T>(&self, _node: *mut QNode<T>) {}
}

/// Mobius / CLOCK / FIFO queues.
#[derive(Debug)]
pub struct Core(Queues<Item>);

impl Core {
    /// `mode`: "mobius", "mobius-wd", "clock" or "fifo".
    pub fn new(mode: &str) -> Core {
        Core(Queues::new(match mode {
            "mobius" => Mode::Mobius { consecutive: true },
            "mobius-wd" => Mode::Mobius { consecutive: false },
            "clock" => Mode::Clock,
            _ => Mode::Fifo,
        }))
    }
    /// Enqueues an item (each item at most once: use a new `Item` to re-insert an id).
    pub fn insert(&self, item: &'static Item) {
        // SAFETY: items are leaked ('static); no reclamation under loom.
        unsafe { self.0.insert(item) }
    }
    /// Evicts one item.
    pub fn evict(&self) -> Option<usize> {
        // SAFETY: nodes are leaked, so every node stays allocated.
        unsafe { self.0.evict(&Leak) }.map(|p| {
            // SAFETY: items are 'static.
            unsafe { (*p).id }
        })
    }
    /// Ids in the queues (quiescent), or a broken-invariant error.
    pub fn items(&self) -> Result<Vec<usize>, String> {
        // SAFETY: called after all threads joined.
        let v = unsafe { self.0.items(1000) }?;
        // SAFETY: items are 'static.
        Ok(v.into_iter().map(|p| unsafe { (*p).id }).collect())
    }

    /// Head chain and tail of each queue, for failure messages.
    pub fn debug_state(&self) -> String {
        // SAFETY: quiescent; nodes leaked.
        unsafe { self.0.debug_state() }
    }
}

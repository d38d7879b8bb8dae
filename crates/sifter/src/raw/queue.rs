//! A lock-free FIFO queue of items for eviction: Mobius's queue (Dong et al., POMACS 2025,
//! Appendix A/B) with the published defects fixed.
//!
//! # Algorithm
//!
//! A singly linked list from `head` (oldest) to `tail` (newest) of [`QNode`]s, each pointing to
//! one item. There is no dummy node: an empty queue has `head == tail == null`.
//!
//! * **Enqueue a chain** `first..=last` (Vyukov-style): `old = tail.swap(last)`; then
//!   `head = first` if `old` was null (the queue was empty), else `old.next = first`. Between the
//!   swap and the link, the chain is not reachable from `head` yet: a dequeuer that reaches `old`
//!   sees `old.next == null` and treats `old` as the last node (the "enqueue gap").
//! * **Detach a prefix** `start..=cur` where `cur.next` is not null: one CAS of `head` from
//!   `start` to `cur.next`. Dequeuers never touch `tail` on this path, and never take a node
//!   whose `next` is null this way, so they never race with enqueuers on the last node.
//! * **Take the last node** `L` (`head == L`, `L.next == null`): CAS `tail` from `L` to null —
//!   success means no enqueue has swapped the tail past `L`, so `L` is ours — then CAS `head`
//!   from `L` to null (it fails harmlessly if an enqueuer that saw the null tail already set
//!   `head`). The published code had no such path and recursed forever when both queues held one
//!   node; this path lets an almost empty cache still evict.
//!
//! # Why there is no ABA on `head`
//!
//! The published head CAS compared raw pointers, and a node could come back to the head of the
//! same queue (relinked as visited, or recycled), so a stale CAS succeeded and lost nodes. Here
//! a `QNode` is **enqueued exactly once**: relinking an item allocates a *new* `QNode`, and a
//! detached `QNode` is only retired (to the epoch collector), never re-enqueued. A thread that
//! read `head == start` holds an epoch guard, so `start`'s memory cannot be reused for another
//! node while it might still compare against it. Hence `head == start` at the CAS means nothing
//! was detached since the read, and `start..=cur` (whose `next` links never change while
//! queued) is exactly what the thread scanned.
//!
//! # Memory
//!
//! `QNode`s are `Box`-allocated. Whoever detaches a node owns it and must retire it through a
//! [`Reclaim`] (epoch-deferred free), because other threads may still be reading it.

use crate::sync::{AtomicPtr, Ordering};
use crossbeam_utils::CachePadded;
use std::ptr;

/// One queue position of an item.
///
/// An item's *first* position is a node embedded in the item itself (no allocation on insert);
/// when the item is relinked (a second chance), it gets a heap node. Either way a node is
/// enqueued at most once.
#[derive(Debug)]
pub(crate) struct QNode<T> {
    /// The item; set before the node is first enqueued, never changed after.
    pub item: *const T,
    /// The next (newer) node, or null for the last node. Written once by the enqueuer that
    /// links after this node (Release), read by scanners (Acquire); never changed afterwards.
    pub next: AtomicPtr<QNode<T>>,
    /// Heap-allocated by [`QNode::alloc`] (retire it when detached), or embedded in its item
    /// (it lives and dies with the item).
    pub heap: bool,
}

impl<T> QNode<T> {
    /// Allocates an unlinked node for `item`.
    pub fn alloc(item: *const T) -> *mut QNode<T> {
        Box::into_raw(Box::new(QNode { item, next: AtomicPtr::new(ptr::null_mut()), heap: true }))
    }

    /// A node to embed in an item; its `item` is set when the item's address is known.
    pub fn embedded() -> QNode<T> {
        QNode { item: ptr::null(), next: AtomicPtr::new(ptr::null_mut()), heap: false }
    }
}

/// Defers freeing detached nodes until no thread can be reading them.
pub(crate) trait Reclaim {
    /// Frees `node` once every thread that might hold a reference to it has moved on.
    ///
    /// # Safety
    /// `node` came from [`QNode::alloc`], is no longer reachable from any queue, and is retired
    /// exactly once.
    unsafe fn retire_node<T>(&self, node: *mut QNode<T>);

    /// Retires `node` if it is a heap node; an embedded node is freed with its item.
    ///
    /// # Safety
    /// `node` is detached and owned by the caller, and released exactly once.
    unsafe fn release_node<T>(&self, node: *mut QNode<T>) {
        // SAFETY: owned, allocated node.
        if unsafe { (*node).heap } {
            // SAFETY: a heap node from QNode::alloc, detached, released once.
            unsafe { self.retire_node(node) };
        }
    }
}

#[cfg(not(loom))]
impl Reclaim for crossbeam_epoch::Guard {
    unsafe fn retire_node<T>(&self, node: *mut QNode<T>) {
        // SAFETY: the caller guarantees `node` is an unreachable, once-retired Box allocation;
        // the epoch scheme runs the closure only after all guards that could see it are gone.
        unsafe {
            self.defer_unchecked(move || drop(Box::from_raw(node)));
        }
    }
}

/// The queue.
#[derive(Debug)]
pub(crate) struct Queue<T> {
    /// Oldest node, or null when the queue is empty (or an enqueue into an empty queue has
    /// swapped `tail` but not yet set `head`).
    head: CachePadded<AtomicPtr<QNode<T>>>,
    /// Newest node, or null when empty.
    tail: CachePadded<AtomicPtr<QNode<T>>>,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue {
            head: CachePadded::new(AtomicPtr::new(ptr::null_mut())),
            tail: CachePadded::new(AtomicPtr::new(ptr::null_mut())),
        }
    }
}

impl<T> Queue<T> {
    /// The oldest node (null if empty).
    pub fn head(&self) -> *mut QNode<T> {
        // Acquire: pairs with the Release store/CAS that installed this head (enqueue into an
        // empty queue, or a detach), so the node's fields are visible.
        self.head.load(Ordering::Acquire)
    }

    /// The newest node (null if empty).
    pub fn tail(&self) -> *mut QNode<T> {
        // Acquire: pairs with the AcqRel swap in `enqueue_chain`.
        self.tail.load(Ordering::Acquire)
    }

    /// Appends the chain `first..=last`.
    ///
    /// # Safety
    /// The chain is private to the caller, linked through `next`, with `last.next == null`;
    /// none of its nodes was ever enqueued before. The caller is pinned (epoch), so the old
    /// tail it may write to cannot be freed under it.
    pub unsafe fn enqueue_chain(&self, first: *mut QNode<T>, last: *mut QNode<T>) {
        // AcqRel: Release publishes the chain's initialised fields to whoever loads the tail;
        // Acquire makes the old tail's allocation visible before we write its `next`.
        let old = self.tail.swap(last, Ordering::AcqRel);
        if old.is_null() {
            // AcqRel swap rather than a plain store: a `take_last` of the previous lone node may
            // still be about to CAS `head` from that node to null. Both being read-modify-writes,
            // one is ordered after the other and that CAS fails once we have swapped. (Under the
            // C11 model a plain store is already enough, since the CAS must read the value just
            // before it; loom models modification order only partially and reports a lost head
            // with a plain store, so we use the RMW, which costs nothing measurable on this rare
            // path.) Release: pairs with the Acquire load in `head()`; the chain is reachable.
            self.head.swap(first, Ordering::AcqRel);
        } else {
            // SAFETY: `old` was the tail, so it is still allocated (it is detached only after a
            // scanner reads a non-null `next`, which we write now, or by `take_last`, which
            // would have made our swap return null), and we are pinned.
            // Release: pairs with the Acquire load of `next` by scanners.
            unsafe { (*old).next.store(first, Ordering::Release) };
        }
    }

    /// Detaches `start..=cur` if `start` is still the head: CAS `head` to `new_head`
    /// (`cur.next`, not null, or `cur` itself to detach only the nodes before it).
    pub fn detach(&self, start: *mut QNode<T>, new_head: *mut QNode<T>) -> bool {
        debug_assert!(!new_head.is_null());
        // AcqRel on success: Acquire orders our later reads of the detached nodes after the
        // CAS; Release publishes nothing new but keeps the head's history a total order.
        // Acquire on failure: we rescan from the new head.
        self.head.compare_exchange(start, new_head, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// Takes the lone node `last` (which the caller saw as the head with a null `next`).
    /// Returns false if an enqueue got past it, or another thread took it.
    pub fn take_last(&self, last: *mut QNode<T>) -> bool {
        // AcqRel: success makes us the owner of `last` (no enqueuer linked after it).
        if self
            .tail
            .compare_exchange(last, ptr::null_mut(), Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return false;
        }
        // Fails harmlessly if an enqueuer saw the null tail and already stored its own head.
        let _ =
            self.head.compare_exchange(last, ptr::null_mut(), Ordering::AcqRel, Ordering::Acquire);
        true
    }

    /// Walks the queue (only meaningful when no other thread is operating on it): the nodes
    /// from head to tail, or an error describing a broken invariant.
    ///
    /// # Safety
    /// No concurrent operation on this queue.
    pub unsafe fn walk(&self, limit: usize) -> Result<Vec<*mut QNode<T>>, String> {
        let mut out = Vec::new();
        let mut cur = self.head();
        while !cur.is_null() {
            if out.len() > limit {
                return Err(format!("queue longer than {limit} nodes: a cycle?"));
            }
            out.push(cur);
            // SAFETY: quiescent queue, every linked node is allocated.
            cur = unsafe { (*cur).next.load(Ordering::Acquire) };
        }
        let last = out.last().copied().unwrap_or(ptr::null_mut());
        if last != self.tail() {
            return Err("the last node reachable from head is not the tail".into());
        }
        Ok(out)
    }

    /// Unlinks every node (exclusive access): returns them for the caller to free.
    #[cfg_attr(loom, allow(dead_code))]
    pub fn take_all(&mut self) -> Vec<*mut QNode<T>> {
        // SAFETY: `&mut self` — no concurrent operation.
        let nodes = unsafe { self.walk(usize::MAX) }.unwrap_or_default();
        self.head.store(ptr::null_mut(), Ordering::Relaxed);
        self.tail.store(ptr::null_mut(), Ordering::Relaxed);
        nodes
    }
}

//! Eviction listener: why an entry left, and delivery outside every lock.

use std::any::Any;
use std::cell::RefCell;

/// Why an entry left the cache (given to the eviction listener).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RemovalCause {
    /// Evicted by the policy to make room.
    Evicted,
    /// Its expiry time passed.
    Expired,
    /// Removed explicitly: `remove`, `retain`/`remove_if`, `compute` returning
    /// [`Op::Remove`](crate::Op::Remove), or an insert whose new value was too heavy to store.
    Removed,
    /// Its value was replaced by `insert` or `compute`.
    Replaced,
    /// Removed by `clear`.
    Cleared,
}

impl RemovalCause {
    /// Whether the cache chose to drop the entry (eviction or expiry) rather than the user.
    pub fn was_evicted(self) -> bool {
        matches!(self, RemovalCause::Evicted | RemovalCause::Expired)
    }
}

pub(crate) type ListenerFn<K, V> = Box<dyn Fn(&K, &V, RemovalCause) + Send + Sync>;

thread_local! {
    /// A listener's panic, held until the cache operation that called it has finished.
    static PENDING: RefCell<Option<Box<dyn Any + Send>>> = const { RefCell::new(None) };
}

/// Calls `f`; a panic is caught and kept (the first one per operation) so the operation can
/// finish and leave the cache consistent before [`resume`] rethrows it.
pub(crate) fn call(f: impl FnOnce()) {
    if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        let _ = PENDING.try_with(|c| {
            let mut c = c.borrow_mut();
            if c.is_none() {
                *c = Some(p);
            }
        });
    }
}

/// Rethrows a listener panic caught during this thread's operation, if any.
#[inline]
pub(crate) fn resume() {
    if let Some(p) = PENDING.try_with(|c| c.borrow_mut().take()).ok().flatten() {
        std::panic::resume_unwind(p);
    }
}

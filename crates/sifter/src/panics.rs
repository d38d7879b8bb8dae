//! Panic safety for user code the cache calls mid-operation (the listener, a custom expiry, a
//! key's or value's `Drop`): the panic is caught, the operation completes so the cache stays
//! consistent (no lock held, nothing leaked, invariants intact), and the panic is resumed in
//! the calling thread when the public operation returns.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};

thread_local! {
    /// A panic of user code, held until the cache operation that called it has finished.
    static PENDING: RefCell<Option<Box<dyn Any + Send>>> = const { RefCell::new(None) };
    /// How many calls of [`defer`] the thread is inside (user code called by the cache).
    static INSIDE: Cell<u32> = const { Cell::new(0) };
}

/// Whether this thread is running user code that a cache operation called ([`defer`]): an
/// operation it makes may be nested in another of this thread, which may hold what it waits
/// for (an insert's tokens, while its eviction calls the listener), so it does not wait for
/// other threads (see `Cache::acquire`).
#[inline]
pub(crate) fn in_user_code() -> bool {
    INSIDE.try_with(|c| c.get() > 0).unwrap_or(false)
}

/// Panics held in `PENDING` of any thread (so `resume` skips the thread-local when none).
static HELD: AtomicUsize = AtomicUsize::new(0);

/// Calls `f` (user code: the listener, a custom expiry, a `Drop` run by the cache); a panic is
/// caught and kept (the first one per operation) so the operation can finish and leave the
/// cache consistent before [`resume`] rethrows it. Returns whether `f` completed.
#[inline]
pub(crate) fn defer(f: impl FnOnce()) -> bool {
    let _ = INSIDE.try_with(|c| c.set(c.get() + 1));
    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    let _ = INSIDE.try_with(|c| c.set(c.get() - 1));
    match done {
        Ok(()) => true,
        Err(p) => {
            let _ = PENDING.try_with(|c| {
                let mut c = c.borrow_mut();
                if c.is_none() {
                    *c = Some(p);
                    // Relaxed: a hint that some thread holds one; the thread-local decides.
                    HELD.fetch_add(1, Ordering::Relaxed);
                }
            });
            false
        }
    }
}

/// Rethrows a user-code panic caught during this thread's operation, if any. Public cache
/// operations call this last, when the cache is consistent again.
#[inline]
pub(crate) fn resume() {
    // Relaxed: our own increment is visible to us; other threads' don't concern us.
    if HELD.load(Ordering::Relaxed) == 0 {
        return;
    }
    if let Some(p) = PENDING.try_with(|c| c.borrow_mut().take()).ok().flatten() {
        HELD.fetch_sub(1, Ordering::Relaxed);
        std::panic::resume_unwind(p);
    }
}

//! Panic safety for user code the cache calls mid-operation (the listener, a custom expiry, a
//! key's or value's `Drop`): the panic is caught, the operation completes so the cache stays
//! consistent (no lock held, nothing leaked, invariants intact), and the panic is resumed in
//! the calling thread when the public operation returns.

use std::any::Any;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

thread_local! {
    /// A panic of user code, held until the cache operation that called it has finished.
    static PENDING: RefCell<Option<Box<dyn Any + Send>>> = const { RefCell::new(None) };
}

/// Panics held in `PENDING` of any thread (so `resume` skips the thread-local when none).
static HELD: AtomicUsize = AtomicUsize::new(0);

/// Calls `f` (user code: the listener, a custom expiry, a `Drop` run by the cache); a panic is
/// caught and kept (the first one per operation) so the operation can finish and leave the
/// cache consistent before [`resume`] rethrows it. Returns whether `f` completed.
#[inline]
pub(crate) fn defer(f: impl FnOnce()) -> bool {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
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

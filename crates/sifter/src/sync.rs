//! One sync shim, so the lock-free core can be model-checked with loom
//! (`RUSTFLAGS="--cfg loom" cargo test -p sifter --release --test loom`).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

/// Gives up the CPU: a preempted enqueuer may be what this thread waits for.
pub(crate) fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}

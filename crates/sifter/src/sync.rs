//! One sync shim, so the lock-free primitives can be model-checked with loom
//! (`RUSTFLAGS="--cfg loom" cargo test -p sifter --release --test loom`).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicU64, AtomicU8, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU64, AtomicU8, AtomicUsize, Ordering};

/// Gives up the CPU: a preempted thread may be what this one waits for.
pub(crate) fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}

/// Spins briefly, then yields: the wait of every retry loop in the core.
#[derive(Debug, Default)]
pub(crate) struct Backoff(#[cfg_attr(loom, allow(dead_code))] u32);

impl Backoff {
    pub fn snooze(&mut self) {
        #[cfg(not(loom))]
        if self.0 < 6 {
            for _ in 0..(1u32 << self.0) {
                std::hint::spin_loop();
            }
            self.0 += 1;
            return;
        }
        yield_now();
    }
}

//! One sync shim, so the lock-free primitives can be model-checked with loom
//! (`RUSTFLAGS="--cfg loom" cargo test -p sifter --release --test loom`).

#[cfg(loom)]
pub use dpor::AtomicU64;
#[cfg(loom)]
pub(crate) use dpor::{AtomicU32, AtomicU8, AtomicUsize};
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};

/// The blocking mutex of the core's locked parts (LRU's and SIEVE's lists, the arena's growth,
/// `set_capacity`): parking_lot's, except under Miri, where std's stands in. parking_lot_core
/// 0.9 passes `&AtomicI32` to `syscall(SYS_futex, ..)` when a thread parks, which Miri's type
/// checks of variadic arguments (nightlies since 2026-09-11, rust-lang/rust#161734) report as
/// undefined behaviour — a mismatch in the declared pointer type, not a bug of ours — and
/// whether a run parks depends on Miri's interleaving.
#[cfg(not(miri))]
pub(crate) use parking_lot::Mutex;

/// See the non-Miri `Mutex` (parking_lot's).
#[cfg(miri)]
#[derive(Debug, Default)]
pub(crate) struct Mutex<T>(std::sync::Mutex<T>);

#[cfg(miri)]
impl<T> Mutex<T> {
    pub const fn new(v: T) -> Self {
        Mutex(std::sync::Mutex::new(v))
    }

    /// Locks; a holder that panicked left nothing half-done (as with parking_lot, which has
    /// no poisoning).
    pub fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Asks the CPU to fetch the cache line holding `at` (`write`: for writing) while the caller
/// does other work: a hint with no architectural effect; nothing on other targets, Miri or loom.
///
/// For writing it is `PREFETCHW` where the CPU has it (checked once, [`has_prefetchw`]): the
/// line comes exclusive, so a line other cores hold too is invalidated there while the caller
/// works, not when it first writes. (The `_MM_HINT_ET0` intrinsic is `PREFETCHT0`, a read, in a
/// build without the `prfchw` target feature, which x86-64's baseline lacks.) Else, and for
/// reading, `PREFETCHT0`.
#[inline]
pub(crate) fn prefetch<T>(at: &T, write: bool) {
    #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
    {
        let p = at as *const T as *const u8;
        if write && has_prefetchw() {
            // SAFETY: the CPU has PREFETCHW (CPUID, `has_prefetchw`); `p` comes from a
            // reference, and a prefetch cannot fault or change memory either way.
            unsafe {
                std::arch::asm!(
                    "prefetchw [{}]",
                    in(reg) p,
                    options(nostack, preserves_flags, readonly)
                );
            }
        } else {
            // SAFETY: as above; PREFETCHT0 is part of SSE, which x86-64 always has.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    p as *const i8,
                )
            };
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri), not(loom))))]
    let _ = (at, write);
}

/// Whether the CPU has `PREFETCHW` (CPUID 8000_0001h, ECX bit 8: AMD since the K6-2, Intel
/// since Broadwell), asked once per process. `std::arch`'s feature detection does not cover
/// it.
#[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
#[inline]
fn has_prefetchw() -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    /// 0: not asked yet, 1: no, 2: yes.
    static HAS: AtomicU8 = AtomicU8::new(0);
    #[cold]
    fn ask() -> bool {
        #[allow(unused_unsafe)] // `__cpuid` is a safe function on newer toolchains
        // SAFETY: CPUID exists on every x86-64 CPU; leaf 8000_0001h is read only when the
        // highest extended leaf (8000_0000h's EAX) reaches it.
        let yes = unsafe {
            use std::arch::x86_64::__cpuid;
            __cpuid(0x8000_0000).eax >= 0x8000_0001 && __cpuid(0x8000_0001).ecx & (1 << 8) != 0
        };
        // Relaxed: every thread computes the same answer; the value is all that is shared.
        HAS.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
        yes
    }
    // Relaxed: as above.
    match HAS.load(Ordering::Relaxed) {
        2 => true,
        1 => false,
        _ => ask(),
    }
}

/// A store followed by a full barrier, so that the store is ordered before every later load
/// of this thread: the announcements of the epochs and hazards, and the begin of an in-place
/// write (Dekker's pairing on both). On x86-64 a locked exchange is such a barrier and much
/// cheaper than `mfence` (which also waits for outstanding cache misses), as crossbeam-epoch
/// does; the compiler fence keeps the compiler from moving later loads above it. Elsewhere,
/// and under Miri and loom, a Release store and a `SeqCst` fence. Either way the store is a
/// Release store.
pub(crate) trait FencedStore {
    type Value;
    fn store_fenced(&self, v: Self::Value);
}

macro_rules! fenced_store {
    ($atomic:ty, $value:ty) => {
        impl FencedStore for $atomic {
            type Value = $value;
            #[inline(always)]
            fn store_fenced(&self, v: $value) {
                #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
                {
                    // SeqCst: a locked exchange, a full barrier; also a Release store.
                    self.swap(v, Ordering::SeqCst);
                    std::sync::atomic::compiler_fence(Ordering::SeqCst);
                }
                #[cfg(not(all(target_arch = "x86_64", not(miri), not(loom))))]
                {
                    // Release + the fence: see the trait.
                    self.store(v, Ordering::Release);
                    fence(Ordering::SeqCst);
                }
            }
        }
    };
}
fenced_store!(AtomicU64, u64);
fenced_store!(AtomicU8, u8);

/// The full barrier after a `SeqCst` read-modify-write (an unlinking CAS) that orders this
/// thread's later `SeqCst` loads against other threads' fences: on x86-64 the locked
/// instruction is one already, so nothing; elsewhere, and under Miri and loom (which treats
/// `SeqCst` accesses as acquire/release only), a `SeqCst` fence.
#[inline(always)]
pub(crate) fn fence_after_locked_rmw() {
    #[cfg(not(all(target_arch = "x86_64", not(miri), not(loom))))]
    fence(Ordering::SeqCst);
}

/// Gives up the CPU: a preempted thread may be what this one waits for.
pub(crate) fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}

/// Spins briefly, then yields: the wait of every retry loop in the core.
#[derive(Debug, Default)]
pub(crate) struct Backoff(u32);

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

/// A test-and-set spin lock for short critical sections with no user code inside (a stripe's
/// slot lists): locking is one atomic swap, unlocking one plain store — one read-modify-write
/// per critical section where `parking_lot::Mutex` makes two. Waiters spin, then yield.
#[cfg(not(loom))]
#[derive(Debug, Default)]
pub(crate) struct SpinLock<T> {
    locked: std::sync::atomic::AtomicBool,
    value: std::cell::UnsafeCell<T>,
}

// SAFETY: the lock gives one thread at a time access to `value`, which may move between
// threads (T: Send).
#[cfg(not(loom))]
unsafe impl<T: Send> Sync for SpinLock<T> {}

/// Holds a [`SpinLock`].
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct SpinGuard<'a, T>(&'a SpinLock<T>);

#[cfg(not(loom))]
impl<T> SpinLock<T> {
    pub fn lock(&self) -> SpinGuard<'_, T> {
        let mut backoff = Backoff::default();
        // Acquire: pairs with the Release unlock, so the previous holder's writes are visible.
        while self.locked.swap(true, Ordering::Acquire) {
            // Relaxed: wait until it looks free before the next swap.
            while self.locked.load(Ordering::Relaxed) {
                backoff.snooze();
            }
        }
        SpinGuard(self)
    }

    pub fn try_lock(&self) -> Option<SpinGuard<'_, T>> {
        // Acquire: as in `lock`.
        // (`then`, not `then_some`: a guard built and dropped on failure would unlock.)
        (!self.locked.swap(true, Ordering::Acquire)).then(|| SpinGuard(self))
    }
}

#[cfg(not(loom))]
impl<T> std::ops::Deref for SpinGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock: no other thread accesses the value.
        unsafe { &*self.0.value.get() }
    }
}

#[cfg(not(loom))]
impl<T> std::ops::DerefMut for SpinGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes this the only reference.
        unsafe { &mut *self.0.value.get() }
    }
}

#[cfg(not(loom))]
impl<T> Drop for SpinGuard<'_, T> {
    fn drop(&mut self) {
        // Release: our writes to the value happen before the next holder's.
        self.0.locked.store(false, Ordering::Release);
    }
}

/// loom's atomics, each access preceded by a read-modify-write of a companion atomic, so that
/// loom 0.7's partial-order reduction sees every two accesses of one atomic as dependent.
///
/// Why: its DPOR checks a store (or read-modify-write) against the *last* access of the atomic
/// only; when that is the storing thread's own load, an earlier load by another thread is never
/// reordered after the store (tokio-rs/loom#392: "Atomic load makes threads not explore at
/// all"). Every CAS loop here loads before it writes, so whole classes of interleavings went
/// unexplored: a model of an eviction racing an insert explored one execution. The companion's
/// accesses are all read-modify-writes, dependent on each other, so the reduction backtracks at
/// each of them as a plain DPOR would; they are `Relaxed` and touch nothing else, so they add no
/// synchronisation (the loads of the real atomic still read any value loom allows). The cost is
/// more executions: every pair of accesses by two threads is now explored both ways.
#[cfg(loom)]
pub mod dpor {
    use loom::sync::atomic::Ordering;

    macro_rules! dependent_atomic {
        ($name:ident, $t:ty) => {
            #[derive(Debug)]
            pub struct $name {
                v: loom::sync::atomic::$name,
                dep: loom::sync::atomic::AtomicUsize,
            }

            impl Default for $name {
                fn default() -> Self {
                    $name::new(0)
                }
            }

            impl $name {
                pub fn new(x: $t) -> Self {
                    $name {
                        v: loom::sync::atomic::$name::new(x),
                        dep: loom::sync::atomic::AtomicUsize::new(0),
                    }
                }
                /// The companion access that makes this one dependent on every other.
                #[inline]
                fn dep(&self) {
                    // Relaxed: no synchronisation, only an event the reduction sees.
                    self.dep.fetch_add(0, Ordering::Relaxed);
                }
                pub fn load(&self, o: Ordering) -> $t {
                    self.dep();
                    self.v.load(o)
                }
                pub fn store(&self, x: $t, o: Ordering) {
                    self.dep();
                    self.v.store(x, o)
                }
                dependent_atomic!(@rmw $t, swap, fetch_add, fetch_sub, fetch_or, fetch_max);
                dependent_atomic!(@cas $t, compare_exchange, compare_exchange_weak);
            }
        };
        (@rmw $t:ty, $($op:ident),*) => {
            $(pub fn $op(&self, x: $t, o: Ordering) -> $t {
                self.dep();
                self.v.$op(x, o)
            })*
        };
        (@cas $t:ty, $($op:ident),*) => {
            $(pub fn $op(&self, c: $t, n: $t, s: Ordering, f: Ordering) -> Result<$t, $t> {
                self.dep();
                self.v.$op(c, n, s, f)
            })*
        };
    }

    dependent_atomic!(AtomicU8, u8);
    dependent_atomic!(AtomicU32, u32);
    dependent_atomic!(AtomicU64, u64);
    dependent_atomic!(AtomicUsize, usize);
}

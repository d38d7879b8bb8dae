//! Sampled timing of eviction, for the benchmark harness (feature `profile`).
//!
//! The Mobius paper splits a cache's time into access, insert and evict. Eviction runs inside
//! [`Cache::insert`](crate::Cache::insert), so a harness timing `insert` from outside sees both.
//! With this feature, a thread that calls [`sample_evictions`]`(true)` before an insert gets the
//! time that insert spent evicting from [`take_evict_nanos`]; threads that never turn sampling
//! on pay one thread-local read per insert that has to evict, and nothing else.

use std::cell::Cell;
use std::time::Instant;

thread_local! {
    static SAMPLING: Cell<bool> = const { Cell::new(false) };
    static EVICT_NANOS: Cell<u64> = const { Cell::new(0) };
}

/// Turns eviction timing on or off for this thread's following inserts.
pub fn sample_evictions(on: bool) {
    SAMPLING.with(|s| s.set(on));
}

/// Nanoseconds spent evicting by this thread's sampled inserts since the last call; resets.
pub fn take_evict_nanos() -> u64 {
    EVICT_NANOS.with(|n| n.replace(0))
}

/// Starts timing an eviction if this thread samples.
#[inline]
pub(crate) fn start() -> Option<Instant> {
    if SAMPLING.with(Cell::get) {
        Some(Instant::now())
    } else {
        None
    }
}

/// Adds the time since `start` to this thread's total.
#[inline]
pub(crate) fn stop(start: Option<Instant>) {
    if let Some(t0) = start {
        let ns = t0.elapsed().as_nanos() as u64;
        EVICT_NANOS.with(|n| n.set(n.get() + ns));
    }
}

/// The `allocator-api2` crate, whose [`allocator_api2::alloc::Allocator`] trait
/// [`HugePages`] implements (hashbrown's allocator parameter takes it).
pub use allocator_api2;

use allocator_api2::alloc::{AllocError, Allocator};
use std::alloc::Layout;
use std::ptr::NonNull;

/// An allocator that places blocks as sifter places its own tables (crate docs, "Huge
/// pages"): blocks of 2 MiB or more aligned to 2 MiB, every whole 2 MiB extent advised for
/// transparent huge pages before its first write (`SIFTER_HUGE_PAGES=off` turns the advice
/// off here too). The memory is the global allocator's. For a harness whose own structures
/// (the benchmark's `ceiling-huge` map) should stand on the same pages as the cache's.
#[derive(Debug, Clone, Copy, Default)]
pub struct HugePages;

// SAFETY: `allocate` returns a block of the global allocator (or, for a zero size, a dangling
// pointer aligned as asked) whose layout has at least the requested size and alignment;
// `deallocate` frees exactly that block with the same derived layout. Blocks do not move and
// stay valid until deallocated, by whichever copy of `HugePages` (it has no state).
unsafe impl Allocator for HugePages {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        if layout.size() == 0 {
            let p = NonNull::new(layout.align() as *mut u8).ok_or(AllocError)?;
            return Ok(NonNull::slice_from_raw_parts(p, 0));
        }
        let l =
            crate::raw::table::layout(1, layout.size(), layout.align()).map_err(|_| AllocError)?;
        // SAFETY: `l` has a non-zero size (`layout`'s, checked above).
        let p = NonNull::new(unsafe { std::alloc::alloc(l) }).ok_or(AllocError)?;
        // Before the caller's first write, which decides the pages' size.
        crate::raw::table::advise_huge(p.as_ptr(), l.size());
        Ok(NonNull::slice_from_raw_parts(p, l.size()))
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if layout.size() != 0 {
            // `allocate` computed it without error from the same `layout`.
            let l = crate::raw::table::layout(1, layout.size(), layout.align())
                .expect("an allocated block's layout");
            // SAFETY: per the trait's contract `ptr` came from `allocate` with `layout`, which
            // allocated it with `l` (the same function of `layout`).
            unsafe { std::alloc::dealloc(ptr.as_ptr(), l) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cache, Policy};
    use allocator_api2::alloc::Allocator;

    /// Sampled inserts that evict report time; unsampled ones and inserts into a cache with
    /// room report none.
    #[test]
    fn evictions_are_timed_only_when_sampled() {
        for policy in Policy::ALL {
            let c: Cache<u64, u64> = Cache::builder().capacity(10).policy(policy).build();
            sample_evictions(true);
            c.insert(0, 0);
            assert_eq!(take_evict_nanos(), 0, "{policy:?}: no eviction yet");
            for k in 1..100 {
                c.insert(k, k);
            }
            assert!(take_evict_nanos() > 0, "{policy:?}: evictions not timed");
            sample_evictions(false);
            for k in 100..200 {
                c.insert(k, k);
            }
            assert_eq!(take_evict_nanos(), 0, "{policy:?}: timed while not sampling");
        }
    }

    /// Blocks are aligned as asked (to 2 MiB from 2 MiB on), usable whole, and given back; a
    /// zero-sized block is a dangling, aligned pointer.
    #[test]
    fn huge_page_blocks_are_aligned_and_usable() {
        let sizes: &[(usize, usize)] = if cfg!(miri) {
            &[(0, 8), (24, 8), (4096, 64)]
        } else {
            &[(0, 8), (24, 8), (4096, 64), (3 << 20, 16)]
        };
        for &(size, align) in sizes {
            let layout = Layout::from_size_align(size, align).unwrap();
            let block = HugePages.allocate(layout).expect("allocate");
            let p = block.cast::<u8>().as_ptr();
            assert_eq!(p as usize % align, 0, "{size} bytes");
            assert!(block.len() >= size);
            if size >= 2 << 20 {
                assert_eq!(p as usize % (2 << 20), 0, "{size} bytes: not on a huge page boundary");
            }
            // SAFETY: the block has at least `size` writable bytes.
            unsafe { std::ptr::write_bytes(p, 0xA5, size) };
            // SAFETY: allocated just above with `layout`.
            unsafe { HugePages.deallocate(block.cast(), layout) };
        }
    }
}

//! Fixed tables (the arena's blocks, the index, the ghost, multi-step LRU's sets) allocated
//! for huge pages.
//!
//! A cache's tables are allocated once, at their final size, and read at random: a lookup
//! loads an index bucket and then a slot, each usually on a page of its own. With 4 KiB pages
//! a table beyond the TLB's reach (a few MiB) costs a page walk per line on top of the line
//! itself, twice per hit. So the kernel is asked ([`advise_huge`], Linux's
//! `madvise(MADV_HUGEPAGE)`) to back each table's whole 2 MiB extents with transparent huge
//! pages, before the table is first written; the arena's blocks of [`HUGE`] bytes or more are
//! also aligned to [`HUGE`] ([`layout`]), so all of their extents are whole. It is a hint:
//! where the kernel has no transparent huge pages, or has them off, nothing changes. The
//! memory is still the global allocator's (counted by a counting allocator, freed by it); the
//! alignment adds address space, not memory. `SIFTER_HUGE_PAGES=off` turns the advice off
//! (`examples/huge_pages.rs` compares the two in one process).

use std::alloc::Layout;

/// A huge page (x86-64's and aarch64's usual 2 MiB): the arena's blocks this large or larger
/// are aligned to it ([`layout`]); the other tables only have their whole extents advised.
pub(crate) const HUGE: usize = 2 << 20;

/// A table could not be allocated: the allocator refused `bytes` (or the size overflows the
/// address space, `bytes` then being `usize::MAX`). A cache's tables are allocated whole at
/// construction, so a capacity the machine's memory cannot hold fails there, as an error
/// (`BuildError::OutOfMemory`), rather than aborting the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AllocError {
    pub bytes: usize,
}

/// The layout for a table of `n` items of `size` bytes each needing `align`: aligned to
/// [`HUGE`] from [`HUGE`] bytes on (so every whole 2 MiB extent of it can be one huge page);
/// an error if the total overflows.
pub(crate) fn layout(n: usize, size: usize, align: usize) -> Result<Layout, AllocError> {
    let bytes = n.max(1).checked_mul(size).ok_or(AllocError { bytes: usize::MAX })?;
    let align = if bytes >= HUGE { HUGE.max(align) } else { align };
    Layout::from_size_align(bytes, align).map_err(|_| AllocError { bytes })
}

/// Asks the kernel to back the whole [`HUGE`] extents of `[p, p + len)` with huge pages. Call
/// it before the first write: pages already touched keep their size. A hint whose failure
/// changes nothing but speed (no transparent huge pages in this kernel, or turned off), so its
/// result is not checked.
pub(crate) fn advise_huge(p: *mut u8, len: usize) {
    #[cfg(all(target_os = "linux", not(miri), not(loom)))]
    if !turned_off() {
        let start = (p as usize).next_multiple_of(HUGE);
        let end = (p as usize + len) / HUGE * HUGE;
        if end > start {
            let (p, n) = (start as *mut libc::c_void, end - start);
            // SAFETY: `[start, end)` lies within an allocation the caller owns; MADV_HUGEPAGE
            // changes how its pages are backed, never their contents or protection.
            unsafe { libc::madvise(p, n, libc::MADV_HUGEPAGE) };
            // Memory the allocator hands out again (glibc serves a block freed earlier from
            // its heap, its pages already faulted in as small ones) keeps its small pages:
            // the advice applies to faults to come. Dropping them makes the caller's first
            // writes fault in huge pages. SAFETY: the range is the caller's alone and holds
            // nothing yet (it is written after this), so its contents may go (they read as
            // zeros, or as the file's for a file mapping, until written).
            unsafe { libc::madvise(p, n, libc::MADV_DONTNEED) };
        }
    }
    #[cfg(not(all(target_os = "linux", not(miri), not(loom))))]
    let _ = (p, len);
}

/// Whether `SIFTER_HUGE_PAGES` says `off` (or `0`, `false`, `no`): read at each table's
/// allocation, which is rare.
#[cfg(all(target_os = "linux", not(miri), not(loom)))]
fn turned_off() -> bool {
    std::env::var_os("SIFTER_HUGE_PAGES")
        .is_some_and(|v| matches!(v.to_str(), Some("off" | "0" | "false" | "no")))
}

/// A boxed slice of `len` items, item `i` being `init(i)`, its whole [`HUGE`] extents advised
/// for huge pages before the items are written: the index's, the ghost's and multi-step
/// LRU's tables; an error if the allocator refuses it. A plain `Box<[T]>` (allocated, aligned
/// and freed as any), so the code that reads it is what it was; the allocation is not aligned
/// to [`HUGE`], so its first and last partial extents stay on small pages (at most 4 MiB of
/// it).
pub(crate) fn boxed<T>(len: usize, init: impl FnMut(usize) -> T) -> Result<Box<[T]>, AllocError> {
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| AllocError { bytes: len.saturating_mul(std::mem::size_of::<T>()) })?;
    advise_huge(v.as_mut_ptr().cast(), len * std::mem::size_of::<T>());
    v.extend((0..len).map(init));
    // `try_reserve_exact` allocated room for `len` items: no reallocation while extending.
    Ok(v.into_boxed_slice())
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Items are built in order; large layouts are aligned to a huge page, small ones to their
    /// items only.
    #[test]
    fn tables_are_built_in_order_and_large_ones_aligned() {
        let t = boxed(10, |i| i as u64 * 3).unwrap();
        assert_eq!(t.to_vec(), (0..10).map(|i| i * 3).collect::<Vec<_>>());
        assert_eq!(layout(100, 1, 8).unwrap().align(), 8);
        assert_eq!(layout(1, HUGE - 1, 64).unwrap().align(), 64);
        assert_eq!(layout(2, HUGE / 2, 64).unwrap().align(), HUGE);
        if !cfg!(miri) {
            let big = boxed(HUGE / 4, |i| i as u64).unwrap();
            assert_eq!(big.len(), HUGE / 4);
            assert_eq!(big[HUGE / 4 - 1], (HUGE / 4 - 1) as u64);
        }
    }

    /// A table larger than the address space is an error naming its size, not an abort.
    #[test]
    fn tables_beyond_memory_are_errors() {
        assert_eq!(layout(usize::MAX / 2, 4, 8), Err(AllocError { bytes: usize::MAX }));
        // 2^60 bytes: within `usize`, beyond any machine's address space.
        let e = boxed(1 << 57, |_| 0u64).unwrap_err();
        assert_eq!(e, AllocError { bytes: 1 << 60 });
    }
}

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
//!
//! **Large tables are committed as they fill.** A table of [`LAZY`] bytes or more (the arena
//! and the index of a cache of about a million entries and up) is allocated zeroed and never
//! written at construction: all-zero bytes are its items' initial state (empty slots, empty
//! buckets), and the kernel commits each page at its first write (with glibc such sizes are
//! fresh mappings that `calloc` does not touch). So building a cache of 100M entries takes
//! milliseconds, not the 24 s its tables took to write (stop 114), and its resident memory
//! grows with its entries rather than with its capacity; its first writes fault the pages
//! in instead (each whole 2 MiB extent one huge page, when the kernel gives them).
//! Smaller tables are written at construction, after the advice, as before: their huge pages
//! need the advice before the first write, and writing them costs little.

use std::alloc::Layout;
use std::ptr::NonNull;

/// Tables of this many bytes or more are allocated zeroed and left for their first writes to
/// commit (see the module docs). At glibc's largest mmap threshold, so `calloc` maps them
/// fresh rather than clearing reused heap memory.
pub(crate) const LAZY: usize = 32 << 20;

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
    advise(p, len, true);
}

/// [`advise_huge`]; `discard`: also drop the pages already faulted in (their contents go), so
/// that the first writes fault in huge pages. Without it the contents stay as they are (a
/// zeroed table stays zeroed) and only pages not yet faulted in become huge.
fn advise(p: *mut u8, len: usize, discard: bool) {
    #[cfg(all(target_os = "linux", not(miri), not(loom)))]
    if !turned_off() {
        let start = (p as usize).next_multiple_of(HUGE);
        let end = (p as usize + len) / HUGE * HUGE;
        if end > start {
            let (p, n) = (start as *mut libc::c_void, end - start);
            // SAFETY: `[start, end)` lies within an allocation the caller owns; MADV_HUGEPAGE
            // changes how its pages are backed, never their contents or protection.
            unsafe { libc::madvise(p, n, libc::MADV_HUGEPAGE) };
            if !discard {
                return;
            }
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
    let _ = (p, len, discard);
}

/// Zeroed memory for `layout`, advised for huge pages without touching it (see the module
/// docs, "Large tables"); an error if the allocator refuses it. The caller frees it with
/// `layout`.
pub(crate) fn alloc_lazy(layout: Layout) -> Result<NonNull<u8>, AllocError> {
    // SAFETY: callers pass layouts of at least `LAZY` bytes (non-zero).
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    let p = NonNull::new(p).ok_or(AllocError { bytes: layout.size() })?;
    advise(p.as_ptr(), layout.size(), false);
    Ok(p)
}

/// A fixed table of `T` (the index's buckets, the locked lists' links, multi-step LRU's
/// sets): a boxed slice below [`LAZY`] bytes, a zeroed allocation committed as it is written
/// from there on (see the module docs). Derefs to the slice of its items.
pub(crate) struct Table<T> {
    /// The first item (aligned for `T`).
    items: NonNull<T>,
    len: usize,
    /// The allocation holding the items, and its layout (for `dealloc`): a few bytes more than
    /// the items when `T` is aligned beyond what `calloc` guarantees.
    base: NonNull<u8>,
    layout: Layout,
}

// SAFETY: a `Table<T>` owns its items as a `Box<[T]>` would.
unsafe impl<T: Send> Send for Table<T> {}
// SAFETY: as `Box<[T]>`: shared access to the table is shared access to its items.
unsafe impl<T: Sync> Sync for Table<T> {}

impl<T> Table<T> {
    /// `len` items, each `zero()`.
    ///
    /// # Safety
    /// `zero()` returns a `T` whose bytes are all zero (at least at [`LAZY`] bytes and beyond,
    /// where the items are the allocation's zeroed bytes and `zero` is not called), and `T`
    /// has no drop glue (the table frees its memory without dropping the items).
    pub(crate) unsafe fn zeroed(len: usize, zero: impl FnMut() -> T) -> Result<Self, AllocError> {
        // SAFETY: the caller's contract.
        unsafe { Self::zeroed_from(len, zero, LAZY) }
    }

    /// [`Table::zeroed`] with tables of `lazy` bytes or more allocated zeroed (tests lower it).
    ///
    /// # Safety
    /// As [`Table::zeroed`], at `lazy` bytes and beyond.
    unsafe fn zeroed_from(
        len: usize,
        mut zero: impl FnMut() -> T,
        lazy: usize,
    ) -> Result<Self, AllocError> {
        const { assert!(!std::mem::needs_drop::<T>(), "a Table does not drop its items") };
        let (size, align) = (std::mem::size_of::<T>(), std::mem::align_of::<T>());
        let bytes = len.checked_mul(size).ok_or(AllocError { bytes: usize::MAX })?;
        // Loom's atomics are objects with state of their own, never all-zero bytes: its
        // models' tables (all small) are built item by item whatever `lazy` says.
        if bytes < lazy || bytes == 0 || cfg!(loom) {
            let b = boxed(len, |_| zero())?;
            let layout = Layout::for_value(&*b);
            let items = NonNull::from(Box::leak(b)).cast::<T>();
            return Ok(Table { items, len, base: items.cast(), layout });
        }
        // `calloc` (the system allocator's zeroed allocation at an alignment of up to 16)
        // leaves fresh pages untouched; beyond that alignment `alloc_zeroed` would clear them
        // by hand, so ask for 16 and room to align the items within.
        let pad = if align > 16 { align } else { 0 };
        let total = bytes.checked_add(pad).ok_or(AllocError { bytes: usize::MAX })?;
        let layout =
            Layout::from_size_align(total, align.min(16)).map_err(|_| AllocError { bytes })?;
        let base = alloc_lazy(layout)?;
        let offset = base.as_ptr().align_offset(align);
        debug_assert!(offset <= pad, "an allocation aligned to 16 needs at most {pad} bytes");
        // SAFETY: `offset <= pad`, so the `bytes` from it lie within the allocation; the
        // result is aligned for `T`, and not null (within an allocation).
        let items = unsafe { NonNull::new_unchecked(base.as_ptr().add(offset).cast::<T>()) };
        Ok(Table { items, len, base, layout })
    }
}

impl<T> std::ops::Deref for Table<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised items (written by `boxed`, or all-zero bytes, which the
        // constructor's contract makes valid) live at `items` until `drop`.
        unsafe { std::slice::from_raw_parts(self.items.as_ptr(), self.len) }
    }
}

impl<T> std::ops::DerefMut for Table<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as `deref`; `&mut self` is the only access to the items the table owns.
        unsafe { std::slice::from_raw_parts_mut(self.items.as_ptr(), self.len) }
    }
}

impl<T> Drop for Table<T> {
    fn drop(&mut self) {
        if self.layout.size() == 0 {
            return; // an empty `Box<[T]>` allocated nothing
        }
        // SAFETY: allocated with this layout (by `boxed` as a `Box<[T]>`, whose layout
        // `for_value` gave, or by `alloc_lazy`), freed once here; the items need no drop.
        unsafe { std::alloc::dealloc(self.base.as_ptr(), self.layout) };
    }
}

impl<T> std::fmt::Debug for Table<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table").field("len", &self.len).finish_non_exhaustive()
    }
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
    use std::sync::atomic::{AtomicU64, Ordering};

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

    /// A cache-line-aligned item, as the index's buckets are.
    #[repr(align(64))]
    struct Wide([AtomicU64; 3]);

    fn wide() -> Wide {
        Wide(std::array::from_fn(|_| AtomicU64::new(0)))
    }

    /// Tables at the lazy size are the allocation's zeroed bytes (aligned within it for items
    /// aligned beyond 16), below it the items `zero` makes; both are usable and freed.
    /// (`scripts/miri.sh` runs this one under Miri.)
    #[test]
    fn lazy_tables_are_zeroed_aligned_and_usable() {
        for (len, lazy) in [(0, 0), (1, 0), (37, 64), (37, 1 << 20), (1000, 64)] {
            let mut made = 0;
            // SAFETY: `wide()` is all zeros, and `Wide` has no drop glue.
            let t = unsafe {
                Table::zeroed_from(
                    len,
                    || {
                        made += 1;
                        wide()
                    },
                    lazy,
                )
            }
            .unwrap();
            let bytes = len * std::mem::size_of::<Wide>();
            let lazily = bytes >= lazy && bytes > 0;
            assert_eq!(made, if lazily { 0 } else { len }, "len {len}, lazy from {lazy}");
            assert_eq!(t.len(), len);
            assert_eq!(t.as_ptr() as usize % 64, 0, "items aligned for `Wide`");
            for (i, w) in t.iter().enumerate() {
                assert!(w.0.iter().all(|a| a.load(Ordering::Relaxed) == 0));
                w.0[i % 3].store(i as u64 + 1, Ordering::Relaxed);
            }
            let sum: u64 = t.iter().flat_map(|w| &w.0).map(|a| a.load(Ordering::Relaxed)).sum();
            assert_eq!(sum, (1..=len as u64).sum::<u64>());
        }
    }

    /// A table larger than the address space is an error naming its size, not an abort.
    #[test]
    fn tables_beyond_memory_are_errors() {
        assert_eq!(layout(usize::MAX / 2, 4, 8), Err(AllocError { bytes: usize::MAX }));
        // 2^60 bytes: within `usize`, beyond any machine's address space.
        let e = boxed(1 << 57, |_| 0u64).unwrap_err();
        assert_eq!(e, AllocError { bytes: 1 << 60 });
        // The same for a zeroed table: an overflowing size, and one no machine can hold.
        // SAFETY: `wide()` is all zeros, and `Wide` has no drop glue.
        let e = unsafe { Table::zeroed(usize::MAX / 8, wide) }.unwrap_err();
        assert_eq!(e, AllocError { bytes: usize::MAX });
        // SAFETY: as above.
        let e = unsafe { Table::zeroed(1 << 54, wide) }.unwrap_err();
        assert!(e.bytes >= 1 << 60, "{e:?}: the allocation refused, with its alignment's room");
    }
}

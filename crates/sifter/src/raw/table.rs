//! Fixed tables (the index, the ghost, the arena's blocks) allocated for huge pages.
//!
//! A cache's tables are allocated once, at their final size, and read at random: a lookup
//! loads an index bucket and then a slot, each usually on a page of its own. With 4 KiB pages
//! a table beyond the TLB's reach (a few MiB) costs a page walk per line on top of the line
//! itself, twice per hit. So a table of at least [`HUGE`] bytes is aligned to [`HUGE`] and the
//! kernel is asked ([`advise_huge`], Linux's `madvise(MADV_HUGEPAGE)`) to back its whole
//! 2 MiB extents with transparent huge pages, before the table is first written. It is a hint:
//! where the kernel has no transparent huge pages, or has them off, nothing changes. The
//! memory is still the global allocator's (counted by a counting allocator, freed by it); the
//! alignment adds address space, not memory. `SIFTER_HUGE_PAGES=off` turns the advice off
//! (`examples/huge_pages.rs` compares the two in one process).

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};

/// A huge page (x86-64's and aarch64's usual 2 MiB): tables this large or larger are aligned
/// to it.
pub(crate) const HUGE: usize = 2 << 20;

/// The layout for a table of `size` bytes whose items need `align`: aligned to [`HUGE`] from
/// [`HUGE`] bytes on (so every whole 2 MiB extent of it can be one huge page).
pub(crate) fn layout(size: usize, align: usize) -> Layout {
    let align = if size >= HUGE { HUGE.max(align) } else { align };
    Layout::from_size_align(size.max(1), align).expect("table layout")
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
            // SAFETY: `[start, end)` lies within an allocation the caller owns; MADV_HUGEPAGE
            // changes how its pages are backed, never their contents or protection.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
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

/// A fixed array of `T` allocated by [`layout`] and advised for huge pages: the index's and
/// the ghost's buckets.
pub(crate) struct Table<T> {
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: a `Table<T>` owns its items like a `Box<[T]>`, so it is `Send`/`Sync` when they are.
unsafe impl<T: Send> Send for Table<T> {}
// SAFETY: as above; shared access hands out only `&T`.
unsafe impl<T: Sync> Sync for Table<T> {}

impl<T> Table<T> {
    /// A table of `len` items (at least one), item `i` being `init(i)`.
    pub fn new(len: usize, mut init: impl FnMut(usize) -> T) -> Self {
        assert!(len > 0 && std::mem::size_of::<T>() > 0, "a table holds sized items");
        let layout = Self::layout(len);
        // SAFETY: the layout's size is non-zero (asserted above).
        let p = unsafe { alloc(layout) };
        let Some(p) = NonNull::new(p) else { handle_alloc_error(layout) };
        advise_huge(p.as_ptr(), layout.size());
        let ptr = p.cast::<T>();
        for i in 0..len {
            let item = init(i);
            // SAFETY: item `i` lies within the allocation, aligned for `T` (the layout's
            // alignment is at least `T`'s); written once. Should `init` panic, the items
            // written so far leak with the allocation (never read, never freed twice).
            unsafe { ptr::write(ptr.as_ptr().add(i), item) };
        }
        Table { ptr, len }
    }

    fn layout(len: usize) -> Layout {
        let size = std::mem::size_of::<T>().checked_mul(len).expect("table size");
        layout(size, std::mem::align_of::<T>())
    }
}

impl<T> Deref for Table<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised items at `ptr` (see `new`), alive as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for Table<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`; `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for Table<T> {
    fn drop(&mut self) {
        // SAFETY: the items are initialised and dropped once, here (`&mut self`); then the
        // allocation is freed with the layout it was made with.
        unsafe {
            ptr::drop_in_place(ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len));
            dealloc(self.ptr.as_ptr().cast(), Self::layout(self.len));
        }
    }
}

impl<T> std::fmt::Debug for Table<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table").field("len", &self.len).finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Items are built in order, read back, and dropped exactly once with the table; large
    /// tables are aligned to a huge page, small ones to their items only.
    #[test]
    fn items_live_and_die_with_the_table() {
        static DROPS: AtomicUsize = AtomicUsize::new(0);
        struct D(#[allow(dead_code)] usize);
        impl Drop for D {
            fn drop(&mut self) {
                DROPS.fetch_add(1, Ordering::Relaxed);
            }
        }
        let t = Table::new(10, D);
        assert_eq!(t.iter().map(|d| d.0).collect::<Vec<_>>(), (0..10).collect::<Vec<_>>());
        drop(t);
        assert_eq!(DROPS.load(Ordering::Relaxed), 10);

        assert_eq!(layout(100, 8).align(), 8);
        assert_eq!(layout(HUGE, 64).align(), HUGE);
        if !cfg!(miri) {
            // 4 MiB of words: the pointer is on a huge-page boundary.
            let big = Table::new(HUGE / 4, |i| i as u64);
            assert_eq!(big.as_ptr() as usize % HUGE, 0);
            assert_eq!(big[HUGE / 4 - 1], (HUGE / 4 - 1) as u64);
        }
    }
}

//! The in-place write flag of a slot, and how readers of a value wait for it: the protocol
//! of updates in place (`Cache::update_in_place`). Compiled under loom too (the models use it
//! with their own value cells).

use crate::sync::{fence_after_locked_rmw, AtomicU8, FencedStore, Ordering};

/// A slot's in-place write flag: set while an update replaces the value of a LIVE slot in
/// place (the updater holds the key's home lock, so one at a time).
///
/// * **Readers.** Every reader of a published slot's value calls [`Writing::settled`] before
///   the read, once its protection is visible to updates: a hazard or a pinned epoch
///   announced (a full barrier after it), or the index word unlinked by a `SeqCst`
///   read-modify-write (evictions, removals).
/// * **The updater** [begins](Writing::begin) (the flag, then a full barrier), then
///   checks that no other thread has announced the slot or pinned an epoch and that the
///   entry's index word is still there, writes only then, and [ends](Writing::end) either way.
/// * Dekker's pairing, as for the hazards themselves: of a reader's protection and the
///   updater's flag, each stored before its owner's barrier, at least one is seen by the other
///   side's load after its barrier. So either the updater sees the reader and leaves the value
///   alone, or the reader sees the flag and waits until the write has ended (its Acquire load
///   of the cleared flag then orders the new value before its read). An updater holds the flag
///   for a move of the value and no user code, so the wait is short.
#[derive(Debug, Default)]
pub(crate) struct Writing(AtomicU8);

impl Writing {
    /// Waits until no update writes the value (see the type's docs).
    #[inline]
    pub fn settled(&self) {
        // SeqCst: after the caller's protection and its barrier (on x86-64 a plain load).
        if self.0.load(Ordering::SeqCst) != 0 {
            self.wait();
        }
    }

    /// [`Writing::settled`] for a thread whose protection is its unlinking of the slot's
    /// index word (an eviction, an expiry): that `SeqCst` read-modify-write orders the load
    /// in the single `SeqCst` order ([`fence_after_locked_rmw`], as in
    /// `Epochs::retire_epoch`).
    #[inline]
    pub fn settled_after_unlink(&self) {
        fence_after_locked_rmw();
        self.settled();
    }

    #[cold]
    fn wait(&self) {
        let mut backoff = crate::sync::Backoff::default();
        // Acquire: pairs with the Release in `end`; the new value is read after it.
        while self.0.load(Ordering::Acquire) != 0 {
            backoff.snooze();
        }
    }

    /// Starts an in-place write (the caller holds the key's home lock): the flag, then the
    /// full barrier the protocol needs ([`FencedStore`]); the caller's checks follow.
    #[inline]
    pub fn begin(&self) {
        self.0.store_fenced(1);
    }

    /// Ends what [`Writing::begin`] began, written or not.
    #[inline]
    pub fn end(&self) {
        // Release: a reader that waited (Acquire) reads the value written before this.
        self.0.store(0, Ordering::Release);
    }
}

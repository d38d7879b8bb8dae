//! Epoch-based reclamation of slots, one instance per cache.
//!
//! A slot that leaves the cache (evicted, or removed and unlinked from the policy) may still be
//! read by a thread that found it a moment earlier: a `get` comparing its key or cloning its
//! value, an evictor scanning past it. It is therefore *retired* with the current epoch and
//! reused only after every thread that could have seen it has finished its operation.
//!
//! * An operation that reads slots pins: a thread with a record (the first [`RECORDS`] thread
//!   ids) stores the global epoch into its own cache-padded record, then a `SeqCst` fence;
//!   unpinning stores 0. No read-modify-write and nothing shared is written (on this host a pin
//!   costs about as much as one uncontended atomic add). Nested pins of the same thread are
//!   free. Lookups and inserts pin lazily ([`LazyPin`]): only when the index shows a word with
//!   their key's tag, which they then read again, pinned, before they read its slot (see
//!   `Index::find`).
//! * Threads beyond the records count themselves in one of three shared counters (one per
//!   epoch residue): correct for any number of threads, slower only for them.
//! * The global epoch advances from `e` to `e + 1` only when no thread is pinned at an older
//!   epoch. A slot retired at epoch `r` (read after its unlinking, behind a `SeqCst` fence) is
//!   safe to reuse once the global epoch is `r + 2`: every thread pinned then pinned after the
//!   advance to `r + 1`, which came after the unlinking, so it cannot reach the slot.
//!
//! The fences pair as in every epoch scheme: a reader's record store + fence before its loads,
//! against the retirer's unlinking stores + fence before reading the epoch and the advancer's
//! fence before reading the records. Whichever fence comes first in the single `SeqCst` order,
//! either the advancer sees the reader pinned (and waits), or the reader sees the slot unlinked.

use crate::sync::{fence, AtomicU64, AtomicUsize, Ordering};
use crossbeam_utils::CachePadded;

/// Threads (by [`thread_id`]) that get a private record in every cache.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) const RECORDS: usize = 64;

/// Stores `e` into the thread's own record, ordered before every load the thread then makes of
/// the cache's structures (see the module docs): a store and a `SeqCst` fence. On x86-64 a
/// locked exchange is such a barrier and much cheaper than `mfence` (which also waits for
/// outstanding cache misses), as crossbeam-epoch does; the compiler fence keeps the compiler
/// from moving later loads above it.
#[inline]
fn announce(r: &AtomicU64, e: u64) {
    #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
    {
        r.swap(e, Ordering::SeqCst);
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri), not(loom))))]
    {
        // Relaxed + the fence: as above.
        r.store(e, Ordering::Relaxed);
        fence(Ordering::SeqCst);
    }
}

/// The epochs of one cache.
#[derive(Debug)]
pub(crate) struct Epochs {
    /// The global epoch; starts at 1 (a record holding 0 is unpinned).
    global: CachePadded<AtomicU64>,
    /// Per-thread records: 0, or the epoch the thread is pinned at.
    records: Box<[CachePadded<AtomicU64>]>,
    /// One more than the highest record index ever pinned (advancers scan only these).
    used: CachePadded<AtomicUsize>,
    /// Threads without a record: how many are pinned at an epoch of each residue mod 3.
    shared: [CachePadded<AtomicU64>; 3],
}

/// How a guard pinned.
#[derive(Debug)]
enum Pin<'a> {
    /// Through its own record, cleared on drop (the record itself: no index on the way out).
    Record(&'a AtomicU64),
    /// The thread was already pinned in this cache: nothing to undo.
    Nested,
    /// Through this shared counter (the one of its epoch), decremented on drop.
    Shared(&'a AtomicU64),
}

/// Keeps every slot the thread reads from being reused until it is dropped.
#[derive(Debug)]
pub(crate) struct Guard<'a> {
    pin: Pin<'a>,
}

impl Epochs {
    #[cfg_attr(loom, allow(dead_code))]
    pub fn new() -> Self {
        Self::with_records(RECORDS)
    }

    /// As [`Epochs::new`] with `n` records (loom models use few).
    pub fn with_records(n: usize) -> Self {
        Epochs {
            global: CachePadded::new(AtomicU64::new(1)),
            records: (0..n).map(|_| CachePadded::new(AtomicU64::new(0))).collect(),
            used: CachePadded::new(AtomicUsize::new(0)),
            shared: [
                CachePadded::new(AtomicU64::new(0)),
                CachePadded::new(AtomicU64::new(0)),
                CachePadded::new(AtomicU64::new(0)),
            ],
        }
    }

    /// Pins the calling thread, whose id is `tid` ([`thread_id`]).
    #[inline]
    pub fn pin(&self, tid: usize) -> Guard<'_> {
        if let Some(r) = self.records.get(tid) {
            // Relaxed: only this thread writes its record, so it reads its own last store.
            if r.load(Ordering::Relaxed) != 0 {
                return Guard { pin: Pin::Nested };
            }
            // Relaxed: the first pin of a thread raises the mark before its record is used;
            // `try_advance` reads `used` after its fence, and the fence below orders this
            // before our loads of the structures.
            if tid >= self.used.load(Ordering::Relaxed) {
                self.used.fetch_max(tid + 1, Ordering::SeqCst);
            }
            // Relaxed: a stale (older) epoch only makes us more conservative.
            let e = self.global.load(Ordering::Relaxed);
            announce(r, e);
            return Guard { pin: Pin::Record(r) };
        }
        loop {
            let e = self.global.load(Ordering::SeqCst);
            // SeqCst: announces us before the re-check and before our loads of the structures.
            self.shared[(e % 3) as usize].fetch_add(1, Ordering::SeqCst);
            if self.global.load(Ordering::SeqCst) == e {
                return Guard { pin: Pin::Shared(&self.shared[(e % 3) as usize]) };
            }
            // The epoch moved between the read and the announcement: retry at the new one.
            // Release: nothing was read under this announcement, any ordering would do.
            self.shared[(e % 3) as usize].fetch_sub(1, Ordering::Release);
        }
    }

    /// The epoch to retire a slot with, read after the unlinking stores (see the module docs).
    ///
    /// Every unlinking from the index is a locked read-modify-write (the word swap, under the
    /// home bucket's lock), done by this thread or observed by it through that lock; on x86-64
    /// such an instruction already drains the store buffer, so no later load of this thread
    /// (the epoch below) can pass it, and the `mfence` is left out there (it also waits for
    /// outstanding cache misses). Elsewhere, and under Miri and loom, the fence stays.
    #[inline]
    pub fn retire_epoch(&self) -> u64 {
        #[cfg(not(all(target_arch = "x86_64", not(miri), not(loom))))]
        fence(Ordering::SeqCst);
        // SeqCst: ordered after the unlinking (fence or locked RMW, see above).
        self.global.load(Ordering::SeqCst)
    }

    /// The global epoch now.
    #[cfg_attr(loom, allow(dead_code))]
    pub fn current(&self) -> u64 {
        // Acquire: pairs with the advancing CAS, so the check it made happened before.
        self.global.load(Ordering::Acquire)
    }

    /// Advances the global epoch if no thread is pinned at an older one; returns the epoch.
    pub fn try_advance(&self) -> u64 {
        let e = self.global.load(Ordering::SeqCst);
        fence(Ordering::SeqCst);
        // Relaxed: read after the fence (see the module docs).
        let used = self.used.load(Ordering::Relaxed).min(self.records.len());
        for r in &self.records[..used] {
            // Acquire: pairs with the Release unpin, so a slot reader's reads happen before
            // the advance (and, through the global epoch's RMW chain, before the reuse).
            let v = r.load(Ordering::Acquire);
            if v != 0 && v != e {
                return e;
            }
        }
        // Counted threads pinned at e - 1 or e - 2 block the advance (none can be older).
        // Acquire: as for the records.
        if self.shared[((e + 1) % 3) as usize].load(Ordering::Acquire) != 0
            || self.shared[((e + 2) % 3) as usize].load(Ordering::Acquire) != 0
        {
            return e;
        }
        match self.global.compare_exchange(e, e + 1, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => e + 1,
            Err(now) => now,
        }
    }

    /// Whether a slot retired at epoch `retired` may be reused when the global epoch is `now`.
    pub fn reusable(retired: u64, now: u64) -> bool {
        retired + 2 <= now
    }
}

/// A pin taken on first need: an operation that may not have to read any slot (a lookup or an
/// insert that meets no index word with its key's tag, see `Index::find`) pins only when it
/// is about to, and so skips the pin's fence otherwise. Unpins when dropped.
#[derive(Debug)]
pub(crate) struct LazyPin<'a> {
    epochs: &'a Epochs,
    tid: usize,
    guard: Option<Guard<'a>>,
}

impl<'a> LazyPin<'a> {
    /// Not pinned yet; [`LazyPin::pin`] pins thread `tid`.
    #[inline]
    pub fn new(epochs: &'a Epochs, tid: usize) -> Self {
        LazyPin { epochs, tid, guard: None }
    }

    /// Whether [`LazyPin::pin`] has pinned.
    #[inline]
    pub fn is_pinned(&self) -> bool {
        self.guard.is_some()
    }

    /// Pins if not pinned yet; true if it pinned just now.
    #[inline]
    pub fn pin(&mut self) -> bool {
        if self.guard.is_some() {
            return false;
        }
        self.guard = Some(self.epochs.pin(self.tid));
        true
    }
}

impl Drop for Guard<'_> {
    #[inline]
    fn drop(&mut self) {
        match self.pin {
            // Release: every read this thread made of a slot happens before an advancer that
            // sees the record cleared lets the slot be reused.
            Pin::Record(r) => r.store(0, Ordering::Release),
            Pin::Nested => {}
            // Release: as above.
            Pin::Shared(c) => {
                c.fetch_sub(1, Ordering::Release);
            }
        }
    }
}

/// A small, dense id of the calling thread, reused after the thread exits (so caches need few
/// records however many threads come and go).
#[cfg(not(loom))]
#[inline]
pub(crate) fn thread_id() -> usize {
    use std::cell::Cell;
    use std::sync::Mutex;

    static FREE: Mutex<Vec<usize>> = Mutex::new(Vec::new());
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// Gives the id back when the thread exits.
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            let id = ID.with(|c| c.replace(usize::MAX));
            if id != usize::MAX {
                // A poisoned lock only means another thread panicked while pushing: the list
                // itself is intact.
                FREE.lock().unwrap_or_else(|e| e.into_inner()).push(id);
            }
        }
    }
    thread_local! {
        // No destructor: reading it is one TLS load (the hot path of every operation).
        static ID: Cell<usize> = const { Cell::new(usize::MAX) };
        static RELEASE: Release = const { Release };
    }
    #[cold]
    fn fresh() -> usize {
        // Register the release first; during thread teardown (it is gone) use no record.
        if RELEASE.try_with(|_| ()).is_err() {
            return usize::MAX;
        }
        let reused = FREE.lock().unwrap_or_else(|e| e.into_inner()).pop();
        // Relaxed: only uniqueness matters, which the RMW gives.
        let id = reused.unwrap_or_else(|| NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        ID.with(|c| c.set(id));
        id
    }
    let v = ID.with(Cell::get);
    if v != usize::MAX {
        v
    } else {
        fresh()
    }
}

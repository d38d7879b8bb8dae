//! S3-FIFO's ghost: the fingerprints of the keys last evicted from its small queue, in a table
//! of their own.
//!
//! * **Entries.** One 64-bit word per fingerprint: `tag << 32 | stamp`. The tag is the
//!   index's (the hash's upper 32 bits, lowest bit forced to 1, so no entry is 0 and 0 means
//!   empty); the stamp is the ghost's insertion count when the fingerprint went in. An entry
//!   is *alive* while fewer than `len` insertions came after it ([`Ghosts::alive`]), so the
//!   table behaves as a FIFO of the last `len` fingerprints without a queue.
//! * **Buckets.** Seven entries and a control word per 64-byte bucket (one cache line), chosen
//!   by the hash's low half (like the index's home bucket). The control word holds a *byte
//!   tag* per entry (seven bits of the tag, high bit set), as the index's does, so a lookup
//!   loads only the entries whose byte matches (usually none), and the bucket's insertion
//!   cursor in its top byte: each bucket is a ring of seven, an insertion overwriting its
//!   oldest entry. The table has one bucket per four fingerprints of `len`, so a fingerprint
//!   usually dies of age (`len` insertions) before its bucket's ring comes round to it; when
//!   seven land in one bucket sooner (in about one bucket in nine), the oldest leaves early.
//! * **Concurrency.** Every word is atomic. A ghost hit ([`Bucket::take`]) empties its
//!   entry with one CAS, so two inserts of one key cannot both hit it (its byte stays behind,
//!   a candidate the entry's own tag then rejects). An insertion writes its entry and the
//!   control word with plain stores: two threads inserting into one bucket at once may write
//!   the same entry, or one may restore the other's old control word, hiding its byte — either
//!   way one fingerprint is lost. The ghost is a hint for placing new entries, so a lost
//!   fingerprint only changes one placement; no memory is published through it (every access
//!   is Relaxed). With one thread it is exact up to the early departures above.
//! * **Cost.** An insert reads one line here (and takes a hit out); an eviction from small
//!   writes one. The index itself holds only entries.

use crate::raw::index::{first, matching};
use crate::raw::table::{self, AllocError};
use crate::sync::{AtomicU64, Ordering};

/// Fingerprints per bucket (with the control word, one cache line of words).
const WAYS: usize = 7;
/// Where the insertion cursor sits in the control word.
const CURSOR_SHIFT: u32 = 56;

/// What an entry's stamp is measured against: the ghost's insertion count now, and how many
/// insertions an entry outlives (both modulo 2^32).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ghosts {
    pub now: u32,
    pub len: u32,
}

impl Ghosts {
    /// How many insertions came after entry `x`'s (0 for an entry stamped after `now`, as seen
    /// by a thread whose count lags).
    #[inline]
    fn age(&self, x: u64) -> u32 {
        let a = self.now.wrapping_sub(x as u32);
        // An entry stamped by a thread ahead of our view: as young as can be. (So is one more
        // than 2^31 insertions old, which its bucket's ring has overwritten long before in
        // practice; if not, one placement goes to main.)
        if a > u32::MAX / 2 {
            0
        } else {
            a
        }
    }

    /// Whether entry `x` (non-zero) is still in the ghost.
    #[inline]
    pub fn alive(&self, x: u64) -> bool {
        self.age(x) < self.len
    }
}

/// One bucket of the table: a ring of [`WAYS`] fingerprints. [`GhostTable::at`] finds a key's.
#[derive(Debug)]
#[repr(align(64))]
pub(crate) struct Bucket {
    /// `[cursor:8 | byte tag 6 | … | byte tag 0]`.
    ctrl: AtomicU64,
    e: [AtomicU64; WAYS],
}

/// The byte tag of fingerprint `tag`: seven of its bits (not the lowest, which the index
/// forces to 1), high bit set.
#[inline]
fn byte_tag(tag: u32) -> u64 {
    u64::from((tag >> 1) & 0x7F) | 0x80
}

/// The ghost's fingerprints (see the module docs).
#[derive(Debug)]
pub(crate) struct GhostTable {
    buckets: Box<[Bucket]>,
}

impl GhostTable {
    /// A table for a ghost of `len` fingerprints.
    pub fn new(len: u64) -> Result<Self, AllocError> {
        let n = (len / 4 + 1).max(2) as usize;
        Ok(GhostTable {
            buckets: table::boxed(n, |_| Bucket {
                ctrl: AtomicU64::new(0),
                e: std::array::from_fn(|_| AtomicU64::new(0)),
            })?,
        })
    }

    /// Bytes of table.
    pub fn bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<Bucket>()
    }

    /// The bucket of a key whose hash's low half is `lo` (the index's home bucket comes from
    /// the same half).
    #[inline]
    pub fn at(&self, lo: u32) -> &Bucket {
        let b = ((u64::from(lo) * self.buckets.len() as u64) >> 32) as usize;
        &self.buckets[b]
    }

    /// The live fingerprints now (quiescent use).
    #[cfg(any(test, loom))]
    pub fn live(&self, g: Ghosts) -> usize {
        let all = self.buckets.iter().flat_map(|b| b.e.iter());
        // Relaxed: quiescent.
        all.map(|e| e.load(Ordering::Relaxed)).filter(|&x| x != 0 && g.alive(x)).count()
    }
}

impl Bucket {
    /// Asks the CPU to fetch this bucket's line for [`Bucket::take`] (`write`: for
    /// [`Bucket::add`]) while the caller does other work (a hint, no architectural effect).
    #[inline]
    pub fn prefetch(&self, write: bool) {
        crate::sync::prefetch(self, write);
    }

    /// Removes fingerprint `tag` (the key's index tag) if it is here and alive: a ghost hit
    /// (true). Two threads cannot both take one entry.
    #[inline]
    pub fn take(&self, tag: u32, g: Ghosts) -> bool {
        // Relaxed (all): a hint (see the module docs).
        let mut m = matching(self.ctrl.load(Ordering::Relaxed), byte_tag(tag));
        while m != 0 {
            let e = &self.e[first(m)];
            let x = e.load(Ordering::Relaxed);
            if (x >> 32) as u32 == tag && g.alive(x) {
                // The CAS makes one thread the taker.
                return e.compare_exchange(x, 0, Ordering::Relaxed, Ordering::Relaxed).is_ok();
            }
            m &= m - 1;
        }
        false
    }

    /// Puts fingerprint `tag` in, stamped `stamp` (its insertion's count), over this bucket's
    /// oldest entry.
    #[inline]
    pub fn add(&self, tag: u32, stamp: u32) {
        // Relaxed (all): a hint (see the module docs).
        let c = self.ctrl.load(Ordering::Relaxed);
        // The cursor is always below `WAYS` (only this function stores it).
        let i = (c >> CURSOR_SHIFT) as usize;
        let Some(e) = self.e.get(i) else { return };
        e.store(u64::from(tag) << 32 | u64::from(stamp), Ordering::Relaxed);
        let bytes = c & !(0xFF << (8 * i)) & ((1 << CURSOR_SHIFT) - 1);
        let next = if i + 1 == WAYS { 0 } else { i as u64 + 1 };
        self.ctrl.store(next << CURSOR_SHIFT | bytes | byte_tag(tag) << (8 * i), Ordering::Relaxed);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn g(now: u32, len: u32) -> Ghosts {
        Ghosts { now, len }
    }

    #[test]
    fn a_fingerprint_is_taken_once_while_alive() {
        let t = GhostTable::new(100).unwrap();
        t.at(7).add(0x1235, 10);
        assert!(!t.at(7).take(0x1237, g(11, 100)), "another tag");
        assert!(t.at(7).take(0x1235, g(11, 100)));
        assert!(!t.at(7).take(0x1235, g(11, 100)), "taken already");
        // Aged out: `len` insertions after it.
        t.at(7).add(0x1235, 10);
        assert!(!t.at(7).take(0x1235, g(110, 100)));
        assert!(t.at(7).take(0x1235, g(109, 100)));
    }

    #[test]
    fn a_full_bucket_gives_up_its_oldest_fingerprint() {
        // Two buckets: every `lo` below 2^31 lands in the first.
        let t = GhostTable::new(4).unwrap();
        assert_eq!(t.buckets.len(), 2);
        for s in 0..WAYS as u32 {
            t.at(1).add(0x101 + 2 * s, s);
        }
        assert_eq!(t.live(g(7, 1000)), WAYS);
        // An eighth takes the place of the oldest (stamp 0), not another.
        t.at(1).add(0x999, 7);
        assert_eq!(t.live(g(8, 1000)), WAYS);
        assert!(!t.at(1).take(0x101, g(8, 1000)));
        assert!(t.at(1).take(0x103, g(8, 1000)));
        assert!(t.at(1).take(0x999, g(8, 1000)));
        // Fingerprints whose byte tags collide are told apart by the whole tag.
        t.at(1).add(0x1001, 9);
        t.at(1).add(0x2001, 10);
        assert_eq!(byte_tag(0x1001), byte_tag(0x2001));
        assert!(t.at(1).take(0x2001, g(11, 1000)));
        assert!(t.at(1).take(0x1001, g(11, 1000)));
    }

    #[test]
    fn stamps_ahead_of_a_lagging_view_count_as_young() {
        let t = GhostTable::new(100).unwrap();
        t.at(3).add(0x55, 20);
        // A thread whose count lags sees the stamp ahead of its `now`: still alive.
        assert!(t.at(3).take(0x55, g(15, 100)));
        // Across the counter's wrap.
        t.at(3).add(0x55, 2);
        assert!(t.at(3).take(0x55, g(u32::MAX - 3, 100)));
        t.at(3).add(0x57, u32::MAX);
        assert!(t.at(3).take(0x57, g(50, 100)));
        assert_eq!(t.live(g(50, 100)), 0);
    }
}

//! S3-FIFO's ghost: the fingerprints of the keys last evicted from its small queue, in a table
//! of their own, 7 bytes per fingerprint.
//!
//! * **Entries.** One 32-bit word per fingerprint: `tag16 << 16 | stamp16`. `tag16` is 16
//!   bits of the index's tag (the hash's upper 32 bits; bits 4..20, never 0), `stamp16` the
//!   ghost's insertion count when the fingerprint went in, coarsened to 16 bits (below). An
//!   entry is *alive* while fewer than `len` insertions came after it ([`Ghosts::alive`]), so
//!   the table behaves as a FIFO of the last `len` fingerprints without a queue. A taken entry
//!   is 0.
//! * **Stamps.** A ghost of up to 8,191 fingerprints stamps the exact count (mod 2^16) and its
//!   ages are exact; a longer one drops the count's low `shift` bits so that `len` spans at
//!   most 2^13 units, and an entry then lives `len` insertions give or take 2^shift (1/4,096
//!   of `len`). Ages of 2^15 units and more count as 0: a stamp ahead of a lagging thread's
//!   view (see `Ghost` in `policy/s3fifo.rs`), or an entry its bucket kept four times `len`
//!   insertions (a bucket that long without insertions is a flood of equal hashes).
//! * **Buckets.** Fourteen entries and a control word per 64-byte bucket (one cache line),
//!   chosen by the hash's low half (like the index's home bucket). The control word holds a
//!   *nibble tag* per entry (three more bits of the tag, bits 1..4, high bit set: the index's
//!   byte tags at half the width), so a lookup loads only the entries whose nibble matches
//!   (usually none), and the bucket's insertion cursor in bits 56..60: each bucket is a ring
//!   of fourteen, an insertion overwriting its oldest entry. The table has one bucket per nine
//!   fingerprints of `len`, so a fingerprint usually dies of age (`len` insertions) before its
//!   bucket's ring comes round to it; when fourteen land in one bucket sooner (in about one
//!   bucket in twenty-five), the oldest leaves early. (The first table had 64-bit entries,
//!   seven per bucket and one bucket per four fingerprints: 16 bytes per fingerprint, 2.3
//!   times as many lines, and the insert path's worst stall at 100k entries:
//!   docs/BENCHMARKS.md.)
//! * **Concurrency.** Every word is atomic. A ghost hit ([`Bucket::take`]) empties its
//!   entry with one CAS, so two inserts of one key cannot both hit it (its nibble stays
//!   behind, a candidate the entry's own tag then rejects). An insertion writes its entry and
//!   the control word with plain stores: two threads inserting into one bucket at once may
//!   write the same entry, or one may restore the other's old control word, hiding its nibble
//!   — either way one fingerprint is lost, and none comes back (each entry is a word of its
//!   own, written whole). The ghost is a hint for placing new entries, so a lost fingerprint
//!   only changes one placement; no memory is published through it (every access is
//!   Relaxed). With one thread it is exact up to the early departures above, the coarse
//!   stamps of long ghosts, and a 19-bit fingerprint's collisions (one take in about 60,000
//!   meets one).
//! * **Cost.** An insert reads one line here (and takes a hit out); an eviction from small
//!   writes one.

use crate::raw::table::{self, AllocError};
use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// Fingerprints per bucket (with the control word, one cache line).
const WAYS: usize = 14;
/// Fingerprints of `len` per bucket, on average: the table's size.
const PER_BUCKET: u64 = 9;
/// Where the insertion cursor sits in the control word.
const CURSOR_SHIFT: u32 = 56;
/// One in each nibble tag (nibbles 0..14).
const ONES: u64 = 0x0011_1111_1111_1111;
/// The low three bits of each nibble tag.
const LOWS: u64 = 0x0077_7777_7777_7777;
/// The high bit of each nibble tag.
const HIGHS: u64 = 0x0088_8888_8888_8888;
/// Stamps span at most 2^13 units per `len`.
const SPAN_BITS: u32 = 13;

/// What an entry's stamp is measured against: the ghost's insertion count now, and how many
/// insertions an entry outlives (both modulo 2^32).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ghosts {
    pub now: u32,
    pub len: u32,
}

impl Ghosts {
    /// The count's low bits a ghost of `len` drops from its stamps (see the module docs): at
    /// most 16, so that 2^16 units divide the 32-bit count's period.
    #[inline]
    fn shift(&self) -> u32 {
        (32 - self.len.leading_zeros()).saturating_sub(SPAN_BITS).min(16)
    }

    /// The stamp of an insertion counted `now`.
    #[inline]
    fn stamp(&self) -> u32 {
        (self.now >> self.shift()) & 0xFFFF
    }

    /// Whether entry `x` (non-zero) is still in the ghost: fewer than `len` insertions came
    /// after it, in stamp units (exact for `len` below 2^13).
    #[inline]
    pub fn alive(&self, x: u32) -> bool {
        let age = self.stamp().wrapping_sub(x) & 0xFFFF;
        // An entry stamped by a thread ahead of our view: as young as can be (see the module
        // docs for the other case).
        age >= 0x8000 || (self.len > 0 && age <= (self.len - 1) >> self.shift())
    }
}

/// One bucket of the table: a ring of [`WAYS`] fingerprints. [`GhostTable::at`] finds a key's.
#[derive(Debug)]
#[repr(align(64))]
pub(crate) struct Bucket {
    /// `[cursor:4 at 56 | nibble tag 13 | … | nibble tag 0]`.
    ctrl: AtomicU64,
    e: [AtomicU32; WAYS],
}

/// The nibble tag of fingerprint `tag`: three of its bits (not the lowest, which the index
/// forces to 1), high bit set.
#[inline]
fn nibble(tag: u32) -> u64 {
    u64::from((tag >> 1) & 0x7) | 0x8
}

/// The 16 bits of `tag` an entry keeps (bits 4..20: none of the nibble's), never 0.
#[inline]
fn tag16(tag: u32) -> u32 {
    ((tag >> 4) & 0xFFFF).max(1)
}

/// The entries of control word `c` whose nibble tag is `nt`: the high bit of each such
/// nibble. Exact (no carries cross nibbles: each nibble's sum is at most 0xE).
#[inline]
fn matching(c: u64, nt: u64) -> u64 {
    let x = c ^ nt.wrapping_mul(ONES);
    !(((x & LOWS) + LOWS) | x) & HIGHS
}

/// The entry of the lowest nibble a [`matching`] mask marks.
#[inline]
fn first(mask: u64) -> usize {
    (mask.trailing_zeros() / 4) as usize
}

/// The ghost's fingerprints (see the module docs).
#[derive(Debug)]
pub(crate) struct GhostTable {
    buckets: Box<[Bucket]>,
}

impl GhostTable {
    /// A table for a ghost of `len` fingerprints.
    pub fn new(len: u64) -> Result<Self, AllocError> {
        let n = (len / PER_BUCKET + 1).max(2) as usize;
        Ok(GhostTable {
            buckets: table::boxed(n, |_| Bucket {
                ctrl: AtomicU64::new(0),
                e: std::array::from_fn(|_| AtomicU32::new(0)),
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

    /// Removes fingerprint `tag` (the key's index tag) if it is here and alive at `g`: a ghost
    /// hit (true). Two threads cannot both take one entry.
    #[inline]
    pub fn take(&self, tag: u32, g: Ghosts) -> bool {
        // Relaxed (all): a hint (see the module docs).
        let mut m = matching(self.ctrl.load(Ordering::Relaxed), nibble(tag));
        while m != 0 {
            let e = &self.e[first(m)];
            let x = e.load(Ordering::Relaxed);
            if x >> 16 == tag16(tag) && g.alive(x) {
                // The CAS makes one thread the taker.
                return e.compare_exchange(x, 0, Ordering::Relaxed, Ordering::Relaxed).is_ok();
            }
            m &= m - 1;
        }
        false
    }

    /// Puts fingerprint `tag` in, stamped with `g`'s count (its insertion's), over this
    /// bucket's oldest entry.
    #[inline]
    pub fn add(&self, tag: u32, g: Ghosts) {
        // Relaxed (all): a hint (see the module docs).
        let c = self.ctrl.load(Ordering::Relaxed);
        // The cursor is always below `WAYS` (only this function stores it).
        let i = ((c >> CURSOR_SHIFT) & 0xF) as usize;
        let Some(e) = self.e.get(i) else { return };
        e.store(tag16(tag) << 16 | g.stamp(), Ordering::Relaxed);
        let nibbles = c & !(0xF << (4 * i)) & ((1 << CURSOR_SHIFT) - 1);
        let next = if i + 1 == WAYS { 0 } else { i as u64 + 1 };
        self.ctrl.store(next << CURSOR_SHIFT | nibbles | nibble(tag) << (4 * i), Ordering::Relaxed);
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
        t.at(7).add(0x1235, g(10, 100));
        assert!(!t.at(7).take(0x1237, g(11, 100)), "another tag");
        assert!(t.at(7).take(0x1235, g(11, 100)));
        assert!(!t.at(7).take(0x1235, g(11, 100)), "taken already");
        // Aged out: `len` insertions after it.
        t.at(7).add(0x1235, g(10, 100));
        assert!(!t.at(7).take(0x1235, g(110, 100)));
        assert!(t.at(7).take(0x1235, g(109, 100)));
        // A ghost of no fingerprints keeps none alive.
        t.at(7).add(0x1235, g(10, 0));
        assert!(!t.at(7).take(0x1235, g(10, 0)));
    }

    #[test]
    fn a_full_bucket_gives_up_its_oldest_fingerprint() {
        // Two buckets: every `lo` below 2^31 lands in the first.
        let t = GhostTable::new(4).unwrap();
        assert_eq!(t.buckets.len(), 2);
        // Tags that differ in their nibble or in their 16 kept bits.
        let tag = |s: u32| 0x101 + 2 * s + (s / 8) * 0x10;
        for s in 0..WAYS as u32 {
            t.at(1).add(tag(s), g(s, 1000));
        }
        assert_eq!(t.live(g(WAYS as u32, 1000)), WAYS);
        // One more takes the place of the oldest (stamp 0), not another.
        t.at(1).add(0x999, g(WAYS as u32, 1000));
        let now = g(WAYS as u32 + 1, 1000);
        assert_eq!(t.live(now), WAYS);
        assert!(!t.at(1).take(tag(0), now));
        for s in 1..WAYS as u32 {
            assert!(t.at(1).take(tag(s), now), "fingerprint {s}");
        }
        assert!(t.at(1).take(0x999, now));
        // Fingerprints whose nibble tags collide are told apart by their 16 kept bits.
        t.at(1).add(0x1001, g(20, 1000));
        t.at(1).add(0x2001, g(21, 1000));
        assert_eq!(nibble(0x1001), nibble(0x2001));
        assert!(t.at(1).take(0x2001, g(22, 1000)));
        assert!(t.at(1).take(0x1001, g(22, 1000)));
    }

    #[test]
    fn nibble_matching_is_exact() {
        let mut c = 0u64;
        for i in 0..WAYS {
            c |= nibble(i as u32 * 2) << (4 * i);
        }
        // The cursor bits take no part.
        c |= 0xF << CURSOR_SHIFT;
        for i in 0..WAYS {
            let nt = nibble(i as u32 * 2);
            let want: u64 =
                (0..WAYS).filter(|&j| nibble(j as u32 * 2) == nt).map(|j| 8 << (4 * j)).sum();
            assert_eq!(matching(c, nt), want, "nibble {nt:x}");
            assert_eq!(first(matching(c, nt)), i % 8);
        }
        // An empty nibble matches nothing.
        assert_eq!(matching(0, nibble(6)), 0);
    }

    #[test]
    fn stamps_ahead_of_a_lagging_view_count_as_young() {
        let t = GhostTable::new(100).unwrap();
        t.at(3).add(0x55, g(20, 100));
        // A thread whose count lags sees the stamp ahead of its `now`: still alive.
        assert!(t.at(3).take(0x55, g(15, 100)));
        // Across the counter's wrap.
        t.at(3).add(0x55, g(2, 100));
        assert!(t.at(3).take(0x55, g(u32::MAX - 3, 100)));
        t.at(3).add(0x57, g(u32::MAX, 100));
        assert!(t.at(3).take(0x57, g(50, 100)));
        assert_eq!(t.live(g(50, 100)), 0);
    }

    /// A long ghost's stamps drop low bits: an entry lives `len` insertions give or take one
    /// stamp unit (2^shift), across the count's wrap too.
    #[test]
    fn long_ghosts_age_entries_in_coarse_units() {
        let len = 1 << 20;
        assert_eq!(g(0, len).shift(), 8);
        assert_eq!(g(0, 8191).shift(), 0);
        assert_eq!(g(0, 8192).shift(), 1);
        assert_eq!(g(0, u32::MAX).shift(), 16);
        let t = GhostTable::new(u64::from(len)).unwrap();
        for start in [0u32, 12_345, u32::MAX - 1000] {
            t.at(9).add(0x4321, g(start, len));
            let x = t.at(9).e.iter().map(|e| e.load(Ordering::Relaxed)).find(|&x| x != 0).unwrap();
            let unit = 1 << 8;
            assert!(g(start.wrapping_add(len - unit), len).alive(x), "from {start}");
            assert!(!g(start.wrapping_add(len + unit), len).alive(x), "from {start}");
            assert!(t.at(9).take(0x4321, g(start.wrapping_add(len / 2), len)));
        }
    }
}

//! S3-FIFO's ghost: the fingerprints of the keys last evicted from its small queue, kept in
//! the index itself, each in the word its entry left.
//!
//! * **Ghost words.** An eviction from small unlinks its victim's index word with a CAS; for
//!   S3-FIFO that CAS writes a *ghost word* instead of 0 when the word sat in its home bucket:
//!   `(tag ^ 1) << 32 | stamp`. The tag is the index's (the hash's upper 32 bits with the
//!   lowest forced to 1), so a ghost word's lowest tag bit is 0 and no lookup mistakes it for
//!   an entry (entry words have bit 32 set; [`is_entry`]); `stamp` is the ghost's insertion
//!   count when it went in. The word keeps its byte tag in the bucket's control word — the
//!   key's own — so an insert of the same key meets it among the candidates it probes anyway.
//! * **Ages.** A ghost word is *alive* while fewer than `len` insertions came after it
//!   ([`Ghosts::alive`]), so the index's ghost words behave as a FIFO of the last `len`
//!   fingerprints without a queue. Stamps are the count's 32 bits: ages are exact. A stamp up
//!   to [`AHEAD`] insertions ahead of the reader's view is alive too (a thread's count lags
//!   the others' by at most their unflushed insertions and the batch of victims each is
//!   stamping — consecutive stamps from one read, counted after the batch: see `Ghost` in
//!   `policy/s3fifo.rs` and `Cache::evict_some`).
//! * **Room.** A ghost word is a free word for inserts: an insert that needs a word of a
//!   bucket takes an empty one first, else the oldest ghost word there (the fingerprint leaves
//!   early, as a full ring's oldest left the old ghost table). S3-FIFO's index has one bucket
//!   of seven words per three slots (the other policies' one per four), so a bucket holds about
//!   three entries and, beside them, the ghost's 0.9 fingerprints per entry.
//! * **Hits.** An insert that finds its key's alive ghost word (under its home lock, where
//!   ghost words do not change) stores its entry over it: the ghost hit and the fingerprint's
//!   removal are one store.
//! * **Concurrency.** Ghost words change only under their bucket's lock (inserts) or by the
//!   unlinking CAS that makes them (evictions, which take no lock but change only entry
//!   words). So under a bucket's lock its empty and ghost words stay what they are. No memory
//!   is published through a ghost word (it names no slot). With one thread the ghost is
//!   exact up to early departures and a 31-bit fingerprint's collisions.

/// How far (in insertions) a stamp may be ahead of a reader's count and still be alive:
/// more than any thread's view can lag (at most 64 unflushed insertions per record, plus a
/// batch of at most 8 victims being stamped).
const AHEAD: u32 = 1 << 20;

/// What a ghost word's stamp is measured against: the ghost's insertion count now, and how
/// many insertions an entry outlives (both modulo 2^32).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ghosts {
    pub now: u32,
    pub len: u32,
}

impl Ghosts {
    /// The age of a stamp, in insertions since (wrapping: a stamp ahead is very old here).
    #[inline]
    fn age(&self, stamp: u32) -> u32 {
        self.now.wrapping_sub(stamp)
    }

    /// Whether ghost word `x` is still in the ghost: fewer than `len` insertions came after
    /// it (or it is a little ahead of our view).
    #[inline]
    pub fn alive(&self, x: u64) -> bool {
        let age = self.age(x as u32);
        age < self.len || age > u32::MAX - AHEAD
    }

    /// How old ghost word `x` is, with the ones ahead of our view youngest: of two ghost
    /// words, an insert takes the one that ranks higher.
    #[inline]
    pub fn rank(&self, x: u64) -> u32 {
        self.age(x as u32).wrapping_add(AHEAD)
    }
}

/// Whether index word `x` (non-zero) is an entry word (else a ghost word).
#[inline]
pub(crate) fn is_entry(x: u64) -> bool {
    x & (1 << 32) != 0
}

/// The ghost word of a key with index tag `tag` (lowest bit 1), stamped `stamp`; 0 (no
/// ghost) for the one tag whose ghost word could be 0.
#[inline]
pub(crate) fn ghost_word(tag: u64, stamp: u32) -> u64 {
    let hi = tag ^ 1;
    if hi == 0 {
        0
    } else {
        hi << 32 | u64::from(stamp)
    }
}

/// Whether `x` is the ghost word of a key with index tag `tag`.
#[inline]
pub(crate) fn ghost_of(x: u64, tag: u64) -> bool {
    x >> 32 == tag ^ 1
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn g(now: u32, len: u32) -> Ghosts {
        Ghosts { now, len }
    }

    #[test]
    fn ghost_words_are_never_entries_or_empty() {
        for tag in [1u64, 3, 0xABCD_1235, 0xFFFF_FFFF] {
            let x = ghost_word(tag, 7);
            if tag == 1 {
                assert_eq!(x, 0);
                continue;
            }
            assert!(x != 0 && !is_entry(x), "{tag:#x}");
            assert!(ghost_of(x, tag));
            assert!(!ghost_of(x, tag ^ 2));
            assert!(is_entry(tag << 32 | 5));
        }
    }

    #[test]
    fn a_ghost_word_lives_len_insertions() {
        let x = ghost_word(0x1235, 10);
        assert!(g(10, 100).alive(x));
        assert!(g(109, 100).alive(x));
        assert!(!g(110, 100).alive(x));
        assert!(!g(10, 0).alive(x), "a ghost of no fingerprints keeps none");
        // A stamp ahead of a lagging view is alive; far ahead is a stamp from long ago.
        assert!(g(5, 100).alive(x));
        assert!(!g(10u32.wrapping_sub(AHEAD + 1), 100).alive(x));
        // Across the count's wrap.
        let w = ghost_word(0x1235, u32::MAX - 3);
        assert!(g(50, 100).alive(w));
        assert!(!g(200, 100).alive(w));
    }

    #[test]
    fn older_ghost_words_rank_higher() {
        let now = g(1000, 100);
        let (old, young, ahead) = (ghost_word(3, 900), ghost_word(3, 990), ghost_word(3, 1005));
        assert!(now.rank(old) > now.rank(young));
        assert!(now.rank(young) > now.rank(ahead));
    }
}

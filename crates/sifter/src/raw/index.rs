//! The index: hash → slot. An open-addressing table of 64-byte buckets, each one cache line:
//! seven entry words and a control word.
//!
//! * An entry word is `tag << 32 | (slot + 1)`, where the tag is the hash's upper 32 bits
//!   with the lowest forced to 1 (never 0, so no tag matches an empty word).
//! * The control word holds one **byte tag** per entry word (the hash's low 7 bits with the
//!   high bit set, so never 0: from the low half, like the home bucket, which slots keep), a
//!   7-bit pass-through count and the home lock bit:
//!   `[pass:7 | lock:1 | byte tag 6 | … | byte tag 0]`. A lookup loads the control word,
//!   finds the words whose byte tag matches its own with a few word-wide operations (SWAR, no
//!   SIMD loads of the atomics) and loads only those words, then reads a slot (a second line)
//!   only on a full tag match: a miss usually loads two words of one line, a hit three and
//!   the slot's line.
//! * Byte tags are *hints* that never hide an entry: a word's byte is set by the writer that
//!   filled it, under its bucket's lock, by the unlock itself (one Release store clears the
//!   lock bit and sets the byte, after the word's store). So whenever a bucket is
//!   unlocked, every non-empty word has its byte; an entry is findable from the moment its
//!   bucket's lock is released (its insert has not returned before). Evictions clear a word
//!   by CAS without any lock and leave its byte behind (*stale*: a candidate whose word no
//!   longer matches, rejected by the full tag); a writer that needs an empty word and finds no
//!   zero byte clears the stale bytes it finds (under the lock, where nobody else can fill the
//!   word). So, under a bucket's lock, a zero byte means an empty word.
//! * Overflow goes to the following buckets (linear probing by bucket). The pass-through count
//!   counts the entries *passing through* the bucket (homed before it, stored after it), so a
//!   lookup stops at the first bucket nothing passes through. It saturates at 127 and then
//!   stays there (a lookup goes on past that bucket; only a flood of equal hashes gets there).
//!   Entries never move: a lookup that races with writers sees each word either before or
//!   after a change, never half of it.
//! * **Lookups take no lock and write nothing.** Inserts and removals by key take the lock
//!   of their *home* bucket (the bit of its control word), so two writers of one key are
//!   serialised; they fill an empty word with a plain store under the lock of the word's
//!   bucket (their home's, or also the overflow bucket's), and replace or clear words of
//!   their own home with a CAS. Evictions clear their victim's word by slot number with a CAS
//!   and no lock: every change of a word is one CAS, so exactly one thread unlinks an entry.
//!   (An entry stored outside its home bucket — about 1.5 % of them in a full cache — is the
//!   exception: its removal lowers the pass-through counts of the buckets it passed, each
//!   under that bucket's lock, one at a time.)
//! * **Only a bucket's lock holder changes its control word** (its byte tags and its
//!   pass-through count), each time with a plain store, the unlock's included: one locked
//!   instruction per critical section, the lock's own. Contenders' attempts to set the lock
//!   bit change nothing while it is set, so a holder's load and store lose no change. (Under
//!   loom each such store is a CAS that asserts the word did not change since the holder read
//!   it: the claim the plain store rests on, checked.)
//! * **Ghost words** (S3-FIFO only, see `raw/ghost.rs`): an eviction from S3-FIFO's small
//!   queue unlinks its victim's word (in its home bucket) with a CAS to the key's ghost word,
//!   a non-zero word with bit 32 clear (entry words have it set), so no lookup, removal or
//!   walk takes it for an entry. Like an empty word it changes only under its bucket's lock
//!   after that: an insert of its key takes it while it is alive (a ghost hit), and an insert
//!   that finds no empty word takes the oldest ghost word of the bucket before it overflows.
//! * The bucket count is fixed at build time from the arena size, about 4 slots per
//!   bucket on average (3 for S3-FIFO, whose ghost words share the words), so the table
//!   never fills.

use crate::raw::ghost::{ghost_of, ghost_word, is_entry, Ghosts};
use crate::raw::table::{self, AllocError};
use crate::sync::{AtomicU64, Backoff, Ordering};
use std::cell::Cell;

const WORDS: usize = 7;

/// Whether index word `x` is an entry word with tag `tag`.
#[inline]
fn live_tag(x: u64, tag: u64) -> bool {
    x >> 32 == tag
}

/// What [`Index::insert`] did besides publishing the slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inserted {
    /// It replaced the entry in this slot (same key).
    Replaced(u32),
    /// It added the entry.
    Added,
    /// It added the entry over its key's alive ghost word: a ghost hit (S3-FIFO).
    Revived,
}

/// The control word's lock bit. Not the sign bit: taking the lock tests the old value's lock
/// bit, which for the sign bit the compiler turns into a sign test and then cannot emit as one
/// `lock bts` (x86-64): it emitted a load and a `lock cmpxchg` loop instead.
const LOCK: u64 = 1 << 56;
/// Where the pass-through count sits in the control word (its top seven bits), and its
/// sticky maximum.
const PASS_SHIFT: u32 = 57;
const PASS_MAX: u64 = 0x7F;
/// One in each byte-tag byte (bytes 0..7).
const ONES: u64 = 0x0001_0101_0101_0101;
/// The low seven bits of each byte-tag byte.
const LOWS: u64 = 0x007F_7F7F_7F7F_7F7F;
/// The high bit of each byte-tag byte.
const HIGHS: u64 = 0x0080_8080_8080_8080;

/// The `pin` argument of [`Index::find`] and friends for a caller that is pinned already (the
/// loom models' and the unit tests'; the cache protects its lookups lazily, see `LazyPin`).
#[cfg(any(loom, test))]
#[inline]
pub(crate) fn pinned(_slot: u32) -> bool {
    false
}

/// What [`Index::first`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum First {
    /// The key is not in the index.
    Absent,
    /// The key's slot (protected by the caller's `pin`, accepted by its `eq`).
    Found(u32),
    /// Undecided: the full probe decides.
    Probe,
}

#[derive(Debug)]
#[repr(align(64))]
struct Bucket {
    words: [AtomicU64; WORDS],
    /// Byte tags, pass-through count and lock bit (see the module docs).
    ctrl: AtomicU64,
}

/// The hash index.
#[derive(Debug)]
pub(crate) struct Index {
    buckets: table::Table<Bucket>,
}

/// An entry found under its home lock ([`Index::find_locked`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Located {
    at: At,
    word: u64,
}

impl Located {
    /// The entry's slot.
    pub fn slot(&self) -> u32 {
        slot_of(self.word)
    }
}

/// Where an entry word sits.
#[derive(Debug, Clone, Copy)]
struct At {
    bucket: usize,
    word: usize,
}

/// The hash the index is given for a key whose hasher returned `h`: every bit of `h` stirred
/// into both halves by one folded multiply (the two halves of a 64 × 64-bit product, XORed).
/// The home bucket comes from the low half's top bits, which a hasher need not mix: an
/// identity hash of sequential keys homes them all in bucket 0, and `foldhash::fast` (one
/// folded multiply by a per-process seed) leaves the low halves of sequential integers a
/// near-lattice that, for about one seed in sixteen, crowds a few home buckets (for one in
/// a few hundred, most keys overflow: updates cannot write in place and lookups probe far).
/// After this step both behave like random hashes.
#[inline]
pub(crate) fn spread(h: u64) -> u64 {
    // An odd constant with well-mixed bits (the golden ratio's, as in Fibonacci hashing).
    let p = u128::from(h) * 0x9E37_79B9_7F4A_7C15;
    (p as u64) ^ ((p >> 64) as u64)
}

/// The tag of `hash`: never 0.
#[inline]
pub(crate) fn tag(hash: u64) -> u64 {
    (hash >> 32) | 1
}

/// The byte tag of `hash`: its low seven bits, high bit set (never 0). From the low half, like
/// the home bucket, so the low half alone (which slots keep, see [`Index::remove_slot`])
/// finds a word by its byte. The home takes the half's top bits: keys of one bucket spread
/// over all 128 bytes while the table has at most 2^25 buckets, over 64 up to 2^26, and so
/// on — a filter, never a key.
#[inline]
fn byte_tag(hash: u64) -> u64 {
    (hash & 0x7F) | 0x80
}

#[inline]
fn word(hash: u64, slot: u32) -> u64 {
    (tag(hash) << 32) | (slot as u64 + 1)
}

#[inline]
fn slot_of(w: u64) -> u32 {
    (w as u32).wrapping_sub(1)
}

/// The words of control word `c` whose byte tag is `bt`: the high bit of each such byte. Exact
/// (no carries cross bytes: each byte's sum is at most 0xFE).
#[inline]
pub(crate) fn matching(c: u64, bt: u64) -> u64 {
    let x = c ^ bt.wrapping_mul(ONES);
    !(((x & LOWS) + LOWS) | x) & HIGHS
}

/// The words of control word `c` whose byte is zero (every byte tag has its high bit set).
#[inline]
fn zero_bytes(c: u64) -> u64 {
    !c & HIGHS
}

/// The word of the lowest byte a [`matching`] or [`zero_bytes`] mask marks.
#[inline]
pub(crate) fn first(mask: u64) -> usize {
    (mask.trailing_zeros() / 8) as usize
}

#[inline]
fn pass(c: u64) -> u64 {
    (c >> PASS_SHIFT) & PASS_MAX
}

/// The byte of word `i` in control word `c`.
#[inline]
fn byte(c: u64, i: usize) -> u64 {
    (c >> (8 * i)) & 0xFF
}

/// Holds a bucket's lock (the home bucket's, or an overflow bucket's). Byte-tag changes made
/// under it are applied by the unlock.
#[derive(Debug)]
pub(crate) struct HomeLock<'a> {
    /// The locked bucket, and its number.
    bucket: &'a Bucket,
    home: usize,
    /// Bits to flip in the control word at the unlock: the byte tags written under the lock.
    flip: Cell<u64>,
}

impl HomeLock<'_> {
    /// Makes word `i`'s byte `new` at the unlock (it is `old` now: only the holder changes it).
    #[inline]
    fn set_byte(&self, i: usize, old: u64, new: u64) {
        self.flip.set(self.flip.get() ^ ((old ^ new) << (8 * i)));
    }
}

/// The lock holder's store of `new` into a control word it read as `old`, with Release
/// ordering: a plain store, since nobody else changes the word while it is locked. Under loom,
/// a CAS that asserts exactly that (and keeps loom's modification order total, which a
/// contender spinning on RMWs needs to ever see the store).
#[inline(always)]
fn holder_store(ctrl: &AtomicU64, old: u64, new: u64) {
    #[cfg(not(loom))]
    {
        let _ = old;
        ctrl.store(new, Ordering::Release);
    }
    #[cfg(loom)]
    assert!(
        ctrl.compare_exchange(old, new, Ordering::Release, Ordering::Relaxed).is_ok(),
        "a control word changed under its lock holder"
    );
}

impl Drop for HomeLock<'_> {
    #[inline]
    fn drop(&mut self) {
        // Release (in `holder_store`): the critical section's word stores happen before the
        // next holder's, and before any lookup that sees the byte tags set here (its Acquire
        // load of the control word). A load and a plain store, not an RMW: only the holder
        // changes the control word (see the module docs), so the flips are exact. Relaxed
        // load: our own last store, or a contender's no-op on it.
        let ctrl = &self.bucket.ctrl;
        let c = ctrl.load(Ordering::Relaxed);
        holder_store(ctrl, c, c ^ (LOCK | self.flip.get()));
    }
}

impl Index {
    /// An index for up to `slots` entries, one bucket per `per_bucket` of them (4; S3-FIFO's
    /// 3 leaves room for its ghost words, see `raw/ghost.rs`); an error if the allocator
    /// refuses its table.
    pub fn new(slots: usize, per_bucket: usize) -> Result<Self, AllocError> {
        let n = (slots / per_bucket.max(1) + 2).max(2);
        // SAFETY: an empty bucket is all zeros (empty words, no tags, no pass-throughs,
        // unlocked: atomics of 0), and a bucket has no drop glue.
        let buckets = unsafe {
            table::Table::zeroed(n, || Bucket {
                words: std::array::from_fn(|_| AtomicU64::new(0)),
                ctrl: AtomicU64::new(0),
            })?
        };
        Ok(Index { buckets })
    }

    /// Asks the CPU to fetch, for writing, the home bucket of a key whose hash's low half is
    /// `home_hash` (its lock or [`Index::remove_slot`] comes soon; a hint, nothing is read).
    #[inline]
    pub fn prefetch_home(&self, home_hash: u32) {
        crate::sync::prefetch(&self.buckets[self.home(u64::from(home_hash))], true);
    }

    /// Bytes of table per entry slot it was sized for.
    pub fn bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<Bucket>()
    }

    #[inline]
    pub(crate) fn home(&self, hash: u64) -> usize {
        (((hash as u32) as u64 * self.buckets.len() as u64) >> 32) as usize
    }

    #[inline]
    fn next(&self, b: usize) -> usize {
        if b + 1 == self.buckets.len() {
            0
        } else {
            b + 1
        }
    }

    /// The first look of a lookup, in `hash`'s home bucket alone, with [`Index::find`]'s
    /// protocol for one word: [`First::Absent`] if no word of the bucket holds a live entry
    /// with the key's tag and no entry passes through it (the key is not in the index);
    /// [`First::Found`] if the first word there with the key's full tag names a slot that
    /// `pin` protected (the word still names it afterwards) and `eq` accepts; else
    /// [`First::Probe`] (a false tag match, an entry further on, a word that changed under the
    /// protection: the full probe decides, from the start). Most hits and misses are decided
    /// here, without the probe's outer loop. Calls `pin` at most once, and `eq` only on the
    /// slot `pin` was just given.
    #[inline(always)]
    pub fn first(
        &self,
        hash: u64,
        mut pin: impl FnMut(u32) -> bool,
        mut eq: impl FnMut(u32) -> bool,
    ) -> First {
        let bucket = &self.buckets[self.home(hash)];
        // Acquire: as in `probe`.
        let c = bucket.ctrl.load(Ordering::Acquire);
        let mut m = matching(c, byte_tag(hash));
        // Words whose byte matches but which hold no live entry with the key's tag (a byte
        // left by a removed entry, another tag) are passed over.
        while m != 0 {
            let w = &bucket.words[first(m)];
            // Acquire: as in `probe`.
            let x = w.load(Ordering::Acquire);
            if live_tag(x, tag(hash)) {
                let s = slot_of(x);
                // Acquire: as in `probe` (the load the protection protects).
                if pin(s) && w.load(Ordering::Acquire) != x {
                    return First::Probe;
                }
                return if eq(s) { First::Found(s) } else { First::Probe };
            }
            m &= m - 1;
        }
        if pass(c) == 0 {
            First::Absent
        } else {
            First::Probe
        }
    }

    /// Finds the slot whose key `eq` accepts among the entries tagged like `hash`.
    ///
    /// `pin` runs before each key comparison, with the slot about to be compared (to fetch
    /// its line while the barrier drains), and returns true if it protected that slot just
    /// then (announced it as a hazard, or pinned the epoch; see `LazyPin`): the word is then
    /// read again, and only if it still holds the same slot is that slot read (else the probe
    /// starts over, with the same `pin`). So a caller needs protection only if it meets its
    /// tag — most misses read one line of words and no slot, and skip the barrier. (A caller
    /// pinned already passes a `pin` that returns false, such as `pinned`.)
    #[inline]
    pub fn find(
        &self,
        hash: u64,
        mut pin: impl FnMut(u32) -> bool,
        mut eq: impl FnMut(u32) -> bool,
    ) -> Option<u32> {
        self.probe(hash, &mut pin, &mut eq)
    }

    /// [`Index::find`] with its closures by reference (a probe whose word changed before its
    /// protection took starts over through this).
    #[inline]
    fn probe<P: FnMut(u32) -> bool, E: FnMut(u32) -> bool>(
        &self,
        hash: u64,
        pin: &mut P,
        eq: &mut E,
    ) -> Option<u32> {
        let (tag, bt) = (tag(hash), byte_tag(hash));
        // A loop, not a call to itself, so that the probe is inlined into its callers.
        'probe: loop {
            let mut b = self.home(hash);
            for _ in 0..self.buckets.len() {
                let bucket = &self.buckets[b];
                // Acquire: pairs with the Release unlock that set a byte tag after its word was
                // stored, and with the Release raise of the pass count.
                let c = bucket.ctrl.load(Ordering::Acquire);
                let mut m = matching(c, bt);
                while m != 0 {
                    let w = &bucket.words[first(m)];
                    // Acquire: pairs with the Release CAS/store that published the word, so the
                    // slot's key and value written before it are visible.
                    let x = w.load(Ordering::Acquire);
                    if live_tag(x, tag) {
                        // Acquire: as above; read after the protection's fence, this is the
                        // load the protocol protects (a slot still linked after we announced
                        // it or pinned is not reused while we hold the protection).
                        if pin(slot_of(x)) && w.load(Ordering::Acquire) != x {
                            // Changed before the protection took: start over (protected from
                            // then on as `pin` decides: a slot it covers is not announced
                            // again).
                            continue 'probe;
                        }
                        if eq(slot_of(x)) {
                            return Some(slot_of(x));
                        }
                    }
                    m &= m - 1;
                }
                // A writer raises the count before it publishes a word further on (the load
                // above).
                if pass(c) == 0 {
                    return None;
                }
                b = self.next(b);
            }
            return None;
        }
    }

    /// Locks the home bucket of `hash` for writing.
    #[inline(always)]
    pub fn lock(&self, hash: u64) -> HomeLock<'_> {
        self.lock_bucket(self.home(hash))
    }

    /// Locks bucket `home`.
    #[inline(always)]
    fn lock_bucket(&self, home: usize) -> HomeLock<'_> {
        // Acquire: pairs with the Release unlock; we see the previous holder's stores.
        let bucket = &self.buckets[home];
        if bucket.ctrl.fetch_or(LOCK, Ordering::Acquire) & LOCK == 0 {
            return HomeLock { bucket, home, flip: Cell::new(0) };
        }
        self.lock_contended(home)
    }

    /// [`Index::lock_bucket`] when the lock was held: waits for it.
    #[cold]
    fn lock_contended(&self, home: usize) -> HomeLock<'_> {
        let bucket = &self.buckets[home];
        let ctrl = &bucket.ctrl;
        let mut backoff = Backoff::default();
        loop {
            // Acquire: pairs with the Release unlock; we see the previous holder's stores.
            if ctrl.fetch_or(LOCK, Ordering::Acquire) & LOCK == 0 {
                return HomeLock { bucket, home, flip: Cell::new(0) };
            }
            // Relaxed: wait until it looks free before trying the RMW again. (Under loom the
            // wait is the RMW itself: loom lets a plain load read a stale value any number of
            // times, so a load loop would never have to end there.)
            #[cfg(not(loom))]
            while ctrl.load(Ordering::Relaxed) & LOCK != 0 {
                backoff.snooze();
            }
            #[cfg(loom)]
            backoff.snooze();
        }
    }

    /// Under the lock `held` of bucket `b`: an empty word of `b` (`c`: its control word, read
    /// under the lock), made ours: its byte will be `bt` at the unlock. Stale bytes of other
    /// empty words met on the way are cleared by the same unlock. With `ghost` (S3-FIFO) and
    /// no empty word, the oldest ghost word by its clock: its fingerprint leaves early.
    /// Inlined whole: out of line, the call cost the other policies' inserts about 16
    /// instructions each (callgrind, stop 93).
    #[inline(always)]
    fn claim_empty(
        &self,
        held: &HomeLock<'_>,
        b: usize,
        c: u64,
        bt: u64,
        ghost: Option<Ghosts>,
    ) -> Option<usize> {
        // Under the lock a zero byte is an empty word (see the module docs).
        let z = zero_bytes(c);
        if z != 0 {
            let i = first(z);
            held.set_byte(i, 0, bt);
            return Some(i);
        }
        match ghost {
            Some(g) => self.claim_oldest(held, b, c, bt, g),
            None => self.claim_stale(held, b, c, bt),
        }
    }

    /// [`Index::claim_empty`] when no byte is zero: the words, read, tell which are empty (all
    /// seven read, no branch per word); the first is claimed, the others' stale bytes cleared.
    /// (S3-FIFO's index: [`Index::claim_oldest`] instead.)
    #[inline]
    fn claim_stale(&self, held: &HomeLock<'_>, b: usize, c: u64, bt: u64) -> Option<usize> {
        let mut empty = 0;
        for (i, w) in self.buckets[b].words.iter().enumerate() {
            // Relaxed: only emptiness matters, and an empty word stays empty under the lock.
            // (Without a ghost clock there are no ghost words: only S3-FIFO makes them.)
            empty |= u64::from(w.load(Ordering::Relaxed) == 0) << (8 * i + 7);
        }
        if empty == 0 {
            return None;
        }
        let i = first(empty);
        // Every empty word's byte goes to zero, then word i's to `bt`: flip the old bytes
        // (0xFF in each empty word's byte selects them) and `bt` in.
        let stale = c & ((empty >> 7) * 0xFF);
        held.flip.set(held.flip.get() ^ stale ^ (bt << (8 * i)));
        Some(i)
    }

    /// [`Index::claim_empty`] in S3-FIFO's index when no byte is zero: the first empty word,
    /// else the oldest ghost word by `g` (one no longer alive, if any: those are the oldest),
    /// whose fingerprint leaves early if it was alive. All seven words are read and ranked
    /// without a branch per word; stale bytes stay (a zero byte is rare where ghost words keep
    /// theirs).
    #[inline]
    fn claim_oldest(
        &self,
        held: &HomeLock<'_>,
        b: usize,
        c: u64,
        bt: u64,
        g: Ghosts,
    ) -> Option<usize> {
        let (mut best, mut at) = (0u32, 0usize);
        for (i, w) in self.buckets[b].words.iter().enumerate() {
            // Relaxed: only what the word is matters, and an empty or ghost word stays what it
            // is under the lock (see `raw/ghost.rs`).
            let x = w.load(Ordering::Relaxed);
            // 0 for an entry word, u32::MAX for an empty one, else the ghost word's rank —
            // by masks, not by branches: written as an `if` chain the compiler branched on
            // each word's kind, and whether a word is an entry, empty or a ghost is a coin
            // toss (3.2 mispredicted branches per S3-FIFO insert at 10k entries, callgrind).
            let entry = 0u32.wrapping_sub(u32::from(is_entry(x)));
            let empty = 0u32.wrapping_sub(u32::from(x == 0));
            let rank = (g.rank(x) & !entry) | empty;
            if rank > best {
                (best, at) = (rank, i);
            }
        }
        if best == 0 {
            return None;
        }
        held.set_byte(at, byte(c, at), bt);
        Some(at)
    }

    /// Under the home lock: where the entry accepted by `m` (a word test) sits, and the word
    /// value `m` accepted (a CAS must expect exactly it: the word may change right after); and
    /// the control word of the home bucket (its byte tags cannot change under the lock). `pin`
    /// as in [`Index::find`].
    #[inline]
    fn locate<P: FnMut(u32) -> bool, M: FnMut(u32) -> bool>(
        &self,
        lock: &HomeLock<'_>,
        hash: u64,
        pin: &mut P,
        m: &mut M,
    ) -> (Option<(At, u64)>, u64) {
        let (tag, bt) = (tag(hash), byte_tag(hash));
        // A loop, not a call to itself (see `probe`).
        'locate: loop {
            let mut b = lock.home;
            let mut home_ctrl = 0;
            for n in 0..self.buckets.len() {
                let bucket = &self.buckets[b];
                // Acquire: as in `probe`. (Under the home lock every word of our key has its
                // byte: the buckets it was stored in were unlocked before our home was.)
                let c = bucket.ctrl.load(Ordering::Acquire);
                if n == 0 {
                    home_ctrl = c;
                }
                let mut cand = matching(c, bt);
                while cand != 0 {
                    let i = first(cand);
                    let w = &bucket.words[i];
                    // Acquire: as in `probe`; `m` reads the slot.
                    let x = w.load(Ordering::Acquire);
                    if live_tag(x, tag) {
                        // Acquire: as above, protected (see `find`).
                        if pin(slot_of(x)) && w.load(Ordering::Acquire) != x {
                            // Changed before the protection took: start over (see `probe`).
                            continue 'locate;
                        }
                        if m(slot_of(x)) {
                            return (Some((At { bucket: b, word: i }, x)), home_ctrl);
                        }
                    }
                    cand &= cand - 1;
                }
                if pass(c) == 0 {
                    break;
                }
                b = self.next(b);
            }
            return (None, home_ctrl);
        }
    }

    /// Whether `hash`'s key may be in the index: a word with its tag in its home bucket, or
    /// in the buckets after it while entries pass through (an overflowed entry). A hint (no
    /// lock, no slot read, Relaxed): false means the key was not in the index a moment ago,
    /// which spares new keys' inserts a locked search for an old version (the byte tags
    /// alone match a new key in about one bucket in twenty: evictions leave theirs behind).
    /// Looking past the home matters: the updates of an overflowed entry that this called
    /// absent could not write in place, and each left a removed slot in the queues, which
    /// grew the arena under steady updates.
    #[inline]
    pub fn may_hold(&self, hash: u64) -> bool {
        let b = self.home(hash);
        // Relaxed (all): a hint (see above).
        let c = self.buckets[b].ctrl.load(Ordering::Relaxed);
        if self.tag_in(b, c, hash) {
            return true;
        }
        pass(c) != 0 && self.overflowed(b, hash)
    }

    /// S3-FIFO's look ahead, before an insert allocates (no lock, Relaxed: a hint): whether
    /// the index holds neither an entry with `hash`'s tag (as [`Index::may_hold`]: a
    /// replacement keeps its old version's queue) nor, in its home bucket, an alive ghost
    /// word of that tag by `g` (a ghost hit goes to main) — so the insert's entry goes to small
    /// and may be gathered with its allocation. Nothing changes the bucket between this look
    /// and the insert when one thread runs alone: the look then says what the insert will
    /// find.
    #[inline]
    pub fn bound_for_small(&self, hash: u64, g: Ghosts) -> bool {
        let b = self.home(hash);
        // Relaxed (all): a hint (see above).
        let c = self.buckets[b].ctrl.load(Ordering::Relaxed);
        let t = tag(hash);
        let known = |x| live_tag(x, t) || (ghost_of(x, t) && g.alive(x));
        !(self.word_in(b, c, hash, known) || (pass(c) != 0 && self.overflowed(b, hash)))
    }

    /// Whether bucket `b` (control word `c`) has an entry word with `hash`'s tag (Relaxed: a
    /// hint).
    #[inline(always)]
    fn tag_in(&self, b: usize, c: u64, hash: u64) -> bool {
        self.word_in(b, c, hash, |x| live_tag(x, tag(hash)))
    }

    /// Whether bucket `b` (control word `c`) has a word `hit` accepts among those whose byte
    /// tag is `hash`'s (Relaxed: a hint).
    #[inline(always)]
    fn word_in(&self, b: usize, c: u64, hash: u64, hit: impl Fn(u64) -> bool) -> bool {
        let bucket = &self.buckets[b];
        let mut cand = matching(c, byte_tag(hash));
        while cand != 0 {
            if hit(bucket.words[first(cand)].load(Ordering::Relaxed)) {
                return true;
            }
            cand &= cand - 1;
        }
        false
    }

    /// [`Index::may_hold`] past the home bucket `home` (entries pass through it): the
    /// following buckets while entries pass through.
    #[cold]
    #[inline(never)]
    fn overflowed(&self, home: usize, hash: u64) -> bool {
        let mut b = self.next(home);
        for _ in 1..self.buckets.len() {
            // Relaxed: a hint.
            let c = self.buckets[b].ctrl.load(Ordering::Relaxed);
            if self.tag_in(b, c, hash) {
                return true;
            }
            if pass(c) == 0 {
                return false;
            }
            b = self.next(b);
        }
        false
    }

    /// Under the home lock of `hash`: the entry accepted by `eq` (`pin` as in
    /// [`Index::find`]), for an update in place: the slot, and where its word was.
    #[inline]
    pub fn find_locked(
        &self,
        lock: &HomeLock<'_>,
        hash: u64,
        mut pin: impl FnMut(u32) -> bool,
        mut eq: impl FnMut(u32) -> bool,
    ) -> Option<Located> {
        let (at, word) = self.locate(lock, hash, &mut pin, &mut eq).0?;
        Some(Located { at, word })
    }

    /// Whether the entry [`Index::find_locked`] found is still in the index (an eviction may
    /// have unlinked it since: evictions take no lock). Relaxed: the caller orders it with a
    /// barrier (see `Writing` in `raw/writing.rs`).
    #[inline]
    pub fn still(&self, l: &Located) -> bool {
        // Relaxed: see above.
        self.buckets[l.at.bucket].words[l.at.word].load(Ordering::Relaxed) == l.word
    }

    /// Under the home lock of `hash`: replaces the entry accepted by `eq` with `slot`, or adds
    /// `slot`. `pin` as in [`Index::find`]. An added entry takes its key's ghost word if
    /// `ghost` (S3-FIFO's clock) says it is alive ([`Inserted::Revived`]), else an empty word
    /// (or the oldest ghost word) of its home bucket, else overflows.
    #[inline]
    pub fn insert(
        &self,
        lock: &HomeLock<'_>,
        hash: u64,
        slot: u32,
        mut pin: impl FnMut(u32) -> bool,
        mut eq: impl FnMut(u32) -> bool,
        ghost: Option<Ghosts>,
    ) -> Inserted {
        let new = word(hash, slot);
        let bt = byte_tag(hash);
        // Empty words become non-empty only under their bucket's lock: ours for the home
        // bucket, the bucket's own for overflow (taken while we hold our home's: no deadlock,
        // since a cycle of such waits would need every bucket full, and the table is at most
        // 4/7 full). Evictions and replacements change only non-empty words. So an empty word
        // seen under the lock is ours to fill with a plain store, not a CAS.
        // Acquire: as in `locate`. No byte of the key's tag in its home bucket and nothing
        // passing through it: the key is in no bucket (as for `Index::first`), so there is
        // nothing to replace and no probe to make.
        let c = lock.bucket.ctrl.load(Ordering::Acquire);
        let home_ctrl = if matching(c, bt) == 0 && pass(c) == 0 {
            c
        } else {
            loop {
                match self.locate(lock, hash, &mut pin, &mut eq) {
                    (Some((at, old)), _) => {
                        // Replace (same tag, same byte): a lock-free `remove_slot` (eviction) may
                        // clear the word under us, hence the CAS; if it does, the key is gone:
                        // look again.
                        let w = &self.buckets[at.bucket].words[at.word];
                        // AcqRel: Release publishes the new slot's contents to lookups (Acquire in
                        // `find`); Acquire orders our later reads of the old slot.
                        if w.compare_exchange(old, new, Ordering::AcqRel, Ordering::Relaxed).is_ok()
                        {
                            return Inserted::Replaced(slot_of(old));
                        }
                    }
                    (None, c) => break c,
                }
            }
        };
        if let Some(g) = ghost {
            // The key's ghost word, if alive, among the home bucket's candidates (its byte is
            // the key's). Relaxed: under our lock a ghost word does not change (an entry word
            // may become one, by an eviction's CAS: then our key was evicted just now, a ghost
            // hit all the same).
            let mut cand = matching(home_ctrl, bt);
            while cand != 0 {
                let i = first(cand);
                let x = lock.bucket.words[i].load(Ordering::Relaxed);
                if ghost_of(x, tag(hash)) && g.alive(x) {
                    // Release: as below. The byte is the key's already.
                    lock.bucket.words[i].store(new, Ordering::Release);
                    return Inserted::Revived;
                }
                cand &= cand - 1;
            }
        }
        if let Some(i) = self.claim_empty(lock, lock.home, home_ctrl, bt, ghost) {
            // Release: publishes the slot's contents to lookups (Acquire in `find`); the byte
            // tag follows at the unlock.
            lock.bucket.words[i].store(new, Ordering::Release);
            return Inserted::Added;
        }
        // The home bucket is full: overflow into the following buckets.
        self.raise_pass(lock);
        let mut b = self.next(lock.home);
        for _ in 1..self.buckets.len() {
            let held = self.lock_bucket(b);
            // Acquire: as in `lock_bucket` (the control word's byte tags, seen under its lock).
            let c = self.buckets[b].ctrl.load(Ordering::Acquire);
            if let Some(i) = self.claim_empty(&held, b, c, bt, ghost) {
                // Release: as above.
                self.buckets[b].words[i].store(new, Ordering::Release);
                return Inserted::Added;
            }
            self.raise_pass(&held);
            b = self.next(b);
        }
        unreachable!("the index is sized so that its entries never fill it")
    }

    /// Raises the pass-through count of bucket `held.home` (locked by the caller), unless it
    /// is saturated.
    fn raise_pass(&self, held: &HomeLock<'_>) {
        let ctrl = &held.bucket.ctrl;
        // Relaxed: only the holder (us) changes the control word (see the module docs).
        let c = ctrl.load(Ordering::Relaxed);
        if pass(c) < PASS_MAX {
            // Release (in `holder_store`): the count is raised before the word is published
            // further on, so a lookup that misses the count has not been able to see the word
            // either.
            holder_store(ctrl, c, c + (1 << PASS_SHIFT));
        }
    }

    /// Lowers the pass-through count of bucket `held.home` (locked by the caller), unless it
    /// is saturated (sticky).
    fn lower_pass(&self, held: &HomeLock<'_>) {
        let ctrl = &held.bucket.ctrl;
        // Relaxed: as in `raise_pass`.
        let c = ctrl.load(Ordering::Relaxed);
        if pass(c) < PASS_MAX {
            debug_assert!(pass(c) > 0, "bucket {}: pass-through count below zero", held.home);
            // Release (in `holder_store`): after the word is gone (lookups may stop early only
            // once it is).
            holder_store(ctrl, c, c - (1 << PASS_SHIFT));
        }
    }

    /// Under the home lock of `hash`: removes the entry accepted by `m` (called with slot
    /// numbers); returns its slot. `pin` as in [`Index::find`]: the returned slot is one it
    /// protected before `m` read it.
    pub fn remove(
        &self,
        lock: &HomeLock<'_>,
        hash: u64,
        mut pin: impl FnMut(u32) -> bool,
        mut m: impl FnMut(u32) -> bool,
    ) -> Option<u32> {
        loop {
            let (at, seen) = self.locate(lock, hash, &mut pin, &mut m).0?;
            if let Some(s) = self.clear_word(lock.home, at, seen, Some(lock), 0) {
                if at.bucket == lock.home {
                    // Nobody else fills a word of our home while we hold its lock: the word is
                    // still empty at the unlock, which clears its byte.
                    lock.set_byte(at.word, byte_tag(hash), 0);
                }
                return Some(s);
            }
            // An eviction cleared it first: look again (the key is most likely gone).
        }
    }

    /// Removes the entry word of `slot` without the home lock, if it is still there; true if
    /// this call removed it. Evictions use this: exactly one thread removes a word (this CAS,
    /// or a locked writer's CAS), and that thread owns the unlink. `home_hash` is the low half
    /// of the key's hash, which gives the home bucket and the byte tag (slots keep it, so an
    /// eviction need not hash the key again); a word is the slot's if its low half names the
    /// slot (a slot is named by one word at most). With `ghost` (S3-FIFO's small-queue
    /// victims: the ghost's count), a word in its home bucket becomes the key's ghost word
    /// (see `raw/ghost.rs`); one elsewhere (an overflowed entry) leaves no ghost. Returns
    /// whether a ghost word was made, or `None` if the word was gone.
    #[inline(always)]
    pub fn remove_slot(&self, home_hash: u32, slot: u32, ghost: Option<u32>) -> Option<bool> {
        let lo = u64::from(home_hash);
        // An entry word's low 33 bits: the tag's lowest bit (1) and `slot + 1`.
        let want = 1 << 32 | (u64::from(slot) + 1);
        let bt = byte_tag(lo);
        let home = self.home(lo);
        let mut b = home;
        for _ in 0..self.buckets.len() {
            let bucket = &self.buckets[b];
            // Acquire: as in `probe`.
            let c = bucket.ctrl.load(Ordering::Acquire);
            let mut cand = matching(c, bt);
            while cand != 0 {
                let i = first(cand);
                // Relaxed: compared with a value we know; the CAS decides.
                let x = bucket.words[i].load(Ordering::Relaxed);
                if x & 0x1_FFFF_FFFF == want {
                    return self.unlink_word(home, At { bucket: b, word: i }, x, ghost);
                }
                cand &= cand - 1;
            }
            if pass(c) == 0 {
                break;
            }
            b = self.next(b);
        }
        // Not found by its byte: gone, or stored by an insert that still holds the bucket's
        // lock (its byte is set at the unlock, but the slot may already be LIVE).
        self.remove_slot_slow(home, want, ghost)
    }

    /// [`Index::remove_slot`] by the words themselves, not their bytes. The caller holds the
    /// slot through the policy, published (it read LIVE with Acquire, after the word's and the
    /// pass-through counts' stores), so the word is there unless another thread removed it.
    #[cold]
    fn remove_slot_slow(&self, home: usize, want: u64, ghost: Option<u32>) -> Option<bool> {
        let mut b = home;
        for _ in 0..self.buckets.len() {
            let bucket = &self.buckets[b];
            for (i, w) in bucket.words.iter().enumerate() {
                // Relaxed: compared with a value we know; the CAS decides.
                let x = w.load(Ordering::Relaxed);
                if x & 0x1_FFFF_FFFF == want {
                    return self.unlink_word(home, At { bucket: b, word: i }, x, ghost);
                }
            }
            // Acquire: as in `probe`.
            if pass(bucket.ctrl.load(Ordering::Acquire)) == 0 {
                return None;
            }
            b = self.next(b);
        }
        None
    }

    /// Removes slot word `x` at `at` (homed at `home`) without the lock, leaving the key's
    /// ghost word stamped `ghost` if given and the word is in its home bucket; whether it left
    /// one, if this call removed the word.
    #[inline(always)]
    fn unlink_word(&self, home: usize, at: At, x: u64, ghost: Option<u32>) -> Option<bool> {
        let to = match ghost {
            Some(stamp) if at.bucket == home => ghost_word(x >> 32, stamp),
            _ => 0,
        };
        self.clear_word(home, at, x, None, to).map(|_| to != 0)
    }

    /// CASes the entry word at `at` (homed at `home`) from `old` to `to` (empty, or a ghost
    /// word when `at` is in `home`) and lowers the pass-through counts before it, each under
    /// its bucket's lock (`held`: the caller's lock of `home`, if it holds it); the slot it
    /// held, or `None` if the word changed first. (Its byte tag stays behind: see the module
    /// docs.)
    #[inline(always)]
    fn clear_word(
        &self,
        home: usize,
        at: At,
        old: u64,
        held: Option<&HomeLock<'_>>,
        to: u64,
    ) -> Option<u32> {
        debug_assert!(to == 0 || (at.bucket == home && !is_entry(to)));
        let w = &self.buckets[at.bucket].words[at.word];
        // SeqCst (a locked instruction on x86-64): the unlinking that slot retirement orders
        // its epoch read after (see `Epochs::retire_epoch`). A lookup that sees the empty (or
        // ghost) word sees nothing of the slot; the slot itself stays readable until the
        // epochs allow.
        if old == 0
            || !is_entry(old)
            || w.compare_exchange(old, to, Ordering::SeqCst, Ordering::Relaxed).is_err()
        {
            return None;
        }
        if at.bucket != home {
            self.lower_passes(home, at.bucket, held);
        }
        Some(slot_of(old))
    }

    /// Lowers the pass-through counts of the buckets from `home` up to `end` (excluded), an
    /// entry stored in `end` having left, each under its lock: `held`'s if the caller holds
    /// `home`'s, the others taken one at a time. No cycle of waits forms: like an overflowing
    /// insert, a caller holds at most its home's lock while it waits for one further on, and
    /// a cycle would need every bucket of the table full.
    #[cold]
    fn lower_passes(&self, home: usize, end: usize, held: Option<&HomeLock<'_>>) {
        let mut b = home;
        while b != end {
            match held {
                Some(h) if h.home == b => self.lower_pass(h),
                _ => self.lower_pass(&self.lock_bucket(b)),
            }
            b = self.next(b);
        }
    }

    /// Buckets in the table (for walks by bucket).
    pub fn buckets(&self) -> usize {
        self.buckets.len()
    }

    /// The slots bucket `b`'s words refer to now.
    pub fn bucket_slots(&self, b: usize, out: &mut Vec<u32>) {
        for w in &self.buckets[b].words {
            // Acquire: as in `find`.
            let x = w.load(Ordering::Acquire);
            if x != 0 && is_entry(x) {
                out.push(slot_of(x));
            }
        }
    }

    /// Every slot an entry word refers to now (a snapshot word by word).
    pub fn slots(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for b in self.buckets.iter() {
            for w in &b.words {
                // Acquire: as in `find`.
                let x = w.load(Ordering::Acquire);
                if x != 0 && is_entry(x) {
                    out.push(slot_of(x));
                }
            }
        }
        out
    }

    /// Checks the pass-through counts against the entries (quiescent use): each bucket's count
    /// equals the number of entries whose home precedes it and that sit after it.
    pub fn validate(&self, hash_of: impl Fn(u32) -> u64) -> Result<(), String> {
        let n = self.buckets.len();
        let mut passing = vec![0u64; n];
        for (b, bucket) in self.buckets.iter().enumerate() {
            let c = bucket.ctrl.load(Ordering::Relaxed);
            if c & LOCK != 0 {
                return Err(format!("index bucket {b} is still locked"));
            }
            for (i, w) in bucket.words.iter().enumerate() {
                let x = w.load(Ordering::Relaxed);
                if x == 0 {
                    continue;
                }
                if !is_entry(x) {
                    // A ghost word: the byte of its key, left by the entry it replaced.
                    if byte(c, i) == 0 {
                        return Err(format!(
                            "index bucket {b} word {i}: a ghost word without a byte"
                        ));
                    }
                    continue;
                }
                let h = hash_of(slot_of(x));
                if tag(h) != x >> 32 {
                    return Err(format!("slot {}: index tag does not match its hash", slot_of(x)));
                }
                if byte(c, i) != byte_tag(h) {
                    return Err(format!(
                        "index bucket {b} word {i} (slot {}): byte tag {:#x}, expected {:#x}",
                        slot_of(x),
                        byte(c, i),
                        byte_tag(h)
                    ));
                }
                let mut c = self.home(h);
                while c != b {
                    passing[c] += 1;
                    c = self.next(c);
                }
            }
        }
        for (b, bucket) in self.buckets.iter().enumerate() {
            let have = pass(bucket.ctrl.load(Ordering::Relaxed));
            // A saturated count is sticky: it may exceed the entries passing now.
            if have != passing[b] && have != PASS_MAX {
                return Err(format!(
                    "index bucket {b}: pass-through count {have}, entries passing {}",
                    passing[b]
                ));
            }
        }
        Ok(())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A hash homed at bucket `b` of `idx` with tag bits `t`, and `t`'s top seven bits as its
    /// byte tag.
    fn hash_in(idx: &Index, b: usize, t: u32) -> u64 {
        let low = ((b as u64) << 32).div_ceil(idx.buckets.len() as u64).next_multiple_of(128)
            | u64::from(t >> 25);
        let h = (u64::from(t) << 32) | low;
        assert_eq!(idx.home(h), b);
        h
    }

    #[test]
    fn a_removal_by_slot_leaves_no_word() {
        let idx = Index::new(64, 4).unwrap();
        let h = hash_in(&idx, 3, 0xABCD_1234);
        let lock = idx.lock(h);
        assert_eq!(idx.insert(&lock, h, 7, pinned, |_| false, None), Inserted::Added);
        drop(lock);
        assert_eq!(idx.remove_slot(h as u32, 7, None), Some(false));
        assert_eq!(idx.find(h, pinned, |_| panic!("a removed word was followed")), None);
        assert!(idx.slots().is_empty());
        assert_eq!(idx.remove_slot(h as u32, 7, None), None, "the entry is gone");
        idx.validate(|_| h).expect("valid");
    }

    #[test]
    fn an_overflowed_victim_is_removed_and_lowers_the_count() {
        let idx = Index::new(64, 4).unwrap();
        let h = |t: u32| hash_in(&idx, 2, t << 8 | 1);
        for t in 0..8u32 {
            let lock = idx.lock(h(t));
            idx.insert(&lock, h(t), t, pinned, |_| false, None);
        }
        // The eighth sits in bucket 3: evicting it clears the word and lowers bucket 2's count.
        assert_eq!(pass(idx.buckets[2].ctrl.load(Ordering::Relaxed)), 1);
        assert_eq!(
            idx.remove_slot(h(7) as u32, 7, Some(1)),
            Some(false),
            "no ghost outside the home"
        );
        assert_eq!(pass(idx.buckets[2].ctrl.load(Ordering::Relaxed)), 0);
        assert_eq!(idx.slots().len(), 7);
        idx.validate(h).expect("valid");
    }

    fn g(now: u32, len: u32) -> Ghosts {
        Ghosts { now, len }
    }

    /// A small-queue victim leaves its key's ghost word: lookups do not see it, an insert of
    /// the key while it is alive takes it (a ghost hit), after `len` insertions it does not.
    #[test]
    fn a_ghost_word_is_invisible_and_revives_its_key_while_alive() {
        let idx = Index::new(64, 4).unwrap();
        let h = hash_in(&idx, 3, 0xABCD_1235);
        let add = |h: u64, s: u32, now: u32| {
            let lock = idx.lock(h);
            idx.insert(&lock, h, s, pinned, |_| false, Some(g(now, 10)))
        };
        assert!(idx.bound_for_small(h, g(0, 10)), "a new key goes to small");
        assert_eq!(add(h, 7, 0), Inserted::Added);
        assert!(!idx.bound_for_small(h, g(0, 10)), "a replacement keeps its queue");
        assert_eq!(idx.remove_slot(h as u32, 7, Some(5)), Some(true));
        // The look ahead of an insert sees the ghost word as the insert will.
        assert!(!idx.bound_for_small(h, g(14, 10)), "an alive ghost word sends its key to main");
        assert!(idx.bound_for_small(h, g(15, 10)), "a dead one does not");
        assert_eq!(idx.find(h, pinned, |_| panic!("a ghost word was followed")), None);
        assert_eq!(idx.first(h, |_| panic!("pinned"), |_| panic!("compared")), First::Absent);
        assert!(!idx.may_hold(h));
        assert!(idx.slots().is_empty());
        assert_eq!(idx.remove_slot(h as u32, 7, Some(6)), None, "a ghost word names no slot");
        idx.validate(|_| h).expect("valid");
        // Alive (9 insertions later): revived in place.
        assert_eq!(add(h, 8, 14), Inserted::Revived);
        assert_eq!(idx.find(h, pinned, |s| s == 8), Some(8));
        idx.validate(|_| h).expect("valid");
        // Aged out (10 insertions later): an ordinary insert, and the word is reused.
        assert_eq!(idx.remove_slot(h as u32, 8, Some(20)), Some(true));
        assert_eq!(add(h, 9, 30), Inserted::Added);
        assert_eq!(idx.slots(), vec![9]);
        // Without a ghost clock (the other policies) a ghost word is never a hit.
        assert_eq!(idx.remove_slot(h as u32, 9, Some(31)), Some(true));
        let lock = idx.lock(h);
        assert_eq!(idx.insert(&lock, h, 10, pinned, |_| false, None), Inserted::Added);
    }

    /// A word emptied without a ghost word (its byte left behind) is claimed before any ghost
    /// word, even one that ranks older than the clock's start (a stamp from before a wrap).
    #[test]
    fn an_empty_word_is_claimed_before_a_ghost_word() {
        let idx = Index::new(64, 4).unwrap();
        let h = |t: u32| hash_in(&idx, 2, t << 8 | 1);
        let add = |t: u32, s: u32, now: u32| {
            let lock = idx.lock(h(t));
            idx.insert(&lock, h(t), s, pinned, |_| false, Some(g(now, 100)))
        };
        let ghosts = || {
            let words = &idx.buckets[2].words;
            words.iter().map(|w| w.load(Ordering::Relaxed)).filter(|&x| x != 0 && !is_entry(x))
        };
        for t in 0..7u32 {
            assert_eq!(add(t, t, 0), Inserted::Added);
        }
        // Key 3 leaves a ghost word stamped half the clock's range away (2^31 insertions
        // old at the insert below); key 5 is removed without one.
        let stamp = 8 + (1 << 31);
        assert_eq!(idx.remove_slot(h(3) as u32, 3, Some(stamp)), Some(true));
        assert_eq!(idx.remove_slot(h(5) as u32, 5, None), Some(false));
        // No byte is zero (key 5's stayed): the insert ranks the seven words.
        assert_eq!(zero_bytes(idx.buckets[2].ctrl.load(Ordering::Relaxed)), 0);
        assert_eq!(add(10, 10, 8), Inserted::Added);
        assert_eq!(ghosts().count(), 1, "the ghost word was kept, the empty word taken");
        assert_eq!(pass(idx.buckets[2].ctrl.load(Ordering::Relaxed)), 0, "no overflow");
        // With no empty word left, the next new key takes the ghost word.
        assert_eq!(add(11, 11, 9), Inserted::Added);
        assert_eq!(ghosts().count(), 0);
        assert_eq!(pass(idx.buckets[2].ctrl.load(Ordering::Relaxed)), 0, "no overflow");
        idx.validate(h).expect("valid");
    }

    /// A bucket full of entries and ghost words gives an insert its oldest ghost word, never
    /// an entry's, and overflows only when it holds seven entries.
    #[test]
    fn a_full_bucket_gives_up_its_oldest_ghost_word() {
        let idx = Index::new(64, 4).unwrap();
        let h = |t: u32| hash_in(&idx, 2, t << 8 | 1);
        let add = |t: u32, now: u32| {
            let lock = idx.lock(h(t));
            idx.insert(&lock, h(t), t, pinned, |_| false, Some(g(now, 100)))
        };
        for t in 0..7u32 {
            assert_eq!(add(t, 0), Inserted::Added);
        }
        // Three of them leave ghost words, stamped 10, 5 and 20.
        for (t, stamp) in [(1u32, 10u32), (4, 5), (6, 20)] {
            assert_eq!(idx.remove_slot(h(t) as u32, t, Some(stamp)), Some(true));
        }
        // A new key takes the oldest ghost word (key 4's), in the home bucket.
        assert_eq!(add(10, 30), Inserted::Added);
        assert_eq!(pass(idx.buckets[2].ctrl.load(Ordering::Relaxed)), 0, "no overflow");
        let hit = |t: u32| {
            let lock = idx.lock(h(t));
            idx.insert(&lock, h(t), 20 + t, pinned, |_| false, Some(g(31, 100)))
                == Inserted::Revived
        };
        assert!(!hit(4), "key 4's ghost word was taken");
        // Key 4's insert took key 1's (stamp 10); key 6's is still there.
        assert!(hit(6));
        // Seven entries now: key 1 (its ghost word gone) overflows.
        assert_eq!(idx.slots().len(), 7);
        assert!(!hit(1));
        assert_eq!(pass(idx.buckets[2].ctrl.load(Ordering::Relaxed)), 1);
        // Slot 20 + t holds key t.
        idx.validate(|s| h(s % 20)).expect("valid");
    }
}

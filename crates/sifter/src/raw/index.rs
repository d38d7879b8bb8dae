//! The index: hash → slot. An open-addressing table of 64-byte buckets, each one cache line:
//! seven entry words and a control word.
//!
//! * An entry word is `tag << 32 | (slot + 1)`, where the tag is the hash's upper 32 bits;
//!   0 is an empty word. A lookup loads its home bucket's line, compares the tags of seven
//!   words, and reads a slot (a second line) only on a tag match: a miss usually touches one
//!   line, a hit two.
//! * Overflow goes to the following buckets (linear probing by bucket). The control word counts
//!   the entries *passing through* the bucket (homed before it, stored after it), so a lookup
//!   stops at the first bucket nothing passes through. Entries never move: a lookup that races
//!   with writers sees each word either before or after a change, never half of it.
//! * **Lookups take no lock and write nothing.** Writers take the spin lock in their *home*
//!   bucket's control word (bit 0), so all writes concerning one home bucket are serialised;
//!   they claim empty words anywhere with a CAS (other homes' writers may race for the same
//!   word), and clear or replace only words of their own home.
//! * The bucket count is fixed at build time from the arena size, at most ~5.5 entries per
//!   bucket on average, so the table never fills.

use crate::sync::{AtomicU64, Backoff, Ordering};

const WORDS: usize = 7;
const LOCKED: u64 = 1;
/// One passing-through entry in the control word (above the lock bit).
const PASS: u64 = 2;

#[derive(Debug)]
#[repr(align(64))]
struct Bucket {
    words: [AtomicU64; WORDS],
    /// Bit 0: the home lock. Bits 1..: entries passing through (times [`PASS`]).
    ctrl: AtomicU64,
}

/// The hash index.
#[derive(Debug)]
pub(crate) struct Index {
    buckets: Box<[Bucket]>,
}

/// Where an entry word sits.
#[derive(Debug, Clone, Copy)]
struct At {
    bucket: usize,
    word: usize,
}

#[inline]
fn word(hash: u64, slot: u32) -> u64 {
    (hash & 0xffff_ffff_0000_0000) | (slot as u64 + 1)
}

#[inline]
fn slot_of(w: u64) -> u32 {
    (w as u32).wrapping_sub(1)
}

/// Holds a home bucket's lock.
#[derive(Debug)]
pub(crate) struct HomeLock<'a> {
    index: &'a Index,
    home: usize,
}

impl Drop for HomeLock<'_> {
    fn drop(&mut self) {
        // Release: the critical section's word stores happen before the next holder's.
        self.index.buckets[self.home].ctrl.fetch_and(!LOCKED, Ordering::Release);
    }
}

impl Index {
    /// An index for up to `slots` entries.
    pub fn new(slots: usize) -> Self {
        let n = (slots * 2 / 11 + 2).max(2);
        Index {
            buckets: (0..n)
                .map(|_| Bucket {
                    words: std::array::from_fn(|_| AtomicU64::new(0)),
                    ctrl: AtomicU64::new(0),
                })
                .collect(),
        }
    }

    /// Bytes of table per entry slot it was sized for.
    pub fn bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<Bucket>()
    }

    #[inline]
    fn home(&self, hash: u64) -> usize {
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

    /// Finds the slot whose key `eq` accepts among the entries tagged like `hash`.
    #[inline]
    pub fn find(&self, hash: u64, mut eq: impl FnMut(u32) -> bool) -> Option<u32> {
        let tag = hash >> 32;
        let mut b = self.home(hash);
        for _ in 0..self.buckets.len() {
            let bucket = &self.buckets[b];
            for w in &bucket.words {
                // Acquire: pairs with the Release CAS/store that published the word, so the
                // slot's key and value written before it are visible.
                let x = w.load(Ordering::Acquire);
                if x >> 32 == tag && x != 0 && eq(slot_of(x)) {
                    return Some(slot_of(x));
                }
            }
            // Acquire: a writer raises the count before it publishes a word further on.
            if bucket.ctrl.load(Ordering::Acquire) < PASS {
                return None;
            }
            b = self.next(b);
        }
        None
    }

    /// Locks the home bucket of `hash` for writing.
    pub fn lock(&self, hash: u64) -> HomeLock<'_> {
        let home = self.home(hash);
        let ctrl = &self.buckets[home].ctrl;
        let mut backoff = Backoff::default();
        loop {
            // Acquire: pairs with the Release unlock; we see the previous holder's stores.
            if ctrl.fetch_or(LOCKED, Ordering::Acquire) & LOCKED == 0 {
                return HomeLock { index: self, home };
            }
            // Relaxed: wait until it looks free before trying the RMW again.
            while ctrl.load(Ordering::Relaxed) & LOCKED != 0 {
                backoff.snooze();
            }
        }
    }

    /// Under the home lock: where the entry accepted by `m` (a word test) sits.
    fn locate(&self, lock: &HomeLock<'_>, tag: u64, mut m: impl FnMut(u32) -> bool) -> Option<At> {
        let mut b = lock.home;
        for _ in 0..self.buckets.len() {
            let bucket = &self.buckets[b];
            for (i, w) in bucket.words.iter().enumerate() {
                // Acquire: other homes' writers publish words here concurrently; `m` reads
                // the slot of any word with our tag, whose contents the Acquire makes visible.
                let x = w.load(Ordering::Acquire);
                if x != 0 && x >> 32 == tag && m(slot_of(x)) {
                    return Some(At { bucket: b, word: i });
                }
            }
            if bucket.ctrl.load(Ordering::Acquire) < PASS {
                return None;
            }
            b = self.next(b);
        }
        None
    }

    /// Under the home lock of `hash`: replaces the entry accepted by `eq` with `slot` and
    /// returns the old slot, or adds `slot` and returns `None`.
    pub fn insert(
        &self,
        lock: &HomeLock<'_>,
        hash: u64,
        slot: u32,
        eq: impl FnMut(u32) -> bool,
    ) -> Option<u32> {
        let new = word(hash, slot);
        if let Some(at) = self.locate(lock, hash >> 32, eq) {
            let w = &self.buckets[at.bucket].words[at.word];
            // Release: publishes the new slot's contents to lookups (Acquire in `find`).
            return Some(slot_of(w.swap(new, Ordering::AcqRel)));
        }
        let mut b = lock.home;
        for _ in 0..self.buckets.len() {
            let bucket = &self.buckets[b];
            for w in &bucket.words {
                // Relaxed probe, then Release CAS: publishes the slot's contents.
                if w.load(Ordering::Relaxed) == 0
                    && w.compare_exchange(0, new, Ordering::Release, Ordering::Relaxed).is_ok()
                {
                    return None;
                }
            }
            // Release: the count is raised before the word is published further on, so a
            // lookup that misses the count has not been able to see the word either.
            bucket.ctrl.fetch_add(PASS, Ordering::Release);
            b = self.next(b);
        }
        unreachable!("the index is sized so that it never fills")
    }

    /// Under the home lock of `hash`: removes the entry accepted by `m` (called with slot
    /// numbers); returns its slot.
    pub fn remove(
        &self,
        lock: &HomeLock<'_>,
        hash: u64,
        m: impl FnMut(u32) -> bool,
    ) -> Option<u32> {
        let at = self.locate(lock, hash >> 32, m)?;
        // Release: a lookup that sees the empty word sees nothing of the slot it no longer
        // reaches; the slot itself stays readable until the epochs let it be reused.
        let old = self.buckets[at.bucket].words[at.word].swap(0, Ordering::Release);
        let mut b = lock.home;
        while b != at.bucket {
            // Release: after the word is gone (lookups may stop early only once it is).
            self.buckets[b].ctrl.fetch_sub(PASS, Ordering::Release);
            b = self.next(b);
        }
        Some(slot_of(old))
    }

    /// Every slot an entry word refers to now (a snapshot word by word).
    pub fn slots(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for b in self.buckets.iter() {
            for w in &b.words {
                // Acquire: as in `find`.
                let x = w.load(Ordering::Acquire);
                if x != 0 {
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
        let mut pass = vec![0u64; n];
        for (b, bucket) in self.buckets.iter().enumerate() {
            if bucket.ctrl.load(Ordering::Relaxed) & LOCKED != 0 {
                return Err(format!("index bucket {b} is still locked"));
            }
            for w in &bucket.words {
                let x = w.load(Ordering::Relaxed);
                if x == 0 {
                    continue;
                }
                let h = hash_of(slot_of(x));
                if h >> 32 != x >> 32 {
                    return Err(format!("slot {}: index tag does not match its hash", slot_of(x)));
                }
                let mut c = self.home(h);
                while c != b {
                    pass[c] += 1;
                    c = self.next(c);
                }
            }
        }
        for (b, bucket) in self.buckets.iter().enumerate() {
            let have = bucket.ctrl.load(Ordering::Relaxed) / PASS;
            if have != pass[b] {
                return Err(format!(
                    "index bucket {b}: pass-through count {have}, entries passing {}",
                    pass[b]
                ));
            }
        }
        Ok(())
    }
}

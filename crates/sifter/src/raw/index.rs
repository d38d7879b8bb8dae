//! The index: hash → slot. An open-addressing table of 64-byte buckets, each one cache line:
//! seven entry words and a control word.
//!
//! * An entry word is `tag << 32 | (slot + 1)`, where the tag is the hash's upper 32 bits
//!   with the lowest forced to 1 (so no tag matches an empty word, 0, and a scan compares one
//!   thing per word). A lookup loads its home bucket's line, compares the tags of seven
//!   words, and reads a slot (a second line) only on a tag match: a miss usually touches one
//!   line, a hit two.
//! * Overflow goes to the following buckets (linear probing by bucket). The control word counts
//!   the entries *passing through* the bucket (homed before it, stored after it), so a lookup
//!   stops at the first bucket nothing passes through. Entries never move: a lookup that races
//!   with writers sees each word either before or after a change, never half of it.
//! * **Lookups take no lock and write nothing.** Inserts and removals by key take the spin lock
//!   of their *home* bucket (a word in the same line), so two writers of one key are
//!   serialised; they fill an empty word with a plain store under the lock of the word's
//!   bucket (their home's, or also the overflow bucket's), and replace or clear words of
//!   their own home with a CAS. Evictions clear
//!   their victim's word by slot number with a CAS and no lock: every change of a word is one
//!   CAS, so exactly one thread unlinks an entry.
//! * The bucket count is fixed at build time from the arena size, about 4 slots per
//!   bucket on average, so the table never fills.

use crate::sync::{AtomicU32, AtomicU64, Backoff, Ordering};

const WORDS: usize = 7;

/// What [`Index::locate`] found: the entry (where, and the word value accepted) and the first
/// empty word of the home bucket.
type Located = (Option<(At, u64)>, Option<usize>);

/// The `pin` argument of [`Index::find`] and friends for a caller that is pinned already.
#[inline]
pub(crate) fn pinned() -> bool {
    false
}

#[derive(Debug)]
#[repr(align(64))]
struct Bucket {
    words: [AtomicU64; WORDS],
    /// The home lock: 1 while a writer for this home bucket holds it.
    lock: AtomicU32,
    /// Entries passing through: homed before this bucket, stored after it.
    pass: AtomicU32,
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

/// The tag of `hash`: never 0.
#[inline]
fn tag(hash: u64) -> u64 {
    (hash >> 32) | 1
}

#[inline]
fn word(hash: u64, slot: u32) -> u64 {
    (tag(hash) << 32) | (slot as u64 + 1)
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
        // Release: the critical section's word stores happen before the next holder's. A plain
        // store: only the holder writes the lock word.
        self.index.buckets[self.home].lock.store(0, Ordering::Release);
    }
}

impl Index {
    /// An index for up to `slots` entries.
    pub fn new(slots: usize) -> Self {
        let n = (slots / 4 + 2).max(2);
        Index {
            buckets: (0..n)
                .map(|_| Bucket {
                    words: std::array::from_fn(|_| AtomicU64::new(0)),
                    lock: AtomicU32::new(0),
                    pass: AtomicU32::new(0),
                })
                .collect(),
        }
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

    /// Finds the slot whose key `eq` accepts among the entries tagged like `hash`.
    ///
    /// `pin` runs before the first key comparison and returns true if it pinned the caller
    /// just then: the word is then read again, pinned, and only if it still holds the same
    /// slot is that slot read (else the probe starts over, pinned). So a caller that is not
    /// pinned yet needs a pin only if it meets its tag — most misses read one line of words
    /// and no slot, and skip the pin's fence. (Pinned callers pass [`pinned`].)
    #[inline]
    pub fn find(
        &self,
        hash: u64,
        mut pin: impl FnMut() -> bool,
        mut eq: impl FnMut(u32) -> bool,
    ) -> Option<u32> {
        self.probe(hash, &mut pin, &mut eq)
    }

    /// [`Index::find`] with its closures by reference (a probe whose word changed under the pin
    /// starts over, pinned, through this with [`pinned`]).
    #[inline]
    fn probe<P: FnMut() -> bool, E: FnMut(u32) -> bool>(
        &self,
        hash: u64,
        pin: &mut P,
        eq: &mut E,
    ) -> Option<u32> {
        let tag = tag(hash);
        let mut b = self.home(hash);
        for _ in 0..self.buckets.len() {
            let bucket = &self.buckets[b];
            for w in &bucket.words {
                // Acquire: pairs with the Release CAS/store that published the word, so the
                // slot's key and value written before it are visible. (Tags are never 0, so
                // an empty word never matches.)
                let x = w.load(Ordering::Acquire);
                if x >> 32 == tag {
                    // Acquire: as above; read after the pin's fence, this is the load the
                    // epoch protocol protects (a slot still linked after we pinned is not
                    // reused while we stay pinned).
                    if pin() && w.load(Ordering::Acquire) != x {
                        return self.probe(hash, &mut pinned, eq);
                    }
                    if eq(slot_of(x)) {
                        return Some(slot_of(x));
                    }
                }
            }
            // Acquire: a writer raises the count before it publishes a word further on.
            if bucket.pass.load(Ordering::Acquire) == 0 {
                return None;
            }
            b = self.next(b);
        }
        None
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
        if self.buckets[home].lock.swap(1, Ordering::Acquire) == 0 {
            return HomeLock { index: self, home };
        }
        self.lock_contended(home)
    }

    /// [`Index::lock_bucket`] when the lock was held: waits for it.
    #[cold]
    fn lock_contended(&self, home: usize) -> HomeLock<'_> {
        let lock = &self.buckets[home].lock;
        let mut backoff = Backoff::default();
        loop {
            // Acquire: pairs with the Release unlock; we see the previous holder's stores.
            if lock.swap(1, Ordering::Acquire) == 0 {
                return HomeLock { index: self, home };
            }
            // Relaxed: wait until it looks free before trying the RMW again. (Under loom the
            // wait is the RMW itself: loom lets a plain load read a stale value any number of
            // times, so a load loop would never have to end there.)
            #[cfg(not(loom))]
            while lock.load(Ordering::Relaxed) != 0 {
                backoff.snooze();
            }
            #[cfg(loom)]
            backoff.snooze();
        }
    }

    /// Under the home lock: where the entry accepted by `m` (a word test) sits, and the word
    /// value `m` accepted (a CAS must expect exactly it: the word may change right after); and
    /// the first empty word of the home bucket seen on the way (one scan serves both). `pin`
    /// as in [`Index::find`].
    #[inline]
    fn locate<P: FnMut() -> bool, M: FnMut(u32) -> bool>(
        &self,
        lock: &HomeLock<'_>,
        tag: u64,
        pin: &mut P,
        m: &mut M,
    ) -> Located {
        // The home bucket, noting its first empty word.
        let home = &self.buckets[lock.home];
        let mut empty = None;
        for (i, w) in home.words.iter().enumerate() {
            // Acquire: other homes' writers publish words here concurrently; `m` reads
            // the slot of any word with our tag, whose contents the Acquire makes visible.
            let x = w.load(Ordering::Acquire);
            if x >> 32 == tag {
                // Acquire: as above, pinned (see `find`).
                if pin() && w.load(Ordering::Acquire) != x {
                    return self.locate(lock, tag, &mut pinned, m);
                }
                if m(slot_of(x)) {
                    return (Some((At { bucket: lock.home, word: i }, x)), empty);
                }
            }
            if x == 0 && empty.is_none() {
                empty = Some(i);
            }
        }
        // Acquire: a writer raises the count before it publishes a word further on.
        if home.pass.load(Ordering::Acquire) == 0 {
            return (None, empty);
        }
        // The buckets overflow passes through.
        let mut b = self.next(lock.home);
        for _ in 1..self.buckets.len() {
            let bucket = &self.buckets[b];
            for (i, w) in bucket.words.iter().enumerate() {
                // Acquire: as above.
                let x = w.load(Ordering::Acquire);
                if x >> 32 == tag {
                    // Acquire: as above, pinned (see `find`).
                    if pin() && w.load(Ordering::Acquire) != x {
                        return self.locate(lock, tag, &mut pinned, m);
                    }
                    if m(slot_of(x)) {
                        return (Some((At { bucket: b, word: i }, x)), empty);
                    }
                }
            }
            // Acquire: as above.
            if bucket.pass.load(Ordering::Acquire) == 0 {
                return (None, empty);
            }
            b = self.next(b);
        }
        (None, empty)
    }

    /// Under the home lock of `hash`: replaces the entry accepted by `eq` with `slot` and
    /// returns the old slot, or adds `slot` and returns `None`. `pin` as in [`Index::find`].
    pub fn insert(
        &self,
        lock: &HomeLock<'_>,
        hash: u64,
        slot: u32,
        mut pin: impl FnMut() -> bool,
        mut eq: impl FnMut(u32) -> bool,
    ) -> Option<u32> {
        let new = word(hash, slot);
        // Empty words become non-empty only under their bucket's lock: ours for the home
        // bucket, the bucket's own for overflow (taken while we hold our home's: no deadlock,
        // since a cycle of such waits would need every bucket full, and the table is at most
        // 4/7 full). Evictions and replacements change only non-empty words. So an empty word
        // seen under the lock is ours to fill with a plain store, not a CAS — in particular an
        // empty word of the home bucket seen by `locate` is still empty.
        let empty = loop {
            match self.locate(lock, tag(hash), &mut pin, &mut eq) {
                (Some((at, old)), _) => {
                    // Replace: a lock-free `remove_slot` (eviction) may clear the word under
                    // us, hence the CAS; if it does, the key is gone: look again.
                    let w = &self.buckets[at.bucket].words[at.word];
                    // AcqRel: Release publishes the new slot's contents to lookups (Acquire in
                    // `find`); Acquire orders our later reads of the old slot.
                    if w.compare_exchange(old, new, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                        return Some(slot_of(old));
                    }
                }
                (None, empty) => break empty,
            }
        };
        if let Some(i) = empty {
            // Release: publishes the slot's contents to lookups (Acquire in `find`).
            self.buckets[lock.home].words[i].store(new, Ordering::Release);
            return None;
        }
        // The home bucket is full: overflow into the following buckets.
        let mut b = lock.home;
        for _ in 0..self.buckets.len() {
            let bucket = &self.buckets[b];
            let _overflow = (b != lock.home).then(|| self.lock_bucket(b));
            if let Some(w) = bucket.words.iter().find(|w| w.load(Ordering::Relaxed) == 0) {
                // Release: publishes the slot's contents to lookups (Acquire in `find`).
                w.store(new, Ordering::Release);
                return None;
            }
            // Release: the count is raised before the word is published further on, so a
            // lookup that misses the count has not been able to see the word either.
            bucket.pass.fetch_add(1, Ordering::Release);
            b = self.next(b);
        }
        unreachable!("the index is sized so that it never fills")
    }

    /// Under the home lock of `hash`: removes the entry accepted by `m` (called with slot
    /// numbers; the caller is pinned); returns its slot.
    pub fn remove(
        &self,
        lock: &HomeLock<'_>,
        hash: u64,
        m: impl FnMut(u32) -> bool,
    ) -> Option<u32> {
        let mut m = m;
        loop {
            let (at, seen) = self.locate(lock, tag(hash), &mut pinned, &mut m).0?;
            if let Some(s) = self.clear_word(lock.home, at, seen) {
                return Some(s);
            }
            // An eviction cleared it first: look again (the key is most likely gone).
        }
    }

    /// Removes the entry word of `slot` (tagged like `hash`) without the home lock, if it is
    /// still there; true if this call removed it. Evictions use this: exactly one thread
    /// removes a word (this CAS, or a locked writer's CAS), and that thread owns the unlink.
    #[inline(always)]
    pub fn remove_slot(&self, hash: u64, slot: u32) -> bool {
        let want = word(hash, slot);
        let home = self.home(hash);
        let mut b = home;
        for _ in 0..self.buckets.len() {
            let bucket = &self.buckets[b];
            for (i, w) in bucket.words.iter().enumerate() {
                // Relaxed: compared with a value we know; the CAS decides.
                if w.load(Ordering::Relaxed) == want {
                    return self.clear_word(home, At { bucket: b, word: i }, want).is_some();
                }
            }
            // Acquire: as in `find`.
            if bucket.pass.load(Ordering::Acquire) == 0 {
                return false;
            }
            b = self.next(b);
        }
        false
    }

    /// CASes the word at `at` (homed at `home`) from `old` to empty and lowers the
    /// pass-through counts before it; the slot it held, or `None` if the word changed first.
    #[inline(always)]
    fn clear_word(&self, home: usize, at: At, old: u64) -> Option<u32> {
        let w = &self.buckets[at.bucket].words[at.word];
        // SeqCst (a locked instruction on x86-64): the unlinking that slot retirement orders
        // its epoch read after (see `Epochs::retire_epoch`). A lookup that sees the empty word
        // sees nothing of the slot; the slot itself stays readable until the epochs allow.
        if old == 0 || w.compare_exchange(old, 0, Ordering::SeqCst, Ordering::Relaxed).is_err() {
            return None;
        }
        let mut b = home;
        while b != at.bucket {
            // Release: after the word is gone (lookups may stop early only once it is).
            self.buckets[b].pass.fetch_sub(1, Ordering::Release);
            b = self.next(b);
        }
        Some(slot_of(old))
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
            if x != 0 {
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
            if bucket.lock.load(Ordering::Relaxed) != 0 {
                return Err(format!("index bucket {b} is still locked"));
            }
            for w in &bucket.words {
                let x = w.load(Ordering::Relaxed);
                if x == 0 {
                    continue;
                }
                let h = hash_of(slot_of(x));
                if tag(h) != x >> 32 {
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
            let have = bucket.pass.load(Ordering::Relaxed) as u64;
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

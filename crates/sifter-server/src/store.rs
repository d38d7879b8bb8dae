//! The item store: a byte-bounded `sifter::Cache` of memcached items, with memcached's rules
//! for expiry times, CAS uniques and the read-modify-write commands (each atomic per key
//! through `Cache::compute`).

use sifter::{Cache, Op, Policy};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Bytes an item is charged beyond its key and data (the slot, index share and item header).
pub const ITEM_OVERHEAD: u64 = 64;

/// Relative exptimes above this many seconds are absolute Unix times (memcached's rule).
const REALTIME_MAXDELTA: i64 = 60 * 60 * 24 * 30;

/// A stored item.
#[derive(Debug)]
pub struct Item {
    pub flags: u32,
    pub cas: u64,
    /// Milliseconds of the store's clock ([`Store::now_ms`]) when it expires; 0 = never.
    /// Finer than the protocol's seconds so that an exptime of N seconds lives N seconds
    /// from its command, not until the N-th tick of a seconds clock (which can be at once).
    pub expires: u64,
    pub data: Box<[u8]>,
    /// Fetched since it was stored (`mg h`, `me fetch=`). Relaxed everywhere: a per-item hint.
    pub fetched: AtomicBool,
    /// The store's clock at the last access (`mg l`, `me la=`).
    pub atime: AtomicU64,
    /// A client was handed the "win" token to recompute this item (`mg N`/`R`, `md I`): later
    /// readers see `Z` until the item is replaced.
    pub win: AtomicBool,
    /// Marked stale by `md I` / `ms I`: readers see `X`.
    pub stale: bool,
}

impl Item {
    /// A fresh item (not fetched, accessed now, no win token handed out, not stale).
    pub fn new(flags: u32, cas: u64, expires: u64, data: Box<[u8]>, now: u64) -> Self {
        Item {
            flags,
            cas,
            expires,
            data,
            fetched: AtomicBool::new(false),
            atime: AtomicU64::new(now),
            win: AtomicBool::new(false),
            stale: false,
        }
    }

    /// Records an access at `now`; returns whether it had been fetched before.
    pub fn access(&self, now: u64) -> bool {
        // Relaxed: hints for `mg h`/`l` and `me`, nothing is published through them.
        self.atime.store(now, Ordering::Relaxed);
        self.fetched.swap(true, Ordering::Relaxed)
    }
}

/// The outcome of a storage command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    Stored,
    NotStored,
    Exists,
    NotFound,
}

/// The outcome of `incr` / `decr`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delta {
    Value(u64),
    NotFound,
    NonNumeric,
}

/// The options of an `ms`.
#[derive(Debug, Clone, Copy)]
pub struct MetaSet<'a> {
    pub mode: Mode,
    pub cas: Option<u64>,
    pub flags: u32,
    pub expires: u64,
    pub data: &'a [u8],
    /// `I`: with an older CAS, store the item marked stale instead of failing.
    pub invalidate: bool,
    /// `N<ttl>` (append/prepend): create the item on a miss with this expiry.
    pub vivify: Option<u64>,
}

/// The options of an `ma`.
#[derive(Debug, Clone, Copy)]
pub struct MetaArith {
    pub up: bool,
    pub delta: u64,
    pub initial: u64,
    pub vivify: Option<u64>,
    pub cas: Option<u64>,
    pub expires: Option<u64>,
}

/// The outcome of an `ma`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaArithResult {
    Done,
    NotFound,
    Exists,
    NonNumeric,
}

/// The store.
pub struct Store {
    cache: Cache<Box<[u8]>, Arc<Item>>,
    cas: AtomicU64,
    start: Instant,
    /// Unix time at `start`, for absolute exptimes.
    unix_start: u64,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("bytes", &self.cache.weight()).finish_non_exhaustive()
    }
}

/// How a storage command combines the new data with an existing item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Set,
    Add,
    Replace,
    Append,
    Prepend,
    Cas(u64),
}

#[allow(clippy::borrowed_box)] // the cache's weigher signature: `&K` with `K = Box<[u8]>`
fn weigh(k: &Box<[u8]>, v: &Arc<Item>) -> u64 {
    k.len() as u64 + v.data.len() as u64 + ITEM_OVERHEAD
}

impl Store {
    /// A store of at most `bytes` (keys, data and [`ITEM_OVERHEAD`] per item).
    pub fn new(bytes: u64, policy: Policy) -> Result<Self, sifter::BuildError> {
        let cache = Cache::builder()
            .weight_capacity(bytes)
            // (The key type is `Box<[u8]>`; the weigher sees it as a reference to one.)
            .weigher(weigh)
            .estimated_entries((bytes / 256).clamp(1024, 1 << 24) as usize)
            .policy(policy)
            .try_build()?;
        let unix_start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Ok(Store { cache, cas: AtomicU64::new(0), start: Instant::now(), unix_start })
    }

    /// Seconds since the store started (the clock of access times, `mg l`/`h`).
    pub fn now(&self) -> u64 {
        self.start.elapsed().as_secs() + 1
    }

    /// Milliseconds since the store started (the clock of expiry times; never 0, which
    /// means "never expires").
    pub fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX - 1) + 1
    }

    /// memcached's exptime (seconds): 0 never; up to 30 days relative; above, an absolute
    /// Unix time; negative (or an absolute time in the past): already expired. Returns the
    /// expiry instant on [`Store::now_ms`]'s clock.
    pub fn expiry(&self, exptime: i64) -> u64 {
        let now = self.now_ms();
        let past = now.saturating_sub(1).max(1);
        if exptime == 0 {
            0
        } else if exptime < 0 {
            past
        } else if exptime > REALTIME_MAXDELTA {
            let t = exptime as u64;
            if t <= self.unix_start {
                past
            } else {
                ((t - self.unix_start).saturating_mul(1000)).max(1)
            }
        } else {
            now + exptime as u64 * 1000
        }
    }

    fn live(&self, item: &Item) -> bool {
        item.expires == 0 || item.expires > self.now_ms()
    }

    fn next_cas(&self) -> u64 {
        // Relaxed: uniqueness comes from the RMW.
        self.cas.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The live item of `key` (recording the access: `mg h`/`l`, `me`).
    pub fn get(&self, key: &[u8]) -> Option<Arc<Item>> {
        let item = self.peek(key)?;
        item.access(self.now());
        Some(item)
    }

    /// The live item of `key`, without recording an access (`mg u`, `me`).
    pub fn peek(&self, key: &[u8]) -> Option<Arc<Item>> {
        let item = self.cache.get(key)?;
        if self.live(&item) {
            Some(item)
        } else {
            self.cache.remove_if(key, |i| Arc::ptr_eq(i, &item));
            None
        }
    }

    /// A storage command.
    pub fn store(&self, mode: Mode, key: &[u8], flags: u32, expires: u64, data: &[u8]) -> Stored {
        if mode == Mode::Set {
            let item = Item::new(flags, self.next_cas(), expires, data.into(), self.now());
            self.cache.insert(key.into(), Arc::new(item));
            return Stored::Stored;
        }
        let mut outcome = Stored::NotStored;
        self.cache.compute(key.into(), |old| {
            let old = old.filter(|i| self.live(i));
            let (result, op) = match (mode, old) {
                (Mode::Add, Some(_)) => (Stored::NotStored, Op::Keep),
                (Mode::Add, None) => {
                    (Stored::Stored, Op::Put(self.item(flags, expires, data.into())))
                }
                (Mode::Replace, None) | (Mode::Append | Mode::Prepend, None) => {
                    (Stored::NotStored, Op::Keep)
                }
                (Mode::Replace, Some(_)) => {
                    (Stored::Stored, Op::Put(self.item(flags, expires, data.into())))
                }
                (Mode::Append | Mode::Prepend, Some(o)) => {
                    let mut v = Vec::with_capacity(o.data.len() + data.len());
                    if mode == Mode::Append {
                        v.extend_from_slice(&o.data);
                        v.extend_from_slice(data);
                    } else {
                        v.extend_from_slice(data);
                        v.extend_from_slice(&o.data);
                    }
                    // Append/prepend keep the item's flags and expiry (memcached ignores theirs).
                    (Stored::Stored, Op::Put(self.item(o.flags, o.expires, v.into())))
                }
                (Mode::Cas(_), None) => (Stored::NotFound, Op::Keep),
                (Mode::Cas(c), Some(o)) if o.cas != c => (Stored::Exists, Op::Keep),
                (Mode::Cas(_), Some(_)) => {
                    (Stored::Stored, Op::Put(self.item(flags, expires, data.into())))
                }
                (Mode::Set, _) => unreachable!("handled above"),
            };
            outcome = result;
            op
        });
        outcome
    }

    fn item(&self, flags: u32, expires: u64, data: Box<[u8]>) -> Arc<Item> {
        Arc::new(Item::new(flags, self.next_cas(), expires, data, self.now()))
    }

    /// `delete`: true if a live item was removed.
    pub fn delete(&self, key: &[u8]) -> bool {
        let mut found = false;
        self.cache.compute(key.into(), |old| {
            found = old.is_some_and(|i| self.live(i));
            if old.is_some() {
                Op::Remove
            } else {
                Op::Keep
            }
        });
        found
    }

    /// `incr` (`up`) or `decr` by `by`: 64-bit wrap-around up, floor at 0 down (memcached).
    pub fn delta(&self, key: &[u8], up: bool, by: u64) -> Delta {
        let mut out = Delta::NotFound;
        self.cache.compute(key.into(), |old| {
            let Some(o) = old.filter(|i| self.live(i)) else {
                out = Delta::NotFound;
                return Op::Keep;
            };
            let n =
                std::str::from_utf8(&o.data).ok().and_then(|s| s.trim_end().parse::<u64>().ok());
            let Some(n) = n else {
                out = Delta::NonNumeric;
                return Op::Keep;
            };
            let v = if up { n.wrapping_add(by) } else { n.saturating_sub(by) };
            out = Delta::Value(v);
            Op::Put(self.item(o.flags, o.expires, v.to_string().into_bytes().into()))
        });
        out
    }

    /// Seconds left before `item` expires (a started second counts), or -1 if it never
    /// does (`mg t`).
    pub fn ttl_left(&self, item: &Item) -> i64 {
        if item.expires == 0 {
            -1
        } else {
            item.expires.saturating_sub(self.now_ms()).div_ceil(1000) as i64
        }
    }

    /// `ms`: a storage command with the meta options. Returns the outcome and, when stored,
    /// the new item (for `c`).
    pub fn meta_store(&self, key: &[u8], m: &MetaSet<'_>) -> (Stored, Option<Arc<Item>>) {
        let mut outcome = (Stored::NotStored, None);
        self.cache.compute(key.into(), |old| {
            let old = old.filter(|i| self.live(i));
            if let (Some(c), Some(o)) = (m.cas, old) {
                // With I, an older CAS still stores, as a stale item (memcached's invalidation).
                if o.cas != c && !(m.invalidate && c < o.cas) {
                    outcome = (Stored::Exists, None);
                    return Op::Keep;
                }
            }
            if m.cas.is_some() && old.is_none() {
                outcome = (Stored::NotFound, None);
                return Op::Keep;
            }
            let stale = m.invalidate && m.cas.is_some_and(|c| old.is_some_and(|o| c < o.cas));
            let new = |flags, expires, data: Box<[u8]>| {
                let mut i = Item::new(flags, self.next_cas(), expires, data, self.now());
                i.stale = stale;
                Arc::new(i)
            };
            let put = match (m.mode, old) {
                (Mode::Add, Some(_)) | (Mode::Replace, None) => None,
                (Mode::Append | Mode::Prepend, None) => {
                    m.vivify.map(|e| new(m.flags, e, m.data.into()))
                }
                (Mode::Append | Mode::Prepend, Some(o)) => {
                    let mut v = Vec::with_capacity(o.data.len() + m.data.len());
                    if m.mode == Mode::Append {
                        v.extend_from_slice(&o.data);
                        v.extend_from_slice(m.data);
                    } else {
                        v.extend_from_slice(m.data);
                        v.extend_from_slice(&o.data);
                    }
                    Some(new(o.flags, o.expires, v.into()))
                }
                _ => Some(new(m.flags, m.expires, m.data.into())),
            };
            match put {
                Some(item) => {
                    outcome = (Stored::Stored, Some(item.clone()));
                    Op::Put(item)
                }
                None => {
                    outcome = (Stored::NotStored, None);
                    Op::Keep
                }
            }
        });
        outcome
    }

    /// `mg` with `N`: the live item, or a new empty one stored with expiry `expires` if there
    /// was none (then `true`: this caller won the right to fill it).
    pub fn get_or_vivify(&self, key: &[u8], expires: u64) -> (Arc<Item>, bool) {
        let mut out = None;
        self.cache.compute(key.into(), |old| match old.filter(|i| self.live(i)) {
            Some(o) => {
                out = Some((o.clone(), false));
                Op::Keep
            }
            None => {
                let i = Item::new(0, self.next_cas(), expires, Box::new([]), self.now());
                i.win.store(true, Ordering::Relaxed);
                let i = Arc::new(i);
                out = Some((i.clone(), true));
                Op::Put(i)
            }
        });
        out.unwrap_or_else(|| {
            // `compute` always calls the closure; this is only reached if it panicked.
            (Arc::new(Item::new(0, 0, expires, Box::new([]), self.now())), false)
        })
    }

    /// `touch` / `gat` / `mg T`: a new expiry for a live item (same CAS and state), returning
    /// the updated item, or `None` if there was none.
    pub fn touch(&self, key: &[u8], expires: u64) -> Option<Arc<Item>> {
        let mut out = None;
        self.cache.compute(key.into(), |old| match old.filter(|i| self.live(i)) {
            None => Op::Keep,
            Some(o) => {
                let i = Arc::new(Item {
                    expires,
                    data: o.data.clone(),
                    fetched: AtomicBool::new(o.fetched.load(Ordering::Relaxed)),
                    atime: AtomicU64::new(o.atime.load(Ordering::Relaxed)),
                    win: AtomicBool::new(o.win.load(Ordering::Relaxed)),
                    stale: o.stale,
                    ..Item::new(o.flags, o.cas, 0, Box::new([]), 0)
                });
                out = Some(i.clone());
                Op::Put(i)
            }
        });
        out
    }

    /// `md`: removes the live item (`cas`: only if its CAS matches), or with `stale` marks it
    /// stale instead (new CAS, expiry `expires` if given). `Stored::Stored` = done.
    pub fn meta_delete(
        &self,
        key: &[u8],
        cas: Option<u64>,
        stale: bool,
        expires: Option<u64>,
    ) -> Stored {
        let mut outcome = Stored::NotFound;
        self.cache.compute(key.into(), |old| {
            let Some(o) = old.filter(|i| self.live(i)) else {
                outcome = Stored::NotFound;
                return if old.is_some() { Op::Remove } else { Op::Keep };
            };
            if cas.is_some_and(|c| c != o.cas) {
                outcome = Stored::Exists;
                return Op::Keep;
            }
            outcome = Stored::Stored;
            if stale {
                let mut i = Item::new(
                    o.flags,
                    self.next_cas(),
                    expires.unwrap_or(o.expires),
                    o.data.clone(),
                    self.now(),
                );
                i.stale = true;
                Op::Put(Arc::new(i))
            } else {
                Op::Remove
            }
        });
        outcome
    }

    /// `ma`: adds or subtracts `m.delta`; creates the item with `m.initial` on a miss when
    /// `m.vivify` is given. Returns the outcome and the item after it.
    pub fn meta_arith(&self, key: &[u8], m: &MetaArith) -> (MetaArithResult, Option<Arc<Item>>) {
        let mut out = (MetaArithResult::NotFound, None);
        self.cache.compute(key.into(), |old| {
            let Some(o) = old.filter(|i| self.live(i)) else {
                return match m.vivify {
                    Some(e) => {
                        let i = self.item(0, e, m.initial.to_string().into_bytes().into());
                        out = (MetaArithResult::Done, Some(i.clone()));
                        Op::Put(i)
                    }
                    None => Op::Keep,
                };
            };
            if m.cas.is_some_and(|c| c != o.cas) {
                out = (MetaArithResult::Exists, None);
                return Op::Keep;
            }
            let n =
                std::str::from_utf8(&o.data).ok().and_then(|s| s.trim_end().parse::<u64>().ok());
            let Some(n) = n else {
                out = (MetaArithResult::NonNumeric, None);
                return Op::Keep;
            };
            let v = if m.up { n.wrapping_add(m.delta) } else { n.saturating_sub(m.delta) };
            let i = self.item(
                o.flags,
                m.expires.unwrap_or(o.expires),
                v.to_string().into_bytes().into(),
            );
            out = (MetaArithResult::Done, Some(i.clone()));
            Op::Put(i)
        });
        out
    }

    /// Up to `limit` live items (0: all) as (key, data bytes, expiry as a Unix time or 0), for
    /// `stats cachedump` (a weakly consistent walk, like memcached's).
    pub fn dump(&self, limit: usize) -> Vec<(Box<[u8]>, usize, u64)> {
        let mut out = Vec::new();
        for (k, v) in self.cache.iter() {
            if limit > 0 && out.len() >= limit {
                break;
            }
            if self.live(&v) {
                let exp = if v.expires == 0 { 0 } else { self.unix_start + v.expires / 1000 };
                out.push((k, v.data.len(), exp));
            }
        }
        out
    }

    /// `cache_memlimit`: a new memory limit in bytes, at most the one the server started with
    /// (the cache's storage is sized for that); lowering it evicts until the items fit.
    pub fn set_memory_limit(&self, bytes: u64) -> Result<(), sifter::BuildError> {
        self.cache.set_capacity(bytes)
    }

    /// `flush_all`.
    pub fn flush(&self) {
        self.cache.clear();
    }

    /// Items held, bytes charged, the limit, and the cache's statistics.
    pub fn stats(&self) -> (usize, u64, u64, sifter::CacheStats) {
        (self.cache.len(), self.cache.weight(), self.cache.capacity(), self.cache.stats())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> Store {
        Store::new(1 << 20, Policy::Mobius).expect("a valid store")
    }

    #[test]
    fn a_relative_exptime_lives_its_whole_seconds_from_the_command() {
        let s = store();
        let before = s.now_ms();
        let e = s.expiry(1);
        // A seconds clock would give the next tick, possibly a millisecond away.
        assert!(e >= before + 1000, "exptime 1 at {before} ms expires at {e} ms");
        assert!(e <= s.now_ms() + 1000);
        assert_eq!(s.store(Mode::Set, b"k", 0, e, b"v"), Stored::Stored);
        let item = s.get(b"k").expect("live right after the set");
        assert_eq!(s.ttl_left(&item), 1, "a started second counts");
        assert!(s.touch(b"k", s.expiry(1)).is_some());
    }

    #[test]
    fn negative_and_past_absolute_exptimes_are_already_expired() {
        let s = store();
        for exptime in [-1, 1_000_000_000] {
            let e = s.expiry(exptime);
            assert_ne!(e, 0, "{exptime}: 0 would mean never");
            assert_eq!(s.store(Mode::Set, b"k", 0, e, b"v"), Stored::Stored);
            assert!(s.get(b"k").is_none(), "{exptime}: live");
        }
        assert_eq!(s.expiry(0), 0);
        let item = Item::new(0, 1, 0, Box::new([]), s.now());
        assert_eq!(s.ttl_left(&item), -1);
    }

    #[test]
    fn a_future_absolute_exptime_counts_from_the_unix_epoch() {
        let s = store();
        let unix_now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("a clock after 1970")
            .as_secs();
        let e = s.expiry((unix_now + 100) as i64);
        assert_eq!(s.store(Mode::Set, b"k", 0, e, b"v"), Stored::Stored);
        let left = s.ttl_left(&s.get(b"k").expect("live"));
        assert!((99..=101).contains(&left), "{left} s left of 100");
    }
}

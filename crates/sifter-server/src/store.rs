//! The item store: a byte-bounded `sifter::Cache` of memcached items, with memcached's rules
//! for expiry times, CAS uniques and the read-modify-write commands (each atomic per key
//! through `Cache::compute`).

use sifter::{Cache, Op, Policy};
use std::sync::atomic::{AtomicU64, Ordering};
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
    /// Seconds of the store's clock when it expires; 0 = never.
    pub expires: u64,
    pub data: Box<[u8]>,
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

    /// Seconds since the store started (its clock; never 0 for a stored expiry).
    pub fn now(&self) -> u64 {
        self.start.elapsed().as_secs() + 1
    }

    /// memcached's exptime: 0 never; up to 30 days relative; above, an absolute Unix time;
    /// negative (or an absolute time in the past): already expired.
    pub fn expiry(&self, exptime: i64) -> u64 {
        let now = self.now();
        if exptime == 0 {
            0
        } else if exptime < 0 {
            now.saturating_sub(1).max(1)
        } else if exptime > REALTIME_MAXDELTA {
            let t = exptime as u64;
            if t <= self.unix_start {
                now.saturating_sub(1).max(1)
            } else {
                (t - self.unix_start).max(1)
            }
        } else {
            now + exptime as u64
        }
    }

    fn live(&self, item: &Item) -> bool {
        item.expires == 0 || item.expires > self.now()
    }

    fn next_cas(&self) -> u64 {
        // Relaxed: uniqueness comes from the RMW.
        self.cas.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The live item of `key`.
    pub fn get(&self, key: &[u8]) -> Option<Arc<Item>> {
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
            let item = Item { flags, cas: self.next_cas(), expires, data: data.into() };
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
        Arc::new(Item { flags, cas: self.next_cas(), expires, data })
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

    /// `touch`: sets a live item's expiry; true if there was one.
    pub fn touch(&self, key: &[u8], expires: u64) -> bool {
        let mut found = false;
        self.cache.compute(key.into(), |old| match old.filter(|i| self.live(i)) {
            None => {
                found = false;
                Op::Keep
            }
            Some(o) => {
                found = true;
                Op::Put(Arc::new(Item {
                    flags: o.flags,
                    cas: o.cas,
                    expires,
                    data: o.data.clone(),
                }))
            }
        });
        found
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

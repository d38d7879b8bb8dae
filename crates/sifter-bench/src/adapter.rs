//! One small trait over every cache the harness can drive: sifter's policies and the peers
//! (quick_cache, moka, mini-moka, foyer, `Mutex<lru::LruCache>`), plus a "null cache" that
//! measures the harness itself.
//!
//! Keys and values are `u64`; the value stored is the key (a cache hit copies 8 bytes out and
//! returns them, so that the harness's `--touch` can follow the value to an object).

use crate::BenchError;
use mini_moka::sync::ConcurrentCacheExt as _;
use parking_lot::Mutex;
use sifter::profile::allocator_api2::alloc::{Allocator, Global};
use sifter::profile::HugePages;
use sifter::{Cache, Policy};
use std::num::NonZeroUsize;

/// A concurrent cache as the harness sees it.
pub trait BenchCache: Send + Sync {
    /// Looks `k` up; its value on a hit.
    fn get(&self, k: u64) -> Option<u64>;
    /// Inserts (or overwrites) `k`.
    fn insert(&self, k: u64);
    /// Removes `k` if present.
    fn remove(&self, k: u64);
    /// Entries held now (approximate for caches that apply writes lazily, such as moka).
    fn len(&self) -> usize;
    /// Whether the cache holds nothing.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Whether inserts report their eviction time through `sifter::profile` (sifter's caches).
    fn reports_evictions(&self) -> bool {
        false
    }
    /// Hits so far that wrote the policy's shared state (`sifter::CacheStats::hit_writes`),
    /// for the caches that count them (sifter's `Cache`).
    fn hit_writes(&self) -> Option<u64> {
        None
    }
}

/// Every cache name [`make`] accepts, with a one-line description.
pub const CACHES: &[(&str, &str)] = &[
    ("mobius", "sifter Mobius: two lock-free FIFO queues in rotation, consecutive detection"),
    ("mobius-wd", "sifter Mobius without consecutive detection (the paper's ablation)"),
    (
        "mobius-ttl",
        "sifter Mobius with a time-to-live (1 hour: nothing expires in a run): the cost of \
         expiry (a clock read and a deadline check per hit, 8 bytes per entry)",
    ),
    (
        "mobius-get-with",
        "sifter Mobius read through `get_with` (the loader API) instead of `get` + `insert`: \
         a miss runs the loader, which stores the value (the harness's insert of that key is \
         skipped)",
    ),
    ("sieve", "sifter SIEVE: one locked list and hand, lock-free hits"),
    ("lru", "sifter LRU: one global lock, list move on every hit"),
    (
        "problru",
        "sifter Prob-LRU: LRU's locked list, a hit takes the lock and moves only with probability 1/2",
    ),
    ("fifo", "sifter FIFO on a lock-free queue"),
    ("clock", "sifter CLOCK (FIFO-Reinsertion) on a lock-free queue"),
    ("s3fifo", "sifter S3-FIFO: small and main lock-free queues, a ghost of fingerprints"),
    ("nbq-clock", "sifter NbQ-CLOCK: 8-bit-counter CLOCK on a lock-free queue, batched re-insert"),
    (
        "nbq-clock-1",
        "sifter NbQ-CLOCK re-inserting one entry at a time (the report's unbatched form)",
    ),
    (
        "multistep",
        "sifter MultiStepCache: multi-step LRU, 2 vectors × 4 ways per set, a lock per set",
    ),
    ("multistep-m1", "sifter MultiStepCache with 1 vector × 4 ways (in-vector LRU only)"),
    ("multistep-m4", "sifter MultiStepCache with 4 vectors × 4 ways per set"),
    ("multistep-m8", "sifter MultiStepCache with 8 vectors × 4 ways per set"),
    ("multistep-p8", "sifter MultiStepCache with 2 vectors × 8 ways per set (AVX2 tag compare)"),
    ("quick_cache", "quick_cache::sync::Cache (sharded CLOCK-Pro-like S3-FIFO variant)"),
    ("moka", "moka::sync::Cache (TinyLFU admission, LRU; writes applied in batches)"),
    ("mini_moka", "mini_moka::sync::Cache (moka's smaller sibling)"),
    ("foyer", "foyer_memory::Cache with its LRU eviction (8 shards)"),
    ("foyer-sieve", "foyer_memory::Cache with its SIEVE eviction (8 shards)"),
    ("mutex-lru", "Mutex<lru::LruCache> (one lock around the classic LRU crate)"),
    ("null", "does nothing, always hits: the harness's own cost"),
    (
        "ceiling",
        "read-only lookups in an immutable hash map of the stream's most frequent keys (as many \
         as the capacity): the limit for a structure that writes nothing (shared mode only)",
    ),
    (
        "ceiling-huge",
        "the ceiling with its table on huge pages, as sifter's own tables are (SIFTER_HUGE_PAGES=off \
         turns both off): the same limit on the same footing",
    ),
];

/// Whether `name` is one of the ceiling rows (built from a run's sequences by [`ceiling`]).
pub fn is_ceiling(name: &str) -> bool {
    matches!(name, "ceiling" | "ceiling-huge")
}

/// The peers (not sifter's own policies).
pub const PEERS: &[&str] =
    &["quick_cache", "moka", "mini_moka", "foyer", "foyer-sieve", "mutex-lru"];

/// The peer caches' crates and the versions this harness was built against, from the
/// workspace's `Cargo.lock` (read by the build script, which lists the crates): e.g.
/// `("quick_cache", "0.7.0")`. Every peer crate is listed; its version is "unknown" when the
/// build found no lock file (a build outside the workspace). Result files record these beside
/// the machine.
pub fn peer_versions() -> Vec<(&'static str, &'static str)> {
    env!("SIFTER_BENCH_PEERS").split(';').filter_map(|p| p.split_once('=')).collect()
}

struct Sifter(Cache<u64, u64>);
struct SifterGetWith(Cache<u64, u64>);
struct MultiStep<const M: usize, const P: usize>(sifter::MultiStepCache<u64, u64, M, P>);
struct Quick(quick_cache::sync::Cache<u64, u64>);
struct Moka(moka::sync::Cache<u64, u64>);
struct MiniMoka(mini_moka::sync::Cache<u64, u64>);
struct Foyer(foyer_memory::Cache<u64, u64>);
struct MutexLru(Mutex<lru::LruCache<u64, u64>>);
struct Null;
struct Ceiling<A: Allocator + Clone>(hashbrown::HashMap<u64, u64, foldhash::fast::FixedState, A>);

/// A ceiling row (see [`is_ceiling`]) for a run of `seqs`: an immutable map holding the
/// `capacity` keys the sequences request most often (all of them when the capacity covers
/// the distinct keys), its table on huge pages for `ceiling-huge`. `get` is one lookup;
/// `insert` and `remove` do nothing.
pub fn ceiling(
    name: &str,
    capacity: u64,
    seqs: &[crate::workload::Sequence],
) -> Result<Box<dyn BenchCache>, BenchError> {
    let mut freq: hashbrown::HashMap<u64, u64, foldhash::fast::FixedState> = Default::default();
    for s in seqs {
        for &w in s.iter() {
            *freq.entry(crate::workload::unpack(w).1).or_default() += 1;
        }
    }
    let mut by_freq: Vec<(u64, u64)> = freq.into_iter().collect();
    by_freq.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    by_freq.truncate(usize::try_from(capacity).unwrap_or(usize::MAX));
    fn fill<A: Allocator + Clone + Send + Sync + 'static>(
        keys: Vec<(u64, u64)>,
        alloc: A,
    ) -> Box<dyn BenchCache> {
        let mut m = hashbrown::HashMap::with_capacity_and_hasher_in(
            keys.len(),
            foldhash::fast::FixedState::default(),
            alloc,
        );
        m.extend(keys.into_iter().map(|(k, _)| (k, k)));
        Box::new(Ceiling(m))
    }
    Ok(match name {
        "ceiling" => fill(by_freq, Global),
        "ceiling-huge" => fill(by_freq, HugePages),
        _ => return Err(BenchError::Config(format!("{name:?} is not a ceiling row"))),
    })
}

impl<A: Allocator + Clone + Send + Sync> BenchCache for Ceiling<A> {
    #[inline]
    fn get(&self, k: u64) -> Option<u64> {
        self.0.get(&k).copied()
    }
    #[inline]
    fn insert(&self, k: u64) {
        std::hint::black_box(k);
    }
    fn remove(&self, k: u64) {
        std::hint::black_box(k);
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

/// The caches whose API is `get(&k) -> Option<_>` and `insert(k, v)`: the adapter differs
/// only in how a found entry gives its value, how an entry is removed and how the entries
/// are counted.
macro_rules! adapter {
    ($($t:ty => value: |$e:ident| $value:expr, remove: $remove:ident, len: |$c:ident| $len:expr,
        evictions: $ev:expr, hit_writes: |$w:ident| $writes:expr;)*) => {$(
        impl BenchCache for $t {
            #[inline]
            fn get(&self, k: u64) -> Option<u64> {
                self.0.get(&k).map(|$e| $value)
            }
            #[inline]
            fn insert(&self, k: u64) {
                let _ = self.0.insert(k, k);
            }
            fn remove(&self, k: u64) {
                let _ = self.0.$remove(&k);
            }
            fn len(&self) -> usize {
                let $c = &self.0;
                $len
            }
            fn reports_evictions(&self) -> bool {
                $ev
            }
            fn hit_writes(&self) -> Option<u64> {
                let $w = &self.0;
                $writes
            }
        }
    )*};
}

adapter! {
    Sifter => value: |v| v, remove: remove, len: |c| c.len(), evictions: true,
        hit_writes: |c| Some(c.stats().hit_writes);
    Quick => value: |v| v, remove: remove, len: |c| c.len(), evictions: false,
        hit_writes: |_c| None;
    // moka and mini-moka apply writes in batches: settle them before counting.
    Moka => value: |v| v, remove: invalidate,
        len: |c| { c.run_pending_tasks(); c.entry_count() as usize }, evictions: false,
        hit_writes: |_c| None;
    MiniMoka => value: |v| v, remove: invalidate,
        len: |c| { c.sync(); c.entry_count() as usize }, evictions: false,
        hit_writes: |_c| None;
    Foyer => value: |e| *e.value(), remove: remove, len: |c| c.usage(), evictions: false,
        hit_writes: |_c| None;
}

thread_local! {
    /// The key this thread's last `get_with` loaded (and so stored).
    static LOADED: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

impl BenchCache for SifterGetWith {
    #[inline]
    fn get(&self, k: u64) -> Option<u64> {
        let mut loaded = false;
        let v = self.0.get_with(k, || {
            loaded = true;
            k
        });
        if loaded {
            LOADED.with(|l| l.set(Some(k)));
            return None;
        }
        Some(v)
    }
    #[inline]
    fn insert(&self, k: u64) {
        // The harness inserts after a miss; the loader has stored that key already.
        if LOADED.with(|l| l.take()) != Some(k) {
            self.0.insert(k, k);
        }
    }
    fn remove(&self, k: u64) {
        let _ = self.0.remove(&k);
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn reports_evictions(&self) -> bool {
        true
    }
    fn hit_writes(&self) -> Option<u64> {
        Some(self.0.stats().hit_writes)
    }
}

impl<const M: usize, const P: usize> BenchCache for MultiStep<M, P> {
    #[inline]
    fn get(&self, k: u64) -> Option<u64> {
        self.0.get(&k)
    }
    #[inline]
    fn insert(&self, k: u64) {
        self.0.insert(k, k);
    }
    fn remove(&self, k: u64) {
        let _ = self.0.remove(&k);
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

impl BenchCache for MutexLru {
    #[inline]
    fn get(&self, k: u64) -> Option<u64> {
        self.0.lock().get(&k).copied()
    }
    #[inline]
    fn insert(&self, k: u64) {
        self.0.lock().put(k, k);
    }
    fn remove(&self, k: u64) {
        self.0.lock().pop(&k);
    }
    fn len(&self) -> usize {
        self.0.lock().len()
    }
}

impl BenchCache for Null {
    #[inline]
    fn get(&self, k: u64) -> Option<u64> {
        Some(std::hint::black_box(k))
    }
    #[inline]
    fn insert(&self, k: u64) {
        std::hint::black_box(k);
    }
    fn remove(&self, k: u64) {
        std::hint::black_box(k);
    }
    fn len(&self) -> usize {
        usize::MAX
    }
}

/// Builds the cache called `name` with room for `capacity` entries.
pub fn make(name: &str, capacity: u64) -> Result<Box<dyn BenchCache>, BenchError> {
    if capacity == 0 {
        return Err(BenchError::Config(format!("{name}: capacity must be at least 1")));
    }
    /// A sifter cache built, or the builder's error naming the cache.
    fn built<T>(name: &str, r: Result<T, sifter::BuildError>) -> Result<T, BenchError> {
        r.map_err(|e| BenchError::Config(format!("{name}: {e}")))
    }
    let sifter = |p: Policy, cd: bool| -> Result<Box<dyn BenchCache>, BenchError> {
        let c = Cache::builder().capacity(capacity).policy(p).consecutive_detection(cd);
        Ok(Box::new(Sifter(built(name, c.try_build())?)))
    };
    let cap = usize::try_from(capacity)
        .map_err(|_| BenchError::Config(format!("{name}: capacity {capacity} too large")))?;
    let foyer = |eviction: foyer_memory::EvictionConfig| -> Box<dyn BenchCache> {
        let c: foyer_memory::Cache<u64, u64> =
            foyer_memory::CacheBuilder::new(cap).with_eviction_config(eviction).build();
        Box::new(Foyer(c))
    };
    Ok(match name {
        "mobius" => sifter(Policy::Mobius, true)?,
        "mobius-wd" => sifter(Policy::Mobius, false)?,
        "mobius-ttl" => Box::new(Sifter(built(
            name,
            Cache::builder()
                .capacity(capacity)
                .time_to_live(std::time::Duration::from_secs(3600))
                .try_build(),
        )?)),
        "mobius-get-with" => {
            Box::new(SifterGetWith(built(name, Cache::builder().capacity(capacity).try_build())?))
        }
        "sieve" => sifter(Policy::Sieve, true)?,
        "lru" => sifter(Policy::Lru, true)?,
        "problru" | "prob-lru" => sifter(Policy::ProbLru, true)?,
        "fifo" => sifter(Policy::Fifo, true)?,
        "clock" => sifter(Policy::Clock, true)?,
        "s3fifo" | "s3-fifo" => sifter(Policy::S3Fifo, true)?,
        "nbq-clock" | "nbqclock" => sifter(Policy::NbqClock, true)?,
        "nbq-clock-1" => sifter(Policy::NbqClock, false)?,
        "multistep" | "multistep-lru" => {
            Box::new(MultiStep::<2, 4>(built(name, sifter::MultiStepCache::try_new(capacity))?))
        }
        "multistep-m1" => {
            Box::new(MultiStep::<1, 4>(built(name, sifter::MultiStepCache::try_new(capacity))?))
        }
        "multistep-m4" => {
            Box::new(MultiStep::<4, 4>(built(name, sifter::MultiStepCache::try_new(capacity))?))
        }
        "multistep-m8" => {
            Box::new(MultiStep::<8, 4>(built(name, sifter::MultiStepCache::try_new(capacity))?))
        }
        "multistep-p8" => {
            Box::new(MultiStep::<2, 8>(built(name, sifter::MultiStepCache::try_new(capacity))?))
        }
        "quick_cache" | "quick-cache" => Box::new(Quick(quick_cache::sync::Cache::new(cap))),
        "moka" => Box::new(Moka(moka::sync::Cache::new(capacity))),
        "mini_moka" | "mini-moka" => Box::new(MiniMoka(mini_moka::sync::Cache::new(capacity))),
        "foyer" => foyer(foyer_memory::LruConfig::default().into()),
        "foyer-sieve" => foyer(foyer_memory::SieveConfig.into()),
        "mutex-lru" => {
            let n = NonZeroUsize::new(cap).unwrap_or(NonZeroUsize::MIN);
            Box::new(MutexLru(Mutex::new(lru::LruCache::new(n))))
        }
        "null" => Box::new(Null),
        "ceiling" | "ceiling-huge" => {
            return Err(BenchError::Config(format!(
                "{name}: built from the run's sequences (adapter::ceiling), not by name"
            )))
        }
        _ => {
            let known: Vec<&str> = CACHES.iter().map(|c| c.0).collect();
            return Err(BenchError::Config(format!(
                "unknown cache {name:?}; known: {}",
                known.join(", ")
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Built in the workspace, every peer crate's version is known (from `Cargo.lock`) and
    /// looks like one; quick_cache's is the one the workspace asks for.
    #[test]
    fn peer_versions_come_from_the_lock_file() {
        let v = peer_versions();
        assert_eq!(v.len(), 5, "{v:?}");
        for (c, ver) in &v {
            assert!(
                !ver.is_empty() && ver.split('.').all(|p| p.parse::<u32>().is_ok()),
                "{c}: {ver}"
            );
        }
        let lock =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock"))
                .expect("the workspace's lock file");
        let qc = v.iter().find(|(c, _)| *c == "quick_cache").expect("listed").1;
        assert!(lock.contains(&format!("name = \"quick_cache\"\nversion = \"{qc}\"")), "{qc}");
    }

    /// Every adapter stores, finds, removes and evicts down to about its capacity.
    #[test]
    fn every_cache_behaves_like_a_cache() {
        for &(name, _) in CACHES {
            if is_ceiling(name) {
                assert!(make(name, 100).is_err());
                continue;
            }
            let c = make(name, 100).expect(name);
            if name == "null" {
                assert_eq!(c.get(1), Some(1));
                continue;
            }
            assert_eq!(c.get(1), None, "{name}: empty cache hit");
            c.insert(1);
            assert_eq!(c.get(1), Some(1), "{name}: miss after insert, or not the value");
            c.remove(1);
            assert_eq!(c.get(1), None, "{name}: hit after remove");
            for k in 0..10_000 {
                c.insert(k);
            }
            let len = c.len();
            assert!((50..=130).contains(&len), "{name}: {len} entries for capacity 100");
        }
        assert!(make("nope", 10).is_err());
        assert!(make("mobius", 0).is_err());
    }
}

#[cfg(test)]
mod ceiling_tests {
    use super::*;
    use crate::workload::{pack, Op};
    use std::sync::Arc;

    #[test]
    fn ceiling_holds_the_most_frequent_keys() {
        let seq = Arc::new(vec![
            pack(Op::Read, 1),
            pack(Op::Read, 2),
            pack(Op::Read, 2),
            pack(Op::Read, 3),
            pack(Op::Read, 3),
            pack(Op::Read, 3),
        ]);
        for name in ["ceiling", "ceiling-huge"] {
            let c = ceiling(name, 2, std::slice::from_ref(&seq)).expect(name);
            assert!(c.get(3) == Some(3) && c.get(2) == Some(2) && c.get(1).is_none(), "{name}");
            c.insert(1);
            assert!(c.get(1).is_none(), "{name}: the ceiling never changes");
            assert_eq!(c.len(), 2, "{name}");
        }
        assert!(ceiling("mobius", 2, &[seq]).is_err());
    }
}

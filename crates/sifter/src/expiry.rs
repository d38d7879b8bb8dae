//! Expiry: time-to-live, time-to-idle, per-entry expiry, and the clock they are measured on.
//!
//! Expiry times live in words after each slot, allocated only when the cache is built with expiry,
//! so caches without it pay nothing. A `get` that finds an expired entry returns nothing and
//! unlinks it; the eviction sweep takes expired entries first, without a second chance (the
//! queue scans and SIEVE's hand meet the oldest entries, which expire first); and
//! [`Cache::purge_expired`](crate::Cache::purge_expired) walks the whole index on request.
//! Reads under time-to-idle move the deadline forward only when it gained at least 1/16 of the
//! idle time, so a hot entry's line is not written on every hit.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A monotonic clock for expiry. Tests use [`ManualClock`] to control time.
pub trait Clock: Send + Sync + 'static {
    /// Time since this clock's fixed origin; never decreases.
    fn now(&self) -> Duration;
}

/// The default clock, read in one load: memcached's approach. While any cache built with
/// expiry and this clock exists, a background thread (`sifter-clock`) advances a shared time
/// every millisecond from the kernel's coarse monotonic clock (`CLOCK_MONOTONIC_COARSE` on
/// Linux, `std::time::Instant` elsewhere), and reads of the clock load it: no system call and
/// no vDSO call per cache operation. The thread exits within a tick of the last such cache
/// being dropped; with no thread running, a read asks the kernel directly. The time lags the
/// kernel's by at most a tick while the thread keeps up (more if it is not scheduled — an
/// overloaded machine — so entries may then be served a little past their deadline, never
/// before it); it never goes backwards.
#[derive(Debug, Default, Clone, Copy)]
pub struct CoarseClock;

impl Clock for CoarseClock {
    #[inline]
    fn now(&self) -> Duration {
        Duration::from_nanos(ticker::now())
    }
}

/// The shared time behind [`CoarseClock`] and the thread that advances it.
pub(crate) mod ticker {
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
    use std::sync::Mutex;
    use std::time::Duration;

    /// How often the thread advances the time.
    pub const TICK: Duration = Duration::from_millis(1);

    /// The time and whether the thread keeps it, on one line (a read loads both).
    #[repr(align(64))]
    struct Shared {
        /// Nanoseconds of the kernel's coarse monotonic clock; only ever raised.
        now: AtomicU64,
        running: AtomicBool,
    }

    static SHARED: Shared = Shared { now: AtomicU64::new(0), running: AtomicBool::new(false) };
    /// Caches keeping the thread alive.
    static USERS: AtomicUsize = AtomicUsize::new(0);
    /// Serialises starting and stopping the thread.
    static CONTROL: Mutex<()> = Mutex::new(());

    /// The kernel's coarse monotonic clock, in nanoseconds.
    fn os_now() -> u64 {
        #[cfg(target_os = "linux")]
        {
            let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC_COARSE exists on
            // every Linux since 2.6.32 and the call cannot fail with valid arguments.
            let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
            debug_assert_eq!(rc, 0);
            (ts.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(ts.tv_nsec as u64)
        }
        #[cfg(not(target_os = "linux"))]
        {
            static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
            super::nanos(ORIGIN.get_or_init(std::time::Instant::now).elapsed())
        }
    }

    /// Raises the shared time to the kernel's; returns the time now (never below an earlier
    /// read).
    fn advance() -> u64 {
        let t = os_now();
        // Relaxed: the time publishes no other memory; `fetch_max` keeps it monotonic even
        // with the thread and direct reads racing.
        SHARED.now.fetch_max(t, Ordering::Relaxed).max(t)
    }

    /// The current time in nanoseconds.
    #[inline]
    pub fn now() -> u64 {
        // Relaxed (both): a stale `running` at worst sends this read to the kernel; the time
        // is a single monotonic word.
        if SHARED.running.load(Ordering::Relaxed) {
            SHARED.now.load(Ordering::Relaxed)
        } else {
            advance()
        }
    }

    /// Keeps the thread running while it lives (held by each cache on [`super::CoarseClock`]).
    #[derive(Debug)]
    pub struct Ticking(());

    impl Drop for Ticking {
        fn drop(&mut self) {
            // Relaxed: the thread rechecks under `CONTROL` before it exits.
            USERS.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Registers a user, starting the thread if it is not running. If the thread cannot be
    /// started, reads go to the kernel (slower, equally correct).
    pub fn keep_ticking() -> Ticking {
        let _g = CONTROL.lock().unwrap_or_else(|e| e.into_inner());
        USERS.fetch_add(1, Ordering::Relaxed);
        if !SHARED.running.load(Ordering::Relaxed) {
            // Fresh before readers switch to it.
            advance();
            let spawned =
                std::thread::Builder::new().name("sifter-clock".into()).spawn(run).is_ok();
            SHARED.running.store(spawned, Ordering::Relaxed);
        }
        Ticking(())
    }

    fn run() {
        loop {
            std::thread::sleep(TICK);
            advance();
            if USERS.load(Ordering::Relaxed) == 0 {
                let _g = CONTROL.lock().unwrap_or_else(|e| e.into_inner());
                // Under the lock no user registers in between: exit, or a user keeps us.
                if USERS.load(Ordering::Relaxed) == 0 {
                    SHARED.running.store(false, Ordering::Relaxed);
                    return;
                }
            }
        }
    }

    /// Whether the thread is running (tests).
    #[cfg(test)]
    pub fn running() -> bool {
        SHARED.running.load(Ordering::Relaxed)
    }
}

/// A clock that moves only when told to (tests, simulations). Clones share the time.
///
/// ```
/// use sifter::{Cache, ManualClock};
/// use std::time::Duration;
/// let clock = ManualClock::new();
/// let cache: Cache<u32, u32> = Cache::builder()
///     .capacity(10)
///     .time_to_live(Duration::from_secs(60))
///     .clock(clock.clone())
///     .build();
/// cache.insert(1, 1);
/// clock.advance(Duration::from_secs(59));
/// assert_eq!(cache.get(&1), Some(1));
/// clock.advance(Duration::from_secs(1));
/// assert_eq!(cache.get(&1), None);
/// ```
#[derive(Debug, Default, Clone)]
pub struct ManualClock(std::sync::Arc<AtomicU64>);

impl ManualClock {
    /// A clock at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the time forward by `d`.
    pub fn advance(&self, d: Duration) {
        // Relaxed: a counter; readers need no other memory ordered with it.
        self.0.fetch_add(nanos(d), Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        // Relaxed: as above.
        Duration::from_nanos(self.0.load(Ordering::Relaxed))
    }
}

/// Per-entry expiry, computed when an entry is created, updated or read (Caffeine's
/// `Expiry`). Each method returns how long the entry lives from now: `None` for "never
/// expires". Set with [`CacheBuilder::expiry`](crate::CacheBuilder::expiry); it takes the
/// place of the builder's time-to-live and time-to-idle.
///
/// ```
/// use sifter::{Cache, Expiry, ManualClock};
/// use std::time::Duration;
/// struct ByValue;
/// impl Expiry<&'static str, u64> for ByValue {
///     fn expire_after_create(&self, _: &&'static str, secs: &u64) -> Option<Duration> {
///         Some(Duration::from_secs(*secs))
///     }
/// }
/// let clock = ManualClock::new();
/// let cache = Cache::builder().capacity(10).expiry(ByValue).clock(clock.clone()).build();
/// cache.insert("short", 1);
/// cache.insert("long", 100);
/// clock.advance(Duration::from_secs(2));
/// assert_eq!(cache.get(&"short"), None);
/// assert_eq!(cache.get(&"long"), Some(100));
/// ```
pub trait Expiry<K, V>: Send + Sync {
    /// Lifetime of a new entry.
    fn expire_after_create(&self, key: &K, value: &V) -> Option<Duration>;

    /// Lifetime after the value of an existing key is replaced (`remaining`: what was left of
    /// the old one). Default: as for a new entry.
    fn expire_after_update(
        &self,
        key: &K,
        value: &V,
        remaining: Option<Duration>,
    ) -> Option<Duration> {
        let _ = remaining;
        self.expire_after_create(key, value)
    }

    /// Lifetime after a read. Default: unchanged. (Called on every hit when overridden.)
    fn expire_after_read(
        &self,
        key: &K,
        value: &V,
        remaining: Option<Duration>,
    ) -> Option<Duration> {
        let _ = (key, value);
        remaining
    }

    /// Whether `expire_after_read` is overridden (return true if it is, or reads will not
    /// call it).
    fn reads_change_expiry(&self) -> bool {
        false
    }
}

/// Nanoseconds, saturating (a duration past ~584 years is "never").
pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// How a cache expires entries.
pub(crate) struct Expiration<K, V> {
    /// A user clock, or `None` for [`CoarseClock`] (read inline, no dynamic call).
    pub clock: Option<Box<dyn Clock>>,
    /// With [`CoarseClock`]: keeps its thread advancing the time while the cache lives.
    /// (Held for its `Drop`, never read.)
    pub _ticking: Option<ticker::Ticking>,
    pub ttl: Option<u64>,
    pub tti: Option<u64>,
    pub custom: Option<Box<dyn Expiry<K, V>>>,
    /// Whether reads may move expiry times (time-to-idle, or a custom read expiry).
    pub reads_move: bool,
}

impl<K, V> std::fmt::Debug for Expiration<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Expiration")
            .field("ttl_ns", &self.ttl)
            .field("tti_ns", &self.tti)
            .field("custom", &self.custom.is_some())
            .finish()
    }
}

/// `now + d` as a deadline (0 is reserved for "never"; saturates to "never").
fn deadline(now: u64, d: Option<u64>) -> u64 {
    match d {
        None => 0,
        Some(d) => now.saturating_add(d).clamp(1, u64::MAX - 1),
    }
}

/// What is left of deadline `at` at `now` (`None`: never expires).
fn remaining(at: u64, now: u64) -> Option<Duration> {
    (at != 0).then(|| Duration::from_nanos(at.saturating_sub(now)))
}

impl<K, V> Expiration<K, V> {
    #[inline]
    pub fn now(&self) -> u64 {
        match &self.clock {
            None => ticker::now(),
            Some(c) => nanos(c.now()),
        }
    }

    /// `(at, limit)` for an entry created (`old` = None) or updated (`old` = the old slot's
    /// `at`) now; `explicit` is an `insert_with_ttl` lifetime, which wins.
    pub fn on_write(
        &self,
        key: &K,
        value: &V,
        now: u64,
        old: Option<u64>,
        explicit: Option<Option<Duration>>,
    ) -> (u64, u64) {
        if let Some(ttl) = explicit {
            let at = deadline(now, ttl.map(nanos));
            return (at, at);
        }
        if let Some(c) = &self.custom {
            let d = match old {
                None => c.expire_after_create(key, value),
                Some(at) => c.expire_after_update(key, value, remaining(at, now)),
            };
            let at = deadline(now, d.map(nanos));
            return (at, at);
        }
        let limit = deadline(now, self.ttl);
        let at = match self.tti {
            None => limit,
            Some(tti) => {
                let a = deadline(now, Some(tti));
                if limit == 0 {
                    a
                } else {
                    a.min(limit)
                }
            }
        };
        (at, limit)
    }

    /// After a hit at `now` on an entry whose deadline is `at` (not expired): the new deadline
    /// if a read moves it (time-to-idle, or a custom `expire_after_read`), else `None`.
    pub fn on_read(&self, key: &K, value: &V, now: u64, at: u64, limit: u64) -> Option<u64> {
        if let Some(c) = &self.custom {
            if !c.reads_change_expiry() {
                return None;
            }
            let new = deadline(now, c.expire_after_read(key, value, remaining(at, now)).map(nanos));
            return (new != at).then_some(new);
        }
        let tti = self.tti?;
        let mut new = deadline(now, Some(tti));
        if limit != 0 {
            new = new.min(limit);
        }
        // Only when the deadline gains at least 1/16 of the idle time: hot entries are not
        // written on every hit.
        (new > at.saturating_add(tti / 16)).then_some(new)
    }
}

/// Whether deadline `at` has passed at `now`.
#[inline]
pub(crate) fn expired(at: u64, now: u64) -> bool {
    at != 0 && at <= now
}

#[cfg(test)]
mod tests {
    use super::ticker;
    use std::time::{Duration, Instant};

    #[test]
    fn ticker_advances_while_used_and_stops_after() {
        let before = ticker::now();
        let t = ticker::keep_ticking();
        assert!(ticker::running(), "the first user starts the thread");
        let a = ticker::now();
        assert!(a >= before, "never backwards: {a} < {before}");
        std::thread::sleep(Duration::from_millis(30));
        let b = ticker::now();
        // The kernel's coarse clock ticks every 1-10 ms; 30 ms must show.
        assert!(b > a, "the time advanced: {a} -> {b}");
        let second = ticker::keep_ticking();
        drop(t);
        std::thread::sleep(Duration::from_millis(20));
        assert!(ticker::running(), "a remaining user keeps the thread");
        drop(second);
        let deadline = Instant::now() + Duration::from_secs(5);
        while ticker::running() {
            assert!(Instant::now() < deadline, "the thread stops once unused");
            std::thread::sleep(Duration::from_millis(1));
        }
        // Direct reads continue from where the thread left off.
        let c = ticker::now();
        assert!(c >= b, "never backwards: {c} < {b}");
        let restarted = ticker::keep_ticking();
        assert!(ticker::running(), "a new user restarts it");
        drop(restarted);
    }
}

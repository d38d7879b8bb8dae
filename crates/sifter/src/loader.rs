//! Loaders: `get_with`, `try_get_with`, `get_with_async`. Concurrent misses on one key run one
//! loader; the others wait for its value.
//!
//! Loads in flight are registered in a small table (64 shards by hash, each a mutex over a
//! short list, allocated on first use), touched only on a miss and never held while a loader
//! runs: a loader may use the cache, for other keys too, and no key waits for another's load.
//! The loader's value is inserted into the cache *before* its registration is withdrawn, so
//! a caller that finds no registration under the shard lock finds the value in the cache
//! (unless it was evicted at once) — a value is not loaded twice for callers that overlap.
//! It is inserted only if the key is still absent: a value inserted while the loader ran
//! (a write-through of a fresher value, say) stays, as in Caffeine, where such an insert waits
//! for the load and then replaces its value; the loaded value goes to the load's callers.
//! Nor is it inserted if `remove` or `clear` invalidated the load meanwhile (a flag on the
//! registration, checked by the insert under the key's home lock: `Cache::invalidate_loads`),
//! and later callers do not join an invalidated load.
//!
//! Failure: a loader that panics (or whose future is dropped) withdraws its registration and
//! wakes the waiters, which retry (one of them loads). `try_get_with`'s error is shared with the
//! waiters of that load (`Arc<E>`), and the next caller loads again.

use crate::cache::Cache;
use crate::stats::Counter;
use std::any::Any;
use std::borrow::Borrow;
use std::future::Future;
use std::hash::{BuildHasher, Hash};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::task::{Poll, Waker};
use std::time::Instant;

const SHARDS: usize = 64;

/// A load in flight.
#[derive(Debug)]
pub(crate) struct Flight<V> {
    state: Mutex<State<V>>,
    done: Condvar,
    /// The loading thread (a waiter on its own load would wait forever).
    owner: std::thread::ThreadId,
    /// Set by a removal of the key while the load runs ([`Cache::invalidate_loads`]): its
    /// value, read before the removal, is not cached, and later callers do not join it.
    invalidated: AtomicBool,
}

#[derive(Debug)]
enum State<V> {
    /// Async waiters' wakers, and how many threads block on the condition variable (notified
    /// only if any: a notification is a system call).
    Loading(Vec<Waker>, usize),
    Loaded(V),
    /// The loader failed with this error (`Arc<E>` of its call's `E`).
    Failed(Arc<dyn Any + Send + Sync>),
    /// The loader panicked or was cancelled: retry.
    Abandoned,
}

type Shard<K, V> = Mutex<Vec<(u64, K, Arc<Flight<V>>)>>;

/// The loads in flight of one cache.
pub(crate) struct Loads<K, V> {
    shards: OnceLock<Box<[Shard<K, V>]>>,
    /// Loads registered: a removal looks for loads of its key only when there are any.
    in_flight: AtomicUsize,
}

impl<K, V> Default for Loads<K, V> {
    fn default() -> Self {
        Loads { shards: OnceLock::new(), in_flight: AtomicUsize::new(0) }
    }
}

impl<K, V> std::fmt::Debug for Loads<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loads").field("allocated", &self.shards.get().is_some()).finish()
    }
}

/// Locks a mutex whose data stays consistent even if a holder panicked (every critical
/// section here is a few list operations with no user code).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<K, V> Loads<K, V> {
    fn shard(&self, hash: u64) -> &Shard<K, V> {
        let shards =
            self.shards.get_or_init(|| (0..SHARDS).map(|_| Mutex::new(Vec::new())).collect());
        &shards[(hash >> 58) as usize % SHARDS]
    }
}

/// What a caller became for a key.
enum Role<V> {
    /// The value was in the cache after all.
    Found(V),
    /// This caller loads; others wait on the flight.
    Lead(Arc<Flight<V>>),
    /// Another caller loads.
    Wait(Arc<Flight<V>>),
}

/// What a waiter learned.
enum Outcome<V> {
    Value(V),
    Error(Arc<dyn Any + Send + Sync>),
    Retry,
}

/// Withdraws a leader's registration when dropped: with the outcome it was given, or as
/// abandoned (the loader panicked or its future was dropped).
struct Lead<'a, K, V, S>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
    S: BuildHasher,
{
    cache: &'a Cache<K, V, S>,
    hash: u64,
    flight: Arc<Flight<V>>,
    outcome: Option<State<V>>,
}

impl<K, V, S> Drop for Lead<'_, K, V, S>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
    S: BuildHasher,
{
    fn drop(&mut self) {
        let outcome = self.outcome.take().unwrap_or(State::Abandoned);
        if matches!(outcome, State::Abandoned) {
            self.cache.count(Counter::LoadFailures, 1);
        }
        {
            let loads = self.cache.loads();
            let mut shard = lock(loads.shard(self.hash));
            shard.retain(|(_, _, f)| !Arc::ptr_eq(f, &self.flight));
            // Relaxed: a hint for removals; registrations are counted SeqCst.
            loads.in_flight.fetch_sub(1, Ordering::Relaxed);
        }
        let (wakers, blocked) = {
            let mut st = lock(&self.flight.state);
            match std::mem::replace(&mut *st, outcome) {
                State::Loading(w, n) => (w, n),
                _ => (Vec::new(), 0),
            }
        };
        if blocked > 0 {
            self.flight.done.notify_all();
        }
        for w in wakers {
            w.wake();
        }
    }
}

impl<V: Clone> Flight<V> {
    fn outcome(st: &State<V>) -> Option<Outcome<V>> {
        match st {
            State::Loading(..) => None,
            State::Loaded(v) => Some(Outcome::Value(v.clone())),
            State::Failed(e) => Some(Outcome::Error(e.clone())),
            State::Abandoned => Some(Outcome::Retry),
        }
    }

    /// Blocks until the load ends.
    fn wait(&self) -> Outcome<V> {
        assert!(
            self.owner != std::thread::current().id(),
            "sifter: a loader called get_with for its own key (it would wait for itself)"
        );
        let mut st = lock(&self.state);
        loop {
            if let Some(o) = Self::outcome(&st) {
                return o;
            }
            if let State::Loading(_, n) = &mut *st {
                *n += 1;
            }
            st = self.done.wait(st).unwrap_or_else(|e| e.into_inner());
            if let State::Loading(_, n) = &mut *st {
                *n -= 1; // a spurious wake-up: still loading
            }
        }
    }

    /// Waits asynchronously until the load ends.
    async fn wait_async(&self) -> Outcome<V> {
        std::future::poll_fn(|cx| {
            let mut st = lock(&self.state);
            if let Some(o) = Self::outcome(&st) {
                return Poll::Ready(o);
            }
            if let State::Loading(wakers, _) = &mut *st {
                if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
                    wakers.push(cx.waker().clone());
                }
            }
            Poll::Pending
        })
        .await
    }
}

impl<K, V, S> Cache<K, V, S>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
    S: BuildHasher,
{
    /// Returns the value of `key`, computing it with `init` on a miss; concurrent misses on
    /// `key` run `init` once and the others wait for its value (other keys never wait).
    /// `init`'s value is cached unless the key was inserted while `init` ran (that value is
    /// newer and stays) or removed by [`Cache::remove`] or [`Cache::clear`] (an invalidation:
    /// `init` may have read its source before the change the removal stands for); either way
    /// `init`'s value goes only to this call and the waiters that joined before, and callers
    /// after a removal load again. (`remove_if`, `retain` and `compute` returning
    /// [`Op::Remove`](crate::Op::Remove) act on the values they see and do not invalidate
    /// loads.)
    ///
    /// If `init` panics the panic propagates to this caller, and waiters retry (one of them
    /// runs its own `init`). `init` may use the cache, except `get_with` on the same key
    /// (which would wait for itself: that panics).
    ///
    /// ```
    /// use sifter::Cache;
    /// let cache: Cache<u64, String> = Cache::builder().capacity(100).build();
    /// let v = cache.get_with(7, || "seven".to_string());
    /// assert_eq!(v, "seven");
    /// assert_eq!(cache.get_with(7, || unreachable!()), "seven");
    /// assert_eq!(cache.stats().load_successes, 1);
    /// ```
    #[inline]
    pub fn get_with(&self, key: K, init: impl FnOnce() -> V) -> V {
        if let Some(v) = self.get(&key) {
            return v;
        }
        match self.load(key, || Ok::<V, std::convert::Infallible>(init())) {
            Ok(v) => v,
            Err(e) => match *e {},
        }
    }

    /// As [`Cache::get_with`] with a fallible `init`: an error is returned to this caller and
    /// to the callers waiting on this load (shared, as `Arc<E>`), and nothing is cached; the
    /// next call loads again.
    ///
    /// ```
    /// use sifter::Cache;
    /// let cache: Cache<u64, u64> = Cache::builder().capacity(100).build();
    /// let r = cache.try_get_with(1, || "nope".parse::<u64>());
    /// assert!(r.is_err());
    /// assert_eq!(cache.try_get_with(1, || "11".parse::<u64>()).ok(), Some(11));
    /// ```
    #[inline]
    pub fn try_get_with<E>(&self, key: K, init: impl FnOnce() -> Result<V, E>) -> Result<V, Arc<E>>
    where
        E: Send + Sync + 'static,
    {
        if let Some(v) = self.get(&key) {
            return Ok(v);
        }
        self.load(key, init)
    }

    /// The miss path of the loaders: join the load in flight or lead one.
    #[inline(never)]
    fn load<E>(&self, key: K, init: impl FnOnce() -> Result<V, E>) -> Result<V, Arc<E>>
    where
        E: Send + Sync + 'static,
    {
        let hash = self.hash_of(&key);
        let mut init = Some(init);
        loop {
            match self.join_or_lead(hash, &key) {
                Role::Found(v) => return Ok(v),
                Role::Wait(f) => match f.wait() {
                    Outcome::Value(v) => return Ok(v),
                    Outcome::Error(e) => {
                        if let Ok(e) = e.downcast::<E>() {
                            return Err(e);
                        }
                        // An error of another call site's type: load ourselves.
                    }
                    Outcome::Retry => {}
                },
                Role::Lead(flight) => {
                    let mut lead = Lead { cache: self, hash, flight, outcome: None };
                    let t0 = Instant::now();
                    let f = init.take().expect("a caller leads at most one load");
                    let r = f();
                    self.count(Counter::LoadNanos, t0.elapsed().as_nanos() as u64);
                    return self.finish_load(&mut lead, key, r);
                }
            }
        }
    }

    /// As [`Cache::get_with`] with a future: waiters `.await` the leader's value; any executor
    /// works (waiters are woken through their `Waker`). If the leader's future is dropped
    /// before it completes, the waiters retry.
    ///
    /// ```
    /// use sifter::Cache;
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     use std::task::{Context, Poll, Wake, Waker};
    /// #     struct W; impl Wake for W { fn wake(self: std::sync::Arc<Self>) {} }
    /// #     let w = Waker::from(std::sync::Arc::new(W));
    /// #     let mut f = std::pin::pin!(f);
    /// #     let mut cx = Context::from_waker(&w);
    /// #     loop { if let Poll::Ready(v) = f.as_mut().poll(&mut cx) { return v } }
    /// # }
    /// let cache: Cache<u64, u64> = Cache::builder().capacity(100).build();
    /// let v = block_on(cache.get_with_async(3, async { 9 }));
    /// assert_eq!(v, 9);
    /// ```
    pub async fn get_with_async(&self, key: K, init: impl Future<Output = V>) -> V {
        if let Some(v) = self.get(&key) {
            return v;
        }
        let hash = self.hash_of(&key);
        let mut init = Some(init);
        loop {
            match self.join_or_lead(hash, &key) {
                Role::Found(v) => return v,
                Role::Wait(f) => match f.wait_async().await {
                    Outcome::Value(v) => return v,
                    Outcome::Error(_) | Outcome::Retry => {}
                },
                Role::Lead(flight) => {
                    let mut lead = Lead { cache: self, hash, flight, outcome: None };
                    let t0 = Instant::now();
                    let f = init.take().expect("a caller leads at most one load");
                    let v = pin!(f).await;
                    self.count(Counter::LoadNanos, t0.elapsed().as_nanos() as u64);
                    match self.finish_load(&mut lead, key, Ok::<V, std::convert::Infallible>(v)) {
                        Ok(v) => return v,
                        Err(e) => match *e {},
                    }
                }
            }
        }
    }

    /// Joins the load of `key` in flight, or registers this caller as its loader (after one
    /// more look in the cache, under the shard lock).
    fn join_or_lead(&self, hash: u64, key: &K) -> Role<V> {
        let mut shard = lock(self.loads().shard(hash));
        // Not a load invalidated by a removal: its value is older than the removal, and this
        // caller may have come after it (Relaxed: set under this shard's lock).
        let current = |f: &Flight<V>| !f.invalidated.load(Ordering::Relaxed);
        if let Some((_, _, f)) = shard.iter().find(|(h, k, f)| *h == hash && k == key && current(f))
        {
            return Role::Wait(f.clone());
        }
        // A leader inserts before it withdraws: if there is no registration, a finished
        // load's value is in the cache.
        if let Some(v) = self.peek(key) {
            return Role::Found(v);
        }
        let f = Arc::new(Flight {
            state: Mutex::new(State::Loading(Vec::new(), 0)),
            done: Condvar::new(),
            owner: std::thread::current().id(),
            invalidated: AtomicBool::new(false),
        });
        shard.push((hash, key.clone(), f.clone()));
        // SeqCst: before the loader runs (see `Cache::invalidate_loads`).
        self.loads().in_flight.fetch_add(1, Ordering::SeqCst);
        Role::Lead(f)
    }

    /// Caches the loader's value (or not, on error) and hands the outcome to the waiters.
    fn finish_load<E>(
        &self,
        lead: &mut Lead<'_, K, V, S>,
        key: K,
        r: Result<V, E>,
    ) -> Result<V, Arc<E>>
    where
        E: Send + Sync + 'static,
    {
        match r {
            Ok(v) => {
                self.count(Counter::LoadSuccesses, 1);
                // Only if the key is still absent: a value inserted while the loader ran is
                // newer than what it read, and stays (the loaded value goes to the callers).
                // Not if the key was removed meanwhile (see `Cache::invalidate_loads`).
                let flight = &lead.flight;
                // Relaxed: a shortcut; the insert looks again under the home lock.
                if !flight.invalidated.load(Ordering::Relaxed) {
                    let cancel = Some(&flight.invalidated);
                    let _ = self.insert_inner(key, v.clone(), None, Some(None), cancel);
                }
                crate::panics::resume();
                lead.outcome = Some(State::Loaded(v.clone()));
                Ok(v)
            }
            Err(e) => {
                self.count(Counter::LoadFailures, 1);
                let e = Arc::new(e);
                lead.outcome = Some(State::Failed(e.clone()));
                Err(e)
            }
        }
    }
}

impl<K, V, S> Cache<K, V, S>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Send + Sync + 'static,
    S: BuildHasher,
{
    /// Called by `remove` (and `clear`, for every key) before it unlinks the entry: a load of
    /// `key` in flight may have read its source before the change the removal stands for, so
    /// its value must not be cached. Its flag is set here, and the loader's insert checks it
    /// under the key's home lock, which the removal takes next: if the removal's lock comes
    /// first, the insert sees the flag and stores nothing; if the insert's comes first, the
    /// removal finds the loaded entry and removes it. A load registered after this call's
    /// look at `in_flight` runs its loader after it, so after whatever the caller changed
    /// before removing.
    pub(crate) fn invalidate_loads<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let loads = self.loads();
        // SeqCst: against the registration's count (see above).
        if loads.in_flight.load(Ordering::SeqCst) == 0 {
            return;
        }
        let hash = self.hash_of(key);
        let shard = lock(loads.shard(hash));
        for (h, k, f) in shard.iter() {
            if *h == hash && k.borrow() == key {
                // Relaxed: ordered by the home lock (see above).
                f.invalidated.store(true, Ordering::Relaxed);
            }
        }
    }

    /// [`Cache::invalidate_loads`] for every key (`clear`): each flag set, then each flagged
    /// key's home lock taken and released, so that `clear`'s unlinking (which takes no home
    /// lock) comes after every loaded entry's insert that did not see its flag.
    pub(crate) fn invalidate_all_loads(&self) {
        let loads = self.loads();
        // SeqCst: as in `invalidate_loads`.
        if loads.in_flight.load(Ordering::SeqCst) == 0 {
            return;
        }
        let Some(shards) = loads.shards.get() else { return };
        let mut homes = Vec::new();
        for shard in shards.iter() {
            for (h, _, f) in lock(shard).iter() {
                // Relaxed: ordered by the home lock below.
                f.invalidated.store(true, Ordering::Relaxed);
                homes.push(*h);
            }
        }
        for h in homes {
            self.pass_home_lock(h);
        }
    }
}

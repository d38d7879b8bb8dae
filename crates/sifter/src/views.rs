//! Views and bulk operations: `iter`, `retain`, `remove_if`, `get_many`, `compute`.
//!
//! Walks go bucket by bucket through the index, pinned for one bucket at a time (a long walk
//! never holds back reclamation, and takes no lock writers need); `retain`'s predicate, user
//! code that may take its time, runs unpinned with only its entry's slot held by a hazard, as
//! do `compute`'s closure and `remove_if`'s predicate. Walks are weakly consistent: an entry
//! present for the whole walk is visited exactly once; one inserted or removed during it may
//! or may not be; no expired or removed entry is visited.

use crate::cache::Cache;
use crate::listener::RemovalCause;
use crate::panics;
use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};

/// What [`Cache::compute`] does with a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op<V> {
    /// Store this value (insert or replace).
    Put(V),
    /// Remove the entry (nothing if absent).
    Remove,
    /// Leave the entry as it is.
    Keep,
}

/// A weakly consistent iterator over clones of the entries ([`Cache::iter`]).
pub struct Iter<'a, K, V, S> {
    cache: &'a Cache<K, V, S>,
    bucket: usize,
    buf: std::vec::IntoIter<(K, V)>,
}

impl<K, V, S> std::fmt::Debug for Iter<'_, K, V, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Iter").field("bucket", &self.bucket).finish_non_exhaustive()
    }
}

impl<K, V, S> Iterator for Iter<'_, K, V, S>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
    S: BuildHasher,
{
    type Item = (K, V);

    fn next(&mut self) -> Option<(K, V)> {
        loop {
            if let Some(kv) = self.buf.next() {
                return Some(kv);
            }
            if self.bucket >= self.cache.buckets() {
                return None;
            }
            let mut got = Vec::new();
            self.cache.walk_bucket(self.bucket, |_, k, v, _| got.push((k.clone(), v.clone())));
            self.bucket += 1;
            self.buf = got.into_iter();
        }
    }
}

impl<K, V, S> Cache<K, V, S>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Send + Sync + 'static,
    S: BuildHasher,
{
    /// Clones of the entries, weakly consistent (see the module docs); not a use of them.
    ///
    /// ```
    /// use sifter::Cache;
    /// let cache: Cache<u32, u32> = Cache::builder().capacity(10).build();
    /// cache.insert(1, 10);
    /// cache.insert(2, 20);
    /// let mut all: Vec<_> = cache.iter().collect();
    /// all.sort();
    /// assert_eq!(all, vec![(1, 10), (2, 20)]);
    /// ```
    pub fn iter(&self) -> Iter<'_, K, V, S>
    where
        K: Clone,
        V: Clone,
    {
        Iter { cache: self, bucket: 0, buf: Vec::new().into_iter() }
    }

    /// Keeps only the entries for which `keep` returns true; the others are removed (cause
    /// [`RemovalCause::Removed`]). Weakly consistent, like [`Cache::iter`]; an entry replaced
    /// while `keep` looks at it is not removed. Returns how many were removed.
    ///
    /// ```
    /// use sifter::Cache;
    /// let cache: Cache<u32, u32> = Cache::builder().capacity(10).build();
    /// for k in 0..6 { cache.insert(k, k); }
    /// assert_eq!(cache.retain(|_, v| v % 2 == 0), 3);
    /// assert_eq!(cache.len(), 3);
    /// ```
    pub fn retain(&self, mut keep: impl FnMut(&K, &V) -> bool) -> usize {
        let mut n = 0;
        for b in 0..self.buckets() {
            self.walk_bucket_held(b, |s, k, v, tid| {
                if !keep(k, v) && self.remove_slot(s, tid, RemovalCause::Removed, self.now()) {
                    n += 1;
                }
            });
        }
        panics::resume();
        n
    }

    /// Removes `key` if `pred` accepts its value (atomically: a value replaced meanwhile is
    /// not removed); returns whether it did.
    pub fn remove_if<Q>(&self, key: &Q, pred: impl FnOnce(&V) -> bool) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let (r, _held) = self.with_entry(key, |found, tid| match found {
            Some((s, v)) if pred(v) => self.remove_slot(s, tid, RemovalCause::Removed, self.now()),
            _ => false,
        });
        panics::resume();
        r
    }

    /// `get` for each key, in order.
    pub fn get_many<'k, Q>(&self, keys: impl IntoIterator<Item = &'k Q>) -> Vec<Option<V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized + 'k,
        V: Clone,
    {
        keys.into_iter().map(|k| self.get(k)).collect()
    }

    /// Computes the entry of `key` from its current value atomically for that key: `f` sees
    /// the value (or `None`) and returns an [`Op`]; if another writer changed the key before
    /// the result is stored, `f` is called again with the new value. Returns the value the key
    /// has afterwards: `None` after [`Op::Put`] of a value heavier than the capacity, which is
    /// not stored and removes the key's entry (as [`Cache::insert`] does). Counts as a write
    /// (insert, update or removal), not as a lookup.
    ///
    /// ```
    /// use sifter::{Cache, Op};
    /// let cache: Cache<&str, u64> = Cache::builder().capacity(10).build();
    /// let add = |v: Option<&u64>| Op::Put(v.map_or(1, |n| n + 1));
    /// cache.compute("hits", add);
    /// assert_eq!(cache.compute("hits", add), Some(2));
    /// assert_eq!(cache.compute("hits", |_| Op::Remove), None);
    /// assert_eq!(cache.get(&"hits"), None);
    /// ```
    pub fn compute(&self, key: K, mut f: impl FnMut(Option<&V>) -> Op<V>) -> Option<V>
    where
        K: Clone,
        V: Clone,
    {
        loop {
            // The slot `f` saw is held from the read to the store (`Cache::with_entry`): an
            // update in place of it then replaces the entry in a new slot instead, and the
            // store's expectation (the slot, checked under the home lock) notices: `f`
            // decides again. (Without it, an update in place landing in between kept the
            // slot, passed the expectation, and was overwritten by a value `f` never saw.)
            let (step, held) = self.with_entry(&key, |found, tid| {
                let cur = found.map(|(s, _)| s);
                match f(found.map(|(_, v)| v)) {
                    Op::Keep => Some(Step::Done(found.map(|(_, v)| v.clone()))),
                    Op::Remove => match cur {
                        None => Some(Step::Done(None)),
                        Some(s) => self
                            .remove_slot(s, tid, RemovalCause::Removed, self.now())
                            .then_some(Step::Done(None)),
                    },
                    Op::Put(v) => Some(Step::Put(v, cur)),
                }
            });
            let done = match step {
                Some(Step::Done(v)) => Some(v),
                Some(Step::Put(v, cur)) => {
                    #[cfg(all(feature = "test-hooks", not(loom)))]
                    crate::raw::queue::hooks::decided();
                    let out = v.clone();
                    // Stored: the key's value is `out`. Not stored: too heavy (the key's entry
                    // was removed instead) or no room made (rare, see `rejected`; the old
                    // value stays): what the key has now. The key changed since `f` saw it:
                    // `f` decides again.
                    self.insert_inner(key.clone(), v, None, Some(cur), None).map(|stored| {
                        if stored {
                            Some(out)
                        } else {
                            self.peek(&key)
                        }
                    })
                }
                None => None,
            };
            drop(held);
            panics::resume();
            if let Some(v) = done {
                return v;
            }
        }
    }
}

enum Step<V> {
    Done(Option<V>),
    Put(V, Option<u32>),
}

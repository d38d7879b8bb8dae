//! Single-threaded sequences of every operation against a naive model (a `HashMap` with expiry
//! times), on every policy. The capacity exceeds the key space, so nothing is evicted and the
//! cache must agree with the model exactly: values, expiry, statistics and listener reports.

#![allow(clippy::unwrap_used)] // tests

use proptest::prelude::*;
use sifter::{Cache, ManualClock, Op, Policy, RemovalCause};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const KEYS: u8 = 12;
const TTL: u64 = 10;

#[derive(Debug, Clone)]
enum Cmd {
    Insert(u8, u32),
    InsertTtl(u8, u32, Option<u8>),
    Get(u8),
    Peek(u8),
    Contains(u8),
    Remove(u8),
    RemoveIfEven(u8),
    ComputeAdd(u8),
    ComputeRemove(u8),
    GetWith(u8, u32),
    RetainOdd,
    Clear,
    Advance(u8),
    Purge,
    Iter,
}

fn cmd() -> impl Strategy<Value = Cmd> {
    let k = 0..KEYS;
    prop_oneof![
        (k.clone(), any::<u32>()).prop_map(|(k, v)| Cmd::Insert(k, v)),
        (k.clone(), any::<u32>(), proptest::option::of(1u8..20))
            .prop_map(|(k, v, t)| Cmd::InsertTtl(k, v, t)),
        k.clone().prop_map(Cmd::Get),
        k.clone().prop_map(Cmd::Peek),
        k.clone().prop_map(Cmd::Contains),
        k.clone().prop_map(Cmd::Remove),
        k.clone().prop_map(Cmd::RemoveIfEven),
        k.clone().prop_map(Cmd::ComputeAdd),
        k.clone().prop_map(Cmd::ComputeRemove),
        (k, any::<u32>()).prop_map(|(k, v)| Cmd::GetWith(k, v)),
        Just(Cmd::RetainOdd),
        Just(Cmd::Clear),
        (1u8..8).prop_map(Cmd::Advance),
        Just(Cmd::Purge),
        Just(Cmd::Iter),
    ]
}

/// The model: value and expiry time (seconds; None = never).
#[derive(Default)]
struct Model {
    map: HashMap<u8, (u32, Option<u64>)>,
    now: u64,
    hits: u64,
    misses: u64,
    left: Vec<(u8, u32, RemovalCause)>,
}

impl Model {
    /// The live value of `k`; an expired one is removed (reported as expired).
    fn live(&mut self, k: u8) -> Option<u32> {
        match self.map.get(&k) {
            Some(&(v, Some(at))) if at <= self.now => {
                self.map.remove(&k);
                self.left.push((k, v, RemovalCause::Expired));
                None
            }
            Some(&(v, _)) => Some(v),
            None => None,
        }
    }
    fn put(&mut self, k: u8, v: u32, ttl: Option<u64>) {
        let at = ttl.map(|t| self.now + t);
        if let Some((old, _)) = self.map.insert(k, (v, at)) {
            self.left.push((k, old, RemovalCause::Replaced));
        }
    }
    fn expire_all(&mut self) {
        let keys: Vec<u8> = self.map.keys().copied().collect();
        for k in keys {
            self.live(k);
        }
    }
}

fn run(policy: Policy, cmds: &[Cmd]) -> Result<(), TestCaseError> {
    let clock = ManualClock::new();
    let log: Arc<Mutex<Vec<(u8, u32, RemovalCause)>>> = Arc::default();
    let l = log.clone();
    let c: Cache<u8, u32> = Cache::builder()
        .capacity(64)
        .policy(policy)
        .time_to_live(Duration::from_secs(TTL))
        .clock(clock.clone())
        .eviction_listener(move |k: &u8, v: &u32, cause| l.lock().unwrap().push((*k, *v, cause)))
        .build();
    let mut m = Model::default();
    for cmd in cmds {
        match *cmd {
            Cmd::Insert(k, v) => {
                c.insert(k, v);
                m.live(k);
                m.put(k, v, Some(TTL));
            }
            Cmd::InsertTtl(k, v, t) => {
                c.insert_with_ttl(k, v, t.map(|t| Duration::from_secs(t as u64)));
                m.live(k);
                m.put(k, v, t.map(u64::from));
            }
            Cmd::Get(k) => {
                let want = m.live(k);
                if want.is_some() {
                    m.hits += 1;
                } else {
                    m.misses += 1;
                }
                prop_assert_eq!(c.get(&k), want, "get {}", k);
            }
            Cmd::Peek(k) => prop_assert_eq!(c.peek(&k), m.live(k)),
            Cmd::Contains(k) => prop_assert_eq!(c.contains_key(&k), m.live(k).is_some()),
            Cmd::Remove(k) => {
                let want = m.live(k);
                if let Some(v) = want {
                    m.map.remove(&k);
                    m.left.push((k, v, RemovalCause::Removed));
                }
                prop_assert_eq!(c.remove(&k), want);
            }
            Cmd::RemoveIfEven(k) => {
                let want = m.live(k).is_some_and(|v| v % 2 == 0);
                if want {
                    let (v, _) = m.map.remove(&k).unwrap();
                    m.left.push((k, v, RemovalCause::Removed));
                }
                prop_assert_eq!(c.remove_if(&k, |v| v % 2 == 0), want);
            }
            Cmd::ComputeAdd(k) => {
                let new = m.live(k).map_or(0, |v| v.wrapping_add(1));
                m.put(k, new, Some(TTL));
                let got = c.compute(k, |v| Op::Put(v.map_or(0, |v| v.wrapping_add(1))));
                prop_assert_eq!(got, Some(new));
            }
            Cmd::ComputeRemove(k) => {
                if let Some(v) = m.live(k) {
                    m.map.remove(&k);
                    m.left.push((k, v, RemovalCause::Removed));
                }
                prop_assert_eq!(c.compute(k, |_| Op::Remove), None);
            }
            Cmd::GetWith(k, v) => {
                let want = match m.live(k) {
                    Some(old) => {
                        m.hits += 1;
                        old
                    }
                    None => {
                        m.misses += 1;
                        m.put(k, v, Some(TTL));
                        v
                    }
                };
                prop_assert_eq!(c.get_with(k, || v), want);
            }
            Cmd::RetainOdd => {
                m.expire_all();
                let even: Vec<u8> =
                    m.map.iter().filter(|(_, (v, _))| v % 2 == 0).map(|(k, _)| *k).collect();
                for k in &even {
                    let (v, _) = m.map.remove(k).unwrap();
                    m.left.push((*k, v, RemovalCause::Removed));
                }
                prop_assert_eq!(c.retain(|_, v| v % 2 == 1), even.len());
            }
            Cmd::Clear => {
                m.expire_all();
                for (k, (v, _)) in m.map.drain() {
                    m.left.push((k, v, RemovalCause::Cleared));
                }
                c.clear();
            }
            Cmd::Advance(s) => {
                m.now += s as u64;
                clock.advance(Duration::from_secs(s as u64));
            }
            Cmd::Purge => {
                let before = m.left.len();
                m.expire_all();
                prop_assert_eq!(c.purge_expired(), m.left.len() - before);
                prop_assert_eq!(c.len(), m.map.len());
            }
            Cmd::Iter => {
                // A walk removes the expired entries it meets.
                m.expire_all();
                let mut got: Vec<(u8, u32)> = c.iter().collect();
                got.sort();
                let mut want: Vec<(u8, u32)> = m
                    .map
                    .iter()
                    .filter(|(_, (_, at))| at.is_none_or(|at| at > m.now))
                    .map(|(k, (v, _))| (*k, *v))
                    .collect();
                want.sort();
                prop_assert_eq!(got, want);
            }
        }
        let s = c.stats();
        prop_assert_eq!((s.hits, s.misses), (m.hits, m.misses), "after {:?}", cmd);
    }
    c.validate().map_err(TestCaseError::fail)?;
    let mut got = log.lock().unwrap().clone();
    let mut want = m.left.clone();
    got.sort();
    want.sort();
    prop_assert_eq!(got, want, "listener reports");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 4 } else { 200 }, ..ProptestConfig::default() })]

    #[test]
    fn every_operation_agrees_with_the_model(cmds in proptest::collection::vec(cmd(), 1..80)) {
        for p in Policy::ALL {
            run(p, &cmds)?;
        }
    }
}

/// An evicting cache against a model of what it may hold: every policy at capacities 1–64 over
/// a key space of 256, so most inserts evict (and, from capacity 20 on, where its small queue
/// holds more than one entry, S3-FIFO's small-queue victims leave fingerprints in its ghost,
/// which later inserts take). A lookup returns nothing or the key's last
/// written value, never an older or removed one; the size bound holds after every operation;
/// the invariants hold at the end.
#[derive(Debug, Clone)]
enum Evicting {
    Insert(u8, u32),
    Get(u8),
    Remove(u8),
    Clear,
}

fn evicting() -> impl Strategy<Value = Evicting> {
    prop_oneof![
        60 => (any::<u8>(), any::<u32>()).prop_map(|(k, v)| Evicting::Insert(k, v)),
        30 => any::<u8>().prop_map(Evicting::Get),
        10 => any::<u8>().prop_map(Evicting::Remove),
        1 => Just(Evicting::Clear),
    ]
}

fn run_evicting(p: Policy, cap: u64, cmds: &[Evicting]) -> Result<(), TestCaseError> {
    let c: Cache<u8, u32> = Cache::builder().capacity(cap).policy(p).build();
    let mut last: HashMap<u8, Option<u32>> = HashMap::new();
    for cmd in cmds {
        match *cmd {
            Evicting::Insert(k, v) => {
                c.insert(k, v);
                last.insert(k, Some(v));
            }
            Evicting::Get(k) => {
                let got = c.get(&k);
                prop_assert!(
                    got.is_none() || got == last.get(&k).copied().flatten(),
                    "{p:?} cap {cap}: get({k}) = {got:?}, last written {:?}",
                    last.get(&k)
                );
            }
            Evicting::Remove(k) => {
                c.remove(&k);
                last.insert(k, None);
                prop_assert_eq!(c.get(&k), None, "{:?} cap {}: {} after remove", p, cap, k);
            }
            Evicting::Clear => {
                c.clear();
                last.clear();
            }
        }
        prop_assert!(c.len() as u64 <= cap, "{p:?} cap {cap}: len {}", c.len());
    }
    c.validate().map_err(|e| TestCaseError::fail(format!("{p:?} cap {cap}: {e}")))?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 2 } else { 300 }, ..ProptestConfig::default() })]

    #[test]
    fn evicting_caches_never_return_a_stale_value(
        cap in 1u64..=64,
        cmds in proptest::collection::vec(evicting(), 1..400),
    ) {
        for p in Policy::ALL {
            run_evicting(p, cap, &cmds)?;
        }
    }
}

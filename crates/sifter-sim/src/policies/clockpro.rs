//! CLOCK-Pro (Jiang, Chen and Zhang, USENIX ATC'05): CLOCK with LIRS's idea — pages are hot or
//! cold by reuse distance; cold pages get a "test period", during which a re-access proves a
//! short reuse distance and makes them hot. One circular list holds hot pages, resident cold
//! pages and non-resident cold pages still in their test period; three hands sweep it.
//!
//! ```text
//! list head = just behind HAND_hot (a hand moving past a page leaves it at the head)
//! hit:        set the reference bit
//! miss:       HAND_cold frees space; then the page enters at the head — hot if it is a
//!             non-resident cold page still in its test period (and m_c += its size), else
//!             resident cold in a new test period; then HAND_test trims the non-resident
//!             pages to at most the cache size
//! HAND_cold:  on a resident cold page with the bit set: clear it; in its test period → hot
//!             (HAND_hot then runs while hot pages exceed m − m_c), else a new test period;
//!             either way it moves to the head. Bit clear: evict it; it stays listed as a
//!             non-resident page if in its test period. Stops after one eviction.
//! HAND_hot:   hot page with the bit set: clear it, move on; bit clear: it turns cold, stop.
//!             A cold page passed: its test period ends (m_c −= size), non-resident → removed.
//! HAND_test:  ends the test periods it passes (m_c −= size) until it removes one
//!             non-resident page.
//! m_c (the resident cold target) starts at `cold` of the cache, adapts within
//! [1 %, 99 %] of it (at least one object either side) when `adaptive`.
//! ```
//!
//! Sizes: everything is counted in the request's unit (objects or bytes).
//!
//! Source: the paper (§4). A cold page re-accessed after its test period gets a new one when
//! HAND_cold moves it to the head; demoted hot pages start cold without a test period.
//! libCacheSim's reference commit has no CLOCK-Pro. libcachesim 0.3.5's `ClockPro.c` is not a
//! usable reference: its `can_insert` requires room in the cold region *before* evicting, so
//! once the first C objects are cached nothing is ever admitted again (its miss ratios on
//! cloudPhysicsIO — 0.9246 / 0.8818 / 0.8363 / 0.7325 at 0.1/1/10/25 % — equal exactly a cache
//! frozen with the first C objects, worse than FIFO).

use crate::lists::NIL;
use crate::policy::{Policy, PolicyCtx, Req};

const ABSENT: u8 = 0;
const HOT: u8 = 1;
const COLD: u8 = 2;
/// Non-resident cold page in its test period.
const TEST: u8 = 3;

/// CLOCK-Pro.
#[derive(Debug)]
pub struct ClockPro {
    cap: u64,
    next: Vec<u32>,
    prev: Vec<u32>,
    status: Vec<u8>,
    referenced: Vec<bool>,
    in_test: Vec<bool>,
    size: Vec<u32>,
    hand_hot: u32,
    hand_cold: u32,
    hand_test: u32,
    hot: u64,
    cold: u64,
    test: u64,
    /// m_c, the target for resident cold pages.
    cold_target: u64,
    cold_min: u64,
    cold_max: u64,
    adaptive: bool,
    cold_fraction: f64,
    resident: usize,
}

impl ClockPro {
    /// CLOCK-Pro with m_c starting at `cold_fraction` of the cache, adapting if `adaptive`.
    pub fn new(ctx: &PolicyCtx, cold_fraction: f64, adaptive: bool) -> Self {
        let n = ctx.n_objects as usize;
        let cap = ctx.capacity;
        let cold_min = (cap / 100).max(1).min(cap);
        let cold_max = cap.saturating_sub(cold_min).max(cold_min);
        let cold_target = ((cap as f64 * cold_fraction) as u64).clamp(cold_min, cold_max);
        ClockPro {
            cap,
            next: vec![NIL; n],
            prev: vec![NIL; n],
            status: vec![ABSENT; n],
            referenced: vec![false; n],
            in_test: vec![false; n],
            size: vec![0; n],
            hand_hot: NIL,
            hand_cold: NIL,
            hand_test: NIL,
            hot: 0,
            cold: 0,
            test: 0,
            cold_target,
            cold_min,
            cold_max,
            adaptive,
            cold_fraction,
            resident: 0,
        }
    }

    fn grow_cold_target(&mut self, by: u64) {
        if self.adaptive {
            self.cold_target = (self.cold_target + by).min(self.cold_max);
        }
    }

    fn shrink_cold_target(&mut self, by: u64) {
        if self.adaptive {
            self.cold_target = self.cold_target.saturating_sub(by).max(self.cold_min);
        }
    }

    /// Links `id` in at the list head (just behind HAND_hot).
    fn link_at_head(&mut self, id: u32) {
        let i = id as usize;
        if self.hand_hot == NIL {
            self.next[i] = id;
            self.prev[i] = id;
            self.hand_hot = id;
            self.hand_cold = id;
            self.hand_test = id;
            return;
        }
        let after = self.hand_hot;
        let before = self.prev[after as usize];
        self.next[i] = after;
        self.prev[i] = before;
        self.next[before as usize] = id;
        self.prev[after as usize] = id;
    }

    /// Takes `id` off the list; hands on it move to the next page.
    fn unlink(&mut self, id: u32) {
        let i = id as usize;
        let (n, p) = (self.next[i], self.prev[i]);
        let successor = if n == id { NIL } else { n };
        for hand in [&mut self.hand_hot, &mut self.hand_cold, &mut self.hand_test] {
            if *hand == id {
                *hand = successor;
            }
        }
        if successor != NIL {
            self.next[p as usize] = n;
            self.prev[n as usize] = p;
        }
        self.next[i] = NIL;
        self.prev[i] = NIL;
    }

    /// Moves `id` to the list head (its hands first move past it).
    fn move_to_head(&mut self, id: u32) {
        self.unlink(id);
        self.link_at_head(id);
    }

    /// Makes a resident cold page hot, at the head; then HAND_hot keeps hot pages within
    /// m − m_c.
    fn promote(&mut self, id: u32) {
        let s = self.size[id as usize] as u64;
        self.cold -= s;
        self.hot += s;
        self.status[id as usize] = HOT;
        self.in_test[id as usize] = false;
        self.referenced[id as usize] = false;
        self.move_to_head(id);
        self.balance_hot();
    }

    fn balance_hot(&mut self) {
        while self.hot > self.cap.saturating_sub(self.cold_target) && self.hot > 0 {
            self.run_hot();
        }
    }

    /// HAND_hot: sweeps until it turns one hot page cold.
    fn run_hot(&mut self) {
        loop {
            let id = self.hand_hot;
            if id == NIL {
                return;
            }
            let i = id as usize;
            let s = self.size[i] as u64;
            match self.status[i] {
                HOT if self.referenced[i] => {
                    self.referenced[i] = false;
                    self.hand_hot = self.next[i];
                }
                HOT => {
                    self.status[i] = COLD;
                    self.in_test[i] = false;
                    self.hot -= s;
                    self.cold += s;
                    self.hand_hot = self.next[i];
                    return;
                }
                COLD => {
                    if self.in_test[i] {
                        self.in_test[i] = false;
                        self.shrink_cold_target(s);
                    }
                    self.hand_hot = self.next[i];
                }
                _ => {
                    // A non-resident page whose test period ends here.
                    self.test -= s;
                    self.status[i] = ABSENT;
                    self.shrink_cold_target(s);
                    self.unlink(id);
                }
            }
        }
    }

    /// HAND_cold: sweeps until it evicts one resident cold page.
    fn run_cold(&mut self) {
        while self.resident > 0 {
            if self.cold == 0 {
                // Everything resident is hot: make a cold page first.
                self.run_hot();
                continue;
            }
            let id = self.hand_cold;
            let i = id as usize;
            if self.status[i] != COLD {
                self.hand_cold = self.next[i];
                continue;
            }
            let s = self.size[i] as u64;
            if self.referenced[i] {
                self.referenced[i] = false;
                self.hand_cold = self.next[i];
                if self.in_test[i] {
                    self.promote(id);
                } else {
                    self.in_test[i] = true;
                    self.move_to_head(id);
                }
                continue;
            }
            self.hand_cold = self.next[i];
            self.cold -= s;
            self.resident -= 1;
            if self.in_test[i] {
                self.status[i] = TEST;
                self.in_test[i] = false;
                self.test += s;
            } else {
                self.status[i] = ABSENT;
                self.unlink(id);
            }
            return;
        }
    }

    /// HAND_test: sweeps until it removes one non-resident page, ending test periods.
    fn run_test(&mut self) {
        while self.test > 0 {
            let id = self.hand_test;
            let i = id as usize;
            let s = self.size[i] as u64;
            match self.status[i] {
                COLD => {
                    if self.in_test[i] {
                        self.in_test[i] = false;
                        self.shrink_cold_target(s);
                    }
                    self.hand_test = self.next[i];
                }
                TEST => {
                    self.test -= s;
                    self.status[i] = ABSENT;
                    self.shrink_cold_target(s);
                    self.unlink(id);
                    return;
                }
                _ => self.hand_test = self.next[i],
            }
        }
    }
}

impl Policy for ClockPro {
    fn name(&self) -> String {
        if self.adaptive && self.cold_fraction == 0.01 {
            "CLOCK-Pro".into()
        } else {
            format!(
                "CLOCK-Pro(cold={}{})",
                self.cold_fraction,
                if self.adaptive { "" } else { ",fixed" }
            )
        }
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.hot + self.cold
    }
    fn len(&self) -> usize {
        self.resident
    }
    fn lookup(&mut self, req: &Req) -> bool {
        let i = req.id as usize;
        if self.status[i] == HOT || self.status[i] == COLD {
            self.referenced[i] = true;
            true
        } else {
            false
        }
    }
    fn evict(&mut self, _req: &Req) {
        self.run_cold();
    }
    fn insert(&mut self, req: &Req) {
        let id = req.id;
        let i = id as usize;
        let s = req.size as u64;
        self.resident += 1;
        self.referenced[i] = false;
        if self.status[i] == TEST {
            // Re-accessed within its test period: a short reuse distance; it becomes hot.
            let old = self.size[i] as u64;
            self.test -= old;
            self.grow_cold_target(s);
            self.unlink(id);
            self.size[i] = req.size;
            self.status[i] = HOT;
            self.in_test[i] = false;
            self.hot += s;
            self.link_at_head(id);
            self.balance_hot();
        } else {
            self.size[i] = req.size;
            self.status[i] = COLD;
            self.in_test[i] = true;
            self.cold += s;
            self.link_at_head(id);
        }
        while self.test > self.cap {
            self.run_test();
        }
    }
    fn resident(&self) -> Option<Vec<u32>> {
        Some(
            (0..self.status.len() as u32)
                .filter(|&id| matches!(self.status[id as usize], HOT | COLD))
                .collect(),
        )
    }
    fn validate(&self) -> Result<(), String> {
        let (mut hot, mut cold, mut test, mut resident) = (0u64, 0u64, 0u64, 0usize);
        let mut listed = 0usize;
        if self.hand_hot != NIL {
            let mut id = self.hand_hot;
            loop {
                let i = id as usize;
                if self.prev[self.next[i] as usize] != id {
                    return Err(format!("broken ring at {id}"));
                }
                let s = self.size[i] as u64;
                match self.status[i] {
                    HOT => (hot, resident) = (hot + s, resident + 1),
                    COLD => (cold, resident) = (cold + s, resident + 1),
                    TEST => test += s,
                    _ => return Err(format!("id {id} listed but absent")),
                }
                listed += 1;
                id = self.next[i];
                if id == self.hand_hot || listed > self.status.len() {
                    break;
                }
            }
        }
        if (hot, cold, test, resident) != (self.hot, self.cold, self.test, self.resident) {
            return Err(format!(
                "counted hot/cold/test/resident {hot}/{cold}/{test}/{resident}, kept {}/{}/{}/{}",
                self.hot, self.cold, self.test, self.resident
            ));
        }
        let absent_listed = self.status.iter().filter(|&&st| st != ABSENT).count();
        if absent_listed != listed {
            return Err(format!("{absent_listed} ids have a status but {listed} are listed"));
        }
        if self.hot + self.cold > self.cap || self.test > self.cap {
            return Err(format!(
                "resident {} / non-resident {} over capacity {}",
                self.hot + self.cold,
                self.test,
                self.cap
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(p: &mut ClockPro, ids: impl IntoIterator<Item = u32>) -> u64 {
        let mut hits = 0;
        for id in ids {
            let req = Req { id, key: id as u64, size: 1, next: 0 };
            hits += p.access(&req) as u64;
            p.validate().unwrap();
        }
        hits
    }

    fn ctx(capacity: u64, n_objects: u32) -> PolicyCtx {
        PolicyCtx { capacity, n_objects, seed: 0 }
    }

    /// A loop slightly larger than the cache: LRU and CLOCK miss every request; CLOCK-Pro, like
    /// LIRS, keeps most of the loop hot and hits on it.
    #[test]
    fn loop_larger_than_cache_keeps_hitting() {
        let mut p = ClockPro::new(&ctx(100, 120), 0.01, true);
        let trace = (0..50).flat_map(|_| 0..120u32);
        let hits = run(&mut p, trace);
        assert!(hits > 50 * 120 / 2, "only {hits} hits of {}", 50 * 120);
    }

    /// A hot set re-used between scan requests survives a one-time scan much longer than the
    /// cache, where LRU loses part of it.
    #[test]
    fn hot_set_survives_a_scan() {
        let warm: Vec<u32> = (0..20).flat_map(|_| 0..30u32).collect();
        // Scan 5,000 new objects, touching the hot set every 40 scanned objects.
        let scan: Vec<u32> = (0..5_000u32)
            .flat_map(|i| {
                let mut v = vec![100 + i];
                if i % 40 == 0 {
                    v.extend(0..30u32);
                }
                v
            })
            .collect();
        let mut p = ClockPro::new(&ctx(50, 10_000), 0.01, true);
        run(&mut p, warm.iter().chain(&scan).copied());
        assert_eq!(run(&mut p, 0..30u32), 30, "the hot set was flushed by the scan");
        let mut lru = crate::policies::lru::Lru::new(&ctx(50, 10_000));
        for &id in warm.iter().chain(&scan) {
            lru.access(&Req { id, key: id as u64, size: 1, next: 0 });
        }
        let lru_hits: u32 = (0..30u32)
            .map(|id| lru.access(&Req { id, key: id as u64, size: 1, next: 0 }) as u32)
            .sum();
        assert!(lru_hits < 30, "the scan should flush part of LRU's hot set");
    }

    /// Non-resident pages never exceed the cache size, and m_c stays within its bounds, on a
    /// skewed pseudo-random trace with a fixed and an adaptive target.
    #[test]
    fn bounds_hold_on_a_random_trace() {
        for adaptive in [false, true] {
            let mut p = ClockPro::new(&ctx(64, 1_000), 0.3, adaptive);
            let mut x = 12345u64;
            let trace: Vec<u32> = (0..20_000)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let r = (x >> 33) % 1000;
                    (r * r / 1000) as u32
                })
                .collect();
            run(&mut p, trace);
            assert!(p.cold_target >= p.cold_min && p.cold_target <= p.cold_max);
            if !adaptive {
                assert_eq!(p.cold_target, 19);
            }
        }
    }
}

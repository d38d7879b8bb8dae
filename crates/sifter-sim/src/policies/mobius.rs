//! Mobius (Dong, Wang, Jiang, Feng, "Mobius", POMACS/SIGMETRICS 2025, §4, Algorithms 1–2) run
//! one request at a time: two FIFO queues in rotation with SIEVE's semantics, the order that
//! `sifter::Cache` with `Policy::Mobius` keeps at one thread.
//!
//! ```text
//! hit:    visited = 1                                   (no queue change)
//! insert: visited = 0; push at the tail of Q[active]
//! evict:  loop {
//!   A = Q[active], D = Q[!active]
//!   A empty:           D empty: nothing to evict; else active = !active (switch)
//!   consecutive (Alg. 2, the default):
//!     the visited run at A's head, then the first unvisited object v:
//!       found:         the run moves to D's tail (bits cleared, in order); evict v
//!       none (all of A visited): clear the bits in place and switch (A, now dormant,
//!                      keeps them at its head, as SIEVE's hand wraps to the tail)
//!   one at a time (Alg. 1, `consecutive=false`, the paper's "Mobius-w/d" ablation):
//!     h = A's head: unvisited: evict h;
//!                   visited and A's last: clear it in place and switch;
//!                   else move h to D's tail, bit cleared
//! }
//! ```
//!
//! Mobius differs from SIEVE in where survivors wait: SIEVE's hand leaves them in place among
//! newer objects, Mobius moves them to the dormant queue, behind the objects inserted while the
//! active queue drains. The concurrent cache takes victims several at a time and enqueues new
//! entries in chains per stripe in caches of at least 16 entries per stripe (256 on 2 cores),
//! so there it matches this order only approximately: within 0.002 of the miss ratio on the
//! tests' streams, up to 0.0025 on others (docs/BENCHMARKS.md, stop 78); below, exactly
//! (`tests/concurrent_equivalence.rs`).

use crate::policy::{Policy, PolicyCtx, Req};
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, Default)]
struct Meta {
    /// Stored size; 0 = not resident.
    size: u32,
    visited: bool,
}

/// Mobius.
#[derive(Debug)]
pub struct Mobius {
    cap: u64,
    used: u64,
    /// Consecutive detection (Algorithm 2); false: the w/d ablation (Algorithm 1).
    consecutive: bool,
    /// The two queues, oldest at the front.
    q: [VecDeque<u32>; 2],
    /// Which queue is active (scanned for victims, receives inserts).
    active: usize,
    meta: Vec<Meta>,
}

impl Mobius {
    /// A Mobius cache, with consecutive detection or without (the paper's ablation).
    pub fn new(ctx: &PolicyCtx, consecutive: bool) -> Self {
        Mobius {
            cap: ctx.capacity,
            used: 0,
            consecutive,
            q: [VecDeque::new(), VecDeque::new()],
            active: 0,
            meta: vec![Meta::default(); ctx.n_objects as usize],
        }
    }

    fn evict_id(&mut self, id: u32) {
        let m = &mut self.meta[id as usize];
        self.used -= m.size as u64;
        *m = Meta::default();
    }

    /// Switches the queues after the active one's every object was found visited: their bits
    /// are cleared where they are.
    fn wrap(&mut self) {
        let a = self.active;
        for &id in &self.q[a] {
            self.meta[id as usize].visited = false;
        }
        self.active = 1 - a;
    }
}

impl Policy for Mobius {
    fn name(&self) -> String {
        if self.consecutive {
            "Mobius".into()
        } else {
            "Mobius-w/d".into()
        }
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.used
    }
    fn len(&self) -> usize {
        self.q[0].len() + self.q[1].len()
    }
    #[inline]
    fn lookup(&mut self, req: &Req) -> bool {
        let m = &mut self.meta[req.id as usize];
        if m.size == 0 {
            return false;
        }
        m.visited = true;
        true
    }
    #[inline]
    fn evict(&mut self, _req: &Req) {
        // Each round either evicts, moves an object to the dormant queue, or switches after
        // clearing every bit of the active queue; two switches in a row find nothing visited,
        // so this ends.
        loop {
            let (a, d) = (self.active, 1 - self.active);
            if self.q[a].is_empty() {
                if self.q[d].is_empty() {
                    return;
                }
                self.active = d;
                continue;
            }
            if self.consecutive {
                let run =
                    self.q[a].iter().take_while(|&&id| self.meta[id as usize].visited).count();
                if run == self.q[a].len() {
                    self.wrap();
                    continue;
                }
                for _ in 0..run {
                    let id = self.q[a].pop_front().expect("counted above");
                    self.meta[id as usize].visited = false;
                    self.q[d].push_back(id);
                }
                let v = self.q[a].pop_front().expect("the unvisited object after the run");
                self.evict_id(v);
                return;
            }
            let h = *self.q[a].front().expect("not empty");
            if !self.meta[h as usize].visited {
                self.q[a].pop_front();
                self.evict_id(h);
                return;
            }
            if self.q[a].len() == 1 {
                self.wrap();
                continue;
            }
            self.q[a].pop_front();
            self.meta[h as usize].visited = false;
            self.q[d].push_back(h);
        }
    }
    #[inline]
    fn insert(&mut self, req: &Req) {
        self.meta[req.id as usize] = Meta { size: req.size, visited: false };
        self.q[self.active].push_back(req.id);
        self.used += req.size as u64;
    }
    fn resident(&self) -> Option<Vec<u32>> {
        Some(self.q[0].iter().chain(&self.q[1]).copied().collect())
    }
    fn validate(&self) -> Result<(), String> {
        let ids = || self.q[0].iter().chain(&self.q[1]);
        let sum: u64 = ids().map(|&id| self.meta[id as usize].size as u64).sum();
        if sum != self.used || self.used > self.cap {
            return Err(format!("Mobius: used {} but the queues sum {sum}", self.used));
        }
        if ids().any(|&id| self.meta[id as usize].size == 0) {
            return Err("Mobius: a queued object is not resident".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(id: u32) -> Req {
        Req { id, key: id as u64, size: 1, next: 0 }
    }

    fn queues(m: &Mobius) -> [Vec<u32>; 2] {
        let [a, b] = &m.q;
        let (a, b) = (a.iter().copied().collect(), b.iter().copied().collect());
        if m.active == 0 {
            [a, b]
        } else {
            [b, a]
        }
    }

    #[test]
    fn a_visited_run_moves_to_the_dormant_queue_and_the_next_object_goes() {
        for consecutive in [true, false] {
            let mut m = Mobius::new(&PolicyCtx { capacity: 4, n_objects: 8, seed: 0 }, consecutive);
            for id in 0..4 {
                assert!(!m.access(&req(id)));
            }
            assert!(m.access(&req(0)) && m.access(&req(1)));
            m.access(&req(4)); // 0 and 1 to the dormant queue, 2 evicted
            assert_eq!(queues(&m), [vec![3, 4], vec![0, 1]], "consecutive={consecutive}");
            assert!(!m.meta[0].visited && !m.meta[1].visited);
            m.validate().unwrap();
        }
    }

    #[test]
    fn an_all_visited_active_queue_is_cleared_in_place_and_switched() {
        for consecutive in [true, false] {
            let mut m = Mobius::new(&PolicyCtx { capacity: 3, n_objects: 8, seed: 0 }, consecutive);
            for id in 0..3 {
                m.access(&req(id));
            }
            for id in 0..3 {
                assert!(m.access(&req(id)));
            }
            m.access(&req(3));
            if consecutive {
                // The run 0 1 2 reaches the end: cleared where it is, the queues switch, and
                // the (empty) active queue switches back: 0 goes.
                assert_eq!(queues(&m), [vec![1, 2, 3], vec![]]);
            } else {
                // 0 and 1 move one at a time; 2, the last, is cleared in place; the switch
                // makes 0 1 the active queue, and 0 (cleared) goes; 2 waits, dormant.
                assert_eq!(queues(&m), [vec![1, 3], vec![2]]);
            }
            m.validate().unwrap();
        }
    }
}

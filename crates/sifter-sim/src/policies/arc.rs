//! ARC (Megiddo and Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache", FAST'03), as
//! libCacheSim's `cache/eviction/ARC.c`:
//!
//! ```text
//! T1 (L1 data): seen once recently;  T2 (L2 data): seen at least twice
//! B1, B2: ghost lists of ids evicted from T1 / T2;  p: target size of T1 (starts at 0)
//! hit in T1: move to T2's MRU end;  hit in T2: move to T2's MRU end
//! miss, id in B1: p = min(p + max(|B2|/|B1|, 1), c); drop it from B1; REPLACE; insert into T2
//! miss, id in B2: p = max(p − max(|B1|/|B2|, 1), 0); drop it from B2; REPLACE; insert into T2
//! miss elsewhere: if |T1| + |B1| + size > c: if B1 is non-empty drop B1's LRU and REPLACE,
//!                 else evict T1's LRU outright;
//!                 else: if |T1| + |B1| + |T2| + |B2| >= 2c drop B2's LRU (if any); REPLACE;
//!                 insert into T1
//! REPLACE: if (|T1| > 0 and (|T1| > p or (|T1| = p and the id was in B2))) or |T2| = 0:
//!          move T1's LRU to B1's MRU end, else move T2's LRU to B2's MRU end
//! ```
//!
//! Sizes are bytes in byte mode (objects in object mode), as libCacheSim's.
//!
//! **ARC-SIEVE** (`arc(sieve=true)`, the SIEVE paper's §5 variant): T2, the list of frequent
//! objects, is managed by SIEVE instead of LRU — a hit in T2 sets a visited bit instead of
//! moving the object, and T2's victim is chosen by SIEVE's hand (which walks from the old end
//! towards the new, clearing visited bits, and stays where it evicted). Objects enter T2 (from
//! T1 or a ghost) at the new end, unvisited. Everything else is ARC.

use crate::lists::{Ends, Links, SieveHand, NIL};
use crate::policy::{Policy, PolicyCtx, Req};

const NONE: u8 = 0;
const T1: u8 = 1;
const T2: u8 = 2;
const B1: u8 = 3;
const B2: u8 = 4;

/// ARC.
#[derive(Debug)]
pub struct Arc {
    cap: u64,
    p: f64,
    links: Links,
    /// MRU at the front.
    t1: Ends,
    t2: Ends,
    b1: Ends,
    b2: Ends,
    at: Vec<u8>,
    size: Vec<u32>,
    /// The current request hit a ghost (1: B1, 2: B2, 0: no).
    ghost_hit: u8,
    /// ARC-SIEVE: T2 is a SIEVE list (visited bits, hand) instead of an LRU list.
    sieve: bool,
    t2_sieve: SieveHand,
}

impl Arc {
    /// An ARC cache; `sieve` makes it ARC-SIEVE.
    pub fn new(ctx: &PolicyCtx, sieve: bool) -> Self {
        Arc {
            cap: ctx.capacity,
            p: 0.0,
            links: Links::new(ctx.n_objects),
            t1: Ends::default(),
            t2: Ends::default(),
            b1: Ends::default(),
            b2: Ends::default(),
            at: vec![NONE; ctx.n_objects as usize],
            size: vec![0; ctx.n_objects as usize],
            ghost_hit: 0,
            sieve,
            t2_sieve: if sieve { SieveHand::new(ctx.n_objects) } else { SieveHand::default() },
        }
    }

    /// The id `demote` takes from `from`: the LRU end, or for ARC-SIEVE's T2 SIEVE's choice
    /// (the hand then rests on the next newer id).
    fn victim(&mut self, from: u8) -> u32 {
        if self.sieve && from == T2 {
            self.t2_sieve.victim(&self.links, &self.t2)
        } else {
            self.list(from).back
        }
    }

    fn list(&mut self, tag: u8) -> &mut Ends {
        match tag {
            T1 => &mut self.t1,
            T2 => &mut self.t2,
            B1 => &mut self.b1,
            _ => &mut self.b2,
        }
    }

    /// Moves the LRU id of `from` to the MRU end of `to` (NONE: drop it).
    fn demote(&mut self, from: u8, to: u8) {
        let id = self.victim(from);
        if id == NIL {
            return;
        }
        let s = self.size[id as usize] as u64;
        let mut e = *self.list(from);
        self.links.unlink(&mut e, id, s);
        *self.list(from) = e;
        if to == NONE {
            self.at[id as usize] = NONE;
        } else {
            let mut t = *self.list(to);
            self.links.push_front(&mut t, id, s);
            *self.list(to) = t;
            self.at[id as usize] = to;
        }
    }

    fn replace(&mut self) {
        let (l1, p) = (self.t1.bytes, self.p);
        let cond = (l1 > 0 && ((l1 as f64) > p || ((l1 as f64) == p && self.ghost_hit == 2)))
            || self.t2.bytes == 0;
        if cond {
            self.demote(T1, B1);
        } else {
            self.demote(T2, B2);
        }
    }
}

impl Policy for Arc {
    fn name(&self) -> String {
        if self.sieve { "ARC-SIEVE" } else { "ARC" }.into()
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.t1.bytes + self.t2.bytes
    }
    fn len(&self) -> usize {
        self.t1.len + self.t2.len
    }
    fn lookup(&mut self, req: &Req) -> bool {
        self.ghost_hit = 0;
        let id = req.id;
        let s = self.size[id as usize] as u64;
        match self.at[id as usize] {
            T1 => {
                self.links.unlink(&mut self.t1, id, s);
                self.links.push_front(&mut self.t2, id, s);
                self.at[id as usize] = T2;
                if self.sieve {
                    self.t2_sieve.joined(id);
                }
                true
            }
            T2 if self.sieve => {
                self.t2_sieve.visit(id);
                true
            }
            T2 => {
                self.links.unlink(&mut self.t2, id, s);
                self.links.push_front(&mut self.t2, id, s);
                true
            }
            B1 => {
                let delta = (self.b2.bytes as f64 / self.b1.bytes as f64).max(1.0);
                self.p = (self.p + delta).min(self.cap as f64);
                self.links.unlink(&mut self.b1, id, s);
                self.at[id as usize] = NONE;
                self.ghost_hit = 1;
                false
            }
            B2 => {
                let delta = (self.b1.bytes as f64 / self.b2.bytes as f64).max(1.0);
                self.p = (self.p - delta).max(0.0);
                self.links.unlink(&mut self.b2, id, s);
                self.at[id as usize] = NONE;
                self.ghost_hit = 2;
                false
            }
            _ => false,
        }
    }
    fn evict(&mut self, req: &Req) {
        if self.ghost_hit != 0 {
            self.replace();
            return;
        }
        let incoming = req.size as u64;
        if self.t1.bytes + self.b1.bytes + incoming > self.cap {
            if self.b1.bytes > 0 {
                self.demote(B1, NONE);
                self.replace();
            } else {
                self.demote(T1, NONE);
            }
        } else {
            if self.t1.bytes + self.b1.bytes + self.t2.bytes + self.b2.bytes >= 2 * self.cap
                && self.b2.bytes > 0
            {
                self.demote(B2, NONE);
            }
            self.replace();
        }
    }
    fn insert(&mut self, req: &Req) {
        let (id, s) = (req.id, req.size as u64);
        self.size[id as usize] = req.size;
        if self.ghost_hit != 0 {
            self.links.push_front(&mut self.t2, id, s);
            self.at[id as usize] = T2;
            if self.sieve {
                self.t2_sieve.joined(id);
            }
            self.ghost_hit = 0;
        } else {
            self.links.push_front(&mut self.t1, id, s);
            self.at[id as usize] = T1;
        }
    }
    fn resident(&self) -> Option<Vec<u32>> {
        let mut ids = self.links.ids(&self.t1);
        ids.extend(self.links.ids(&self.t2));
        Some(ids)
    }
    fn validate(&self) -> Result<(), String> {
        for (tag, e) in [(T1, &self.t1), (T2, &self.t2), (B1, &self.b1), (B2, &self.b2)] {
            let ids = self.links.ids(e);
            if ids.len() != e.len || ids.iter().any(|&i| self.at[i as usize] != tag) {
                return Err(format!("ARC: list {tag} inconsistent"));
            }
        }
        let hand = self.t2_sieve.hand();
        if self.sieve && hand != NIL && self.at[hand as usize] != T2 {
            return Err(format!("ARC-SIEVE: hand {hand} is not in T2"));
        }
        if self.occupied() > self.cap || !(0.0..=self.cap as f64).contains(&self.p) {
            return Err("ARC: over capacity or p out of range".into());
        }
        Ok(())
    }
}

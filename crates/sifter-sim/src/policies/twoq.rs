//! 2Q (Johnson and Shasha, VLDB'94), as libCacheSim's `cache/eviction/TwoQ.c`:
//!
//! ```text
//! A1in:  FIFO of new objects, 25 % of the cache            (Kin)
//! A1out: FIFO ghost of ids evicted from A1in, 50 % of the cache (Kout)
//! Am:    LRU of objects re-requested after leaving A1in, the rest of the cache
//! hit in A1in: nothing;  hit in Am: move to Am's MRU end
//! miss:  if the id is in A1out: remove it there, insert into Am (Am evicts its own LRU if it
//!        exceeds its share); else insert into A1in
//! evict: if Am is non-empty and A1in is within its share: evict Am's LRU,
//!        else move A1in's oldest id to A1out (dropping A1out's oldest as needed) and evict it
//! ```
//!
//! Objects larger than A1in are not admitted. Parameters `kin` (0.25), `kout` (0.5).
//!
//! **TwoQ-SIEVE** (`twoq-sieve`, the SIEVE paper's §5 variant): Am is managed by SIEVE instead
//! of LRU — a hit in Am sets a visited bit, Am's victim is chosen by SIEVE's hand.

use crate::lists::{Ends, Links, SieveHand, NIL};
use crate::policy::{Policy, PolicyCtx, Req};

const NONE: u8 = 0;
const AIN: u8 = 1;
const AM: u8 = 2;
const AOUT: u8 = 3;

/// 2Q.
#[derive(Debug)]
pub struct TwoQ {
    cap: u64,
    ain_cap: u64,
    aout_cap: u64,
    am_cap: u64,
    links: Links,
    ain: Ends,
    am: Ends,
    aout: Ends,
    /// Where each id is.
    at: Vec<u8>,
    size: Vec<u32>,
    hit_on_ghost: bool,
    /// TwoQ-SIEVE: Am is a SIEVE list.
    am_sieve: Option<SieveHand>,
}

impl TwoQ {
    /// A 2Q cache; `sieve` makes Am a SIEVE list (TwoQ-SIEVE).
    pub fn new(ctx: &PolicyCtx, kin: f64, kout: f64, sieve: bool) -> Self {
        let cap = ctx.capacity;
        let ain_cap = (cap as f64 * kin) as u64;
        TwoQ {
            cap,
            ain_cap,
            aout_cap: (cap as f64 * kout) as u64,
            am_cap: cap - ain_cap,
            links: Links::new(ctx.n_objects),
            ain: Ends::default(),
            am: Ends::default(),
            aout: Ends::default(),
            at: vec![NONE; ctx.n_objects as usize],
            size: vec![0; ctx.n_objects as usize],
            hit_on_ghost: false,
            am_sieve: sieve.then(|| SieveHand::new(ctx.n_objects)),
        }
    }

    /// Am's LRU end is the back; MRU the front.
    fn am_evict(&mut self) {
        let id = match &mut self.am_sieve {
            Some(h) => h.victim(&self.links, &self.am),
            None => self.am.back,
        };
        if id != NIL {
            self.links.unlink(&mut self.am, id, self.size[id as usize] as u64);
            self.at[id as usize] = NONE;
        }
    }

    fn aout_insert(&mut self, id: u32, size: u64) {
        if size > self.aout_cap {
            return;
        }
        while self.aout.bytes + size > self.aout_cap {
            let old = self.aout.front;
            self.links.unlink(&mut self.aout, old, self.size[old as usize] as u64);
            self.at[old as usize] = NONE;
        }
        self.links.push_back(&mut self.aout, id, size);
        self.at[id as usize] = AOUT;
    }
}

impl Policy for TwoQ {
    fn name(&self) -> String {
        if self.am_sieve.is_some() { "TwoQ-SIEVE" } else { "TwoQ" }.into()
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.ain.bytes + self.am.bytes
    }
    fn len(&self) -> usize {
        self.ain.len + self.am.len
    }
    fn lookup(&mut self, req: &Req) -> bool {
        self.hit_on_ghost = false;
        let id = req.id;
        match self.at[id as usize] {
            AIN => true,
            AM if self.am_sieve.is_some() => {
                self.am_sieve.as_mut().expect("checked").visit(id);
                true
            }
            AM => {
                let s = self.size[id as usize] as u64;
                self.links.unlink(&mut self.am, id, s);
                self.links.push_front(&mut self.am, id, s);
                true
            }
            AOUT => {
                let s = self.size[id as usize] as u64;
                self.links.unlink(&mut self.aout, id, s);
                self.at[id as usize] = NONE;
                self.hit_on_ghost = true;
                false
            }
            _ => false,
        }
    }
    fn can_insert(&self, req: &Req) -> bool {
        req.size as u64 <= self.ain_cap && req.size as u64 <= self.cap
    }
    fn evict(&mut self, _req: &Req) {
        if self.am.bytes > 0 && self.ain.bytes <= self.ain_cap {
            self.am_evict();
        } else {
            let id = self.ain.front;
            if id == NIL {
                return;
            }
            let s = self.size[id as usize] as u64;
            self.links.unlink(&mut self.ain, id, s);
            self.at[id as usize] = NONE;
            self.aout_insert(id, s);
        }
    }
    fn insert(&mut self, req: &Req) {
        let (id, s) = (req.id, req.size as u64);
        self.size[id as usize] = req.size;
        if self.hit_on_ghost {
            self.hit_on_ghost = false;
            // Am is a cache of its own: it makes room within its share first.
            if s > self.am_cap {
                return;
            }
            while self.am.bytes + s > self.am_cap {
                self.am_evict();
            }
            self.links.push_front(&mut self.am, id, s);
            self.at[id as usize] = AM;
            if let Some(h) = &mut self.am_sieve {
                h.joined(id);
            }
        } else {
            self.links.push_back(&mut self.ain, id, s);
            self.at[id as usize] = AIN;
        }
    }
    fn validate(&self) -> Result<(), String> {
        for (tag, e) in [(AIN, &self.ain), (AM, &self.am), (AOUT, &self.aout)] {
            let ids = self.links.ids(e);
            if ids.len() != e.len || ids.iter().any(|&i| self.at[i as usize] != tag) {
                return Err(format!("TwoQ: list {tag} inconsistent"));
            }
        }
        if let Some(h) = &self.am_sieve {
            if h.hand() != NIL && self.at[h.hand() as usize] != AM {
                return Err(format!("TwoQ-SIEVE: hand {} is not in Am", h.hand()));
            }
        }
        if self.aout.bytes > self.aout_cap {
            return Err("TwoQ: A1out over its size".into());
        }
        Ok(())
    }
}

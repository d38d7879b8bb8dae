//! CACHEUS (Rodriguez et al., FAST'21): LeCaR's regret-minimising mix of two experts, with
//! scan-resistant SR-LRU and churn-resistant CR-LFU as the experts and a learning rate that
//! adapts itself.
//!
//! ```text
//! SR-LRU: two LRU lists, SR (new and demoted objects; initial size C/2) and R (objects hit
//!         or returning from history; C − |SR|), plus a history list H (size C) of evictees.
//!         new object → SR head (flag "new"); object found in H → R head; a hit in SR moves
//!         the object to R, overflowing R's tail back to SR (flag "demoted"); SR trimmed to its
//!         size into H (leaving the cache); a returning "new" object grows SR by
//!         max(1, ⌊demoted / new⌋ + 0.5). Its victim is SR's tail, or R's if SR is empty.
//! CR-LFU: per-frequency lists; victim = the NEWEST object of the lowest frequency; an object
//!         returning from H gets the frequency it had when it left, + 1.
//! evict:  both experts propose; equal → evict it; else draw r = (rand % 100) / 100 and evict
//!         SR-LRU's proposal if r < w_LRU (it goes to the LRU ghost) else CR-LFU's (LFU ghost);
//!         ghosts are LRU lists of C/2.
//! miss on a ghost of expert E: w_E *= exp(−lr), renormalise, drop the ghost entry.
//! every C requests: move lr by ±|lr · Δlr| following the sign of Δhit-rate / Δlr; after 10
//!         intervals without improvement, redraw lr uniformly in [0.001, 1).
//! ```
//!
//! Source: libCacheSim `cache/eviction/Cacheus.c`, `SR_LRU.c` and `CR_LFU.c`, reproduced with
//! their quirks so that figures match (within 0.01 — the draws come from our seeded generator):
//! * the interval hit rate is an integer division (`hits / C`), so it is 0 unless every request
//!   of the interval hit, and the learning rate mostly decays by its own square;
//! * a hit on a demoted object in SR should shrink SR (the paper's rule), but libCacheSim tests
//!   the flag on the fresh copy it has just made in R, which never carries it, so SR never
//!   shrinks; its demoted count is not decremented on that path either;
//! * trimming SR during an insertion drops objects from the cache (into H) outside `evict`.

use crate::lists::{Ends, FreqLists, Links, NIL};
use crate::policy::{Policy, PolicyCtx, Req};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Where an id is in SR-LRU.
const NOWHERE: u8 = 0;
const IN_R: u8 = 1;
const IN_SR: u8 = 2;
const IN_H: u8 = 3;

/// Which ghost list an id is on.
const NOT_GHOST: u8 = 0;
const GHOST_LRU: u8 = 1;
const GHOST_LFU: u8 = 2;

/// CACHEUS.
#[derive(Debug)]
pub struct Cacheus {
    cap: u64,
    n_req: u64,
    // SR-LRU: lists R, SR and H over `links` (front = most recent); an id is on at most one.
    links: Links,
    r: Ends,
    sr: Ends,
    h: Ends,
    r_cap: i64,
    sr_cap: i64,
    h_cap: i64,
    place: Vec<u8>,
    is_new: Vec<bool>,
    demoted: Vec<bool>,
    n_demoted: u64,
    n_new: u64,
    /// The CR-LFU frequency an id had when it entered H.
    h_freq: Vec<u32>,
    // CR-LFU over the resident ids.
    lfu: FreqLists,
    // Ghost lists of the two experts' victims (front = most recent).
    glinks: Links,
    ghost_lru: Ends,
    ghost_lfu: Ends,
    ghost_cap: u64,
    ghost: Vec<u8>,
    size: Vec<u32>,
    // Learning.
    w_lru: f64,
    w_lfu: f64,
    lr: f64,
    lr_prev: f64,
    hit_rate_prev: f64,
    unlearn: u32,
    hits: u64,
    interval: u64,
    rng: Xoshiro256PlusPlus,
}

impl Cacheus {
    /// A CACHEUS cache (learning rate drawn from the seed, as libCacheSim draws it).
    pub fn new(ctx: &PolicyCtx) -> Self {
        let n = ctx.n_objects;
        let cap = ctx.capacity;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(ctx.seed);
        let lr = 0.001 + (rng.random_range(0..1000u32) as f64) / 1000.0;
        Cacheus {
            cap,
            n_req: 0,
            links: Links::new(n),
            r: Ends::default(),
            sr: Ends::default(),
            h: Ends::default(),
            r_cap: (cap / 2) as i64,
            sr_cap: (cap / 2) as i64,
            h_cap: cap as i64,
            place: vec![NOWHERE; n as usize],
            is_new: vec![false; n as usize],
            demoted: vec![false; n as usize],
            n_demoted: 0,
            n_new: 0,
            h_freq: vec![0; n as usize],
            lfu: FreqLists::new(n),
            glinks: Links::new(n),
            ghost_lru: Ends::default(),
            ghost_lfu: Ends::default(),
            ghost_cap: cap / 2,
            ghost: vec![NOT_GHOST; n as usize],
            size: vec![0; n as usize],
            w_lru: 0.5,
            w_lfu: 0.5,
            lr,
            lr_prev: 0.0,
            hit_rate_prev: 0.0,
            unlearn: 0,
            hits: 0,
            interval: cap.max(1),
            rng,
        }
    }

    fn list(&mut self, place: u8) -> &mut Ends {
        match place {
            IN_R => &mut self.r,
            IN_SR => &mut self.sr,
            _ => &mut self.h,
        }
    }

    /// Takes `id` off its SR-LRU list (R, SR or H).
    fn unlink(&mut self, id: u32) {
        let place = self.place[id as usize];
        debug_assert_ne!(place, NOWHERE);
        let size = self.size[id as usize] as u64;
        let mut e = std::mem::take(self.list(place));
        self.links.unlink(&mut e, id, size);
        *self.list(place) = e;
        self.place[id as usize] = NOWHERE;
    }

    /// Puts `id` at the head of list `place` as a fresh entry (libCacheSim copies the object,
    /// so its flags start cleared).
    fn push(&mut self, id: u32, place: u8) {
        let size = self.size[id as usize] as u64;
        let mut e = std::mem::take(self.list(place));
        self.links.push_front(&mut e, id, size);
        *self.list(place) = e;
        self.place[id as usize] = place;
        self.is_new[id as usize] = false;
        self.demoted[id as usize] = false;
        if place == IN_H {
            self.h_freq[id as usize] = 0;
        }
    }

    /// R's tail goes to SR's head, marked demoted.
    fn demote_r_tail(&mut self) {
        let t = self.r.back;
        self.unlink(t);
        self.push(t, IN_SR);
        self.n_demoted += 1;
        self.demoted[t as usize] = true;
    }

    /// Moves a resident id into H (it leaves the cache), keeping the counts of new and demoted
    /// objects (H remembers only "new"; libCacheSim's demoted flag in H is never read).
    fn retire(&mut self, id: u32) {
        let (was_new, was_demoted) = (self.is_new[id as usize], self.demoted[id as usize]);
        self.unlink(id);
        self.push(id, IN_H);
        if was_new {
            self.n_new += 1;
            self.is_new[id as usize] = true;
        }
        if was_demoted {
            self.n_demoted -= 1;
        }
    }

    fn trim_history(&mut self) {
        while self.h.bytes as i64 >= self.h_cap && self.h.back != NIL {
            let t = self.h.back;
            self.unlink(t);
        }
    }

    /// Removes a resident id from CR-LFU, remembering its frequency in H.
    fn lfu_remove(&mut self, id: u32) {
        if self.place[id as usize] == IN_H {
            self.h_freq[id as usize] = self.lfu.freq(id);
        }
        self.lfu.remove(id);
    }

    fn sr_lru_victim(&self) -> u32 {
        if self.sr.bytes != 0 {
            self.sr.back
        } else {
            self.r.back
        }
    }

    fn sr_lru_can_insert(&self, req: &Req) -> bool {
        let room = if self.place[req.id as usize] == IN_H { self.r_cap } else { self.sr_cap };
        req.size as i64 <= room
    }

    fn sr_lru_insert(&mut self, req: &Req) {
        let id = req.id;
        if self.place[id as usize] == IN_H {
            let was_new = self.is_new[id as usize];
            self.unlink(id);
            self.size[id as usize] = req.size;
            while self.r.bytes as i64 + req.size as i64 > self.r_cap && self.r.back != NIL {
                self.demote_r_tail();
            }
            self.push(id, IN_R);
            if was_new {
                let ratio = (self.n_demoted / self.n_new.max(1)) as i64 as f64 + 0.5;
                let delta = ratio.max(1.0);
                let occupied = (self.r.bytes + self.sr.bytes) as i64 - 1;
                if self.sr_cap as f64 + delta > occupied as f64 {
                    self.sr_cap = occupied;
                } else {
                    self.sr_cap = (self.sr_cap as f64 + delta) as i64;
                }
                self.r_cap = self.h_cap - self.sr_cap;
            }
        } else {
            self.size[id as usize] = req.size;
            self.push(id, IN_SR);
            self.is_new[id as usize] = true;
        }
        while self.sr.bytes as i64 > self.sr_cap && self.sr.back != NIL {
            let t = self.sr.back;
            self.retire(t);
            self.lfu_remove(t);
        }
        self.trim_history();
    }

    /// The LRU ghost or the LFU ghost records a victim (an LRU cache of `ghost_cap` bytes).
    fn ghost_add(&mut self, id: u32, which: u8) {
        let size = self.size[id as usize] as u64;
        if size > self.ghost_cap {
            return;
        }
        let mut e = std::mem::take(if which == GHOST_LRU {
            &mut self.ghost_lru
        } else {
            &mut self.ghost_lfu
        });
        while e.bytes + size > self.ghost_cap {
            let t = e.back;
            self.glinks.unlink(&mut e, t, self.size[t as usize] as u64);
            self.ghost[t as usize] = NOT_GHOST;
        }
        self.glinks.push_front(&mut e, id, size);
        self.ghost[id as usize] = which;
        *(if which == GHOST_LRU { &mut self.ghost_lru } else { &mut self.ghost_lfu }) = e;
    }

    /// A miss: learn from a ghost hit and forget the ghost.
    fn learn_from_miss(&mut self, id: u32) {
        match self.ghost[id as usize] {
            GHOST_LRU => self.w_lru *= (-self.lr).exp(),
            GHOST_LFU => self.w_lfu *= (-self.lr).exp(),
            _ => {}
        }
        self.w_lru /= self.w_lru + self.w_lfu;
        self.w_lfu = 1.0 - self.w_lru;
        let which = self.ghost[id as usize];
        if which != NOT_GHOST {
            let size = self.size[id as usize] as u64;
            let e = if which == GHOST_LRU { &mut self.ghost_lru } else { &mut self.ghost_lfu };
            self.glinks.unlink(e, id, size);
            self.ghost[id as usize] = NOT_GHOST;
        }
    }

    fn update_lr(&mut self) {
        // libCacheSim divides two integers here (see the module docs).
        let hit_rate = (self.hits / self.interval) as f64;
        let d_hit = hit_rate - self.hit_rate_prev;
        let d_lr = self.lr - self.lr_prev;
        self.lr_prev = self.lr;
        self.hit_rate_prev = hit_rate;
        if d_lr != 0.0 {
            let sign = if d_hit / d_lr > 0.0 { 1.0 } else { -1.0 };
            let next = self.lr + sign * (self.lr * d_lr).abs();
            self.lr = if next > 0.001 { next } else { 0.0001 };
            self.unlearn = 0;
        } else if hit_rate == 0.0 || d_hit <= 0.0 {
            self.unlearn += 1;
        } else if self.unlearn >= 10 {
            self.unlearn = 0;
            self.lr = 0.001 + (self.rng.random_range(0..1000u32) as f64) / 1000.0;
        }
        self.hits = 0;
    }
}

impl Policy for Cacheus {
    fn name(&self) -> String {
        "CACHEUS".into()
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.r.bytes + self.sr.bytes
    }
    fn len(&self) -> usize {
        self.r.len + self.sr.len
    }
    fn access(&mut self, req: &Req) -> bool {
        self.n_req += 1;
        let hit = self.lookup(req);
        if !hit {
            self.learn_from_miss(req.id);
            if self.can_insert(req) {
                while self.occupied() + req.size as u64 > self.cap && self.len() > 0 {
                    self.evict(req);
                }
                self.insert(req);
            }
        }
        if self.n_req.is_multiple_of(self.interval) {
            self.update_lr();
        }
        hit
    }
    fn lookup(&mut self, req: &Req) -> bool {
        let id = req.id;
        match self.place[id as usize] {
            IN_R => {
                self.unlink(id);
                self.push(id, IN_R);
            }
            IN_SR => {
                self.unlink(id);
                self.push(id, IN_R);
                while self.r.bytes as i64 > self.r_cap && self.r.back != NIL {
                    self.demote_r_tail();
                }
            }
            _ => return false,
        }
        self.lfu.bump(id);
        self.hits += 1;
        true
    }
    fn evict(&mut self, _req: &Req) {
        let lru_v = self.sr_lru_victim();
        let lfu_v = self.lfu.min_back();
        let pick_lru = (self.rng.random_range(0..100u32) as f64) / 100.0 < self.w_lru;
        if lru_v == NIL || lfu_v == NIL {
            return;
        }
        if lru_v == lfu_v {
            self.retire(lru_v);
            self.trim_history();
            self.lfu_remove(lru_v);
        } else if pick_lru {
            self.retire(lru_v);
            self.trim_history();
            self.lfu_remove(lru_v);
            self.ghost_add(lru_v, GHOST_LRU);
        } else {
            self.retire(lfu_v);
            self.trim_history();
            self.lfu_remove(lfu_v);
            self.ghost_add(lfu_v, GHOST_LFU);
        }
    }
    fn insert(&mut self, req: &Req) {
        if !self.sr_lru_can_insert(req) {
            return;
        }
        let f =
            if self.place[req.id as usize] == IN_H { self.h_freq[req.id as usize] + 1 } else { 1 };
        self.lfu.insert_at(req.id, f);
        self.sr_lru_insert(req);
    }
    fn debug_state(&self) -> String {
        format!(
            "|R|={} |SR|={} |H|={} r_cap={} sr_cap={} demoted={} new={} w_lru={:.4} lr={:.5}",
            self.r.bytes,
            self.sr.bytes,
            self.h.bytes,
            self.r_cap,
            self.sr_cap,
            self.n_demoted,
            self.n_new,
            self.w_lru,
            self.lr
        )
    }
    fn validate(&self) -> Result<(), String> {
        let resident = self.r.len + self.sr.len;
        if self.lfu.len() != resident {
            return Err(format!("CR-LFU lists {} ids, SR-LRU {}", self.lfu.len(), resident));
        }
        if self.occupied() > self.cap {
            return Err(format!("occupied {} > capacity {}", self.occupied(), self.cap));
        }
        self.lfu.validate()
    }
}

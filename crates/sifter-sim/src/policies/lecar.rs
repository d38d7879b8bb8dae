//! LeCaR (Vietri et al., HotStorage'18): two experts, LRU and LFU, each proposes a victim; the
//! victim is drawn according to weights learned by regret minimisation over two ghost lists.
//!
//! ```text
//! hit:     move to the LRU head; freq += 1 (LFU: to the back of the freq + 1 list)
//! miss on a ghost of expert E (evicted t requests ago):
//!          w_E *= exp(-lr · dr^t); renormalise (E's choice was a regret); drop the ghost
//! evict:   LRU candidate = LRU tail, LFU candidate = oldest object of the lowest frequency;
//!          equal → evict it, no ghost; else pick LRU with probability w_LRU (drawn as
//!          (rand % 100) / 100 < w_LRU); the victim goes to its expert's ghost list (FIFO,
//!          half the cache each)
//! lr = 0.45, dr = 0.005^(1 / cache size), w_LRU = w_LFU = 0.5 at start
//! ```
//!
//! **LeCaR-SIEVE** (`lecar-sieve`, the SIEVE paper's §5 variant): the recency expert is SIEVE
//! instead of LRU — a hit sets a visited bit instead of moving the object, and the expert's
//! candidate is the object SIEVE's hand rests on (the hand stays there if the LFU expert's
//! candidate is evicted instead). Its mistakes are tracked by the same first ghost list.
//!
//! Source: libCacheSim `cache/eviction/LeCaR.c` (the constants, the 1e-10 smoothing of the
//! weight update and the ghost bound of `cache_size / 2`). The draws come from our seeded
//! generator, so figures agree with libCacheSim's statistically (within 0.01).

use crate::lists::{Ends, FreqLists, Links, SieveHand, NIL};
use crate::policy::{Policy, PolicyCtx, Req};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Which ghost list an id is on.
const NOT_GHOST: u8 = 0;
const GHOST_LRU: u8 = 1;
const GHOST_LFU: u8 = 2;

/// LeCaR.
#[derive(Debug)]
pub struct LeCaR {
    cap: u64,
    used: u64,
    len: usize,
    now: u64,
    /// LRU order of resident ids (front = most recent) and, for non-resident ids, the ghost
    /// lists (front = most recently evicted); an id is on at most one of them.
    recency: Links,
    lru: Ends,
    ghost_lru: Ends,
    ghost_lfu: Ends,
    /// The LFU expert's frequency lists (frequency 0 = not resident).
    lfu: FreqLists,
    /// Per id: size, ghost tag, eviction time.
    size: Vec<u32>,
    ghost: Vec<u8>,
    evicted_at: Vec<u64>,
    w_lru: f64,
    w_lfu: f64,
    lr: f64,
    dr: f64,
    rng: Xoshiro256PlusPlus,
    /// LeCaR-SIEVE: the recency expert is SIEVE over `lru` (front = newest).
    sieve: Option<SieveHand>,
}

impl LeCaR {
    /// A LeCaR cache with initial LRU weight `w_lru`; `learn = false` keeps the weights fixed;
    /// `sieve` makes the recency expert SIEVE (LeCaR-SIEVE).
    pub fn new(ctx: &PolicyCtx, w_lru: f64, learn: bool, sieve: bool) -> Self {
        let n = ctx.n_objects as usize;
        LeCaR {
            cap: ctx.capacity,
            used: 0,
            len: 0,
            now: 0,
            recency: Links::new(ctx.n_objects),
            lru: Ends::default(),
            ghost_lru: Ends::default(),
            ghost_lfu: Ends::default(),
            lfu: FreqLists::new(ctx.n_objects),
            size: vec![0; n],
            ghost: vec![NOT_GHOST; n],
            evicted_at: vec![0; n],
            w_lru,
            w_lfu: 1.0 - w_lru,
            lr: if learn { 0.45 } else { 0.0 },
            dr: 0.005f64.powf(1.0 / ctx.capacity.max(1) as f64),
            rng: Xoshiro256PlusPlus::seed_from_u64(ctx.seed),
            sieve: sieve.then(|| SieveHand::new(ctx.n_objects)),
        }
    }

    /// Regret: the expert whose eviction was a mistake loses weight (libCacheSim's update).
    fn penalise(&mut self, lru_erred: bool, t: u64) {
        if self.lr == 0.0 {
            return;
        }
        let r = self.dr.powf(t as f64);
        let (bad, good) =
            if lru_erred { (self.w_lru, self.w_lfu) } else { (self.w_lfu, self.w_lru) };
        let bad = bad * (-self.lr * r).exp() + 1e-10;
        let s = bad + good + 2e-10;
        let (bad, good) = (bad / s, (good + 1e-10) / s);
        if lru_erred {
            (self.w_lru, self.w_lfu) = (bad, good);
        } else {
            (self.w_lfu, self.w_lru) = (bad, good);
        }
    }

    /// Adds an evicted id to its expert's ghost list, trimming the list to half the cache.
    fn add_ghost(&mut self, id: u32, tag: u8) {
        let size = self.size[id as usize] as u64;
        let list = if tag == GHOST_LRU { &mut self.ghost_lru } else { &mut self.ghost_lfu };
        self.recency.push_front(list, id, size);
        self.ghost[id as usize] = tag;
        self.evicted_at[id as usize] = self.now;
        while list.bytes > self.cap / 2 && list.back != NIL {
            let old = list.back;
            let s = self.size[old as usize] as u64;
            self.recency.unlink(list, old, s);
            self.ghost[old as usize] = NOT_GHOST;
        }
    }
}

impl Policy for LeCaR {
    fn name(&self) -> String {
        if self.sieve.is_some() { "LeCaR-SIEVE" } else { "LeCaR" }.into()
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.used
    }
    fn len(&self) -> usize {
        self.len
    }
    fn lookup(&mut self, req: &Req) -> bool {
        self.now += 1;
        let i = req.id as usize;
        if self.lfu.freq(req.id) == 0 {
            let tag = self.ghost[i];
            if tag != NOT_GHOST {
                let t = self.now - self.evicted_at[i];
                self.penalise(tag == GHOST_LRU, t);
                let size = self.size[i] as u64;
                let list = if tag == GHOST_LRU { &mut self.ghost_lru } else { &mut self.ghost_lfu };
                self.recency.unlink(list, req.id, size);
                self.ghost[i] = NOT_GHOST;
            }
            return false;
        }
        let size = self.size[i] as u64;
        if let Some(h) = &mut self.sieve {
            h.visit(req.id);
        } else {
            self.recency.unlink(&mut self.lru, req.id, size);
            self.recency.push_front(&mut self.lru, req.id, size);
        }
        self.lfu.bump(req.id);
        true
    }
    fn evict(&mut self, _req: &Req) {
        if self.len == 0 {
            return;
        }
        let lru_cand = match &mut self.sieve {
            Some(h) => h.candidate(&self.recency, &self.lru),
            None => self.lru.back,
        };
        let lfu_cand = self.lfu.min_front();
        let (victim, tag) = if lru_cand == lfu_cand {
            (lru_cand, NOT_GHOST)
        } else if (self.rng.random::<u64>() % 100) as f64 / 100.0 < self.w_lru {
            (lru_cand, GHOST_LRU)
        } else {
            (lfu_cand, GHOST_LFU)
        };
        let i = victim as usize;
        let size = self.size[i] as u64;
        if let Some(h) = &mut self.sieve {
            h.leaving(&self.recency, victim);
        }
        self.recency.unlink(&mut self.lru, victim, size);
        self.lfu.remove(victim);
        self.used -= size;
        self.len -= 1;
        if tag != NOT_GHOST {
            self.add_ghost(victim, tag);
        }
    }
    fn insert(&mut self, req: &Req) {
        let i = req.id as usize;
        self.size[i] = req.size;
        self.recency.push_front(&mut self.lru, req.id, req.size as u64);
        if let Some(h) = &mut self.sieve {
            h.joined(req.id);
        }
        self.lfu.insert(req.id);
        self.used += req.size as u64;
        self.len += 1;
    }
    fn debug_state(&self) -> String {
        format!(
            "w_lru={:.6} w_lfu={:.6} ghosts lru={} lfu={}",
            self.w_lru, self.w_lfu, self.ghost_lru.len, self.ghost_lfu.len
        )
    }
    fn validate(&self) -> Result<(), String> {
        if self.lru.len != self.len || self.lru.bytes != self.used || self.lfu.len() != self.len {
            return Err(format!(
                "LeCaR: LRU list holds {} / {} B, LFU lists {}, len {} / {} B",
                self.lru.len,
                self.lru.bytes,
                self.lfu.len(),
                self.len,
                self.used
            ));
        }
        self.lfu.validate().map_err(|e| format!("LeCaR: {e}"))?;
        if let Some(h) = &self.sieve {
            if h.hand() != NIL && self.lfu.freq(h.hand()) == 0 {
                return Err(format!("LeCaR-SIEVE: hand {} is not resident", h.hand()));
            }
        }
        for (tag, e) in [(GHOST_LRU, &self.ghost_lru), (GHOST_LFU, &self.ghost_lfu)] {
            if e.bytes > self.cap / 2 {
                return Err(format!(
                    "LeCaR: ghost list {tag} holds {} B > half the cache",
                    e.bytes
                ));
            }
            for id in self.recency.ids(e) {
                if self.ghost[id as usize] != tag || self.lfu.freq(id) != 0 {
                    return Err(format!(
                        "LeCaR: id {id} on ghost list {tag} is tagged or resident"
                    ));
                }
            }
        }
        if (self.w_lru + self.w_lfu - 1.0).abs() > 1e-6 {
            return Err(format!("LeCaR: weights {} + {} != 1", self.w_lru, self.w_lfu));
        }
        Ok(())
    }
}

//! LIRS (Jiang and Zhang, "LIRS: An Efficient Low Inter-reference Recency Set Replacement
//! Policy", SIGMETRICS'02), as libCacheSim's `cache/eviction/LIRS.c` implements it.
//!
//! ```text
//! S: the LIRS stack (LRU order) of LIR blocks, resident HIR blocks and non-resident HIR blocks
//! Q: the LRU list of resident HIR blocks (1 % of the cache, at least 1)
//! NH: the LRU list of non-resident HIR blocks (to bound S at twice the cache)
//! any request: move the block to the top of S (if in S) and of Q (if in Q)
//! hit LIR:            prune S (drop HIR blocks from its bottom until a LIR block)
//! hit HIR in S:       it becomes LIR (leaves Q); demote LIR blocks from S's bottom to Q as needed
//! hit HIR not in S:   push it onto S (stays HIR, in Q)
//! miss, block in S (non-resident HIR): make room (LIR demotions, HIR evictions), it becomes LIR
//! miss, new block:    LIR while the LIR set has room, else a resident HIR (in S and Q)
//! evicting a HIR:     Q's LRU block leaves the cache; if it is in S it becomes non-resident (NH)
//! demoting a LIR:     S's bottom block leaves S and joins Q as a resident HIR; prune S
//! after each request: while S holds more than twice the cache, drop NH's LRU block from S
//! ```
//!
//! The SIEVE paper found bugs in two public LIRS implementations; this one reproduces
//! libCacheSim's figures exactly (`tests/reference.rs`), including its unsigned 64-bit
//! counters, which wrap when a demoted "LIR" block at the bottom of S was in fact HIR (the
//! comparisons then behave as in C). Sizes are bytes in byte mode.

use crate::lists::{Ends, Links, NIL};
use crate::policy::{Policy, PolicyCtx, Req};

#[derive(Debug, Clone, Copy, Default)]
struct Meta {
    in_s: bool,
    s_lir: bool,
    s_resident: bool,
    in_q: bool,
    in_nh: bool,
    s_size: u32,
    q_size: u32,
}

/// LIRS.
#[derive(Debug)]
pub struct Lirs {
    cap: u64,
    hirs_limit: u64,
    lirs_limit: u64,
    hirs_count: u64,
    lirs_count: u64,
    /// libCacheSim's `occupied_byte` (signed; LIRS adjusts it by hand).
    occupied: i64,
    /// libCacheSim's `n_obj` (signed: like `occupied`, the quirky demotion of a block that
    /// was never counted can take it below the true count, even below zero on tiny caches).
    len: i64,
    /// Top (MRU) at the front.
    s: Ends,
    q: Ends,
    nh: Ends,
    s_links: Links,
    q_links: Links,
    nh_links: Links,
    meta: Vec<Meta>,
}

impl Lirs {
    /// A LIRS cache whose HIR part is `hir` of the cache (libCacheSim: 0.01, at least 1).
    pub fn new(ctx: &PolicyCtx, hir: f64) -> Self {
        let cap = ctx.capacity;
        let hirs_limit = ((hir * cap as f64) as u64).max(1);
        let n = ctx.n_objects;
        Lirs {
            cap,
            hirs_limit,
            lirs_limit: cap.saturating_sub(hirs_limit),
            hirs_count: 0,
            lirs_count: 0,
            occupied: 0,
            len: 0,
            s: Ends::default(),
            q: Ends::default(),
            nh: Ends::default(),
            s_links: Links::new(n),
            q_links: Links::new(n),
            nh_links: Links::new(n),
            meta: vec![Meta::default(); n as usize],
        }
    }

    fn s_push(&mut self, id: u32, size: u32, lir: bool) {
        let m = &mut self.meta[id as usize];
        m.in_s = true;
        m.s_lir = lir;
        m.s_resident = true;
        m.s_size = size;
        self.s_links.push_front(&mut self.s, id, size as u64);
    }

    fn s_remove(&mut self, id: u32) {
        let size = self.meta[id as usize].s_size as u64;
        self.s_links.unlink(&mut self.s, id, size);
        self.meta[id as usize].in_s = false;
    }

    fn q_push(&mut self, id: u32, size: u32) {
        let m = &mut self.meta[id as usize];
        m.in_q = true;
        m.q_size = size;
        self.q_links.push_front(&mut self.q, id, size as u64);
    }

    fn q_remove(&mut self, id: u32) {
        let size = self.meta[id as usize].q_size as u64;
        self.q_links.unlink(&mut self.q, id, size);
        self.meta[id as usize].in_q = false;
    }

    fn nh_remove(&mut self, id: u32) {
        if self.meta[id as usize].in_nh {
            self.nh_links.unlink(&mut self.nh, id, 0);
            self.meta[id as usize].in_nh = false;
        }
    }

    fn nh_push(&mut self, id: u32) {
        if self.meta[id as usize].in_nh {
            self.nh_links.unlink(&mut self.nh, id, 0);
        }
        self.nh_links.push_front(&mut self.nh, id, 0);
        self.meta[id as usize].in_nh = true;
    }

    /// Drops HIR blocks from the bottom of S until a LIR block (never the top block).
    fn prune(&mut self) {
        let mut t = self.s.back;
        while t != NIL && t != self.s.front {
            let m = self.meta[t as usize];
            if m.s_lir {
                break;
            }
            if !m.s_resident {
                self.nh_remove(t);
            }
            self.s_remove(t);
            t = self.s.back;
        }
    }

    fn evict_hir(&mut self) {
        let id = self.q.back;
        if id == NIL {
            return;
        }
        let size = self.meta[id as usize].q_size as u64;
        self.hirs_count = self.hirs_count.wrapping_sub(size);
        self.q_remove(id);
        if self.meta[id as usize].in_s {
            self.meta[id as usize].s_resident = false;
            self.nh_push(id);
        }
        self.occupied -= (size) as i64;
        self.len -= 1;
    }

    fn evict_lir(&mut self) {
        let id = self.s.back;
        if id == NIL {
            return;
        }
        let size = self.meta[id as usize].s_size;
        self.lirs_count = self.lirs_count.wrapping_sub(size as u64);
        self.s_remove(id);
        self.occupied -= (size as u64) as i64;
        self.len -= 1;
        if size as u64 <= self.hirs_limit {
            while self.hirs_count.wrapping_add(size as u64) > self.hirs_limit && self.q.len > 0 {
                self.evict_hir();
            }
            self.q_push(id, size);
            self.hirs_count = self.hirs_count.wrapping_add(size as u64);
            self.occupied += (size as u64) as i64;
            self.len += 1;
        }
        self.prune();
    }

    fn limit_stack(&mut self) {
        while self.s.bytes > 2 * self.cap {
            let id = self.nh.back;
            if id == NIL {
                break;
            }
            if self.meta[id as usize].in_s {
                self.s_remove(id);
            }
            self.nh_remove(id);
        }
    }

    fn find(&mut self, id: u32) -> bool {
        let m = self.meta[id as usize];
        if m.in_s {
            let s = m.s_size as u64;
            self.s_links.unlink(&mut self.s, id, s);
            self.s_links.push_front(&mut self.s, id, s);
        }
        if m.in_q {
            let s = m.q_size as u64;
            self.q_links.unlink(&mut self.q, id, s);
            self.q_links.push_front(&mut self.q, id, s);
        }
        if m.in_s {
            if m.s_lir {
                self.prune();
                return true;
            }
            if !m.s_resident {
                return false;
            }
            // hit on a resident HIR block in S: it becomes LIR
            if m.in_q {
                self.hirs_count = self.hirs_count.wrapping_sub(m.q_size as u64);
                self.q_remove(id);
                self.occupied -= (m.q_size as u64) as i64;
                self.len -= 1;
            }
            while self.lirs_count.wrapping_add(m.s_size as u64) > self.lirs_limit && self.s.len > 0
            {
                self.evict_lir();
            }
            let mm = &mut self.meta[id as usize];
            mm.s_lir = true;
            self.lirs_count = self.lirs_count.wrapping_add(mm.s_size as u64);
            self.occupied += (mm.s_size as u64) as i64;
            self.len += 1;
            // evict_lir may have removed the block from S; libCacheSim still counts it as LIR
            return true;
        }
        if m.in_q {
            // hit on a resident HIR block not in S
            while self.lirs_count.wrapping_add(m.q_size as u64) > self.lirs_limit && self.s.len > 0
            {
                self.evict_lir();
            }
            self.s_push(id, m.q_size, false);
            return true;
        }
        false
    }
}

impl Policy for Lirs {
    fn name(&self) -> String {
        "LIRS".into()
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.occupied.max(0) as u64
    }
    fn len(&self) -> usize {
        self.len.max(0) as usize
    }
    fn access(&mut self, req: &Req) -> bool {
        let hit = self.find(req.id);
        if !hit && self.can_insert_now(req) {
            // libCacheSim loops until the object fits; demoting a LIR block frees nothing by
            // itself (it moves to Q), so progress is any change of state. Stop (instead of
            // spinning, as the C code would) only if a full round changes nothing.
            while self.occupied + req.size as i64 > self.cap as i64 {
                let before =
                    (self.occupied, self.lirs_count, self.hirs_count, self.s.len, self.q.len);
                self.evict(req);
                if before
                    == (self.occupied, self.lirs_count, self.hirs_count, self.s.len, self.q.len)
                {
                    break;
                }
            }
            self.insert(req);
        }
        self.limit_stack();
        hit
    }
    fn lookup(&mut self, req: &Req) -> bool {
        self.find(req.id)
    }
    fn evict(&mut self, req: &Req) {
        let m = self.meta[req.id as usize];
        if m.in_s && !m.s_lir && !m.s_resident {
            while self.hirs_count >= self.hirs_limit && self.q.len > 0 {
                self.evict_hir();
            }
            self.evict_lir();
        } else if !m.in_s
            && !m.in_q
            && self.lirs_count.wrapping_add(req.size as u64) > self.lirs_limit
            && self.hirs_count.wrapping_add(req.size as u64) > self.hirs_limit
        {
            self.evict_hir();
        }
    }
    fn insert(&mut self, req: &Req) {
        let id = req.id;
        let m = self.meta[id as usize];
        if m.in_s && !m.s_lir && !m.s_resident {
            let mm = &mut self.meta[id as usize];
            mm.s_lir = true;
            mm.s_resident = true;
            self.lirs_count = self.lirs_count.wrapping_add(m.s_size as u64);
            self.occupied += (m.s_size as u64) as i64;
            self.len += 1;
        } else if !m.in_s && !m.in_q {
            if self.lirs_count.wrapping_add(req.size as u64) <= self.lirs_limit {
                self.s_push(id, req.size, true);
                self.lirs_count = self.lirs_count.wrapping_add(req.size as u64);
            } else {
                self.s_push(id, req.size, false);
                self.q_push(id, req.size);
                self.hirs_count = self.hirs_count.wrapping_add(req.size as u64);
            }
            self.occupied += (req.size as u64) as i64;
            self.len += 1;
        }
    }
    fn debug_state(&self) -> String {
        format!(
            "{} {} {} {} {} {}",
            self.lirs_count, self.hirs_count, self.occupied, self.s.len, self.q.len, self.nh.len
        )
    }
    fn validate(&self) -> Result<(), String> {
        for (name, e, l) in [
            ("S", &self.s, &self.s_links),
            ("Q", &self.q, &self.q_links),
            ("NH", &self.nh, &self.nh_links),
        ] {
            if l.ids(e).len() != e.len {
                return Err(format!("LIRS: {name} length mismatch"));
            }
        }
        Ok(())
    }
}

impl Lirs {
    /// libCacheSim's `LIRS_can_insert` (which also makes room as a side effect).
    fn can_insert_now(&mut self, req: &Req) -> bool {
        if req.size as u64 > self.cap {
            return false;
        }
        let m = self.meta[req.id as usize];
        if m.in_s && !m.s_lir && !m.s_resident {
            while self.lirs_count.wrapping_add(m.s_size as u64) > self.lirs_limit && self.s.len > 0
            {
                self.evict_lir();
            }
            self.nh_remove(req.id);
            return true;
        }
        if !m.in_s && !m.in_q {
            let s = req.size as u64;
            if s > self.lirs_limit || s > self.hirs_limit {
                return false;
            }
            if self.lirs_count.wrapping_add(s) > self.lirs_limit
                && self.hirs_count.wrapping_add(s) > self.hirs_limit
            {
                while self.hirs_count.wrapping_add(s) > self.hirs_limit && self.q.len > 0 {
                    self.evict_hir();
                }
            }
            return true;
        }
        false
    }
}

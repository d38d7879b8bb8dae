//! Multi-step LRU and in-vector LRU (Inoue, "Multi-step LRU: SIMD-based Cache Replacement for
//! Lower Overhead and Higher Precision", IEEE BigData 2021, §III).
//!
//! A set-associative cache: the key's hash picks a set of M vectors of P slots each (the paper
//! uses P = 4, one 256-bit register of 64-bit keys, and M = 2). Inside a vector, slot 0 is the
//! MRU position and slot P−1 the LRU one (in-vector LRU, Wang et al.).
//!
//! ```text
//! hit in vector v at slot i > 0:  move the item to slot 0 of v (the others shift down)
//! hit at slot 0 of vector v > 0:  swap it with the LRU item of vector v−1 (an "upgrade")
//! hit at slot 0 of vector 0:      nothing
//! miss: if a vector of the set has an empty slot, put the item at the MRU slot of the first
//!       such vector (we read §III.A's "just put the new item there" as in-vector LRU's put into
//!       the free LRU slot, which rotates it to the MRU position); else evict the LRU item of
//!       the LAST vector and put the new item at that vector's MRU slot
//! ```
//!
//! So a new item needs 2M−1 hits to reach the set's overall MRU slot. With M = 1 this is plain
//! in-vector LRU (a P-way set-associative LRU). Each entry takes one slot whatever its size: the
//! capacity is a count, and `floor(capacity / (M·P))` sets are used (at least one). The set is
//! chosen by a 64-bit mix of the key (the paper uses MurmurHash3); hits are counted per vector
//! for the paper's Fig. 12 breakdown.

use crate::policy::{Policy, PolicyCtx, Req};
use crate::SimError;

const NIL: u32 = u32::MAX;

/// Multi-step LRU (in-vector LRU when `m == 1`).
#[derive(Debug)]
pub struct MultiStep {
    p: usize,
    m: usize,
    sets: u64,
    /// `sets × m × p` slots of ids (NIL = empty); vector `v` of set `s` starts at
    /// `(s·m + v)·p`, filled from slot 0.
    slots: Vec<u32>,
    /// Slot index of each resident id, or NIL.
    at: Vec<u32>,
    len: usize,
    /// Hits per vector position.
    pub hits_by_vector: Vec<u64>,
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

impl MultiStep {
    /// `p` items per vector, `m` vectors per set; an error naming the capacity if its slots
    /// (4 bytes each, allocated whole) cannot be had.
    pub fn new(ctx: &PolicyCtx, p: usize, m: usize) -> Result<Self, SimError> {
        let sets = (ctx.capacity / (p * m) as u64).max(1);
        let too_large = || {
            SimError::Size(format!(
                "multi-step LRU of capacity {}: its {} × {m} × {p} slots do not fit in memory",
                ctx.capacity, sets
            ))
        };
        let n =
            usize::try_from(sets).ok().and_then(|s| s.checked_mul(m * p)).ok_or_else(too_large)?;
        let mut slots = Vec::new();
        slots.try_reserve_exact(n).map_err(|_| too_large())?;
        slots.resize(n, NIL);
        Ok(MultiStep {
            p,
            m,
            sets,
            slots,
            at: vec![NIL; ctx.n_objects as usize],
            len: 0,
            hits_by_vector: vec![0; m],
        })
    }

    fn place(&mut self, slot: usize, id: u32) {
        self.slots[slot] = id;
        if id != NIL {
            self.at[id as usize] = slot as u32;
        }
    }

    /// Moves slot `i` of the vector starting at `base` to slot 0 (others shift towards LRU).
    fn move_to_mru(&mut self, base: usize, i: usize) {
        let id = self.slots[base + i];
        for j in (0..i).rev() {
            let moved = self.slots[base + j];
            self.place(base + j + 1, moved);
        }
        self.place(base, id);
    }
}

impl Policy for MultiStep {
    fn name(&self) -> String {
        if self.m == 1 {
            format!("InVectorLRU(P={})", self.p)
        } else {
            format!("MultiStepLRU(P={},M={})", self.p, self.m)
        }
    }
    fn capacity(&self) -> u64 {
        self.sets * (self.m * self.p) as u64
    }
    fn occupied(&self) -> u64 {
        self.len as u64
    }
    fn len(&self) -> usize {
        self.len
    }
    fn access(&mut self, req: &Req) -> bool {
        if self.lookup(req) {
            return true;
        }
        self.insert(req);
        false
    }
    fn lookup(&mut self, req: &Req) -> bool {
        let slot = self.at[req.id as usize];
        if slot == NIL {
            return false;
        }
        let slot = slot as usize;
        let (p, m) = (self.p, self.m);
        let set_base = slot / (m * p) * (m * p);
        let v = (slot - set_base) / p;
        let i = slot % p;
        self.hits_by_vector[v] += 1;
        let base = set_base + v * p;
        if i > 0 {
            self.move_to_mru(base, i);
        } else if v > 0 {
            // upgrade: swap with the LRU item of the previous vector
            let prev = set_base + (v - 1) * p;
            let last = (0..p).rev().find(|&j| self.slots[prev + j] != NIL).unwrap_or(0);
            let other = self.slots[prev + last];
            let me = self.slots[slot];
            if other == NIL {
                self.place(slot, NIL);
                self.place(prev + last, me);
            } else {
                self.place(prev + last, me);
                self.place(slot, other);
            }
        }
        true
    }
    fn evict(&mut self, _req: &Req) {}
    fn insert(&mut self, req: &Req) {
        let (p, m) = (self.p, self.m);
        let set = (mix(req.key) % self.sets) as usize;
        let set_base = set * m * p;
        let target = (0..m).find(|&v| self.slots[set_base + v * p + p - 1] == NIL);
        let base = match target {
            Some(v) => {
                self.len += 1;
                set_base + v * p
            }
            None => {
                let base = set_base + (m - 1) * p;
                let victim = self.slots[base + p - 1];
                self.at[victim as usize] = NIL;
                self.slots[base + p - 1] = NIL;
                base
            }
        };
        // the free slot is the first empty one; rotate it to the MRU position
        let free = (0..p).find(|&j| self.slots[base + j] == NIL).unwrap_or(p - 1);
        self.slots[base + free] = req.id;
        self.at[req.id as usize] = (base + free) as u32;
        self.move_to_mru(base, free);
    }
    fn debug_state(&self) -> String {
        let total: u64 = self.hits_by_vector.iter().sum();
        self.hits_by_vector
            .iter()
            .enumerate()
            .map(|(v, h)| format!("vector{}={:.4}", v + 1, *h as f64 / total.max(1) as f64))
            .collect::<Vec<_>>()
            .join(" ")
    }
    fn validate(&self) -> Result<(), String> {
        let mut n = 0;
        for (slot, &id) in self.slots.iter().enumerate() {
            if id != NIL {
                n += 1;
                if self.at[id as usize] as usize != slot {
                    return Err(format!(
                        "multi-step: id {id} in slot {slot} records {}",
                        self.at[id as usize]
                    ));
                }
            }
        }
        for v in 0..self.slots.len() / self.p {
            let vec = &self.slots[v * self.p..(v + 1) * self.p];
            if let Some(first_empty) = vec.iter().position(|&x| x == NIL) {
                if vec[first_empty..].iter().any(|&x| x != NIL) {
                    return Err("multi-step: a vector has a hole before an item".into());
                }
            }
        }
        if n != self.len {
            return Err(format!("multi-step: {n} items, len {}", self.len));
        }
        Ok(())
    }
}

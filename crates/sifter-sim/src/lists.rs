//! Several intrusive doubly linked lists over the same dense ids: one `Links` array holds every
//! id's neighbours; each list is just its `Ends`. An id is on at most one list at a time.
//! `front` and `back` are positions only; each policy says which end is new.

/// Null link.
pub const NIL: u32 = u32::MAX;

/// The two ends of one list, its length and its bytes.
#[derive(Debug, Clone, Copy)]
pub struct Ends {
    /// First id, or NIL.
    pub front: u32,
    /// Last id, or NIL.
    pub back: u32,
    /// Ids on the list.
    pub len: usize,
    /// Sum of the sizes recorded with `push_*`.
    pub bytes: u64,
}

impl Default for Ends {
    fn default() -> Self {
        Ends { front: NIL, back: NIL, len: 0, bytes: 0 }
    }
}

/// Neighbour links of every id.
#[derive(Debug, Clone)]
pub struct Links {
    prev: Vec<u32>,
    next: Vec<u32>,
}

impl Links {
    /// Links for ids `0..n`.
    pub fn new(n: u32) -> Self {
        Links { prev: vec![NIL; n as usize], next: vec![NIL; n as usize] }
    }

    /// The id after `id` (towards the back).
    #[inline]
    pub fn next(&self, id: u32) -> u32 {
        self.next[id as usize]
    }

    /// The id before `id` (towards the front).
    #[inline]
    pub fn prev(&self, id: u32) -> u32 {
        self.prev[id as usize]
    }

    /// Puts `id` at the front of `e`, counting `size` bytes.
    #[inline]
    pub fn push_front(&mut self, e: &mut Ends, id: u32, size: u64) {
        self.prev[id as usize] = NIL;
        self.next[id as usize] = e.front;
        if e.front != NIL {
            self.prev[e.front as usize] = id;
        } else {
            e.back = id;
        }
        e.front = id;
        e.len += 1;
        e.bytes += size;
    }

    /// Puts `id` at the back of `e`, counting `size` bytes.
    #[inline]
    pub fn push_back(&mut self, e: &mut Ends, id: u32, size: u64) {
        self.next[id as usize] = NIL;
        self.prev[id as usize] = e.back;
        if e.back != NIL {
            self.next[e.back as usize] = id;
        } else {
            e.front = id;
        }
        e.back = id;
        e.len += 1;
        e.bytes += size;
    }

    /// Takes `id` (which is on `e`) off the list, uncounting `size` bytes.
    #[inline]
    pub fn unlink(&mut self, e: &mut Ends, id: u32, size: u64) {
        let (p, n) = (self.prev[id as usize], self.next[id as usize]);
        if p != NIL {
            self.next[p as usize] = n;
        } else {
            e.front = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        } else {
            e.back = p;
        }
        self.prev[id as usize] = NIL;
        self.next[id as usize] = NIL;
        e.len -= 1;
        e.bytes -= size;
    }

    /// Ids from front to back (validation).
    pub fn ids(&self, e: &Ends) -> Vec<u32> {
        let mut v = Vec::with_capacity(e.len);
        let mut c = e.front;
        while c != NIL && v.len() <= e.len {
            v.push(c);
            c = self.next[c as usize];
        }
        v
    }
}

/// SIEVE's selection over a list whose front is the new end, for policies that use SIEVE in
/// place of an LRU list (ARC-SIEVE, TwoQ-SIEVE): a hit sets the id's visited bit instead of
/// moving it; the victim is the first unvisited id found by the hand, which walks from the old
/// end (back) towards the new end (front), clearing visited bits and wrapping around, and then
/// rests on the id just newer than the victim. New ids join at the front, unvisited; ids that
/// leave the list other than through [`SieveHand::victim`] must be announced with
/// [`SieveHand::leaving`] first.
#[derive(Debug, Clone, Default)]
pub struct SieveHand {
    visited: Vec<bool>,
    hand: u32,
}

impl SieveHand {
    /// Bits for ids `0..n`; the hand starts at the old end.
    pub fn new(n: u32) -> Self {
        SieveHand { visited: vec![false; n as usize], hand: NIL }
    }

    /// Marks a hit.
    #[inline]
    pub fn visit(&mut self, id: u32) {
        self.visited[id as usize] = true;
    }

    /// Clears the bit of an id joining the list.
    #[inline]
    pub fn joined(&mut self, id: u32) {
        self.visited[id as usize] = false;
    }

    /// The id to evict from `e` (NIL if `e` is empty); the caller unlinks it.
    pub fn victim(&mut self, links: &Links, e: &Ends) -> u32 {
        let h = self.candidate(links, e);
        if h != NIL {
            self.leaving(links, h);
        }
        h
    }

    /// SIEVE's proposal without evicting (for LeCaR-SIEVE, whose other expert may win): walks
    /// the hand to the first unvisited id, clearing bits on the way, and rests on it.
    pub fn candidate(&mut self, links: &Links, e: &Ends) -> u32 {
        if e.len == 0 {
            return NIL;
        }
        let mut h = if self.hand == NIL { e.back } else { self.hand };
        while self.visited[h as usize] {
            self.visited[h as usize] = false;
            h = links.prev(h);
            if h == NIL {
                h = e.back;
            }
        }
        self.hand = h;
        h
    }

    /// Call before unlinking `id` from the list by other means: the hand moves off it.
    #[inline]
    pub fn leaving(&mut self, links: &Links, id: u32) {
        if self.hand == id {
            self.hand = links.prev(id);
        }
    }

    /// Where the hand rests (NIL: the old end).
    pub fn hand(&self) -> u32 {
        self.hand
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::sieve::Sieve;
    use crate::policy::{Policy, PolicyCtx, Req};

    /// A whole cache made of one list and a `SieveHand` is SIEVE: same hits as `Sieve` on a
    /// skewed pseudo-random trace, at several sizes.
    #[test]
    fn sieve_hand_over_one_list_is_sieve() {
        let n = 200u32;
        let mut x = 12345u64;
        let trace: Vec<u32> = (0..20_000)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let u = (x >> 33) as u32 % (n * n);
                n - 1 - (u as f64).sqrt() as u32 // density falls linearly with the id
            })
            .collect();
        for cap in [1usize, 2, 7, 50, 150] {
            let mut reference =
                Sieve::new(&PolicyCtx { capacity: cap as u64, n_objects: n, seed: 0 });
            let (mut links, mut list, mut hand) =
                (Links::new(n), Ends::default(), SieveHand::new(n));
            let mut resident = vec![false; n as usize];
            let (mut ours, mut theirs) = (0, 0);
            for &id in &trace {
                theirs += reference.access(&Req { id, key: id as u64, size: 1, next: 0 }) as u32;
                if resident[id as usize] {
                    hand.visit(id);
                    ours += 1;
                    continue;
                }
                if list.len == cap {
                    let v = hand.victim(&links, &list);
                    links.unlink(&mut list, v, 1);
                    resident[v as usize] = false;
                }
                links.push_front(&mut list, id, 1);
                hand.joined(id);
                resident[id as usize] = true;
            }
            assert_eq!(ours, theirs, "capacity {cap}");
            assert!(ours > 0 && ours < trace.len() as u32);
        }
    }
}

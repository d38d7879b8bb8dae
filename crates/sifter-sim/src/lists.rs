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

/// LFU's frequency lists over dense ids (libCacheSim's "freq nodes"), shared by LFU and LeCaR:
/// one list per frequency, each oldest first; the LFU victim is the front of the lowest
/// non-empty list. Lists live in a map keyed by frequency, so a very hot object costs one entry,
/// not one per frequency below its own.
#[derive(Debug, Clone)]
pub struct FreqLists {
    links: Links,
    lists: hashbrown::HashMap<u32, Ends>,
    /// Frequency of each id; 0 = not on any list.
    freq: Vec<u32>,
    /// At most the lowest non-empty frequency (advanced lazily by `min_front`).
    min: u32,
    max: u32,
    len: usize,
}

impl FreqLists {
    /// Lists for ids `0..n`.
    pub fn new(n: u32) -> Self {
        FreqLists {
            links: Links::new(n),
            lists: hashbrown::HashMap::new(),
            freq: vec![0; n as usize],
            min: 1,
            max: 1,
            len: 0,
        }
    }

    /// The id's frequency (0: not listed).
    #[inline]
    pub fn freq(&self, id: u32) -> u32 {
        self.freq[id as usize]
    }

    /// Ids listed.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no id is listed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn take(&mut self, f: u32) -> Ends {
        self.lists.remove(&f).unwrap_or_default()
    }

    fn put(&mut self, f: u32, e: Ends) {
        if e.len > 0 {
            self.lists.insert(f, e);
        }
    }

    /// Lists a new id at frequency 1 (behind the others there).
    pub fn insert(&mut self, id: u32) {
        let mut e = self.take(1);
        self.links.push_back(&mut e, id, 0);
        self.put(1, e);
        self.freq[id as usize] = 1;
        self.min = 1;
        self.len += 1;
    }

    /// Lists a new id at frequency `f` ≥ 1 (behind the others there) — CACHEUS's CR-LFU gives a
    /// returning object its remembered count.
    pub fn insert_at(&mut self, id: u32, f: u32) {
        let f = f.max(1);
        let mut e = self.take(f);
        self.links.push_back(&mut e, id, 0);
        self.put(f, e);
        self.freq[id as usize] = f;
        self.min = self.min.min(f);
        self.max = self.max.max(f);
        self.len += 1;
    }

    /// Moves a listed id from its frequency f to the back of f + 1.
    pub fn bump(&mut self, id: u32) {
        let f = self.freq[id as usize];
        let mut old = self.take(f);
        self.links.unlink(&mut old, id, 0);
        let emptied = old.len == 0;
        self.put(f, old);
        let mut new = self.take(f + 1);
        self.links.push_back(&mut new, id, 0);
        self.put(f + 1, new);
        self.freq[id as usize] = f + 1;
        self.max = self.max.max(f + 1);
        if emptied && self.min == f {
            self.min = f + 1;
        }
    }

    /// Unlists an id.
    pub fn remove(&mut self, id: u32) {
        let f = self.freq[id as usize];
        let mut e = self.take(f);
        self.links.unlink(&mut e, id, 0);
        self.put(f, e);
        self.freq[id as usize] = 0;
        self.len -= 1;
    }

    /// The LFU victim: the oldest id of the lowest frequency (NIL if none is listed).
    pub fn min_front(&mut self) -> u32 {
        if self.len == 0 {
            return NIL;
        }
        while self.min < self.max && !self.lists.contains_key(&self.min) {
            self.min += 1;
        }
        self.lists.get(&self.min).map_or(NIL, |e| e.front)
    }

    /// CR-LFU's victim: the newest id of the lowest frequency (NIL if none is listed).
    pub fn min_back(&mut self) -> u32 {
        if self.min_front() == NIL {
            return NIL;
        }
        self.lists.get(&self.min).map_or(NIL, |e| e.back)
    }

    /// Checks that every list holds ids of its frequency, the count, and that `min` is not
    /// above the lowest list.
    pub fn validate(&self) -> Result<(), String> {
        let mut n = 0;
        for (f, e) in &self.lists {
            let ids = self.links.ids(e);
            if ids.len() != e.len || e.len == 0 {
                return Err(format!("frequency list {f}: {} ids, len {}", ids.len(), e.len));
            }
            if let Some(id) = ids.iter().find(|&&id| self.freq[id as usize] != *f) {
                return Err(format!(
                    "id {id} on frequency list {f} has frequency {}",
                    self.freq[*id as usize]
                ));
            }
            n += e.len;
        }
        if n != self.len {
            return Err(format!("frequency lists hold {n}, len {}", self.len));
        }
        if self.lists.keys().any(|&f| f < self.min) {
            return Err(format!("min frequency {} above a non-empty list", self.min));
        }
        Ok(())
    }
}

/// The resident ids of a sampling policy (Random, Hyperbolic, LHD): a dense vector to draw
/// uniformly from, and each id's index in it; removal swaps the last id into the hole.
#[derive(Debug, Clone)]
pub struct SampleSet {
    ids: Vec<u32>,
    pos: Vec<u32>,
}

impl SampleSet {
    /// An empty set over ids `0..n`.
    pub fn new(n: u32) -> Self {
        SampleSet { ids: Vec::new(), pos: vec![NIL; n as usize] }
    }

    /// Ids held.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Whether `id` is held.
    #[inline]
    pub fn contains(&self, id: u32) -> bool {
        self.pos.get(id as usize).is_some_and(|&p| p != NIL)
    }

    /// The id at index `i` (< len), for uniform draws.
    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        self.ids[i]
    }

    /// The ids, in no order.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Adds `id` (not held).
    pub fn insert(&mut self, id: u32) {
        self.pos[id as usize] = self.ids.len() as u32;
        self.ids.push(id);
    }

    /// Removes `id` (held).
    pub fn remove(&mut self, id: u32) {
        let at = self.pos[id as usize] as usize;
        self.ids.swap_remove(at);
        if let Some(&moved) = self.ids.get(at) {
            self.pos[moved as usize] = at as u32;
        }
        self.pos[id as usize] = NIL;
    }

    /// Checks that every held id's index points back at it.
    pub fn validate(&self) -> Result<(), String> {
        for (i, &id) in self.ids.iter().enumerate() {
            if self.pos[id as usize] != i as u32 {
                return Err(format!("id {id} at {i} but its index says {}", self.pos[id as usize]));
            }
        }
        let held = self.pos.iter().filter(|&&p| p != NIL).count();
        if held != self.ids.len() {
            return Err(format!("{held} ids have an index, {} are held", self.ids.len()));
        }
        Ok(())
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

//! Key → dense id, the one hash map a simulation pass touches per request.
//!
//! A trace's keys arrive in no order and its objects number in the millions, so nearly every
//! lookup of a general-purpose map is a cache miss, and the loader waits on them one after the
//! other (a profile of the loader showed `hashbrown` probing at ~60 % of its time). This map
//! takes keys in **batches**: it first computes every key's home slot and loads it (independent
//! loads, which the CPU overlaps), then does the lookups and inserts, which find their lines in
//! cache. It is otherwise plain: open addressing with linear probing over one array of
//! `(key, id)` pairs packed in 12 bytes, at most three quarters full, doubled when needed; the
//! table may have any number of slots (a key's home is a multiply-shift of its hash, not a
//! mask), so [`IdMap::compact`] can fit it to its final size once a trace's first pass is done
//! (the map then lives on beside every simulation of the second pass). Ids are given in order of
//! first appearance, `0, 1, 2, ...`, exactly as the per-request loop did before.

/// An empty slot's id.
const EMPTY: u32 = u32::MAX;

/// Keys per batch (the loads of one batch are in flight together).
pub const BATCH: usize = 16;

/// A slot: a key and its id (12 bytes: the key unaligned every other slot, which costs
/// nothing on the loads x86-64 and AArch64 make).
#[derive(Debug, Clone, Copy)]
#[repr(C, packed(4))]
struct Slot {
    key: u64,
    id: u32,
}

const FREE: Slot = Slot { key: 0, id: EMPTY };

/// The map.
#[derive(Debug, Clone)]
pub struct IdMap {
    slots: Vec<Slot>,
    len: usize,
}

impl Default for IdMap {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

/// A 64-bit mix (MurmurHash3's finalizer): sequential block numbers spread like random keys.
#[inline]
fn mix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

impl IdMap {
    /// A map for about `n` keys before it grows.
    pub fn with_capacity(n: usize) -> Self {
        IdMap { slots: vec![FREE; Self::slots_for(n)], len: 0 }
    }

    /// Slots for `n` keys at most three quarters full.
    fn slots_for(n: usize) -> usize {
        n.max(8) * 4 / 3 + 1
    }

    /// Fits the table to the keys it holds (three quarters full at most); ids do not change.
    pub fn compact(&mut self) {
        let want = Self::slots_for(self.len);
        if want < self.slots.len() {
            self.rehash(want);
        }
    }

    /// Bytes of the table.
    pub fn bytes(&self) -> usize {
        self.slots.len() * size_of::<Slot>()
    }

    /// Keys stored (= the next id).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no key is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `len` keys would fill `slots` past three quarters (linear probing stays short
    /// below that: ~2.5 probes for a hit; the batch warm-up hides most of them).
    #[inline]
    fn over(len: usize, slots: usize) -> bool {
        len * 4 > slots * 3
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        ((mix(key) as u128 * self.slots.len() as u128) >> 64) as usize
    }

    #[inline]
    fn next(&self, i: usize) -> usize {
        if i + 1 == self.slots.len() {
            0
        } else {
            i + 1
        }
    }

    /// Loads the home slot of each key, so the lookups that follow hit the cache.
    #[inline]
    fn warm(&self, keys: &[u64]) {
        let mut acc = 0u64;
        for &k in keys {
            acc ^= self.slots[self.home(k)].key;
        }
        std::hint::black_box(acc);
    }

    /// The id of `key`, if stored.
    #[inline]
    pub fn get(&self, key: u64) -> Option<u32> {
        let mut i = self.home(key);
        loop {
            let Slot { key: k, id } = self.slots[i];
            if id == EMPTY {
                return None;
            }
            if k == key {
                return Some(id);
            }
            i = self.next(i);
        }
    }

    /// The id of `key`, storing it with the next id if new. Fails (`None`) only past
    /// `u32::MAX - 1` keys.
    #[inline]
    pub fn get_or_insert(&mut self, key: u64) -> Option<u32> {
        if Self::over(self.len + 1, self.slots.len()) {
            self.grow();
        }
        let mut i = self.home(key);
        loop {
            let Slot { key: k, id } = self.slots[i];
            if id == EMPTY {
                let id = u32::try_from(self.len).ok().filter(|&id| id < EMPTY)?;
                self.slots[i] = Slot { key, id };
                self.len += 1;
                return Some(id);
            }
            if k == key {
                return Some(id);
            }
            i = self.next(i);
        }
    }

    /// Maps a batch: `ids[i]` = the id of `keys[i]`, new keys getting the next ids in order.
    /// `None` past `u32::MAX - 1` keys (`ids` then partly filled).
    pub fn get_or_insert_batch(&mut self, keys: &[u64], ids: &mut [u32]) -> Option<()> {
        for (ks, is) in keys.chunks(BATCH).zip(ids.chunks_mut(BATCH)) {
            if Self::over(self.len + ks.len(), self.slots.len()) {
                self.grow();
            }
            self.warm(ks);
            for (k, id) in ks.iter().zip(is) {
                *id = self.get_or_insert(*k)?;
            }
        }
        Some(())
    }

    /// Looks a batch up: `ids[i]` = the id of `keys[i]`; `Err(i)` for the first key not stored.
    pub fn get_batch(&self, keys: &[u64], ids: &mut [u32]) -> Result<(), usize> {
        for (c, (ks, is)) in keys.chunks(BATCH).zip(ids.chunks_mut(BATCH)).enumerate() {
            self.warm(ks);
            for (j, (k, id)) in ks.iter().zip(is).enumerate() {
                *id = self.get(*k).ok_or(c * BATCH + j)?;
            }
        }
        Ok(())
    }

    fn grow(&mut self) {
        self.rehash(self.slots.len() * 2);
    }

    /// Moves every key into a table of `n` slots.
    fn rehash(&mut self, n: usize) {
        let old = std::mem::replace(&mut self.slots, vec![FREE; n]);
        for e in old {
            if e.id != EMPTY {
                let mut i = self.home(e.key);
                while self.slots[i].id != EMPTY {
                    i = self.next(i);
                }
                self.slots[i] = e;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn batches_match_a_reference_map(keys in proptest::collection::vec(0u64..300, 0..2000)) {
            let mut m = IdMap::with_capacity(0);
            let mut ids = vec![0; keys.len()];
            m.get_or_insert_batch(&keys, &mut ids).expect("ids");
            let mut reference = std::collections::HashMap::new();
            for (k, id) in keys.iter().zip(&ids) {
                let n = reference.len() as u32;
                prop_assert_eq!(*reference.entry(*k).or_insert(n), *id);
            }
            prop_assert_eq!(m.len(), reference.len());
            let mut again = vec![0; keys.len()];
            prop_assert_eq!(m.get_batch(&keys, &mut again), Ok(()));
            prop_assert_eq!(&again, &ids);
            prop_assert_eq!(m.get(1_000_000), None);
            // Compacted, the same ids.
            let before = m.bytes();
            m.compact();
            prop_assert!(m.bytes() <= before);
            let mut compacted = vec![0; keys.len()];
            prop_assert_eq!(m.get_batch(&keys, &mut compacted), Ok(()));
            prop_assert_eq!(&compacted, &ids);
            if !keys.is_empty() {
                let probe = [keys[0], 5_000];
                prop_assert_eq!(m.get_batch(&probe, &mut [0, 0]), Err(1));
            }
        }
    }
}

/// Densifies a trace block by block: the loader's and the streaming scan's one id assignment.
#[derive(Debug, Default)]
pub struct Densifier {
    map: IdMap,
    /// Sum over objects of the size of each object's first request.
    pub footprint_bytes: u64,
}

impl Densifier {
    /// Distinct objects so far.
    pub fn n_objects(&self) -> u32 {
        self.map.len() as u32
    }

    /// Appends the ids of `keys` (sizes `sizes`) to `ids`; `name` is for the error past
    /// `u32::MAX - 1` objects.
    pub fn map_block(
        &mut self,
        keys: &[u64],
        sizes: &[u32],
        ids: &mut Vec<u32>,
        name: &str,
    ) -> sifter_trace::Result<()> {
        let start = ids.len();
        ids.resize(start + keys.len(), 0);
        let mut next_new = self.map.len();
        if self.map.get_or_insert_batch(keys, &mut ids[start..]).is_none() {
            return Err(sifter_trace::TraceError::Spec(format!(
                "{name}: more than {} distinct objects: the simulator's object ids are 32-bit",
                u32::MAX - 1
            )));
        }
        // New ids first appear in increasing order.
        for (&id, &size) in ids[start..].iter().zip(sizes) {
            if id as usize == next_new {
                self.footprint_bytes += size as u64;
                next_new += 1;
            }
        }
        Ok(())
    }

    /// The map, for lookups of a later pass.
    pub fn into_map(self) -> IdMap {
        self.map
    }
}

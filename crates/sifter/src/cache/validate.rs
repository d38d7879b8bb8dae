//! `validate()`: every invariant of the arena, the index, the tokens and the policy,
//! recomputed (tests call it after each phase).

use super::*;

impl<K, V, S> Cache<K, V, S>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Send + Sync + 'static,
    S: BuildHasher,
{
    /// Checks every invariant; call only when no other thread is using the cache (tests).
    ///
    /// Checks: the index's pass-through counts; every indexed slot is LIVE, with its key's
    /// hash, and keys are unique; the policy holds every LIVE slot exactly once and otherwise
    /// only DEAD slots; every slot is exactly once in the index-or-policy, a free list, a
    /// limbo, or never used; tokens are conserved (free tokens + live weight = capacity).
    pub fn validate(&self) -> Result<(), String> {
        let _guard = self.pin();
        let hash_of = |s: u32| {
            // SAFETY: quiescent by contract; indexed slots are published.
            self.hash(unsafe { self.slot(s).key() })
        };
        self.index.validate(hash_of)?;
        let indexed = self.index.slots();
        let mut keys = HashSet::new();
        let mut live_w = 0u64;
        for &s in &indexed {
            let slot = self.slot(s);
            if slot.state.load(Ordering::Relaxed) != LIVE {
                return Err(format!("indexed slot {s} is not LIVE"));
            }
            // SAFETY: quiescent, published.
            let k = unsafe { slot.key() };
            let w = self.weight_of(s);
            if self.weigher.is_none() && slot.meta() != self.hash(k) as u32 {
                return Err(format!("slot {s} does not keep its key's hash"));
            }
            if !keys.insert(k) {
                return Err("two indexed slots have the same key".into());
            }
            live_w += w;
        }
        // Slots gathered for a batched enqueue (held by the policy, counted in its weights).
        let mut pending = Vec::new();
        for st in self.stripes.iter() {
            let l = st.lists();
            // Relaxed: quiescent by contract (the last store is visible).
            if st.pending.load(Ordering::Relaxed) != (l.pend_len > 0) {
                return Err(format!(
                    "a stripe's pending hint says {} for a chain of {}",
                    st.pending.load(Ordering::Relaxed),
                    l.pend_len
                ));
            }
            // Relaxed: as above; the lists have not changed since the unlock that stored it.
            if st.stocked.load(Ordering::Relaxed) != l.stocked() {
                return Err(format!(
                    "a stripe's stocked hint says {} for lists that {}",
                    st.stocked.load(Ordering::Relaxed),
                    if l.stocked() { "hold slots" } else { "are empty" }
                ));
            }
            let mut s = l.pend_first;
            for i in 0..l.pend_len {
                pending.push(s);
                if i + 1 < l.pend_len {
                    s = crate::raw::queue::slot(self.arena.next_word(s));
                }
            }
        }
        let mut held = match &self.structure {
            Structure::Queues(q) => q.items(&self.arena),
            Structure::Locked(l) => l.items(),
            Structure::S3(q) => {
                // Quiescent by contract; gathered and queued slots are published.
                let pending_w = pending.iter().map(|&s| self.weight_of(s)).sum();
                q.validate(&self.arena, pending_w, |s| self.weight_of(s))?;
                q.items(&self.arena)
            }
        }
        .map_err(|e| format!("{e} ({})", self.debug_structure()))?;
        held.extend_from_slice(&pending);
        let mut where_ = vec![0u8; self.arena.len()];
        for &s in &held {
            if where_[s as usize] != 0 {
                return Err(format!("slot {s} is held by the policy twice"));
            }
            where_[s as usize] = 1;
            let st = self.slot(s).state.load(Ordering::Relaxed);
            if st != LIVE && st != DEAD && st != HOLLOW {
                return Err(format!("the policy holds slot {s} in state {st}"));
            }
        }
        for &s in &indexed {
            if where_[s as usize] != 1 {
                return Err(format!("indexed slot {s} is not held by the policy"));
            }
        }
        if !matches!(self.structure, Structure::Locked(_)) {
            let dead = held
                .iter()
                .filter(|&&s| matches!(self.slot(s).state.load(Ordering::Relaxed), DEAD | HOLLOW))
                .count() as i64;
            if dead != self.garbage() {
                return Err(format!(
                    "the queues hold {dead} removed slots, but {} are counted",
                    self.garbage()
                ));
            }
        }
        let live_count = (0..self.arena.len())
            .filter(|&s| self.slot(s as u32).state.load(Ordering::Relaxed) == LIVE)
            .count();
        if live_count != indexed.len() {
            return Err(format!("{live_count} LIVE slots, {} indexed", indexed.len()));
        }
        // Slots with a hollow entry (see `raw/slot.rs`).
        let mut hollowing = HashSet::new();
        let fresh = self.fresh.load(Ordering::Relaxed).min(self.arena.base_len());
        // Slots ever handed out: the used part of the base array, and every grown chunk.
        let known = |s: usize| s < fresh || s >= self.arena.base_len();
        for st in self.stripes.iter() {
            let l = st.lists();
            let lists = l
                .free
                .iter()
                .chain(l.wait.iter())
                .chain(l.limbo.iter().flat_map(|(_, v)| v.iter()));
            if !l.hollow.is_empty() {
                return Err(format!("{} hollow entries collected, not processed", l.hollow.len()));
            }
            let mut hollow_entries = 0;
            for &e in lists {
                let s = e & !HOLLOW_ENTRY;
                let state = self.slot(s).state.load(Ordering::Relaxed);
                if e & HOLLOW_ENTRY != 0 {
                    // A removed slot whose contents wait: still queued (DEAD), or let go by
                    // its queue (TAKEN), when this entry is its only place.
                    hollow_entries += 1;
                    let ok = match state {
                        DEAD => where_[s as usize] == 1,
                        TAKEN => where_[s as usize] == 0,
                        _ => false,
                    };
                    if !ok || !known(s as usize) || !hollowing.insert(s) {
                        return Err(format!("hollow entry of slot {s} in state {state}"));
                    }
                    if state == TAKEN {
                        where_[s as usize] = 2;
                    }
                    continue;
                }
                if !known(s as usize) || where_[s as usize] != 0 {
                    return Err(format!("slot {s} is free or in limbo twice, or also held"));
                }
                where_[s as usize] = 2;
                if state != RETIRED && state != EMPTY {
                    return Err(format!("free or retired slot {s} is in state {state}"));
                }
            }
            if hollow_entries != l.hollow_entries {
                return Err(format!(
                    "{hollow_entries} hollow entries in limbo, {} counted",
                    l.hollow_entries
                ));
            }
        }
        if self.hollows {
            let unentered = held.iter().find(|&&s| {
                self.slot(s).state.load(Ordering::Relaxed) == DEAD && !hollowing.contains(&s)
            });
            if let Some(s) = unentered {
                return Err(format!(
                    "removed slot {s} is queued with its contents and no hollow entry"
                ));
            }
        }
        if let Some(s) = (0..self.arena.len()).find(|&s| known(s) && where_[s] == 0) {
            return Err(format!("slot {s} is lost: neither held, free nor in limbo"));
        }
        let free = self.free_tokens();
        if free + live_w != self.capacity() {
            return Err(format!(
                "tokens not conserved: {free} free + {live_w} live weight != capacity {}",
                self.capacity()
            ));
        }
        if self.weigher.is_some() && self.len() != indexed.len() {
            return Err(format!("len {} but {} entries indexed", self.len(), indexed.len()));
        }
        Ok(())
    }

    pub(super) fn debug_structure(&self) -> String {
        match &self.structure {
            Structure::Queues(q) => q.debug_state(),
            Structure::Locked(_) => "locked list".into(),
            Structure::S3(q) => q.debug_state(),
        }
    }
}

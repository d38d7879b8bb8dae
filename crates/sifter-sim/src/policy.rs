//! The policy interface of the simulator.
//!
//! A policy sees one request at a time through [`Policy::access`]. Most policies only implement
//! the three steps libCacheSim's `cache_get_base` drives — [`Policy::lookup`] (hit: update
//! metadata), [`Policy::evict`] (free space) and [`Policy::insert`] — and take the default
//! `access`:
//!
//! ```text
//! if lookup(req): hit
//! else if can_insert(req):               // an object larger than the cache is not stored
//!     while occupied + req.size > capacity: evict(req)
//!     insert(req)
//! ```
//!
//! Objects are identified by dense ids `0..n_objects` (see [`crate::trace::LoadedTrace`]), so a
//! policy keeps per-object state in arrays. In object mode every size is 1 and the capacity
//! is a count; in byte mode sizes are bytes. A cached object keeps the size it was inserted
//! with, whatever size later requests ask for (libCacheSim's rule).

/// One request as a policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Req {
    /// Dense object id, `< n_objects`.
    pub id: u32,
    /// Original 64-bit key (for policies that hash or sample by key).
    pub key: u64,
    /// Size (1 in object mode).
    pub size: u32,
    /// Position of the next request to this object, or [`crate::trace::NEVER`]; only filled
    /// for policies whose [`Policy::needs_next_access`] is true.
    pub next: u64,
}

/// What a policy is built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PolicyCtx {
    /// Capacity in objects (object mode) or bytes (byte mode).
    pub capacity: u64,
    /// Number of distinct objects in the trace (ids are below this).
    pub n_objects: u32,
    /// Seed for randomized policies.
    pub seed: u64,
}

/// A single-threaded eviction policy.
pub trait Policy: Send {
    /// Display name including non-default parameters, e.g. `GCLOCK-3`.
    fn name(&self) -> String;
    /// Capacity (objects or bytes).
    fn capacity(&self) -> u64;
    /// Space in use (objects or bytes).
    fn occupied(&self) -> u64;
    /// Objects resident.
    fn len(&self) -> usize;
    /// Whether nothing is resident.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// On a hit, updates the policy's metadata and returns true; on a miss returns false.
    fn lookup(&mut self, req: &Req) -> bool;
    /// Frees space (usually one object; may free nothing if it only reorganised, as S3-FIFO's
    /// small-queue promotion does — `access` calls it again).
    fn evict(&mut self, req: &Req);
    /// Inserts the missed object; space has been made.
    fn insert(&mut self, req: &Req);
    /// Whether the object may be stored at all.
    fn can_insert(&self, req: &Req) -> bool {
        req.size as u64 <= self.capacity()
    }
    /// Whether requests must carry next-access positions (Belady).
    fn needs_next_access(&self) -> bool {
        false
    }
    /// Processes one request; true on a hit.
    #[inline]
    fn access(&mut self, req: &Req) -> bool {
        if self.lookup(req) {
            return true;
        }
        if self.can_insert(req) {
            while self.occupied() + req.size as u64 > self.capacity() {
                self.evict(req);
            }
            self.insert(req);
        }
        false
    }
    /// The ids now cached, for content analyses (the SIEVE paper's ideal object ratio); None
    /// where a policy does not list them.
    fn resident(&self) -> Option<Vec<u32>> {
        None
    }
    /// Internal counters as text, for debugging a divergence from another simulator.
    fn debug_state(&self) -> String {
        String::new()
    }
    /// Checks internal invariants (for tests); returns a description of the first violation.
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

//! LHD, Least Hit Density (Beckmann, Chen and Cidon, NSDI'18): evict the object with the lowest
//! expected hits per unit of space-time, estimated online from the ages at which objects of its
//! class were hit or evicted.
//!
//! ```text
//! age      = (now − last access) >> shift            (now counts hits and insertions)
//! class    = ~log2(MAX_AGE / (last hit age + the one before))   (16 classes)
//! density  = hitDensity[class][age] / size  (+1 for an "explorer"; −∞ at the age cap)
//! hit:     hits[class][age] += 1, then remember this age as the last hit age
//! evict:   sample 8 (later 32) resident objects plus the 8 most recent admissions that looked
//!          like victims; evict the lowest density; evictions[class][age] += 1
//! every 2^20 accesses: decay the counts by 0.9 and recompute, for each class and age a,
//!          hitDensity[a] = Σ_{b ≥ a} hits[b] / Σ_{b ≥ a} Σ_{c ≥ b} (hits[c] + evictions[c])
//!          (at the 5th and 25th: re-pick `shift` so ages fit in MAX_AGE = 20,000)
//! before the first reconfiguration: hitDensity[class][a] = (class + 1) / (a + 1) (≈ GDSF)
//! explorers: 1 in 32 accesses, while their space is under 1 % of the cache and before the
//!          50th reconfiguration, marks the object as an explorer (never the victim).
//! ```
//!
//! Source: the authors' simulator as shipped in libCacheSim (`cache/eviction/LHD/lhd.cpp`,
//! `LHD_Interface.cpp`), with its constants and `f32` arithmetic; libCacheSim uses one
//! application class (id 1), so only its 16 classes are allocated here. Samples come from our
//! seeded generator, so figures agree statistically (within 0.01), not bit for bit.

use crate::lists::SampleSet;
use crate::policy::{Policy, PolicyCtx, Req};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const ABSENT: u32 = u32::MAX;
const HIT_AGE_CLASSES: usize = 16;
/// libCacheSim's application id (`DEFAULT_APP_ID % APP_CLASSES`): the classes used are
/// 16..32 of its 256, which matters for the initial densities.
const APP: usize = 1;
const MAX_AGE: usize = 20_000;
const ACCESSES_PER_RECONFIGURATION: u64 = 1 << 20;
const EWMA_DECAY: f32 = 0.9;
const EXPLORER_BUDGET_FRACTION: f32 = 0.01;
const EXPLORE_INVERSE_PROBABILITY: u64 = 32;
const AGE_COARSENING_ERROR_TOLERANCE: f32 = 0.01;

/// Hit and eviction counts by age, and the densities derived from them, of one class.
#[derive(Debug, Clone)]
struct Class {
    hits: Vec<f32>,
    evictions: Vec<f32>,
    density: Vec<f32>,
}

/// LHD.
#[derive(Debug)]
pub struct Lhd {
    cap: u64,
    used: u64,
    associativity: u32,
    resident: SampleSet,
    size: Vec<u32>,
    stamp: Vec<u64>,
    last_hit_age: Vec<u64>,
    last_last_hit_age: Vec<u64>,
    explorer: Vec<bool>,
    classes: Vec<Class>,
    now: u64,
    next_reconfiguration: u64,
    reconfigurations: u32,
    shift: u32,
    ewma_objects: f32,
    ewma_objects_mass: f32,
    recent: Vec<u32>,
    recent_head: usize,
    ewma_victim_density: f32,
    explorer_budget: i64,
    rng: Xoshiro256PlusPlus,
}

impl Lhd {
    /// An LHD cache sampling `associativity` objects per eviction once warmed up (8 before)
    /// and also considering the last `admissions` suspicious admissions.
    pub fn new(ctx: &PolicyCtx, associativity: u32, admissions: usize) -> Self {
        let n = ctx.n_objects as usize;
        let classes = (0..HIT_AGE_CLASSES)
            .map(|k| {
                let c = (APP * HIT_AGE_CLASSES + k) as f64;
                Class {
                    hits: vec![0.0; MAX_AGE],
                    evictions: vec![0.0; MAX_AGE],
                    density: (0..MAX_AGE).map(|a| ((c + 1.0) / (a as f64 + 1.0)) as f32).collect(),
                }
            })
            .collect();
        Lhd {
            cap: ctx.capacity,
            used: 0,
            associativity,
            resident: SampleSet::new(ctx.n_objects),
            size: vec![0; n],
            stamp: vec![0; n],
            last_hit_age: vec![0; n],
            last_last_hit_age: vec![0; n],
            explorer: vec![false; n],
            classes,
            now: 0,
            next_reconfiguration: ACCESSES_PER_RECONFIGURATION,
            reconfigurations: 0,
            shift: 10,
            ewma_objects: 0.0,
            ewma_objects_mass: 0.0,
            recent: vec![ABSENT; admissions],
            recent_head: 0,
            ewma_victim_density: 0.0,
            explorer_budget: (ctx.capacity as f32 * EXPLORER_BUDGET_FRACTION) as i64,
            rng: Xoshiro256PlusPlus::seed_from_u64(ctx.seed),
        }
    }

    /// ~log2(MAX_AGE / age): 15 for age 0, 0 for ages at or past MAX_AGE.
    fn hit_age_class(mut age: u64) -> usize {
        if age == 0 {
            return HIT_AGE_CLASSES - 1;
        }
        let mut log = 0;
        while age < MAX_AGE as u64 && log < HIT_AGE_CLASSES - 1 {
            age <<= 1;
            log += 1;
        }
        log
    }

    fn class_of(&self, id: usize) -> usize {
        Self::hit_age_class(self.last_hit_age[id] + self.last_last_hit_age[id])
    }

    /// Coarsened age, capped at MAX_AGE − 1.
    fn age(&self, id: usize) -> usize {
        let age = (self.now - self.stamp[id]) >> self.shift;
        (age as usize).min(MAX_AGE - 1)
    }

    fn hit_density(&self, id: usize) -> f32 {
        let age = self.age(id);
        if age == MAX_AGE - 1 {
            return f32::MIN;
        }
        let mut d = self.classes[self.class_of(id)].density[age] / self.size[id] as f32;
        if self.explorer[id] {
            d += 1.0;
        }
        d
    }

    /// Hit (`insert` false) or insertion: stamps the object and advances time.
    fn update(&mut self, id: usize, insert: bool) {
        if insert {
            self.last_last_hit_age[id] = MAX_AGE as u64;
            self.last_hit_age[id] = 0;
        } else {
            let age = self.age(id);
            let class = self.class_of(id);
            self.classes[class].hits[age] += 1.0;
            if self.explorer[id] {
                self.explorer_budget += self.size[id] as i64;
            }
            self.last_last_hit_age[id] = self.last_hit_age[id];
            self.last_hit_age[id] = age as u64;
        }
        self.stamp[id] = self.now;
        let explore = self.rng.random_range(0..EXPLORE_INVERSE_PROBABILITY) == 0;
        if explore && self.explorer_budget > 0 && self.reconfigurations < 50 {
            self.explorer[id] = true;
            self.explorer_budget -= self.size[id] as i64;
        } else {
            self.explorer[id] = false;
        }
        if insert
            && !explore
            && !self.recent.is_empty()
            && self.hit_density(id) < self.ewma_victim_density
        {
            let slot = self.recent_head % self.recent.len();
            self.recent[slot] = id as u32;
            self.recent_head += 1;
        }
        self.now += 1;
        self.next_reconfiguration -= 1;
        if self.next_reconfiguration == 0 {
            self.reconfigure();
            self.next_reconfiguration = ACCESSES_PER_RECONFIGURATION;
            self.reconfigurations += 1;
        }
    }

    fn reconfigure(&mut self) {
        for cl in &mut self.classes {
            for a in 0..MAX_AGE {
                cl.hits[a] *= EWMA_DECAY;
                cl.evictions[a] *= EWMA_DECAY;
            }
        }
        self.adapt_age_coarsening();
        for cl in &mut self.classes {
            let mut events = cl.hits[MAX_AGE - 1] + cl.evictions[MAX_AGE - 1];
            let mut hits = cl.hits[MAX_AGE - 1];
            let mut lifetime = events;
            for a in (0..MAX_AGE - 1).rev() {
                hits += cl.hits[a];
                events += cl.hits[a] + cl.evictions[a];
                lifetime += events;
                cl.density[a] = if events > 1e-5 { hits / lifetime } else { 0.0 };
            }
        }
    }

    fn adapt_age_coarsening(&mut self) {
        self.ewma_objects = self.ewma_objects * EWMA_DECAY + self.resident.len() as f32;
        self.ewma_objects_mass = self.ewma_objects_mass * EWMA_DECAY + 1.0;
        if self.reconfigurations != 5 && self.reconfigurations != 25 {
            return;
        }
        let objects = self.ewma_objects / self.ewma_objects_mass;
        let optimal = objects / (AGE_COARSENING_ERROR_TOLERANCE * MAX_AGE as f32);
        let mut log2 = 1u32;
        while ((1u64 << log2) as f32) < optimal {
            log2 += 1;
        }
        let delta = log2 as i32 - self.shift as i32;
        self.shift = log2;
        self.ewma_objects *= 8.0;
        self.ewma_objects_mass *= 8.0;
        for cl in &mut self.classes {
            for counts in [&mut cl.hits, &mut cl.evictions] {
                if delta < 0 {
                    // Stretch: ages beyond the new range pile into the last bucket.
                    let d = (-delta) as usize;
                    for a in (MAX_AGE >> d)..MAX_AGE - 1 {
                        counts[MAX_AGE - 1] += counts[a];
                    }
                    for a in (0..MAX_AGE - 1).rev() {
                        counts[a] = counts[a >> d] / (1u32 << d) as f32;
                    }
                } else if delta > 0 {
                    // Compress: 2^delta old buckets make one new one.
                    let d = delta as usize;
                    for a in 0..MAX_AGE >> d {
                        counts[a] = (0..1usize << d).map(|i| counts[(a << d) + i]).sum();
                    }
                    for c in counts.iter_mut().take(MAX_AGE - 1).skip(MAX_AGE >> d) {
                        *c = 0.0;
                    }
                }
            }
        }
    }

    fn is_resident(&self, id: u32) -> bool {
        id != ABSENT && self.resident.contains(id)
    }
}

impl Policy for Lhd {
    fn name(&self) -> String {
        "LHD".into()
    }
    fn capacity(&self) -> u64 {
        self.cap
    }
    fn occupied(&self) -> u64 {
        self.used
    }
    fn len(&self) -> usize {
        self.resident.len()
    }
    fn lookup(&mut self, req: &Req) -> bool {
        if !self.resident.contains(req.id) {
            return false;
        }
        self.update(req.id as usize, false);
        true
    }
    fn evict(&mut self, _req: &Req) {
        if self.resident.is_empty() {
            return;
        }
        let candidates = if self.reconfigurations > 50 { self.associativity } else { 8 };
        let (mut victim, mut victim_rank) = (ABSENT, f32::MAX);
        for _ in 0..candidates {
            let id = self.resident.get(self.rng.random_range(0..self.resident.len()));
            let rank = self.hit_density(id as usize);
            if rank < victim_rank {
                (victim, victim_rank) = (id, rank);
            }
        }
        for i in 0..self.recent.len() {
            let id = self.recent[i];
            if !self.is_resident(id) {
                continue;
            }
            let rank = self.hit_density(id as usize);
            if rank < victim_rank {
                (victim, victim_rank) = (id, rank);
            }
        }
        if victim == ABSENT {
            // Densities are finite, so a sample always wins; kept so eviction always progresses.
            victim = self.resident.get(0);
        }
        self.ewma_victim_density =
            EWMA_DECAY * self.ewma_victim_density + (1.0 - EWMA_DECAY) * victim_rank;
        let v = victim as usize;
        let age = self.age(v);
        let class = self.class_of(v);
        self.classes[class].evictions[age] += 1.0;
        if self.explorer[v] {
            self.explorer_budget += self.size[v] as i64;
        }
        self.resident.remove(victim);
        self.used -= self.size[v] as u64;
    }
    fn insert(&mut self, req: &Req) {
        let id = req.id as usize;
        self.resident.insert(req.id);
        self.size[id] = req.size;
        self.used += req.size as u64;
        self.update(id, true);
    }
    fn resident(&self) -> Option<Vec<u32>> {
        Some(self.resident.ids().to_vec())
    }
    fn validate(&self) -> Result<(), String> {
        let used: u64 = self.resident.ids().iter().map(|&id| self.size[id as usize] as u64).sum();
        if used != self.used {
            return Err(format!("occupied {} but resident sizes sum to {used}", self.used));
        }
        self.resident.validate()
    }
}

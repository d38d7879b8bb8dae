//! Policy registry: name → parameters (`key=value`) → constructor.
//!
//! A policy spec is `name` or `name(key=value,key=value)`, e.g. `gclock(bits=3)` or
//! `s3fifo(threshold=1)`. [`parse_policy_list`] splits `sieve,lru,s3fifo(small=0.2)` at the
//! commas outside parentheses. Adding a policy takes one file in `policies/` and one entry in
//! [`REGISTRY`].

use crate::policies::{
    arc, belady, blru, cacheus, clock, clockpro, fifo, gdsf, hyperbolic, lecar, lfu, lfuda, lhd,
    lirs, lru, lruk, mobius, multistep, problru, qdlp, random, s3fifo, sieve, slru, twoq, wtinylfu,
};
use crate::policy::{Policy, PolicyCtx};
use crate::runner::Simulate;
use crate::SimError;

/// A parsed policy spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicySpec {
    /// Registry name (lowercase).
    pub name: String,
    /// Parameters in the order given.
    pub params: Vec<(String, String)>,
}

impl std::fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.name)?;
        if !self.params.is_empty() {
            let p: Vec<String> = self.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            write!(f, "({})", p.join(","))?;
        }
        Ok(())
    }
}

/// A parameter a policy accepts.
#[derive(Debug)]
pub struct Param {
    /// Name.
    pub name: &'static str,
    /// Default value.
    pub default: &'static str,
    /// What it means.
    pub doc: &'static str,
}

type Ctor = fn(&Params<'_>, &PolicyCtx) -> Result<Box<dyn Simulate>, SimError>;

/// One registry entry.
#[derive(Debug)]
pub struct Entry {
    /// Name and aliases; the first is canonical.
    pub names: &'static [&'static str],
    /// One line.
    pub about: &'static str,
    /// Accepted parameters.
    pub params: &'static [Param],
    /// Constructor.
    ctor: Ctor,
}

/// Typed access to a spec's parameters, with defaults from the entry.
#[derive(Debug)]
pub struct Params<'a> {
    spec: &'a PolicySpec,
    entry: &'a Entry,
}

impl Params<'_> {
    fn raw(&self, name: &str) -> &str {
        self.spec
            .params
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .or_else(|| self.entry.params.iter().find(|p| p.name == name).map(|p| p.default))
            .unwrap_or("")
    }

    fn bad(&self, name: &str, what: &str) -> SimError {
        SimError::Policy(format!("{}: parameter {name}={}: {what}", self.spec.name, self.raw(name)))
    }

    /// A float parameter within `range`.
    pub fn f64(&self, name: &str, range: std::ops::RangeInclusive<f64>) -> Result<f64, SimError> {
        match self.raw(name).parse::<f64>() {
            Ok(v) if range.contains(&v) => Ok(v),
            _ => Err(self
                .bad(name, &format!("expected a number in {}..={}", range.start(), range.end()))),
        }
    }

    /// An integer parameter within `range`.
    pub fn u64(&self, name: &str, range: std::ops::RangeInclusive<u64>) -> Result<u64, SimError> {
        match self.raw(name).parse::<u64>() {
            Ok(v) if range.contains(&v) => Ok(v),
            _ => Err(self
                .bad(name, &format!("expected an integer in {}..={}", range.start(), range.end()))),
        }
    }

    /// A boolean parameter.
    pub fn bool(&self, name: &str) -> Result<bool, SimError> {
        match self.raw(name) {
            "true" | "1" | "yes" => Ok(true),
            "false" | "0" | "no" => Ok(false),
            _ => Err(self.bad(name, "expected true or false")),
        }
    }
}

fn boxed<P: Policy + 'static>(p: P) -> Result<Box<dyn Simulate>, SimError> {
    Ok(Box::new(p))
}

/// Every policy of the simulator.
pub static REGISTRY: &[Entry] = &[
    Entry {
        names: &["fifo"],
        about: "first in, first out",
        params: &[],
        ctor: |_, c| boxed(fifo::Fifo::new(c)),
    },
    Entry {
        names: &["lru"],
        about: "least recently used",
        params: &[],
        ctor: |_, c| boxed(lru::Lru::new(c)),
    },
    Entry {
        names: &["clock", "fifo-reinsertion", "second-chance"],
        about: "FIFO-Reinsertion with a 1-bit reference counter",
        params: &[],
        ctor: |_, c| boxed(clock::Clock::new(c, 1)),
    },
    Entry {
        names: &["clockpro", "clock-pro"],
        about: "CLOCK-Pro (ATC'05): hot/cold pages by reuse distance, test periods, three clock hands",
        params: &[
            Param { name: "cold", default: "0.01", doc: "initial share of the cache for resident cold pages (m_c)" },
            Param { name: "adaptive", default: "true", doc: "adapt m_c to test-period hits (false keeps it fixed)" },
        ],
        ctor: |p, c| boxed(clockpro::ClockPro::new(c, p.f64("cold", 0.0..=1.0)?, p.bool("adaptive")?)),
    },
    Entry {
        names: &["gclock"],
        about: "Generalized CLOCK: FIFO-Reinsertion with n-bit counters",
        params: &[Param { name: "bits", default: "2", doc: "counter width in bits (1..=16)" }],
        ctor: |p, c| boxed(clock::Clock::new(c, p.u64("bits", 1..=16)? as u32)),
    },
    Entry {
        names: &["sieve"],
        about: "SIEVE (NSDI'24, Alg. 1)",
        params: &[],
        ctor: |_, c| boxed(sieve::Sieve::new(c)),
    },
    Entry {
        names: &["mobius"],
        about: "Mobius (SIGMETRICS'25): SIEVE's semantics on two FIFO queues in rotation, one request at a time (sifter::Cache's Mobius at one thread)",
        params: &[Param {
            name: "consecutive",
            default: "true",
            doc: "consecutive detection (Alg. 2); false is the paper's Mobius-w/d ablation (Alg. 1)",
        }],
        ctor: |p, c| boxed(mobius::Mobius::new(c, p.bool("consecutive")?)),
    },
    Entry {
        names: &["s3fifo", "s3-fifo"],
        about: "S3-FIFO (SOSP'23), libCacheSim defaults",
        params: &[
            Param { name: "small", default: "0.1", doc: "small queue share of the cache" },
            Param {
                name: "ghost",
                default: "0.9",
                doc: "ghost queue size as a share of the cache",
            },
            Param {
                name: "threshold",
                default: "2",
                doc: "move to main at this many hits in the small queue",
            },
            Param {
                name: "warmup-to-main",
                default: "false",
                doc:
                    "before the first eviction, insert into main while small is full (libCacheSim)",
            },
        ],
        ctor: |p, c| {
            boxed(s3fifo::S3Fifo::new(
                c,
                p.f64("small", 0.0..=1.0)?,
                p.f64("ghost", 0.0..=10.0)?,
                p.u64("threshold", 1..=255)? as u8,
                p.bool("warmup-to-main")?,
            ))
        },
    },
    Entry {
        names: &["random"],
        about: "evict a uniformly random object (seeded)",
        params: &[Param { name: "seed", default: "0", doc: "RNG seed (added to the run's seed)" }],
        ctor: |p, c| {
            let seed = p.u64("seed", 0..=u64::MAX)?;
            boxed(random::Random::new(&PolicyCtx { seed: c.seed.wrapping_add(seed), ..*c }))
        },
    },
    Entry {
        names: &["arc"],
        about: "ARC (FAST'03): adaptive recency/frequency with ghost lists",
        params: &[],
        ctor: |_, c| boxed(arc::Arc::new(c, false)),
    },
    Entry {
        names: &["arc-sieve", "arcsieve"],
        about: "ARC-SIEVE (SIEVE paper): ARC whose frequent list T2 is SIEVE instead of LRU",
        params: &[],
        ctor: |_, c| boxed(arc::Arc::new(c, true)),
    },
    Entry {
        names: &["qdlp", "qd-lp"],
        about:
            "QD-LP (HotOS'23): probationary FIFO + ghost, quick demotion into a CLOCK main cache",
        params: &[
            Param { name: "small", default: "0.1", doc: "probationary FIFO share of the cache" },
            Param { name: "ghost", default: "0.9", doc: "ghost size as a share of the cache" },
            Param { name: "bits", default: "2", doc: "main CLOCK counter bits" },
            Param { name: "threshold", default: "1", doc: "hits in probation to be promoted" },
        ],
        ctor: |p, c| {
            boxed(qdlp::Qdlp::new(
                c,
                p.f64("small", 0.0..=1.0)?,
                p.f64("ghost", 0.0..=10.0)?,
                p.u64("bits", 1..=7)? as u32,
                p.u64("threshold", 1..=1_000_000)? as u32,
            ))
        },
    },
    Entry {
        names: &["gdsf"],
        about: "GDSF: greedy dual size frequency (size-aware, with inflation)",
        params: &[],
        ctor: |_, c| boxed(gdsf::Gdsf::new(c)),
    },
    Entry {
        names: &["lirs"],
        about: "LIRS (SIGMETRICS'02): inter-reference recency, LIR/HIR sets",
        params: &[Param { name: "hir", default: "0.01", doc: "HIR (resident) share of the cache" }],
        ctor: |p, c| boxed(lirs::Lirs::new(c, p.f64("hir", 0.0..=0.5)?)),
    },
    Entry {
        names: &["hyperbolic"],
        about: "Hyperbolic caching (ATC'17): evict the sampled object with the least hits per time cached (seeded)",
        params: &[Param { name: "samples", default: "64", doc: "objects sampled per eviction" }],
        ctor: |p, c| boxed(hyperbolic::Hyperbolic::new(c, p.u64("samples", 1..=4096)? as u32)),
    },
    Entry {
        names: &["blru", "b-lru"],
        about: "B-LRU: LRU that admits an object only on its second request (Bloom filter, seeded)",
        params: &[
            Param { name: "items", default: "0", doc: "keys per filter generation (0: the cache capacity in objects)" },
            Param { name: "fp", default: "0.01", doc: "filter false-positive rate" },
        ],
        ctor: |p, c| {
            let b = blru::BLru::new(c, p.u64("items", 0..=1 << 32)?, p.f64("fp", 1e-12..=0.5)?);
            boxed(b.map_err(SimError::Policy)?)
        },
    },
    Entry {
        names: &["lfuda", "lfu-da"],
        about: "LFU with dynamic aging: key = requests + age, age = key of the last eviction",
        params: &[],
        ctor: |_, c| boxed(lfuda::Lfuda::new(c)),
    },
    Entry {
        names: &["lruk", "lru-k"],
        about: "LRU-K (SIGMOD'93): evict the oldest K-th most recent request (history kept)",
        params: &[Param { name: "k", default: "2", doc: "which past request ranks an object (1 = LRU)" }],
        ctor: |p, c| boxed(lruk::LruK::new(c, p.u64("k", 1..=16)? as usize)),
    },
    Entry {
        names: &["lecar"],
        about: "LeCaR (HotStorage'18): LRU and LFU experts weighted by regret over ghost lists (seeded)",
        params: &[
            Param { name: "lru-weight", default: "0.5", doc: "initial probability of evicting the LRU candidate" },
            Param { name: "update-weight", default: "true", doc: "learn the weights (false keeps them fixed)" },
        ],
        ctor: |p, c| boxed(lecar::LeCaR::new(c, p.f64("lru-weight", 0.0..=1.0)?, p.bool("update-weight")?, false)),
    },
    Entry {
        names: &["lecar-sieve"],
        about: "LeCaR-SIEVE (SIEVE paper): LeCaR whose recency expert is SIEVE instead of LRU (seeded)",
        params: &[
            Param { name: "lru-weight", default: "0.5", doc: "initial probability of evicting the SIEVE candidate" },
            Param { name: "update-weight", default: "true", doc: "learn the weights (false keeps them fixed)" },
        ],
        ctor: |p, c| boxed(lecar::LeCaR::new(c, p.f64("lru-weight", 0.0..=1.0)?, p.bool("update-weight")?, true)),
    },
    Entry {
        names: &["cacheus"],
        about: "CACHEUS (FAST'21): SR-LRU and CR-LFU experts weighted by regret, adaptive learning rate (seeded)",
        params: &[],
        ctor: |_, c| boxed(cacheus::Cacheus::new(c)),
    },
    Entry {
        names: &["lhd"],
        about: "LHD (NSDI'18): evict the lowest estimated hit density among sampled objects (seeded)",
        params: &[
            Param { name: "associativity", default: "32", doc: "objects sampled per eviction once warmed up (8 before)" },
            Param { name: "admissions", default: "8", doc: "recent low-density admissions also considered" },
        ],
        ctor: |p, c| boxed(lhd::Lhd::new(c, p.u64("associativity", 1..=1024)? as u32, p.u64("admissions", 0..=1024)? as usize)),
    },
    Entry {
        names: &["problru", "lru-prob"],
        about: "probabilistic LRU: a hit is promoted only with probability 1 - q (seeded)",
        params: &[Param { name: "q", default: "0.5", doc: "probability that a hit skips the list update" }],
        ctor: |p, c| boxed(problru::ProbLru::new(c, p.f64("q", 0.0..=1.0)?)),
    },
    Entry {
        names: &["multistep-lru", "multistep"],
        about: "multi-step LRU (BigData'21): set-associative, M vectors of P items, upgrades between vectors",
        params: &[
            Param { name: "p", default: "4", doc: "items per vector (1..=64)" },
            Param { name: "m", default: "2", doc: "vectors per set (1..=64)" },
        ],
        ctor: |p, c| boxed(multistep::MultiStep::new(c, p.u64("p", 1..=64)? as usize, p.u64("m", 1..=64)? as usize)?),
    },
    Entry {
        names: &["invector-lru", "invector"],
        about: "in-vector LRU: P-way set-associative LRU (multi-step LRU with M = 1)",
        params: &[Param { name: "p", default: "4", doc: "items per set (1..=64)" }],
        ctor: |p, c| boxed(multistep::MultiStep::new(c, p.u64("p", 1..=64)? as usize, 1)?),
    },
    Entry {
        names: &["wtinylfu", "w-tinylfu", "tinylfu"],
        about: "W-TinyLFU: LRU window, SLRU main, frequency-sketch admission (libCacheSim's)",
        params: &[Param { name: "window", default: "0.01", doc: "window share of the cache" }],
        ctor: |p, c| boxed(wtinylfu::WTinyLfu::new(c, p.f64("window", 0.0..=1.0)?)),
    },
    Entry {
        names: &["lfu"],
        about: "least frequently used (in-cache counts, FIFO among equals)",
        params: &[],
        ctor: |_, c| boxed(lfu::Lfu::new(c)),
    },
    Entry {
        names: &["twoq", "2q"],
        about: "2Q: FIFO for new objects, LRU for re-requested ones, ghost FIFO",
        params: &[
            Param { name: "kin", default: "0.25", doc: "A1in share of the cache" },
            Param {
                name: "kout",
                default: "0.5",
                doc: "A1out (ghost) size as a share of the cache",
            },
        ],
        ctor: |p, c| {
            boxed(twoq::TwoQ::new(c, p.f64("kin", 0.0..=1.0)?, p.f64("kout", 0.0..=10.0)?, false))
        },
    },
    Entry {
        names: &["twoq-sieve", "2q-sieve"],
        about: "TwoQ-SIEVE (SIEVE paper): 2Q whose main queue Am is SIEVE instead of LRU",
        params: &[
            Param { name: "kin", default: "0.25", doc: "A1in share of the cache" },
            Param { name: "kout", default: "0.5", doc: "A1out (ghost) size as a share of the cache" },
        ],
        ctor: |p, c| {
            boxed(twoq::TwoQ::new(c, p.f64("kin", 0.0..=1.0)?, p.f64("kout", 0.0..=10.0)?, true))
        },
    },
    Entry {
        names: &["slru"],
        about: "segmented LRU (4 equal segments)",
        params: &[Param { name: "segments", default: "4", doc: "number of segments (1..=16)" }],
        ctor: |p, c| boxed(slru::Slru::new(c, p.u64("segments", 1..=16)? as usize)),
    },
    Entry {
        names: &["belady", "opt", "min"],
        about: "Belady's MIN (offline optimal in object mode)",
        params: &[],
        ctor: |_, c| boxed(belady::Belady::new(c)),
    },
];

/// Finds a registry entry by name or alias (case-insensitive).
pub fn lookup(name: &str) -> Option<&'static Entry> {
    let n = name.to_ascii_lowercase();
    REGISTRY.iter().find(|e| e.names.contains(&n.as_str()))
}

/// All canonical names.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.names[0]).collect()
}

impl PolicySpec {
    /// Parses `name` or `name(k=v,...)`.
    pub fn parse(s: &str) -> Result<PolicySpec, SimError> {
        let s = s.trim();
        let (name, params) = match s.split_once('(') {
            Some((n, rest)) => {
                let inner = rest.strip_suffix(')').ok_or_else(|| {
                    SimError::Policy(format!("policy spec '{s}': missing closing ')'"))
                })?;
                (n.trim(), inner)
            }
            None => (s, ""),
        };
        let entry = lookup(name).ok_or_else(|| {
            SimError::Policy(format!("unknown policy '{name}' (known: {})", names().join(", ")))
        })?;
        let mut out = PolicySpec { name: entry.names[0].to_string(), params: Vec::new() };
        for p in params.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = p.split_once('=').ok_or_else(|| {
                SimError::Policy(format!("policy spec '{s}': parameter '{p}' is not key=value"))
            })?;
            let k = k.trim().to_ascii_lowercase();
            if !entry.params.iter().any(|q| q.name == k) {
                let known: Vec<&str> = entry.params.iter().map(|q| q.name).collect();
                return Err(SimError::Policy(format!(
                    "policy '{}' has no parameter '{k}' (known: {})",
                    out.name,
                    if known.is_empty() { "none".into() } else { known.join(", ") }
                )));
            }
            out.params.push((k, v.trim().to_string()));
        }
        Ok(out)
    }

    /// Builds the policy.
    pub fn build(&self, ctx: &PolicyCtx) -> Result<Box<dyn Simulate>, SimError> {
        let entry = lookup(&self.name)
            .ok_or_else(|| SimError::Policy(format!("unknown policy '{}'", self.name)))?;
        (entry.ctor)(&Params { spec: self, entry }, ctx)
    }
}

/// Splits a comma-separated policy list at commas outside parentheses and parses each.
pub fn parse_policy_list(s: &str) -> Result<Vec<PolicySpec>, SimError> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                if !s[start..i].trim().is_empty() {
                    out.push(PolicySpec::parse(&s[start..i])?);
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(PolicySpec::parse(&s[start..])?);
    }
    if out.is_empty() {
        return Err(SimError::Policy("no policy given".into()));
    }
    Ok(out)
}

//! Seeded, reproducible synthetic workloads.
//!
//! A generator spec is `kind:key=value,...`, usable wherever a trace path is:
//!
//! | kind | what | parameters (defaults) |
//! |---|---|---|
//! | `zipf` | i.i.d. Zipf(alpha) over `n` objects (exact rejection-inversion sampler; alpha in 0..=2, 1 included; 0 is uniform) | `alpha=1.0`, `n=1000000` |
//! | `uniform` | i.i.d. uniform over `n` objects | `n=1000000` |
//! | `latest` | YCSB "latest": a growing key set, reads skewed towards the newest keys (Zipf over recency), `insert` of the requests create a new key (op `set`) | `alpha=0.99`, `n=100000` initial keys, `insert=0.05` |
//! | `scan` | Zipf(alpha) over `n` objects mixed with sequential scans of `scan-len` keys over a separate cold region of `scan-space` keys; `scan-frac` of all requests are scan requests | `alpha=1.0`, `n=1000000`, `scan-frac=0.2`, `scan-len=1000`, `scan-space=n` |
//! | `twophase` | two disjoint Zipf(alpha) populations of `n` objects back to back, the switch after `split` of the requests (SIEVE paper, Fig. 10) | `alpha=1.0`, `n=1000000`, `split=0.5` |
//!
//! All kinds take `requests=1000000`, `seed=1` and `size=1`: a constant object size in bytes,
//! or `size=LO..HI` for sizes drawn uniformly per object (fixed for each object, derived from
//! its key and the seed).
//! Keys are object ranks passed through a seeded bijection of `u64`, so popularity is not
//! correlated with key order and different populations never share a key. Request `i` has
//! time `i`.

use crate::error::{Result, TraceError};
use crate::request::{NextAccess, Op, Request};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Generator kinds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// Zipf(alpha) over n.
    Zipf,
    /// Uniform over n.
    Uniform,
    /// YCSB latest.
    Latest,
    /// Zipf + sequential scans.
    Scan,
    /// Two Zipf populations back to back.
    TwoPhase,
}

/// A parsed synthetic workload spec.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SynthSpec {
    /// Which generator.
    pub kind: Kind,
    /// Zipf exponent.
    pub alpha: f64,
    /// Objects (initial keys for `latest`).
    pub n: u64,
    /// Requests to generate.
    pub requests: u64,
    /// RNG seed.
    pub seed: u64,
    /// Object size, or the low end of the per-object size range.
    pub size: u32,
    /// High end of the per-object size range (equal to `size` for constant sizes).
    pub size_max: u32,
    /// `latest`: fraction of requests that insert a new key.
    pub insert: f64,
    /// `scan`: fraction of requests that belong to scans.
    pub scan_frac: f64,
    /// `scan`: length of one scan.
    pub scan_len: u64,
    /// `scan`: size of the cold region scans walk over.
    pub scan_space: u64,
    /// `twophase`: fraction of requests in the first phase.
    pub split: f64,
}

/// Names of the generator kinds (for spec detection).
pub const KINDS: &[&str] = &["zipf", "uniform", "latest", "scan", "twophase"];

impl SynthSpec {
    /// Parses `kind:key=value,...`.
    pub fn parse(spec: &str) -> Result<SynthSpec> {
        let (kind, params) = spec.split_once(':').unwrap_or((spec, ""));
        let kind = match kind.trim().to_ascii_lowercase().as_str() {
            "zipf" => Kind::Zipf,
            "uniform" => Kind::Uniform,
            "latest" => Kind::Latest,
            "scan" => Kind::Scan,
            "twophase" | "two-phase" => Kind::TwoPhase,
            k => {
                return Err(TraceError::Spec(format!(
                    "unknown synthetic workload '{k}' (known: {})",
                    KINDS.join(", ")
                )))
            }
        };
        let mut s = SynthSpec {
            kind,
            alpha: if kind == Kind::Latest { 0.99 } else { 1.0 },
            n: if kind == Kind::Latest { 100_000 } else { 1_000_000 },
            requests: 1_000_000,
            seed: 1,
            size: 1,
            size_max: 1,
            insert: 0.05,
            scan_frac: 0.2,
            scan_len: 1000,
            scan_space: 0,
            split: 0.5,
        };
        for p in params.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = p.split_once('=').ok_or_else(|| {
                TraceError::Spec(format!(
                    "malformed parameter '{p}' in '{spec}': expected key=value"
                ))
            })?;
            let (k, v) = (k.trim(), v.trim());
            let f = || -> Result<f64> {
                v.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| {
                    TraceError::Spec(format!("parameter '{k}': '{v}' is not a number"))
                })
            };
            let u = || -> Result<u64> {
                parse_count(v).ok_or_else(|| {
                    TraceError::Spec(format!("parameter '{k}': '{v}' is not a count"))
                })
            };
            match k {
                "alpha" => s.alpha = f()?,
                "n" => s.n = u()?,
                "requests" | "m" => s.requests = u()?,
                "seed" => s.seed = u()?,
                "size" => {
                    let one = |x: &str| -> Result<u32> {
                        parse_count(x).and_then(|v| u32::try_from(v).ok()).ok_or_else(|| {
                            TraceError::Spec(format!(
                                "parameter 'size': '{x}' is not a size below 4 GiB"
                            ))
                        })
                    };
                    (s.size, s.size_max) = match v.split_once("..") {
                        Some((lo, hi)) => (one(lo)?, one(hi)?),
                        None => (one(v)?, one(v)?),
                    };
                }
                "insert" if kind == Kind::Latest => s.insert = f()?,
                "scan-frac" if kind == Kind::Scan => s.scan_frac = f()?,
                "scan-len" if kind == Kind::Scan => s.scan_len = u()?,
                "scan-space" if kind == Kind::Scan => s.scan_space = u()?,
                "split" if kind == Kind::TwoPhase => s.split = f()?,
                _ => {
                    return Err(TraceError::Spec(format!(
                        "workload '{spec}': unknown parameter '{k}'"
                    )))
                }
            }
        }
        if s.scan_space == 0 {
            s.scan_space = s.n;
        }
        let bad = |m: &str| Err(TraceError::Spec(format!("workload '{spec}': {m}")));
        if !(0.0..=2.0).contains(&s.alpha) {
            return bad("alpha must be in 0..=2");
        }
        if s.n == 0 || s.n > 1 << 40 {
            return bad("n must be in 1..=2^40");
        }
        if s.requests > 1 << 36 {
            return bad("requests must be at most 2^36");
        }
        if s.size == 0 || s.size_max < s.size {
            return bad("size must be at least 1 (and LO <= HI in LO..HI)");
        }
        if !(0.0..1.0).contains(&s.insert) || !(0.0..1.0).contains(&s.scan_frac) {
            return bad("insert and scan-frac must be in [0, 1)");
        }
        if !(0.0..=1.0).contains(&s.split) {
            return bad("split must be in [0, 1]");
        }
        if s.scan_len == 0 {
            return bad("scan-len must be at least 1");
        }
        Ok(s)
    }

    /// The requests of this workload.
    pub fn generate(&self) -> Generator {
        let zipf = |n: u64| Zipf::new(n as f64, self.alpha).expect("validated parameters");
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed);
        let salt = rng.random::<u64>();
        let scan_pos = rng.random_range(0..self.scan_space);
        Generator {
            spec: *self,
            rng,
            salt,
            zipf: zipf(self.n),
            i: 0,
            live: self.n,
            scan_left: 0,
            scan_pos,
        }
    }
}

/// Parses a count with an optional `k`/`m`/`g` (10^3, 10^6, 10^9) suffix, or `1e6` notation.
pub fn parse_count(v: &str) -> Option<u64> {
    let v = v.trim().replace('_', "");
    let (num, mul) = match v.chars().last()?.to_ascii_lowercase() {
        'k' => (&v[..v.len() - 1], 1e3),
        'm' => (&v[..v.len() - 1], 1e6),
        'g' => (&v[..v.len() - 1], 1e9),
        _ => (&v[..], 1.0),
    };
    if let Ok(n) = num.parse::<u64>() {
        return n.checked_mul(mul as u64);
    }
    let f = num.parse::<f64>().ok()? * mul;
    (f >= 0.0 && f.fract() == 0.0 && f < 1.8e19).then_some(f as u64)
}

/// A bijection of `u64` (the splitmix64 finalizer; each step is invertible).
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

/// Iterator over a synthetic workload's requests.
#[derive(Debug)]
pub struct Generator {
    spec: SynthSpec,
    rng: Xoshiro256PlusPlus,
    salt: u64,
    zipf: Zipf<f64>,
    i: u64,
    /// `latest`: keys created so far.
    live: u64,
    scan_left: u64,
    scan_pos: u64,
}

impl Generator {
    fn key(&self, rank: u64) -> u64 {
        mix(rank ^ self.salt)
    }

    fn zipf_rank(&mut self) -> u64 {
        // Zipf samples are integers in [1, n] as f64.
        self.zipf.sample(&mut self.rng) as u64 - 1
    }
}

impl Iterator for Generator {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        let s = self.spec;
        if self.i >= s.requests {
            return None;
        }
        let n = s.n;
        let mut op = Op::Get;
        let rank = match s.kind {
            Kind::Zipf => self.zipf_rank(),
            Kind::Uniform => self.rng.random_range(0..n),
            Kind::TwoPhase => {
                let phase2 = (self.i as f64) >= s.split * s.requests as f64;
                self.zipf_rank() + if phase2 { n } else { 0 }
            }
            Kind::Latest => {
                if self.rng.random::<f64>() < s.insert {
                    op = Op::Set;
                    self.live += 1;
                    self.live - 1
                } else {
                    let z = Zipf::new(self.live as f64, s.alpha).expect("validated parameters");
                    self.live - z.sample(&mut self.rng) as u64
                }
            }
            Kind::Scan => {
                if self.scan_left == 0 {
                    let q = s.scan_frac / (s.scan_len as f64 * (1.0 - s.scan_frac));
                    if self.rng.random::<f64>() < q {
                        self.scan_left = s.scan_len;
                    }
                }
                if self.scan_left > 0 {
                    self.scan_left -= 1;
                    let r = n + self.scan_pos % s.scan_space;
                    self.scan_pos += 1;
                    r
                } else {
                    self.zipf_rank()
                }
            }
        };
        let time = self.i;
        self.i += 1;
        let key = self.key(rank);
        let size = if s.size_max == s.size {
            s.size
        } else {
            let span = (s.size_max - s.size) as u64 + 1;
            s.size + (mix(key ^ self.salt.rotate_left(17)) % span) as u32
        };
        Some(Request { time, key, size, op, next_access: NextAccess::Unknown })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.spec.requests - self.i) as usize;
        (left, Some(left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn reproducible_and_seeded() {
        let a: Vec<_> =
            SynthSpec::parse("zipf:n=1000,requests=5000,seed=7").unwrap().generate().collect();
        let b: Vec<_> =
            SynthSpec::parse("zipf:n=1000,requests=5000,seed=7").unwrap().generate().collect();
        let c: Vec<_> =
            SynthSpec::parse("zipf:n=1000,requests=5000,seed=8").unwrap().generate().collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 5000);
    }

    fn freqs(spec: &str) -> Vec<u64> {
        let mut m: HashMap<u64, u64> = HashMap::new();
        for r in SynthSpec::parse(spec).unwrap().generate() {
            *m.entry(r.key).or_default() += 1;
        }
        let mut v: Vec<u64> = m.into_values().collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        v
    }

    #[test]
    fn zipf_one_has_the_right_head() {
        // For Zipf(1) over n, P(rank 1) = 1 / H_n.
        let n = 1000u64;
        let h: f64 = (1..=n).map(|i| 1.0 / i as f64).sum();
        let m = 200_000;
        let f = freqs(&format!("zipf:alpha=1,n={n},requests={m},seed=3"));
        let p1 = f[0] as f64 / m as f64;
        assert!((p1 - 1.0 / h).abs() < 0.01, "p1={p1} expected {}", 1.0 / h);
        // rank-2 / rank-1 about 1/2
        let r = f[1] as f64 / f[0] as f64;
        assert!((r - 0.5).abs() < 0.05, "{r}");
    }

    #[test]
    fn uniform_and_alpha_zero_cover_all_keys() {
        assert_eq!(freqs("uniform:n=100,requests=20000").len(), 100);
        assert_eq!(freqs("zipf:alpha=0,n=100,requests=20000").len(), 100);
        let f = freqs("zipf:alpha=2,n=100,requests=20000");
        assert!(f[0] as f64 / 20000.0 > 0.55); // 1/zeta(2) ~ 0.61
    }

    #[test]
    fn two_phase_populations_are_disjoint() {
        let reqs: Vec<_> =
            SynthSpec::parse("twophase:n=50,requests=4000").unwrap().generate().collect();
        let a: std::collections::HashSet<u64> = reqs[..2000].iter().map(|r| r.key).collect();
        let b: std::collections::HashSet<u64> = reqs[2000..].iter().map(|r| r.key).collect();
        assert!(a.is_disjoint(&b));
    }

    #[test]
    fn scans_are_about_the_requested_fraction() {
        let s = SynthSpec::parse("scan:n=1000,requests=200000,scan-frac=0.3,scan-len=50").unwrap();
        let hot: std::collections::HashSet<u64> =
            (0..1000).map(|r| mix(r ^ s.generate().salt)).collect();
        let scans = s.generate().filter(|r| !hot.contains(&r.key)).count();
        let frac = scans as f64 / 200000.0;
        assert!((frac - 0.3).abs() < 0.03, "{frac}");
    }

    #[test]
    fn latest_inserts_and_reads_recent() {
        let reqs: Vec<_> = SynthSpec::parse("latest:n=1000,requests=20000,insert=0.1")
            .unwrap()
            .generate()
            .collect();
        let sets = reqs.iter().filter(|r| r.op == Op::Set).count();
        assert!((1600..2400).contains(&sets), "{sets}");
    }

    #[test]
    fn per_object_sizes_are_fixed_and_in_range() {
        let mut seen = HashMap::new();
        for r in SynthSpec::parse("zipf:n=100,requests=5000,size=10..20").unwrap().generate() {
            assert!((10..=20).contains(&r.size));
            assert_eq!(*seen.entry(r.key).or_insert(r.size), r.size);
        }
        assert!(seen.values().collect::<std::collections::HashSet<_>>().len() > 5);
    }

    #[test]
    fn rejects_bad_specs() {
        for bad in [
            "zipf:alpha=3",
            "zipf:n=0",
            "nope:n=1",
            "zipf:n",
            "zipf:bogus=1",
            "scan:scan-frac=1",
            "uniform:alpha=x",
        ] {
            assert!(SynthSpec::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_count("10M"), Some(10_000_000));
        assert_eq!(parse_count("1e6"), Some(1_000_000));
    }
}

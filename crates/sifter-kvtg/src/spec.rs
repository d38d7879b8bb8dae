//! The distributions a run draws from: key popularity, request mix, value sizes.

use crate::{below, normal_key, Error};
use rand::Rng;
use rand_distr::Distribution;
use std::sync::Mutex;

/// A request type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `get`.
    Get,
    /// `set`.
    Set,
    /// `add` (stored only if absent).
    Add,
    /// `replace` (stored only if present).
    Replace,
    /// `delete`.
    Delete,
    /// `touch` (exptime 0).
    Touch,
    /// A `set` sent because a GET missed (read-through; not part of the mix).
    Fill,
}

impl Op {
    /// Every operation, in report order (`op as usize` indexes it).
    pub const ALL: [Op; 7] =
        [Op::Get, Op::Set, Op::Add, Op::Replace, Op::Delete, Op::Touch, Op::Fill];

    /// Its name in specs and reports.
    pub fn name(self) -> &'static str {
        match self {
            Op::Get => "get",
            Op::Set => "set",
            Op::Add => "add",
            Op::Replace => "replace",
            Op::Delete => "delete",
            Op::Touch => "touch",
            Op::Fill => "fill",
        }
    }

    /// Whether it carries a value.
    pub fn stores(self) -> bool {
        matches!(self, Op::Set | Op::Add | Op::Replace | Op::Fill)
    }
}

/// Parses `name=value` pairs separated by commas.
fn pairs(spec: &str) -> Result<Vec<(&str, &str)>, Error> {
    spec.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| Error::Config(format!("{spec:?}: expected name=value, got {p:?}")))
        })
        .collect()
}

/// A number (`0.7`, `1e3`).
fn float(spec: &str, name: &str, v: &str) -> Result<f64, Error> {
    v.parse().map_err(|_| Error::Config(format!("{spec:?}: {name}={v} is not a number")))
}

/// A count (`1000`, `1k`, `1m`, `1_000`).
fn count(spec: &str, name: &str, v: &str) -> Result<u64, Error> {
    sifter_trace::synth::parse_count(v)
        .ok_or_else(|| Error::Config(format!("{spec:?}: {name}={v} is not a count")))
}

/// The request type mix: weights, normalised.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mix {
    /// Cumulative probabilities with their operation.
    cumulative: Vec<(f64, Op)>,
}

impl Mix {
    /// Parses `get=0.7,add=0.3` (weights; they need not sum to 1).
    pub fn parse(spec: &str) -> Result<Mix, Error> {
        let mut total = 0.0;
        let mut cumulative = Vec::new();
        for (k, v) in pairs(spec)? {
            let op = Op::ALL
                .iter()
                .copied()
                .filter(|o| *o != Op::Fill)
                .find(|o| o.name() == k)
                .ok_or_else(|| {
                    Error::Config(format!(
                        "mix {spec:?}: unknown request type {k:?} (get, set, add, replace, delete, touch)"
                    ))
                })?;
            let w = float(spec, k, v)?;
            if !(w.is_finite() && w >= 0.0) {
                return Err(Error::Config(format!("mix {spec:?}: weight {k}={v} must be ≥ 0")));
            }
            if w > 0.0 {
                total += w;
                cumulative.push((total, op));
            }
        }
        if total <= 0.0 {
            return Err(Error::Config(format!("mix {spec:?}: no request type has a weight")));
        }
        for c in &mut cumulative {
            c.0 /= total;
        }
        Ok(Mix { cumulative })
    }

    /// The operations and their probabilities.
    pub fn weights(&self) -> Vec<(Op, f64)> {
        let mut prev = 0.0;
        self.cumulative
            .iter()
            .map(|&(c, o)| {
                let w = c - prev;
                prev = c;
                (o, w)
            })
            .collect()
    }

    /// Draws a request type.
    pub fn draw(&self, rng: &mut impl Rng) -> Op {
        let u: f64 = rng.random();
        self.cumulative
            .iter()
            .find(|(c, _)| u < *c)
            .or(self.cumulative.last())
            .map_or(Op::Get, |c| c.1)
    }
}

/// Value sizes in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueSize {
    /// Always this size.
    Fixed(usize),
    /// Uniform in `min..=max`.
    Uniform(usize, usize),
    /// Normal, rounded, clamped to `1..=2·mean`.
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        sd: f64,
    },
}

impl ValueSize {
    /// Parses `100`, `uniform:10-1000` or `normal:mean=100,sd=20`.
    pub fn parse(spec: &str) -> Result<ValueSize, Error> {
        let bad = || {
            Error::Config(format!(
                "value size {spec:?}: expected N, uniform:MIN-MAX or normal:mean=M,sd=S"
            ))
        };
        if let Some(r) = spec.strip_prefix("uniform:") {
            let (a, b) = r.split_once('-').ok_or_else(bad)?;
            let (a, b): (usize, usize) =
                (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
            if a > b {
                return Err(Error::Config(format!("value size {spec:?}: min above max")));
            }
            return Ok(ValueSize::Uniform(a, b));
        }
        if let Some(r) = spec.strip_prefix("normal:") {
            let (mut mean, mut sd) = (None, None);
            for (k, v) in pairs(r)? {
                match k {
                    "mean" => mean = Some(float(spec, k, v)?),
                    "sd" => sd = Some(float(spec, k, v)?),
                    _ => return Err(bad()),
                }
            }
            let (mean, sd) = (mean.ok_or_else(bad)?, sd.ok_or_else(bad)?);
            if !(mean >= 1.0 && mean.is_finite() && sd >= 0.0 && sd.is_finite()) {
                return Err(Error::Config(format!(
                    "value size {spec:?}: mean must be ≥ 1 and sd ≥ 0"
                )));
            }
            return Ok(ValueSize::Normal { mean, sd });
        }
        spec.trim().parse().map(ValueSize::Fixed).map_err(|_| bad())
    }

    /// The largest size drawn.
    pub fn max(&self) -> usize {
        match *self {
            ValueSize::Fixed(n) => n,
            ValueSize::Uniform(_, b) => b,
            ValueSize::Normal { mean, .. } => (2.0 * mean) as usize,
        }
    }

    /// Draws a size.
    pub fn draw(&self, rng: &mut impl Rng) -> usize {
        match *self {
            ValueSize::Fixed(n) => n,
            ValueSize::Uniform(a, b) => rng.random_range(a..=b),
            ValueSize::Normal { mean, sd } => {
                let d = rand_distr::Normal::new(mean, sd).unwrap_or_else(|_| {
                    rand_distr::Normal::new(mean, 0.0).expect("a zero sd is valid")
                });
                d.sample(rng).round().clamp(1.0, 2.0 * mean) as usize
            }
        }
    }
}

/// Key popularity over key ids `0..n` (a key id `k` is sent as `kvtg:` and `k`, zero-padded
/// to the key size).
#[derive(Debug, Clone, PartialEq)]
pub enum KeySpec {
    /// Zipf with exponent `alpha` (rank 1 most popular); ranks are scattered over the ids.
    Zipf {
        /// Exponent (≥ 0).
        alpha: f64,
        /// Keys.
        n: u64,
    },
    /// Uniform.
    Uniform {
        /// Keys.
        n: u64,
    },
    /// Normal around `n/2` with standard deviation `sd` (keys), clamped (the report's Table 1
    /// key space).
    Normal {
        /// Keys.
        n: u64,
        /// Standard deviation in keys.
        sd: f64,
    },
    /// The keys of a trace (a file, or one of `sifter-trace`'s generators), replayed in order
    /// by all connections together and restarted at its end.
    Trace(sifter_trace::TraceSource),
}

impl KeySpec {
    /// Parses `zipf:alpha=1.0,n=1m`, `uniform:n=...`, `normal:n=...[,sd=...]` (sd default
    /// n/8), or `trace:PATH` (any trace file or generator spec `sifter sim` takes).
    pub fn parse(spec: &str) -> Result<KeySpec, Error> {
        let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let get = |name: &str| -> Result<Option<&str>, Error> {
            Ok(pairs(rest)?.into_iter().find(|(k, _)| *k == name).map(|(_, v)| v))
        };
        let check = |allowed: &[&str]| -> Result<(), Error> {
            for (k, _) in pairs(rest)? {
                if !allowed.contains(&k) {
                    return Err(Error::Config(format!(
                        "keys {spec:?}: unknown parameter {k:?} (expected {})",
                        allowed.join(", ")
                    )));
                }
            }
            Ok(())
        };
        let n = |default: u64| -> Result<u64, Error> {
            get("n")?.map_or(Ok(default), |v| count(spec, "n", v))
        };
        match kind {
            "zipf" => {
                check(&["alpha", "n"])?;
                let alpha = get("alpha")?.map_or(Ok(1.0), |v| float(spec, "alpha", v))?;
                Ok(KeySpec::Zipf { alpha, n: n(100_000)? })
            }
            "uniform" => {
                check(&["n"])?;
                Ok(KeySpec::Uniform { n: n(100_000)? })
            }
            "normal" => {
                check(&["n", "sd"])?;
                let n = n(100_000)?;
                let sd = get("sd")?.map_or(Ok(n as f64 / 8.0), |v| float(spec, "sd", v))?;
                Ok(KeySpec::Normal { n, sd })
            }
            "trace" => Ok(KeySpec::Trace(sifter_trace::TraceSource::parse(rest, None)?)),
            _ => Err(Error::Config(format!(
                "keys {spec:?}: expected zipf:alpha=A,n=N, uniform:n=N, normal:n=N[,sd=S] or trace:PATH"
            ))),
        }
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |m: String| Err(Error::Config(m));
        match *self {
            KeySpec::Zipf { alpha, n } if !(alpha.is_finite() && alpha >= 0.0) || n == 0 => {
                bad(format!("zipf keys: alpha {alpha} must be ≥ 0 and n {n} ≥ 1"))
            }
            KeySpec::Uniform { n: 0 } => bad("uniform keys: n must be ≥ 1".into()),
            KeySpec::Normal { n, sd } if n == 0 || !(sd.is_finite() && sd > 0.0) => {
                bad(format!("normal keys: n {n} must be ≥ 1 and sd {sd} > 0"))
            }
            _ => Ok(()),
        }
    }
}

/// The key source of a run.
pub(crate) enum Keys {
    Zipf(rand_distr::Zipf<f64>, u64),
    Uniform(u64),
    Normal(rand_distr::Normal<f64>, u64),
    /// A trace's keys, handed out in batches to the connections.
    Trace(Mutex<TraceKeys>),
}

pub(crate) struct TraceKeys {
    source: sifter_trace::TraceSource,
    iter: Box<dyn Iterator<Item = sifter_trace::Result<sifter_trace::Request>> + Send>,
    /// Keys read in the current pass (0 at the end means the trace is empty).
    read: u64,
}

impl Keys {
    pub fn new(spec: &KeySpec, _seed: u64) -> Result<Keys, Error> {
        spec.validate()?;
        Ok(match spec {
            KeySpec::Zipf { alpha, n } => Keys::Zipf(
                rand_distr::Zipf::new(*n as f64, *alpha)
                    .map_err(|e| Error::Config(format!("zipf keys: {e}")))?,
                *n,
            ),
            KeySpec::Uniform { n } => Keys::Uniform(*n),
            KeySpec::Normal { n, sd } => Keys::Normal(
                rand_distr::Normal::new(*n as f64 / 2.0, *sd)
                    .map_err(|e| Error::Config(format!("normal keys: {e}")))?,
                *n,
            ),
            KeySpec::Trace(source) => Keys::Trace(Mutex::new(TraceKeys {
                iter: source.requests()?,
                source: source.clone(),
                read: 0,
            })),
        })
    }

    /// A generator for one connection.
    pub fn for_conn(&self, _conn: u64) -> KeyGen<'_> {
        KeyGen { keys: self, batch: Vec::new() }
    }
}

/// Scatters Zipf ranks over the key ids `0..n` (so the popular keys are not neighbours): a
/// bijection, multiplication by a prime modulo `n` (coprime to `n` unless `n` is a multiple
/// of it, when ranks are used as they are).
fn scatter(rank: u64, n: u64) -> u64 {
    const P: u64 = 2_654_435_761;
    if n.is_multiple_of(P) {
        rank
    } else {
        ((rank as u128 * P as u128) % n as u128) as u64
    }
}

/// One connection's key draws.
pub(crate) struct KeyGen<'a> {
    keys: &'a Keys,
    batch: Vec<u64>,
}

impl KeyGen<'_> {
    pub fn next(&mut self, rng: &mut impl Rng) -> Result<u64, Error> {
        Ok(match self.keys {
            Keys::Zipf(d, n) => {
                let rank = d.sample(rng) as u64 - 1;
                scatter(rank, *n)
            }
            Keys::Uniform(n) => below(rng, *n),
            Keys::Normal(d, n) => normal_key(rng, d, *n),
            Keys::Trace(t) => {
                if self.batch.is_empty() {
                    let mut t = t.lock().unwrap_or_else(|e| e.into_inner());
                    while self.batch.len() < 256 {
                        match t.iter.next() {
                            Some(r) => {
                                self.batch.push(r?.key);
                                t.read += 1;
                            }
                            None => {
                                if t.read == 0 {
                                    return Err(Error::Config(format!(
                                        "key trace {}: no requests",
                                        t.source.name()
                                    )));
                                }
                                t.read = 0;
                                t.iter = t.source.requests()?;
                            }
                        }
                    }
                    self.batch.reverse();
                }
                self.batch.pop().unwrap_or(0)
            }
        })
    }
}

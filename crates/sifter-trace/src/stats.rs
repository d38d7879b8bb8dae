//! Summary statistics of a trace (`sifter trace stats`).

use crate::error::Result;
use crate::request::{Op, Request};
use hashbrown::HashMap;

/// Per-trace counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceStats {
    /// Requests read.
    pub requests: u64,
    /// Distinct keys.
    pub distinct: u64,
    /// Sum of all requests' sizes.
    pub requested_bytes: u64,
    /// Sum over objects of the size of each object's first request.
    pub footprint_bytes: u64,
    /// Smallest and largest request size.
    pub min_size: u32,
    /// Largest request size.
    pub max_size: u32,
    /// Objects seen with more than one size.
    pub multi_size_objects: u64,
    /// Objects requested exactly once / distinct.
    pub one_hit_wonder_ratio: f64,
    /// Requests to objects never seen before / requests (the compulsory miss ratio).
    pub compulsory_miss_ratio: f64,
    /// Least-squares slope of log(frequency) against log(rank), over all objects.
    pub zipf_alpha: f64,
    /// Most requests to one object.
    pub max_frequency: u64,
    /// First and last timestamp.
    pub time_span: (u64, u64),
    /// Requests per operation: get, set, delete, other.
    pub ops: [u64; 4],
}

impl TraceStats {
    /// Computes the statistics of a request stream.
    pub fn compute(reqs: impl Iterator<Item = Result<Request>>) -> Result<TraceStats> {
        struct Obj {
            count: u64,
            size: u32,
            multi: bool,
        }
        let mut s = TraceStats { min_size: u32::MAX, ..Default::default() };
        let mut objs: HashMap<u64, Obj> = HashMap::new();
        let mut first_time = None;
        for r in reqs {
            let r = r?;
            s.requests += 1;
            s.requested_bytes += r.size as u64;
            s.min_size = s.min_size.min(r.size);
            s.max_size = s.max_size.max(r.size);
            first_time.get_or_insert(r.time);
            s.time_span.1 = r.time;
            s.ops[match r.op {
                Op::Get => 0,
                Op::Set => 1,
                Op::Delete => 2,
                Op::Other => 3,
            }] += 1;
            let o = objs.entry(r.key).or_insert_with(|| {
                s.footprint_bytes += r.size as u64;
                Obj { count: 0, size: r.size, multi: false }
            });
            o.count += 1;
            o.multi |= o.size != r.size;
        }
        if s.requests == 0 {
            s.min_size = 0;
        }
        s.time_span.0 = first_time.unwrap_or(0);
        s.distinct = objs.len() as u64;
        let mut freq: Vec<u64> = objs.values().map(|o| o.count).collect();
        s.multi_size_objects = objs.values().filter(|o| o.multi).count() as u64;
        let once = freq.iter().filter(|&&c| c == 1).count() as f64;
        if s.distinct > 0 {
            s.one_hit_wonder_ratio = once / s.distinct as f64;
            s.compulsory_miss_ratio = s.distinct as f64 / s.requests as f64;
        }
        freq.sort_unstable_by(|a, b| b.cmp(a));
        s.max_frequency = freq.first().copied().unwrap_or(0);
        s.zipf_alpha = fit_zipf(&freq);
        Ok(s)
    }

    /// The statistics as (name, value) rows for printing.
    pub fn rows(&self) -> Vec<(&'static str, String)> {
        vec![
            ("requests", self.requests.to_string()),
            ("distinct keys", self.distinct.to_string()),
            ("requested bytes", self.requested_bytes.to_string()),
            ("byte footprint", self.footprint_bytes.to_string()),
            ("size min..max", format!("{}..{}", self.min_size, self.max_size)),
            ("objects with >1 size", self.multi_size_objects.to_string()),
            ("one-hit-wonder ratio", format!("{:.4}", self.one_hit_wonder_ratio)),
            ("compulsory miss ratio", format!("{:.4}", self.compulsory_miss_ratio)),
            ("max frequency", self.max_frequency.to_string()),
            ("estimated zipf alpha", format!("{:.3}", self.zipf_alpha)),
            ("time span", format!("{}..{}", self.time_span.0, self.time_span.1)),
            (
                "ops get/set/delete/other",
                format!("{}/{}/{}/{}", self.ops[0], self.ops[1], self.ops[2], self.ops[3]),
            ),
        ]
    }
}

/// Least-squares slope of log(freq) vs log(rank) (ranks 1-based), negated.
pub fn fit_zipf(sorted_desc: &[u64]) -> f64 {
    if sorted_desc.len() < 2 {
        return 0.0;
    }
    let n = sorted_desc.len() as f64;
    let (mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0);
    for (i, &f) in sorted_desc.iter().enumerate() {
        let x = ((i + 1) as f64).ln();
        let y = (f as f64).ln();
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    let d = n * sxx - sx * sx;
    if d == 0.0 {
        return 0.0;
    }
    -(n * sxy - sx * sy) / d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_fit_recovers_exact_power_law() {
        let f: Vec<u64> = (1..=1000u64).map(|r| (1e6 / (r as f64).powf(0.8)) as u64).collect();
        assert!((fit_zipf(&f) - 0.8).abs() < 0.01);
    }

    #[test]
    fn counts() {
        let reqs = [(1, 10), (2, 5), (1, 12), (3, 1)]
            .map(|(k, s)| Ok(Request { key: k, size: s, ..Request::get(0, k) }));
        let s = TraceStats::compute(reqs.into_iter()).unwrap();
        assert_eq!((s.requests, s.distinct, s.footprint_bytes, s.requested_bytes), (4, 3, 16, 28));
        assert_eq!(s.multi_size_objects, 1);
        assert!((s.one_hit_wonder_ratio - 2.0 / 3.0).abs() < 1e-12);
    }
}

//! The question the paper says operators should ask before buying more cache: on this
//! machine and backend, at which hit ratio p* does each policy's throughput stop rising, and
//! what does it predict at the hit ratio I have?
//!
//! ```
//! use sifter_model::advise::advise;
//! let a = advise(&["lru".into(), "mobius".into()], 16, 72, 100.0, Some(0.95)).unwrap();
//! assert!(a[0].pstar < 1.0); // LRU's throughput falls past p* on 16 cores
//! assert!(a[1].at_hit_mops.unwrap() > a[0].at_hit_mops.unwrap());
//! ```

use crate::policies::{build, Params};
use crate::solve::{bound, mva, pstar};

/// One policy's advice: p*, the peak throughput there, and the prediction at the user's hit
/// ratio.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Advice {
    pub policy: String,
    /// The critical hit ratio (1.0: throughput never falls).
    pub pstar: f64,
    /// The bound's throughput at p*, Mops/s.
    pub peak_mops: f64,
    /// Predicted throughput at the user's hit ratio (MVA), Mops/s.
    pub at_hit_mops: Option<f64>,
}

/// The advice for `policies` on `cores` cores with `mpl` requests in flight and a backend of
/// `disk_us` µs (the paper's bound for p*, exact MVA for the predictions). An unknown policy
/// is an error naming it.
pub fn advise(
    policies: &[String],
    cores: u32,
    mpl: u32,
    disk_us: f64,
    hit: Option<f64>,
) -> Result<Vec<Advice>, String> {
    if cores == 0 || mpl == 0 {
        return Err("cores and the MPL must be at least 1".into());
    }
    if !(disk_us.is_finite() && disk_us >= 0.0) {
        return Err(format!("backend latency {disk_us} µs: must be a finite number ≥ 0"));
    }
    if let Some(h) = hit {
        if !(0.0..=1.0).contains(&h) {
            return Err(format!("hit ratio {h}: must be between 0 and 1"));
        }
    }
    let params = |h: f64| Params { hit: h, disk_us, cpu_servers: Some(cores), ..Params::default() };
    policies
        .iter()
        .map(|pol| {
            build(pol, &params(0.5))?;
            let x_of = |h: f64| build(pol, &params(h)).map(|n| bound(&n, mpl).x).unwrap_or(0.0);
            let (pstar, peak) = pstar(x_of, 2000);
            let at_hit = match hit {
                Some(h) => Some(mva(&build(pol, &params(h))?, mpl).x),
                None => None,
            };
            Ok(Advice { policy: pol.clone(), pstar, peak_mops: peak, at_hit_mops: at_hit })
        })
        .collect()
}

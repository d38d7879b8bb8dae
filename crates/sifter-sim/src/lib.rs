//! # sifter-sim
//!
//! A single-threaded, trace-driven miss-ratio simulator. A trace is decoded once into memory
//! ([`trace::LoadedTrace`]), or streamed twice in bounded memory for traces too large for it
//! ([`stream`]); each policy ([`policies`], one file each) implements the small
//! [`policy::Policy`] trait; the [`registry`] maps names and `key=value` parameters to
//! constructors; the [`runner`] runs policy × size sweeps in parallel on all cores.
//!
//! ```
//! use sifter_sim::{registry::PolicySpec, runner::{simulate, CacheSize}, trace::LoadedTrace};
//! use sifter_trace::TraceSource;
//! let src = TraceSource::parse("zipf:alpha=1.0,n=1000,requests=20000,seed=1", None).unwrap();
//! let trace = LoadedTrace::load("zipf", src.requests().unwrap(), &|_| {}).unwrap();
//! let lru = simulate(&trace, &PolicySpec::parse("lru").unwrap(), CacheSize::Fraction(0.1), false, 0, &|_| {}).unwrap();
//! let sieve = simulate(&trace, &PolicySpec::parse("sieve").unwrap(), CacheSize::Fraction(0.1), false, 0, &|_| {}).unwrap();
//! assert!(sieve.miss_ratio < lru.miss_ratio);
//! ```

pub mod analysis;
pub mod ghost;
pub mod idmap;
pub mod list;
pub mod lists;
pub mod policies;
pub mod policy;
pub mod registry;
pub mod runner;
pub mod stream;
pub mod sweep;
pub mod trace;

/// Errors of the simulator.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// Bad policy name or parameter.
    #[error("{0}")]
    Policy(String),
    /// Bad cache size.
    #[error("{0}")]
    Size(String),
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] sifter_trace::TraceError),
    /// A temporary file of a streaming sweep could not be written or read.
    #[error("{0}")]
    Io(String),
    /// Bad input to a sweep (an empty trace, sizes that give no cache, byte mode on a trace
    /// without sizes, ...).
    #[error("{0}")]
    Input(String),
    /// The sweep was stopped (Ctrl-C) before any result was complete.
    #[error("{0}")]
    Stopped(String),
}

//! # sifter-model
//!
//! Queueing models that predict a cache's throughput from its hit ratio (Qiu, Yang,
//! Harchol-Balter, "Can increasing the hit ratio hurt cache throughput?"): a cache is a closed
//! network ([`network`]) of concurrent work (lookup, disk: think time) and shared structures
//! that serve one request at a time (list locks, head/tail pointers: FCFS stations). Built-in
//! networks for LRU, FIFO, probabilistic LRU, CLOCK, SLRU, S3-FIFO, SIEVE and Mobius
//! ([`policies`]); three solvers ([`solve::bound`], [`solve::mva`], [`sim::simulate`]) and the
//! critical hit ratio [`solve::pstar`].
//!
//! ```
//! use sifter_model::{policies::{build, Params}, solve::{bound, mva}};
//! let net = build("lru", &Params { hit: 0.95, disk_us: 5.0, ..Params::default() }).unwrap();
//! let b = bound(&net, 72);
//! assert_eq!(b.bottleneck, "delink"); // past p = 0.84 the hit path's delink is the bottleneck
//! assert!(mva(&net, 72).x <= b.x + 1e-9);
//! ```

pub mod advise;
pub mod network;
pub mod policies;
pub mod sim;
pub mod solve;

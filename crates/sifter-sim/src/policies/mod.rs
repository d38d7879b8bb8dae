//! The policies, one file each; each file opens with its algorithm and source.

pub mod arc;
pub mod belady;
pub mod blru;
pub mod cacheus;
pub mod clock;
pub mod clockpro;
pub mod fifo;
pub mod gdsf;
pub mod hyperbolic;
pub mod lecar;
pub mod lfu;
pub mod lfuda;
pub mod lhd;
pub mod lirs;
pub mod lru;
pub mod lruk;
pub mod mobius;
pub mod multistep;
pub mod problru;
pub mod qdlp;
pub mod random;
pub mod s3fifo;
pub mod sieve;
pub mod slru;
pub mod twoq;
pub mod wtinylfu;

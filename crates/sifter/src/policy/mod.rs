//! The eviction policies behind `Cache`, over slot numbers. Each holds the slots it was given
//! and hands one back on eviction; the cache does the accounting and the reclamation.

#[cfg(not(loom))]
pub(crate) mod locked;
pub(crate) mod queues;
pub(crate) mod s3fifo;

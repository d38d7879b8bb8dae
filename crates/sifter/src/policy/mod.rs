//! The eviction policies behind `Cache`. Each keeps one link to every entry it holds and hands
//! it back on eviction; the cache does the accounting and the freeing.

#[cfg(not(loom))]
pub(crate) mod locked;
pub(crate) mod queues;

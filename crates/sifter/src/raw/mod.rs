//! The unsafe core: the lock-free queue, the entry, the index. Safe APIs are built on top in
//! `policy/` and `cache.rs`.

#[cfg(not(loom))]
pub(crate) mod entry;
#[cfg(not(loom))]
pub(crate) mod index;
pub(crate) mod queue;

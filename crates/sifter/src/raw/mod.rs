//! The unsafe core: the slot arena, the index, the lock-free queue and the epochs that decide
//! when a slot may be reused. Safe APIs are built on top in `policy/` and `cache/`.

pub(crate) mod epoch;
pub(crate) mod ghost;
pub(crate) mod index;
pub(crate) mod queue;
#[cfg(not(loom))]
pub(crate) mod slot;
pub(crate) mod state;
pub(crate) mod table;
pub(crate) mod writing;

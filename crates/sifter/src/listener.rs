//! Eviction listener: why an entry left. Delivered outside every lock, by the thread whose
//! operation made the entry leave; its panics are deferred (see `panics`).

/// Why an entry left the cache (given to the eviction listener).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RemovalCause {
    /// Evicted by the policy to make room.
    Evicted,
    /// Its expiry time passed.
    Expired,
    /// Removed explicitly: `remove`, `retain`/`remove_if`, `compute` returning
    /// [`Op::Remove`](crate::Op::Remove), or an insert whose new value was too heavy to store.
    Removed,
    /// Its value was replaced by `insert` or `compute`.
    Replaced,
    /// Removed by `clear`.
    Cleared,
}

impl RemovalCause {
    /// Whether the cache chose to drop the entry (eviction or expiry) rather than the user.
    pub fn was_evicted(self) -> bool {
        matches!(self, RemovalCause::Evicted | RemovalCause::Expired)
    }
}

pub(crate) type ListenerFn<K, V> = Box<dyn Fn(&K, &V, RemovalCause) + Send + Sync>;

//! The statistics groups both protocols report: the text protocol's `stats [group]` and the
//! binary protocol's Stat (opcode 0x10) with the group as its key. One list, so the two never
//! disagree about what a group holds.

use crate::Shared;
use std::sync::atomic::Ordering;

/// The statistics of `group` (`None`: the general ones; `settings`, `items`, `slabs`) as
/// name–value pairs in memcached's order, or `None` for a group this server does not have.
/// (`cachedump` lists items rather than statistics: the text protocol answers it itself.)
pub(crate) fn group(shared: &Shared, group: Option<&[u8]>) -> Option<Vec<(&'static str, String)>> {
    let (items, bytes, limit, st) = shared.store.stats();
    let c = &shared.config;
    let pairs: Vec<(&'static str, String)> = match group {
        None => {
            let uptime = shared.started.elapsed().as_secs();
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            vec![
                ("pid", std::process::id().to_string()),
                ("uptime", uptime.to_string()),
                ("time", now.to_string()),
                ("version", crate::MEMCACHED_VERSION.into()),
                ("libevent", "tokio".into()),
                ("pointer_size", usize::BITS.to_string()),
                // Relaxed: statistics.
                ("curr_connections", shared.conns.load(Ordering::Relaxed).to_string()),
                ("total_connections", shared.total_conns.load(Ordering::Relaxed).to_string()),
                ("cmd_get", (st.hits + st.misses).to_string()),
                ("get_hits", st.hits.to_string()),
                ("get_misses", st.misses.to_string()),
                ("curr_items", items.to_string()),
                ("total_items", (st.inserts + st.updates).to_string()),
                ("bytes", bytes.to_string()),
                ("limit_maxbytes", limit.to_string()),
                ("evictions", st.evictions.to_string()),
                ("threads", c.threads.to_string()),
                ("policy", c.policy.name().into()),
                // sifter's own: hits that wrote the policy's shared state
                // (`CacheStats::hit_writes`).
                ("policy_hit_writes", st.hit_writes.to_string()),
            ]
        }
        Some(b"settings") => vec![
            ("maxbytes", limit.to_string()),
            ("maxconns", c.max_conns.to_string()),
            ("tcpport", c.addr.port().to_string()),
            ("num_threads", c.threads.to_string()),
            ("item_size_max", c.item_max.to_string()),
            ("evictions", "on".into()),
            ("cas_enabled", "yes".into()),
            ("policy", c.policy.name().into()),
        ],
        // sifter has no slab classes: one class (1) holds every item, so the tools that read
        // these (memcached-tool, exporters) see the totals.
        Some(b"items") => vec![
            ("items:1:number", items.to_string()),
            ("items:1:evicted", st.evictions.to_string()),
            ("items:1:mem_requested", bytes.to_string()),
        ],
        Some(b"slabs") => {
            let per = if items > 0 { bytes / items as u64 } else { 0 };
            vec![
                ("1:chunk_size", per.to_string()),
                ("1:used_chunks", items.to_string()),
                ("1:total_chunks", items.to_string()),
                ("1:mem_requested", bytes.to_string()),
                ("1:get_hits", st.hits.to_string()),
                ("active_slabs", u8::from(items > 0).to_string()),
                ("total_malloced", bytes.to_string()),
            ]
        }
        Some(_) => return None,
    };
    Some(pairs)
}

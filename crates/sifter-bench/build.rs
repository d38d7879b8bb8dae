//! Records the versions of the peer caches this harness was built against (from the
//! workspace's `Cargo.lock`), so every result file can say which releases it compared:
//! `SIFTER_BENCH_PEERS` = `crate=version;…`, every peer crate in the order below, its version
//! "unknown" where the lock file is not found (a build outside the workspace) or does not name
//! it.

use std::path::Path;

/// The peers' crates, as `Cargo.lock` names them.
const PEER_CRATES: &[&str] = &["quick_cache", "moka", "mini-moka", "foyer-memory", "lru"];

fn main() {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    let mut found: Vec<(String, Vec<String>)> = Vec::new();
    // `[[package]]` blocks: `name = "…"` then `version = "…"`.
    let mut name: Option<String> = None;
    for line in text.lines() {
        let value = |key: &str| {
            line.strip_prefix(key)
                .and_then(|v| v.trim().strip_prefix('"'))
                .and_then(|v| v.strip_suffix('"'))
                .map(str::to_string)
        };
        if line == "[[package]]" {
            name = None;
        } else if let Some(n) = value("name =") {
            name = Some(n);
        } else if let (Some(n), Some(v)) = (&name, value("version =")) {
            if PEER_CRATES.contains(&n.as_str()) {
                match found.iter_mut().find(|(c, _)| c == n) {
                    Some((_, vs)) => vs.push(v),
                    None => found.push((n.clone(), vec![v])),
                }
            }
        }
    }
    // Every peer, in this order; "unknown" where the lock does not name it.
    let peers: Vec<String> = PEER_CRATES
        .iter()
        .map(|c| match found.iter().find(|(n, _)| n == c) {
            Some((_, vs)) => format!("{c}={}", vs.join("/")),
            None => format!("{c}=unknown"),
        })
        .collect();
    println!("cargo:rustc-env=SIFTER_BENCH_PEERS={}", peers.join(";"));
}

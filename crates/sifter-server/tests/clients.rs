//! A real Rust client (the `memcache` crate) round-trips every command it has against
//! `sifter serve` on 127.0.0.1, over the binary protocol and over the text protocol (`stats`
//! over binary only: the crate's ASCII `stats` is broken, see below).

#![allow(clippy::unwrap_used)] // tests

use sifter_server::{serve, Config, Handle};
use std::collections::HashMap;

fn server() -> Handle {
    let config = Config {
        addr: "127.0.0.1:0".parse().unwrap(),
        memory: 16 << 20,
        threads: 2,
        ..Config::default()
    };
    serve(config).unwrap()
}

fn binary(url: &str) -> bool {
    url.contains("protocol=binary")
}

fn round_trip(url: &str) {
    let c = memcache::connect(url).unwrap();
    assert!(c.version().unwrap()[0].1.starts_with("1.6"), "{url}");
    c.flush().unwrap();
    // set / get / gets
    c.set("foo", "bar", 0).unwrap();
    assert_eq!(c.get::<String>("foo").unwrap().as_deref(), Some("bar"), "{url}");
    assert_eq!(c.get::<String>("nope").unwrap(), None, "{url}");
    c.set("n1", 1u64, 0).unwrap();
    let many: HashMap<String, String> = c.gets(&["foo", "n1", "nope"]).unwrap();
    assert_eq!(many.len(), 2, "{url}: {many:?}");
    assert_eq!(many["foo"], "bar");
    // add / replace
    // (The crate reports a refused add/replace as an error over binary and as Ok over ASCII,
    // where it maps NOT_STORED to Ok: the stored values tell.)
    let refused = c.add("foo", "x", 0);
    assert!(binary(url) == refused.is_err(), "{url}: {refused:?}");
    assert_eq!(c.get::<String>("foo").unwrap().as_deref(), Some("bar"), "{url}: add kept it");
    c.add("fresh", "y", 0).unwrap();
    c.replace("fresh", "z", 0).unwrap();
    let refused = c.replace("absent", "z", 0);
    assert!(binary(url) == refused.is_err(), "{url}: {refused:?}");
    assert_eq!(c.get::<String>("absent").unwrap(), None, "{url}: replace stored nothing");
    assert_eq!(c.get::<String>("fresh").unwrap().as_deref(), Some("z"));
    // append / prepend
    c.prepend("foo", "<").unwrap();
    c.append("foo", ">").unwrap();
    assert_eq!(c.get::<String>("foo").unwrap().as_deref(), Some("<bar>"), "{url}");
    // increment / decrement
    c.set("counter", 40u64, 0).unwrap();
    assert_eq!(c.increment("counter", 2).unwrap(), 42, "{url}");
    assert_eq!(c.decrement("counter", 50).unwrap(), 0, "{url}: decr stops at 0");
    // touch
    assert!(c.touch("foo", 100).unwrap(), "{url}");
    assert!(!c.touch("absent", 100).unwrap(), "{url}");
    // cas
    let v: HashMap<String, (Vec<u8>, u32, Option<u64>)> = c.gets(&["foo"]).unwrap();
    let cas = v["foo"].2.unwrap();
    assert!(c.cas("foo", "new", 0, cas).unwrap(), "{url}: cas with the current unique");
    assert!(!c.cas("foo", "newer", 0, cas).unwrap(), "{url}: cas with a stale unique");
    assert_eq!(c.get::<String>("foo").unwrap().as_deref(), Some("new"));
    // delete
    assert!(c.delete("foo").unwrap(), "{url}");
    assert!(!c.delete("foo").unwrap(), "{url}");
    // a large value
    let big = "x".repeat(500_000);
    c.set("big", big.as_str(), 0).unwrap();
    assert_eq!(c.get::<String>("big").unwrap().map(|s| s.len()), Some(500_000), "{url}");
    // flush
    c.flush().unwrap();
    assert_eq!(c.get::<String>("fresh").unwrap(), None, "{url}");
    // stats (binary only: the crate's ASCII `stats` stops at the first STAT line — its test
    // of the END line is inverted — and leaves the rest unread; a client bug, not a server one)
    if binary(url) {
        c.set("one", "1", 0).unwrap();
        let stats = c.stats().unwrap();
        let s = &stats[0].1;
        assert!(s.get("curr_items").is_some_and(|n| n.trim() == "1"), "{url}: {s:?}");
    }
}

#[test]
fn the_memcache_crate_round_trips_every_command_in_both_protocols() {
    let h = server();
    let port = h.addr.port();
    round_trip(&format!("memcache://127.0.0.1:{port}?timeout=10&protocol=binary"));
    round_trip(&format!("memcache://127.0.0.1:{port}?timeout=10&protocol=ascii"));
    h.shutdown();
}

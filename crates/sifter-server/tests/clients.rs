//! Real Rust clients round-trip every command they have against `sifter serve` on 127.0.0.1:
//! the `memcache` crate over the binary protocol and over the text protocol (`stats` over
//! binary only: the crate's ASCII `stats` is broken, see below), and `async-memcached`
//! (Shopify's tokio client) over the meta commands — mg, ms, md, ma (increment and
//! decrement), the pipelined multi-get and multi-set, quiet mode, opaque tokens, the common
//! flags — and its ASCII commands, each checked by reading the value back.

#![allow(clippy::unwrap_used)] // tests

use async_memcached::{AsciiProtocol, Client, MetaProtocol, Status};
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

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

#[test]
fn meta_commands_round_trip() {
    let h = server();
    let addr = h.addr;
    runtime().block_on(async move {
        let mut c = Client::new(format!("tcp://{addr}")).await.unwrap();
        assert!(c.version().await.unwrap().starts_with("1.6"));
        c.flush_all().await.unwrap();

        // ms with flags, TTL and a returned CAS; mg returning value, flags, CAS, TTL, size, key.
        let set = c
            .meta_set("mk", "hello", false, Some(b"op1"), Some(&["F7", "T300", "c"]))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(set.opaque_token.as_deref(), Some(&b"op1"[..]), "opaque echoed: {set:?}");
        let cas = set.cas.expect("ms with c returns the CAS");
        let got = c
            .meta_get("mk", false, Some(b"op2"), Some(&["v", "f", "c", "t", "s", "k"]))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got.data.as_deref(), Some(&b"hello"[..]), "{got:?}");
        assert_eq!(got.flags, Some(7));
        assert_eq!(got.cas, Some(cas));
        assert_eq!(got.size, Some(5));
        assert_eq!(got.key.as_deref(), Some(&b"mk"[..]));
        assert_eq!(got.opaque_token.as_deref(), Some(&b"op2"[..]));
        let ttl = got.ttl_remaining.unwrap();
        assert!((295..=300).contains(&ttl), "ttl {ttl}");

        // A miss, loud and quiet.
        assert_eq!(c.meta_get("absent", false, None, Some(&["v"])).await.unwrap(), None);
        assert_eq!(c.meta_get("absent", true, None, Some(&["v"])).await.unwrap(), None);

        // Compare-and-swap through ms C<cas>: the stale CAS is refused with EX.
        c.meta_set("mk", "world", false, None, Some(&[&format!("C{cas}")])).await.unwrap();
        let stale = c.meta_set("mk", "again", false, None, Some(&[&format!("C{cas}")])).await;
        match stale {
            Ok(Some(v)) => assert_eq!(v.status, Some(Status::Exists), "{v:?}"),
            Err(e) => assert!(format!("{e:?}").contains("Exists"), "{e:?}"),
            Ok(None) => panic!("a stale CAS was accepted"),
        }
        let v = c.meta_get("mk", false, None, Some(&["v"])).await.unwrap().unwrap();
        assert_eq!(v.data.as_deref(), Some(&b"world"[..]));

        // ms modes: add (ME) refused on an existing key, append (MA) and prepend (MP).
        let add = c.meta_set("mk", "x", false, None, Some(&["ME"])).await;
        match add {
            Ok(Some(v)) => assert_eq!(v.status, Some(Status::NotStored), "{v:?}"),
            Err(e) => assert!(format!("{e:?}").contains("NotStored"), "{e:?}"),
            Ok(None) => panic!("add over an existing key stored"),
        }
        c.meta_set("mk", "!", false, None, Some(&["MA"])).await.unwrap();
        c.meta_set("mk", "<", false, None, Some(&["MP"])).await.unwrap();
        let v = c.meta_get("mk", false, None, Some(&["v"])).await.unwrap().unwrap();
        assert_eq!(v.data.as_deref(), Some(&b"<world!"[..]));

        // ma: increment and decrement with deltas, the value returned (v); a miss.
        c.meta_set("n", "40", false, None, None).await.unwrap();
        let inc = c.meta_increment("n", false, None, Some(2), Some(&["v"])).await.unwrap();
        assert_eq!(inc.unwrap().data.as_deref(), Some(&b"42"[..]));
        let dec = c.meta_decrement("n", false, None, Some(50), Some(&["v"])).await.unwrap();
        assert_eq!(dec.unwrap().data.as_deref(), Some(&b"0"[..]), "decrement stops at 0");
        assert!(c.meta_increment("absent", false, None, None, None).await.is_err());

        // md: delete, then the key is gone; deleting again is a miss.
        c.meta_delete("mk", false, None, None).await.unwrap();
        assert_eq!(c.meta_get("mk", false, None, Some(&["v"])).await.unwrap(), None);
        assert!(c.meta_delete("mk", false, None, None).await.is_err());

        // Pipelined quiet ms + mn and mg + mn: only refusals and hits come back.
        let items: Vec<(String, String)> =
            (0..50).map(|i| (format!("multi{i}"), format!("value{i}"))).collect();
        let pairs: Vec<(&str, &str)> = items.iter().map(|(k, v)| (&k[..], &v[..])).collect();
        let refused = c.meta_set_multi(&pairs, Some(&["T0"])).await.unwrap();
        assert!(refused.is_empty(), "{refused:?}");
        let mut keys: Vec<String> = items.iter().map(|(k, _)| k.clone()).collect();
        keys.push("not-there".into());
        let hits = c.meta_get_multi(&keys, Some(&["v"])).await.unwrap();
        assert_eq!(hits.len(), 50);
        for h in &hits {
            let k = String::from_utf8(h.key.clone().unwrap()).unwrap();
            let i: usize = k.trim_start_matches("multi").parse().unwrap();
            assert_eq!(h.data.as_deref(), Some(format!("value{i}").as_bytes()));
        }

        // The connection is still in step: one more plain round trip.
        c.meta_set("last", "1", false, None, None).await.unwrap();
        assert!(c.meta_get("last", false, None, Some(&["v"])).await.unwrap().is_some());
    });
    h.shutdown();
}

#[test]
fn ascii_commands_round_trip() {
    let h = server();
    let addr = h.addr;
    runtime().block_on(async move {
        let mut c = Client::new(format!("tcp://{addr}")).await.unwrap();
        c.set("a", "1", None, Some(3)).await.unwrap();
        let v = c.get("a").await.unwrap().unwrap();
        assert_eq!((v.data.as_deref(), v.flags), (Some(&b"1"[..]), Some(3)));
        assert!(c.add("a", "2", None, None).await.is_err(), "add over an existing key");
        c.add("b", "2", Some(100), None).await.unwrap();
        let many = c.get_multi(["a", "b", "c"]).await.unwrap();
        assert_eq!(many.len(), 2);
        let r = c.set_multi(&[("x", "1"), ("y", "2")], None, None).await.unwrap();
        assert!(r.values().all(|r| r.is_ok()), "{r:?}");
        assert_eq!(c.increment("a", 41).await.unwrap(), 42);
        assert_eq!(c.decrement("a", 2).await.unwrap(), 40);
        c.increment_no_reply("a", 1).await.unwrap();
        assert_eq!(c.get("a").await.unwrap().unwrap().data.as_deref(), Some(&b"41"[..]));
        c.delete("b").await.unwrap();
        assert!(c.get("b").await.unwrap().is_none());
        c.delete_no_reply("x").await.unwrap();
        c.delete_multi_no_reply(&["y"]).await.unwrap();
        // (The crate reports a multi-get without a single hit as a `NotFound` error.)
        match c.get_multi(["x", "y"]).await {
            Ok(v) => assert!(v.is_empty(), "{v:?}"),
            Err(e) => assert!(format!("{e:?}").contains("NotFound"), "{e:?}"),
        }
        let stats = c.stats().await.unwrap();
        assert!(stats.contains_key("curr_items"), "{stats:?}");
    });
    h.shutdown();
}

//! A real Rust client of the meta protocol (`async-memcached`, Shopify's tokio client) against
//! `sifter serve` on 127.0.0.1: every meta command it has (mg, ms, md, ma — increment and
//! decrement —, the pipelined multi-get and multi-set, quiet mode, opaque tokens, the common
//! flags) and its ASCII commands, each checked by reading the value back.

#![allow(clippy::unwrap_used)] // tests

use async_memcached::{AsciiProtocol, Client, MetaProtocol, Status};
use sifter_server::{serve, Config, Handle};

fn server() -> Handle {
    let config = Config {
        addr: "127.0.0.1:0".parse().unwrap(),
        memory: 16 << 20,
        threads: 2,
        ..Config::default()
    };
    serve(config).unwrap()
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

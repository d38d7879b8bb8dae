//! KVTG against a `sifter serve` on 127.0.0.1 (in-process), and against misbehaving servers.

#![allow(clippy::unwrap_used)] // tests

use sifter_kvtg::{run, Config, Error, KeySpec, Length, Mix, Op, Protocol, ValueSize};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

fn server(memory: u64) -> sifter_server::Handle {
    sifter_server::serve(sifter_server::Config {
        addr: "127.0.0.1:0".parse().unwrap(),
        memory,
        threads: 2,
        ..sifter_server::Config::default()
    })
    .unwrap()
}

fn config(h: &sifter_server::Handle) -> Config {
    Config {
        server: h.addr,
        keys: KeySpec::Zipf { alpha: 1.0, n: 2000 },
        conns: 4,
        pipeline: 4,
        measure: Length::Requests(20_000),
        timeout: Duration::from_secs(20),
        ..Config::default()
    }
}

fn counts(p: &sifter_kvtg::PhaseReport, op: Op) -> sifter_kvtg::OpCounts {
    p.per_op.iter().find(|(o, _)| *o == op).map(|(_, c)| c.clone()).unwrap_or_default()
}

#[test]
fn a_filled_cache_answers_every_get_in_both_protocols() {
    let h = server(64 << 20);
    for protocol in [Protocol::Text, Protocol::Binary] {
        let c = Config {
            protocol,
            fill_sets: 2000,
            mix: Mix::parse("get=1").unwrap(),
            values: ValueSize::Uniform(1, 3000),
            ..config(&h)
        };
        let r = run(&c, None).unwrap();
        assert_eq!(r.phases.len(), 2, "{protocol:?}");
        let fill = &r.phases[0];
        assert_eq!(fill.name, "fill");
        assert_eq!(counts(fill, Op::Set).done, 2000);
        assert_eq!(counts(fill, Op::Set).ok, 2000, "{protocol:?}: every fill SET stored");
        let m = r.measured().unwrap();
        assert_eq!(m.ops, 20_000, "{protocol:?}: exactly the requests asked for");
        assert_eq!(m.hit_ratio(), Some(1.0), "{protocol:?}: every key was filled");
        assert_eq!(m.errors(), 0);
        assert!(m.latency.p50 > 0.0 && m.latency.p50 <= m.latency.p99);
        assert!(m.latency.p99 <= m.latency.max);
        assert_eq!(m.histogram.len(), 20_000);
    }
    h.shutdown();
}

#[test]
fn the_mix_is_followed_and_counted() {
    let h = server(64 << 20);
    let c = Config {
        mix: Mix::parse("get=0.5,set=0.2,add=0.1,replace=0.1,delete=0.05,touch=0.05").unwrap(),
        warmup: Some(Length::Requests(2000)),
        ..config(&h)
    };
    let r = run(&c, None).unwrap();
    assert_eq!(r.phases.iter().map(|p| p.name).collect::<Vec<_>>(), ["warmup", "measure"]);
    let m = r.measured().unwrap();
    assert_eq!(m.ops, 20_000);
    for (op, w) in c.mix.weights() {
        let share = counts(m, op).done as f64 / m.ops as f64;
        assert!((share - w).abs() < 0.03, "{op:?}: share {share} for weight {w}");
        let k = counts(m, op);
        assert_eq!(k.ok + k.not + k.errors, k.done, "{op:?}");
    }
    assert_eq!(m.errors(), 0);
    // With sets in the mix, some gets hit and some adds find the key already there.
    assert!(counts(m, Op::Get).ok > 0 && counts(m, Op::Add).not > 0);
    h.shutdown();
}

#[test]
fn read_through_fills_misses_and_a_small_cache_evicts() {
    // 256 KiB holds a few hundred 1000-byte items of the 2000 keys.
    let h = server(256 << 10);
    let c = Config {
        mix: Mix::parse("get=1").unwrap(),
        values: ValueSize::Fixed(1000),
        fill_on_miss: true,
        ..config(&h)
    };
    let r = run(&c, None).unwrap();
    let m = r.measured().unwrap();
    let get = counts(m, Op::Get);
    let fill = counts(m, Op::Fill);
    assert!(fill.done > 0 && fill.done <= get.not, "fills {} for misses {}", fill.done, get.not);
    let hr = m.hit_ratio().unwrap();
    assert!(hr > 0.2 && hr < 0.98, "hit ratio {hr}: the cache holds part of the popular keys");
    h.shutdown();
}

#[test]
fn open_loop_keeps_the_schedule() {
    let h = server(64 << 20);
    let c = Config {
        rate: Some(4000.0),
        measure: Length::Time(Duration::from_millis(500)),
        ..config(&h)
    };
    let t = Instant::now();
    let r = run(&c, None).unwrap();
    let m = r.measured().unwrap();
    assert!(t.elapsed() < Duration::from_secs(10));
    assert!(
        (1600..=2400).contains(&m.ops),
        "{} requests at 4000/s for 0.5 s (each connection sends on its own schedule)",
        m.ops
    );
    h.shutdown();
}

#[test]
fn progress_is_reported() {
    let h = server(64 << 20);
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let s = seen.clone();
    let c = Config { measure: Length::Time(Duration::from_millis(600)), ..config(&h) };
    run(
        &c,
        Some(std::sync::Arc::new(move |phase: &'static str, n: u64| {
            assert_eq!(phase, "measure");
            s.fetch_max(n, std::sync::atomic::Ordering::Relaxed);
        })),
    )
    .unwrap();
    assert!(seen.load(std::sync::atomic::Ordering::Relaxed) > 0);
    h.shutdown();
}

/// A server that reads requests and answers each line with `reply` (or nothing).
fn fake_server(reply: Option<&'static [u8]>, close: bool) -> std::net::SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            std::thread::spawn(move || {
                let mut b = [0u8; 4096];
                loop {
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {
                            if close {
                                return;
                            }
                            if let Some(r) = reply {
                                let _ = s.write_all(r);
                            }
                        }
                    }
                }
            });
        }
    });
    addr
}

fn quick(addr: std::net::SocketAddr) -> Config {
    Config {
        server: addr,
        conns: 1,
        measure: Length::Requests(10),
        mix: Mix::parse("get=1").unwrap(),
        timeout: Duration::from_millis(500),
        ..Config::default()
    }
}

#[test]
fn misbehaving_servers_end_the_run_with_an_error_naming_it() {
    let e = run(&quick(fake_server(Some(b"HELLO THERE\r\n"), false)), None).unwrap_err();
    assert!(
        matches!(&e, Error::Protocol { op: "get", reply, .. } if reply == "HELLO THERE"),
        "{e}"
    );
    let e = run(&quick(fake_server(None, false)), None).unwrap_err();
    assert!(matches!(e, Error::Timeout { .. }), "{e}");
    assert!(e.to_string().contains("no reply within"), "{e}");
    let e = run(&quick(fake_server(None, true)), None).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
    // Nobody listening.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let e = run(&quick(closed), None).unwrap_err();
    assert!(e.to_string().contains("connection 0"), "{e}");
}

#[test]
fn bad_settings_are_refused_with_their_name() {
    for (spec, word) in [
        ("zipf:alpha=-1,n=10", "alpha"),
        ("zipf:n=10,beta=2", "beta"),
        ("normal:n=0", "n"),
        ("pareto:n=10", "expected"),
        ("trace:/no/such/file", "no such file"),
    ] {
        let e = KeySpec::parse(spec).and_then(|k| k.validate());
        assert!(e.as_ref().is_err_and(|e| e.to_string().contains(word)), "{spec}: {e:?}");
    }
    for (spec, word) in [("get=1,put=1", "put"), ("get=0", "no request type"), ("get=x", "x")] {
        let e = Mix::parse(spec).unwrap_err().to_string();
        assert!(e.contains(word), "{spec}: {e}");
    }
    for spec in ["uniform:9-3", "normal:mean=0,sd=1", "abc"] {
        assert!(ValueSize::parse(spec).is_err(), "{spec}");
    }
    let bad = [
        Config { conns: 0, ..Config::default() },
        Config { threads: 1025, ..Config::default() },
        Config { key_size: 251, ..Config::default() },
        Config { rate: Some(0.0), ..Config::default() },
        Config { measure: Length::Requests(0), ..Config::default() },
    ];
    for c in bad {
        assert!(matches!(run(&c, None), Err(Error::Config(_))), "{c:?}");
    }
}

#[test]
fn trace_keys_are_replayed() {
    let h = server(64 << 20);
    let c = Config {
        keys: KeySpec::parse("trace:zipf:alpha=0.8,n=500,requests=3000,seed=3").unwrap(),
        mix: Mix::parse("get=0.7,set=0.3").unwrap(),
        measure: Length::Requests(8000),
        ..config(&h)
    };
    let r = run(&c, None).unwrap();
    let m = r.measured().unwrap();
    assert_eq!(m.ops, 8000, "the trace restarts at its end");
    assert!(m.hit_ratio().unwrap() > 0.3);
    h.shutdown();
}

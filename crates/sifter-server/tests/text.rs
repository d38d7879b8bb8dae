//! The text protocol over real sockets on 127.0.0.1: every command, noreply, pipelining,
//! errors that keep the connection usable, oversized items, long lines, byte-bounded memory,
//! and a client that never reads its replies.

#![allow(clippy::unwrap_used)] // tests

use sifter_server::{serve, Config, Handle};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn server(memory: u64) -> Handle {
    let config =
        Config { addr: "127.0.0.1:0".parse().unwrap(), memory, threads: 2, ..Config::default() };
    serve(config).unwrap()
}

struct Client {
    w: TcpStream,
    r: BufReader<TcpStream>,
}

impl Client {
    fn new(h: &Handle) -> Client {
        let w = TcpStream::connect(h.addr).unwrap();
        w.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let r = BufReader::new(w.try_clone().unwrap());
        Client { w, r }
    }
    fn send(&mut self, s: &str) {
        self.w.write_all(s.as_bytes()).unwrap();
    }
    fn line(&mut self) -> String {
        let mut l = String::new();
        self.r.read_line(&mut l).unwrap();
        l
    }
    /// Sends `cmd` and returns the first reply line.
    fn ask(&mut self, cmd: &str) -> String {
        self.send(cmd);
        self.line()
    }
    /// Lines up to and including `END`.
    fn until_end(&mut self) -> Vec<String> {
        let mut v = Vec::new();
        loop {
            let l = self.line();
            let end = l == "END\r\n" || l.is_empty();
            v.push(l);
            if end {
                return v;
            }
        }
    }
}

#[test]
fn storage_and_retrieval_commands() {
    let h = server(64 << 20);
    let mut c = Client::new(&h);
    assert_eq!(c.ask("set a 5 0 5\r\nhello\r\n"), "STORED\r\n");
    c.send("get a\r\n");
    assert_eq!(c.until_end(), ["VALUE a 5 5\r\n", "hello\r\n", "END\r\n"]);
    assert_eq!(c.ask("add a 0 0 1\r\nx\r\n"), "NOT_STORED\r\n");
    assert_eq!(c.ask("add b 0 0 1\r\nx\r\n"), "STORED\r\n");
    assert_eq!(c.ask("replace zz 0 0 1\r\nx\r\n"), "NOT_STORED\r\n");
    assert_eq!(c.ask("replace b 0 0 1\r\ny\r\n"), "STORED\r\n");
    assert_eq!(c.ask("append a 0 0 6\r\n world\r\n"), "STORED\r\n");
    assert_eq!(c.ask("prepend a 0 0 1\r\n>\r\n"), "STORED\r\n");
    assert_eq!(c.ask("append nope 0 0 1\r\nx\r\n"), "NOT_STORED\r\n");
    c.send("gets a b missing\r\n");
    let v = c.until_end();
    assert_eq!(v.len(), 5, "{v:?}");
    assert!(v[0].starts_with("VALUE a 5 12 "), "{v:?}");
    assert_eq!(v[1], ">hello world\r\n");
    let cas: u64 = v[0].trim_end().rsplit(' ').next().unwrap().parse().unwrap();
    assert_eq!(c.ask(&format!("cas a 1 0 2 {}\r\nok\r\n", cas + 1000)), "EXISTS\r\n");
    assert_eq!(c.ask(&format!("cas a 1 0 2 {cas}\r\nok\r\n")), "STORED\r\n");
    assert_eq!(c.ask(&format!("cas a 1 0 2 {cas}\r\nok\r\n")), "EXISTS\r\n");
    assert_eq!(c.ask("cas nope 0 0 1 1\r\nx\r\n"), "NOT_FOUND\r\n");
    assert_eq!(c.ask("delete b\r\n"), "DELETED\r\n");
    assert_eq!(c.ask("delete b\r\n"), "NOT_FOUND\r\n");
    assert_eq!(c.ask("set n 0 0 2\r\n10\r\n"), "STORED\r\n");
    assert_eq!(c.ask("incr n 5\r\n"), "15\r\n");
    assert_eq!(c.ask("decr n 100\r\n"), "0\r\n");
    assert_eq!(c.ask("incr n 18446744073709551615\r\n"), "18446744073709551615\r\n");
    assert_eq!(c.ask("incr n 1\r\n"), "0\r\n", "incr wraps at 2^64");
    assert_eq!(
        c.ask("incr a 1\r\n"),
        "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
    );
    assert_eq!(c.ask("incr n x\r\n"), "CLIENT_ERROR invalid numeric delta argument\r\n");
    assert_eq!(c.ask("incr zz 1\r\n"), "NOT_FOUND\r\n");
    assert_eq!(c.ask("touch n 100\r\n"), "TOUCHED\r\n");
    assert_eq!(c.ask("touch zz 100\r\n"), "NOT_FOUND\r\n");
    assert!(c.ask("version\r\n").starts_with("VERSION 1.6"));
    assert_eq!(c.ask("verbosity 1\r\n"), "OK\r\n");
    assert_eq!(c.ask("flush_all\r\n"), "OK\r\n");
    c.send("get a n\r\n");
    assert_eq!(c.until_end(), ["END\r\n"]);
    c.send("stats\r\n");
    let s = c.until_end();
    assert!(s.iter().any(|l| l.starts_with("STAT curr_items ")), "{s:?}");
    let stat = |name: &str| -> u64 {
        let l = s.iter().find(|l| l.starts_with(&format!("STAT {name} "))).unwrap();
        l.trim_end().rsplit(' ').next().unwrap().parse().unwrap()
    };
    // sifter's own: the hits that wrote the policy's state, some of the hits at most.
    assert!(stat("policy_hit_writes") <= stat("get_hits"), "{s:?}");
    assert_eq!(s.last().unwrap(), "END\r\n");
    h.shutdown();
}

#[test]
fn noreply_pipelining_and_errors_keep_the_connection() {
    let h = server(64 << 20);
    let mut c = Client::new(&h);
    // Pipelined: replies in order; noreply commands answer nothing.
    c.send("set a 0 0 1 noreply\r\n1\r\nadd a 0 0 1 noreply\r\n2\r\nincr a 1 noreply\r\ndelete zz noreply\r\nget a\r\nversion\r\n");
    assert_eq!(c.until_end(), ["VALUE a 0 1\r\n", "2\r\n", "END\r\n"]);
    assert!(c.line().starts_with("VERSION"));
    // Malformed lines: an error each, the connection goes on.
    assert_eq!(c.ask("bogus\r\n"), "ERROR\r\n");
    assert_eq!(c.ask("\r\n"), "ERROR\r\n");
    assert_eq!(c.ask("get\r\n"), "ERROR\r\n");
    assert_eq!(c.ask("set a x 0 1\r\n"), "CLIENT_ERROR bad command line format\r\n");
    let long = "k".repeat(251);
    assert_eq!(c.ask(&format!("get {long}\r\n")), "CLIENT_ERROR bad command line format\r\n");
    assert!(c.ask("delete a b c d e\r\n").starts_with("CLIENT_ERROR"));
    assert_eq!(c.ask("verbosity\r\n"), "ERROR\r\n");
    assert_eq!(c.ask("stats noreply\r\n"), "ERROR\r\n");
    // A block longer than announced: memcached 1.6 consumes the announced bytes and two more,
    // then reads the rest ("\n" here) as a command line.
    assert_eq!(c.ask("set a 0 0 2\r\nabc\r\n"), "CLIENT_ERROR bad data chunk\r\n");
    assert_eq!(c.line(), "ERROR\r\n");
    assert_eq!(
        c.ask("set a 0 0 2\r\nabcdefghij klm\r\nget nothere\r\n"),
        "CLIENT_ERROR bad data chunk\r\n"
    );
    assert_eq!(c.line(), "ERROR\r\n");
    assert_eq!(c.line(), "END\r\n");
    assert!(c.ask("version\r\n").starts_with("VERSION"));
    // An item over the size limit: refused, and its data block consumed.
    let big = "x".repeat((1 << 20) + 1);
    assert_eq!(
        c.ask(&format!("set big 0 0 {}\r\n{big}\r\n", big.len())),
        "SERVER_ERROR object too large for cache\r\n"
    );
    assert!(c.ask("version\r\n").starts_with("VERSION"));
    // Expiry: negative = already expired.
    assert_eq!(c.ask("set e 0 -1 1\r\nx\r\n"), "STORED\r\n");
    c.send("get e\r\n");
    assert_eq!(c.until_end(), ["END\r\n"]);
    c.send("quit\r\n");
    let mut buf = [0u8; 1];
    assert_eq!(c.r.read(&mut buf).unwrap(), 0, "quit closes the connection");
    h.shutdown();
}

#[test]
fn a_line_without_newline_past_the_limit_closes_only_that_connection() {
    let h = server(64 << 20);
    let mut bad = Client::new(&h);
    let mut good = Client::new(&h);
    bad.send(&"x".repeat(20_000));
    let l = bad.line();
    assert!(l.starts_with("CLIENT_ERROR"), "{l:?}");
    let mut buf = [0u8; 1];
    assert_eq!(bad.r.read(&mut buf).unwrap(), 0);
    assert!(good.ask("version\r\n").starts_with("VERSION"));
    h.shutdown();
}

#[test]
fn memory_is_bounded_in_bytes() {
    let h = server(1 << 20);
    let mut c = Client::new(&h);
    let v = "v".repeat(1000);
    for i in 0..5000 {
        c.send(&format!("set key{i} 0 0 {}\r\n{v}\r\n", v.len()));
        assert_eq!(c.line(), "STORED\r\n");
    }
    c.send("stats\r\n");
    let s = c.until_end();
    let get = |name: &str| -> u64 {
        let l = s.iter().find(|l| l.starts_with(&format!("STAT {name} "))).unwrap();
        l.trim_end().rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert!(get("bytes") <= 1 << 20, "{s:?}");
    assert!(get("curr_items") < 1100 && get("curr_items") > 500, "{s:?}");
    assert!(get("evictions") > 3000, "{s:?}");
    h.shutdown();
}

#[test]
fn a_client_that_never_reads_blocks_no_one() {
    let h = server(64 << 20);
    let mut c = Client::new(&h);
    assert_eq!(
        c.ask(&format!("set big 0 0 {}\r\n{}\r\n", 500_000, "b".repeat(500_000))),
        "STORED\r\n"
    );
    // Another client asks for the big value over and over and never reads.
    let mut hog = TcpStream::connect(h.addr).unwrap();
    hog.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    for _ in 0..200 {
        if hog.write_all(b"get big\r\n").is_err() {
            break;
        }
    }
    // Others are served meanwhile.
    let mut other = Client::new(&h);
    for _ in 0..10 {
        assert!(other.ask("version\r\n").starts_with("VERSION"));
    }
    drop(hog);
    h.shutdown();
}

/// The binary protocol, chosen by the connection's first byte: set, get, a quiet miss, noop.
#[test]
fn binary_protocol_round_trip() {
    let h = server(64 << 20);
    let mut s = TcpStream::connect(h.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let req = |op: u8, extras: &[u8], key: &[u8], value: &[u8]| {
        let mut r = vec![0x80, op];
        r.extend_from_slice(&(key.len() as u16).to_be_bytes());
        r.push(extras.len() as u8);
        r.extend_from_slice(&[0, 0, 0]);
        r.extend_from_slice(&((extras.len() + key.len() + value.len()) as u32).to_be_bytes());
        r.extend_from_slice(&[0; 12]);
        r.extend_from_slice(extras);
        r.extend_from_slice(key);
        r.extend_from_slice(value);
        r
    };
    let mut all = req(0x01, &[0, 0, 0, 7, 0, 0, 0, 0], b"k", b"hello"); // set, flags 7
    all.extend(req(0x09, &[], b"missing", b"")); // getq miss: no reply
    all.extend(req(0x00, &[], b"k", b"")); // get
    all.extend(req(0x0a, &[], b"", b"")); // noop
    s.write_all(&all).unwrap();
    let mut read = |n: usize| {
        let mut b = vec![0u8; n];
        s.read_exact(&mut b).unwrap();
        b
    };
    let set = read(24);
    assert_eq!((set[0], set[1], &set[6..8]), (0x81, 0x01, &[0u8, 0][..]));
    let get = read(24);
    assert_eq!((get[1], &get[6..8]), (0x00, &[0u8, 0][..]));
    let body = read(u32::from_be_bytes([get[8], get[9], get[10], get[11]]) as usize);
    assert_eq!(&body[..4], &[0, 0, 0, 7]);
    assert_eq!(&body[4..], b"hello");
    let noop = read(24);
    assert_eq!(noop[1], 0x0a, "the quiet miss answered nothing");
    h.shutdown();
}

#[test]
fn stats_items_slabs_and_cachedump_describe_the_items() {
    let h = server(64 << 20);
    let mut c = Client::new(&h);
    assert_eq!(c.ask("set a 0 0 3\r\nabc\r\n"), "STORED\r\n");
    assert_eq!(c.ask("set b 0 100 5\r\nhello\r\n"), "STORED\r\n");
    c.send("stats items\r\n");
    let s = c.until_end();
    assert!(s.contains(&"STAT items:1:number 2\r\n".to_string()), "{s:?}");
    c.send("stats slabs\r\n");
    let s = c.until_end();
    assert!(s.contains(&"STAT 1:used_chunks 2\r\n".to_string()), "{s:?}");
    assert!(s.contains(&"STAT active_slabs 1\r\n".to_string()), "{s:?}");
    c.send("stats cachedump 1 0\r\n");
    let mut s = c.until_end();
    assert_eq!(s.pop().unwrap(), "END\r\n");
    s.sort();
    assert_eq!(s[0], "ITEM a [3 b; 0 s]\r\n");
    let exp: u64 = s[1]
        .strip_prefix("ITEM b [5 b; ")
        .and_then(|r| r.strip_suffix(" s]\r\n"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{:?}", s[1]));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert!((now + 95..=now + 105).contains(&exp), "expiry {exp} is not about now + 100");
    c.send("stats cachedump 1 1\r\n");
    assert_eq!(c.until_end().len(), 2, "the limit is honoured");
    c.send("stats cachedump 2 0\r\n");
    assert_eq!(c.until_end(), ["END\r\n"]);
    assert_eq!(c.ask("stats cachedump x\r\n"), "CLIENT_ERROR bad command line format\r\n");
    assert_eq!(c.ask("stats detail on\r\n"), "ERROR\r\n");
    h.shutdown();
}

#[test]
fn cache_memlimit_lowers_and_restores_the_byte_bound() {
    let h = server(32 << 20);
    let mut c = Client::new(&h);
    let v = "v".repeat(4000);
    for i in 0..6000 {
        c.send(&format!("set key{i} 0 0 {} noreply\r\n{v}\r\n", v.len()));
    }
    let stat = |c: &mut Client, cmd: &str, name: &str| -> u64 {
        c.send(cmd);
        let s = c.until_end();
        let l = s.iter().find(|l| l.starts_with(&format!("STAT {name} "))).unwrap();
        l.trim_end().rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert!(stat(&mut c, "stats\r\n", "bytes") > 16 << 20);
    assert_eq!(c.ask("cache_memlimit 8\r\n"), "OK\r\n");
    assert!(stat(&mut c, "stats\r\n", "bytes") <= 8 << 20, "evicted down to the new limit");
    assert_eq!(stat(&mut c, "stats\r\n", "limit_maxbytes"), 8 << 20);
    assert_eq!(stat(&mut c, "stats settings\r\n", "maxbytes"), 8 << 20);
    assert!(c.ask("cache_memlimit 7\r\n").starts_with("MEMLIMIT_TOO_SMALL"));
    assert!(c.ask("cache_memlimit 64\r\n").starts_with("MEMLIMIT_ADJUST_FAILED"), "above -m");
    assert!(c.ask("cache_memlimit 9999999999\r\n").starts_with("MEMLIMIT_ADJUST_FAILED"));
    assert_eq!(c.ask("cache_memlimit x\r\n"), "ERROR\r\n");
    c.send("cache_memlimit 32 noreply\r\n");
    assert_eq!(c.ask("version\r\n").split(' ').next(), Some("VERSION"), "noreply: no reply");
    assert_eq!(stat(&mut c, "stats\r\n", "limit_maxbytes"), 32 << 20);
    for i in 0..6000 {
        c.send(&format!("set key{i} 0 0 {} noreply\r\n{v}\r\n", v.len()));
    }
    assert!(stat(&mut c, "stats\r\n", "bytes") > 16 << 20, "room again after raising the limit");
    h.shutdown();
}

/// The resident memory of this process in KiB (`None` off Linux).
fn rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let l = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    l.split_whitespace().nth(1)?.parse().ok()
}

/// Setting the same keys over and over keeps the memory of one version of each: an old
/// item's data is freed once no reader can see it. (It was freed only when its slot was
/// reused: with `-m 64` and 400 keys of 64 KiB set again and again, the server grew to 2 GB
/// in 80 rounds.)
#[test]
fn updating_the_same_keys_frees_the_old_items() {
    let Some(before) = rss_kib() else {
        eprintln!("skipped: no /proc/self/status to read the resident memory from");
        return;
    };
    let h = server(4 << 20);
    let mut c = Client::new(&h);
    let v = "v".repeat(64 << 10);
    // 20 keys of 64 KiB (1.3 MB), set 300 times each: 390 MB sent.
    for round in 0..300 {
        let mut batch = String::new();
        for k in 0..20 {
            batch.push_str(&format!("set key{k} 0 0 {}\r\n{v}\r\n", v.len()));
        }
        c.send(&batch);
        for _ in 0..20 {
            assert_eq!(c.line(), "STORED\r\n", "round {round}");
        }
    }
    let grew = rss_kib().unwrap().saturating_sub(before);
    assert!(grew < 64 << 10, "the process grew by {grew} KiB for 1.3 MB of items");
    h.shutdown();
}

//! The meta commands (mn, mg, ms, md, ma, me) over a real socket on 127.0.0.1, against the
//! replies memcached 1.6 gives (`../shared/design/memcached.md`).

#![allow(clippy::unwrap_used)] // tests

use sifter_server::{serve, Config};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

struct Client {
    w: TcpStream,
    r: BufReader<TcpStream>,
}

impl Client {
    fn line(&mut self) -> String {
        let mut l = String::new();
        self.r.read_line(&mut l).unwrap();
        l
    }
    /// Sends `cmd`, returns the first reply line without its CRLF.
    fn ask(&mut self, cmd: &str) -> String {
        self.w.write_all(cmd.as_bytes()).unwrap();
        self.line().trim_end().to_string()
    }
}

fn client() -> (sifter_server::Handle, Client) {
    let config = Config {
        addr: "127.0.0.1:0".parse().unwrap(),
        memory: 64 << 20,
        threads: 2,
        ..Config::default()
    };
    let h = serve(config).unwrap();
    let w = TcpStream::connect(h.addr).unwrap();
    w.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let r = BufReader::new(w.try_clone().unwrap());
    (h, Client { w, r })
}

#[test]
fn meta_get_set_and_their_flags() {
    let (_h, mut c) = client();
    assert_eq!(c.ask("ms mk 2\r\nhi\r\n"), "HD");
    let va = c.ask("mg mk v f t s c k\r\n");
    let cas: u64 = va.split(' ').find_map(|f| f.strip_prefix('c')?.parse().ok()).unwrap();
    assert_eq!(va, format!("VA 2 f0 t-1 s2 c{cas} kmk"));
    assert_eq!(c.line(), "hi\r\n");
    // Misses: EN, hidden by q; opaque and key echoed; mn ends a quiet pipeline.
    assert_eq!(c.ask("mg missing v\r\n"), "EN");
    assert_eq!(c.ask("mg nokey q O5\r\nmn\r\n"), "MN");
    assert_eq!(c.ask("mg nokey O123 k v\r\n"), "EN O123 knokey");
    // Flags, TTL, CAS and modes of ms.
    assert_eq!(c.ask("ms f 3 F7 T100 c\r\nabc\r\n").split(' ').next(), Some("HD"));
    let hd = c.ask("mg f f t\r\n");
    assert!(hd.starts_with("HD f7 t"), "{hd}");
    let ttl: i64 = hd.rsplit('t').next().unwrap().parse().unwrap();
    assert!((99..=100).contains(&ttl), "{hd}");
    assert_eq!(c.ask(&format!("ms mk 2 C{}\r\nyo\r\n", cas + 1000)), "EX");
    assert_eq!(c.ask(&format!("ms mk 2 C{cas}\r\nyo\r\n")), "HD");
    assert_eq!(c.ask("ms mk 2 ME\r\nzz\r\n"), "NS");
    assert_eq!(c.ask("ms new 1 MR\r\nz\r\n"), "NS");
    assert_eq!(c.ask("ms mk 1 MA\r\n!\r\n"), "HD");
    assert_eq!(c.ask("ms mk 1 MP\r\n<\r\n"), "HD");
    assert_eq!(c.ask("mg mk v\r\n"), "VA 4");
    assert_eq!(c.line(), "<yo!\r\n");
    assert_eq!(c.ask("ms ap 2 MA\r\nxx\r\n"), "NS");
    assert_eq!(c.ask("ms ap 2 MA N0\r\nxx\r\n"), "HD");
    assert_eq!(c.ask("ms q 1 q\r\nx\r\nmn\r\n"), "MN");
    // h, l in request order; u does not count as an access.
    assert_eq!(c.ask("ms hl 1\r\nx\r\n"), "HD");
    assert_eq!(c.ask("mg hl h u\r\n"), "HD h0");
    assert_eq!(c.ask("mg hl h\r\n"), "HD h0");
    assert_eq!(c.ask("mg hl h l\r\n"), "HD h1 l0");
    // Base64 keys.
    assert_eq!(c.ask("ms bXlrZXk= 2 b\r\nok\r\n"), "HD");
    assert_eq!(c.ask("mg mykey v\r\n"), "VA 2");
    assert_eq!(c.line(), "ok\r\n");
    assert_eq!(c.ask("mg bXlrZXk= b k v\r\n"), "VA 2 b kbXlrZXk=");
    assert_eq!(c.line(), "ok\r\n");
    assert_eq!(c.ask("mg !!! b v\r\n"), "CLIENT_ERROR error decoding key");
}

#[test]
fn meta_errors_keep_the_connection_usable() {
    let (_h, mut c) = client();
    assert_eq!(c.ask("mg k zz\r\n"), "CLIENT_ERROR invalid flag");
    assert_eq!(c.ask("ms k\r\n"), "CLIENT_ERROR bad command line format");
    assert_eq!(c.ask("ms k bad\r\n"), "CLIENT_ERROR bad command line format");
    assert_eq!(c.ask("mg\r\n"), "ERROR");
    // A bad flag on ms: the data block is skipped, not read as a command.
    assert_eq!(c.ask("ms k 4 Z\r\nmn\r\n\r\n"), "CLIENT_ERROR invalid flag");
    assert_eq!(c.ask("mn\r\n"), "MN");
    assert_eq!(c.ask("ms k 2 MX\r\nab\r\n"), "CLIENT_ERROR invalid mode for ms");
    // memcached consumes "abcdefg" (5 + 2 bytes) and reads the "\r\n" left as an empty line.
    assert_eq!(c.ask("ms big 5\r\nabcdefg\r\n"), "CLIENT_ERROR bad data chunk");
    assert_eq!(c.line().trim_end(), "ERROR");
    assert_eq!(
        c.ask(&format!("mg {} v\r\n", "k".repeat(251))),
        "CLIENT_ERROR bad command line format"
    );
    assert_eq!(c.ask("ms huge 2000000\r\n"), "SERVER_ERROR object too large for cache");
    c.w.write_all(&vec![b'x'; 2_000_002]).unwrap();
    assert_eq!(c.ask("mn\r\n"), "MN");
}

#[test]
fn meta_delete_arithmetic_and_debug() {
    let (_h, mut c) = client();
    assert_eq!(c.ask("ms cnt 1\r\n6\r\n"), "HD");
    assert_eq!(c.ask("ma cnt v\r\n"), "VA 1");
    assert_eq!(c.line(), "7\r\n");
    assert_eq!(c.ask("ma cnt MD D5 v\r\n"), "VA 1");
    assert_eq!(c.line(), "2\r\n");
    assert_eq!(c.ask("ma cnt M- D9 v\r\n"), "VA 1");
    assert_eq!(c.line(), "0\r\n", "decrement floors at 0");
    assert_eq!(c.ask("ma cnt\r\n"), "HD");
    assert_eq!(c.ask("ma cnt q\r\nmn\r\n"), "MN");
    assert_eq!(c.ask("ma nope\r\n"), "NF");
    assert_eq!(c.ask("ma ctr N0 J10 v\r\n"), "VA 2");
    assert_eq!(c.line(), "10\r\n");
    assert_eq!(c.ask("ms txt 2\r\nab\r\n"), "HD");
    assert_eq!(c.ask("ma txt\r\n"), "CLIENT_ERROR cannot increment or decrement non-numeric value");
    assert_eq!(c.ask("md cnt\r\n"), "HD");
    assert_eq!(c.ask("md cnt\r\n"), "NF");
    assert_eq!(c.ask("md cnt q\r\nmn\r\n"), "MN");
    assert_eq!(c.ask("md ctr C1 O9\r\n"), "EX O9");
    assert_eq!(c.ask("me nope\r\n"), "EN");
    let me = c.ask("me ctr\r\n");
    assert!(me.starts_with("ME ctr exp=-1 la=") && me.contains(" fetch=no cls=1 size="), "{me}");
}

#[test]
fn meta_anti_dogpiling_tokens() {
    let (_h, mut c) = client();
    // Vivify on miss: the first client wins (W), the next ones see Z until it is replaced.
    assert_eq!(c.ask("mg viv N30 s v\r\n"), "VA 0 s0 W");
    assert_eq!(c.line(), "\r\n");
    assert_eq!(c.ask("mg viv N30 s v\r\n"), "VA 0 s0 Z");
    assert_eq!(c.line(), "\r\n");
    assert_eq!(c.ask("ms viv 3\r\nnew\r\n"), "HD");
    assert_eq!(c.ask("mg viv v\r\n"), "VA 3");
    assert_eq!(c.line(), "new\r\n");
    // Invalidation: md I marks stale (X); the first reader wins.
    assert_eq!(c.ask("md viv I T30\r\n"), "HD");
    assert_eq!(c.ask("mg viv c\r\n").split(' ').skip(2).collect::<Vec<_>>(), ["W", "X"]);
    assert_eq!(c.ask("mg viv c\r\n").split(' ').skip(2).collect::<Vec<_>>(), ["Z", "X"]);
    // Recache: with a TTL below the token, one client wins.
    assert_eq!(c.ask("ms rc 1 T10\r\nx\r\n"), "HD");
    assert_eq!(c.ask("mg rc R30\r\n"), "HD W");
    assert_eq!(c.ask("mg rc R30\r\n"), "HD Z");
    assert_eq!(c.ask("ms long 1 T1000\r\nx\r\n"), "HD");
    assert_eq!(c.ask("mg long R30\r\n"), "HD");
}

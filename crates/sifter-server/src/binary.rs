//! The memcached binary protocol (a connection whose first byte is 0x80): 24-byte headers,
//! quiet variants that answer only on error (gets: only on a hit), the opcodes memccapable
//! `-b` exercises.

use crate::store::{Delta, Mode, Stored};
use crate::Shared;

const REQ: u8 = 0x80;
const RES: u8 = 0x81;
const HEADER: usize = 24;

const OK: u16 = 0x00;
const NOT_FOUND: u16 = 0x01;
const EXISTS: u16 = 0x02;
const TOO_LARGE: u16 = 0x03;
const INVALID: u16 = 0x04;
const NOT_STORED: u16 = 0x05;
const NON_NUMERIC: u16 = 0x06;
const UNKNOWN: u16 = 0x81;

/// One request's header fields.
struct Req {
    op: u8,
    opaque: u32,
    cas: u64,
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}
fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}
fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// Appends a response.
fn respond(
    out: &mut Vec<u8>,
    r: &Req,
    status: u16,
    cas: u64,
    extras: &[u8],
    key: &[u8],
    value: &[u8],
) {
    out.push(RES);
    out.push(r.op);
    out.extend_from_slice(&(key.len() as u16).to_be_bytes());
    out.push(extras.len() as u8);
    out.push(0);
    out.extend_from_slice(&status.to_be_bytes());
    out.extend_from_slice(&((extras.len() + key.len() + value.len()) as u32).to_be_bytes());
    out.extend_from_slice(&r.opaque.to_be_bytes());
    out.extend_from_slice(&cas.to_be_bytes());
    out.extend_from_slice(extras);
    out.extend_from_slice(key);
    out.extend_from_slice(value);
}

fn error(out: &mut Vec<u8>, r: &Req, status: u16) {
    let msg: &[u8] = match status {
        NOT_FOUND => b"Not found",
        EXISTS => b"Data exists for key.",
        TOO_LARGE => b"Too large.",
        INVALID => b"Invalid arguments",
        NOT_STORED => b"Not stored.",
        NON_NUMERIC => b"Non-numeric server-side value for incr or decr",
        _ => b"Unknown command",
    };
    respond(out, r, status, 0, &[], &[], msg);
}

/// Answers every complete request at the start of `input`; returns the bytes consumed, and
/// whether the client quit.
pub(crate) fn process(
    shared: &Shared,
    input: &[u8],
    out: &mut Vec<u8>,
    max_out: usize,
) -> (usize, bool) {
    let mut pos = 0;
    while input.len() - pos >= HEADER && out.len() < max_out {
        let h = &input[pos..pos + HEADER];
        if h[0] != REQ {
            // Not a request: the stream is out of sync; close (as memcached does).
            return (input.len(), true);
        }
        let key_len = be16(&h[2..]) as usize;
        let extras_len = h[4] as usize;
        let body = be32(&h[8..]) as usize;
        if body > shared.config.item_max + 4096 || key_len + extras_len > body {
            let r = Req { op: h[1], opaque: be32(&h[12..]), cas: 0 };
            error(out, &r, if key_len + extras_len > body { INVALID } else { TOO_LARGE });
            return (input.len(), true);
        }
        if input.len() - pos < HEADER + body {
            break;
        }
        let r = Req { op: h[1], opaque: be32(&h[12..]), cas: be64(&h[16..]) };
        let b = &input[pos + HEADER..pos + HEADER + body];
        let (extras, rest) = b.split_at(extras_len);
        let (key, value) = rest.split_at(key_len);
        pos += HEADER + body;
        if request(shared, &r, extras, key, value, out) {
            return (pos, true);
        }
    }
    (pos, false)
}

/// One request; true if the connection is to close.
fn request(
    shared: &Shared,
    r: &Req,
    extras: &[u8],
    key: &[u8],
    value: &[u8],
    out: &mut Vec<u8>,
) -> bool {
    let store = &shared.store;
    let quiet = matches!(r.op, 0x09 | 0x0d | 0x11..=0x1a | 0x1e);
    let key_ok = !key.is_empty() && key.len() <= 250;
    match r.op {
        // Get, GetQ, GetK, GetKQ
        0x00 | 0x09 | 0x0c | 0x0d | 0x1d | 0x1e => {
            let touch = matches!(r.op, 0x1d | 0x1e);
            if !key_ok || extras.len() != if touch { 4 } else { 0 } || !value.is_empty() {
                error(out, r, INVALID);
                return false;
            }
            if touch {
                let e = store.expiry(be32(extras) as i64);
                if store.touch(key, e).is_none() {
                    if !quiet {
                        error(out, r, NOT_FOUND);
                    }
                    return false;
                }
            }
            match store.get(key) {
                Some(item) => {
                    let with_key = matches!(r.op, 0x0c | 0x0d);
                    respond(
                        out,
                        r,
                        OK,
                        item.cas,
                        &item.flags.to_be_bytes(),
                        if with_key { key } else { &[] },
                        &item.data,
                    );
                }
                None if quiet => {}
                None => {
                    if matches!(r.op, 0x0c) {
                        respond(out, r, NOT_FOUND, 0, &[], key, b"Not found");
                    } else {
                        error(out, r, NOT_FOUND);
                    }
                }
            }
        }
        // Set, Add, Replace (+Q)
        0x01..=0x03 | 0x11..=0x13 => {
            if !key_ok || extras.len() != 8 {
                error(out, r, INVALID);
                return false;
            }
            if value.len() > shared.config.item_max {
                error(out, r, TOO_LARGE);
                return false;
            }
            let flags = be32(extras);
            let exp = store.expiry(be32(&extras[4..]) as i64);
            let mode = match r.op & 0x0f {
                0x01 if r.cas != 0 => Mode::Cas(r.cas),
                0x01 => Mode::Set,
                0x02 if r.cas != 0 => {
                    error(out, r, INVALID);
                    return false;
                }
                0x02 => Mode::Add,
                _ if r.cas != 0 => Mode::Cas(r.cas),
                _ => Mode::Replace,
            };
            let status = match store.store(mode, key, flags, exp, value) {
                Stored::Stored => OK,
                Stored::NotStored => {
                    if mode == Mode::Add {
                        EXISTS
                    } else {
                        NOT_FOUND
                    }
                }
                Stored::Exists => EXISTS,
                Stored::NotFound => NOT_FOUND,
            };
            if status == OK {
                if !quiet {
                    let cas = store.peek(key).map_or(0, |i| i.cas);
                    respond(out, r, OK, cas, &[], &[], &[]);
                }
            } else {
                error(out, r, status);
            }
        }
        // Append, Prepend (+Q)
        0x0e | 0x0f | 0x19 | 0x1a => {
            if !key_ok || !extras.is_empty() {
                error(out, r, INVALID);
                return false;
            }
            let mode = if matches!(r.op, 0x0e | 0x19) { Mode::Append } else { Mode::Prepend };
            match store.store(mode, key, 0, 0, value) {
                Stored::Stored => {
                    if !quiet {
                        let cas = store.peek(key).map_or(0, |i| i.cas);
                        respond(out, r, OK, cas, &[], &[], &[]);
                    }
                }
                _ => error(out, r, NOT_STORED),
            }
        }
        // Delete (+Q)
        0x04 | 0x14 => {
            if !key_ok || !extras.is_empty() || !value.is_empty() {
                error(out, r, INVALID);
                return false;
            }
            if store.delete(key) {
                if !quiet {
                    respond(out, r, OK, 0, &[], &[], &[]);
                }
            } else {
                error(out, r, NOT_FOUND);
            }
        }
        // Increment, Decrement (+Q)
        0x05 | 0x06 | 0x15 | 0x16 => {
            if !key_ok || extras.len() != 20 || !value.is_empty() {
                error(out, r, INVALID);
                return false;
            }
            let (by, initial, exp) = (be64(extras), be64(&extras[8..]), be32(&extras[16..]));
            let up = matches!(r.op, 0x05 | 0x15);
            let v = match store.delta(key, up, by) {
                Delta::Value(v) => Some(v),
                Delta::NonNumeric => {
                    error(out, r, NON_NUMERIC);
                    return false;
                }
                Delta::NotFound if exp == u32::MAX => {
                    error(out, r, NOT_FOUND);
                    return false;
                }
                Delta::NotFound => {
                    let e = store.expiry(exp as i64);
                    match store.store(Mode::Add, key, 0, e, initial.to_string().as_bytes()) {
                        Stored::Stored => Some(initial),
                        // Raced with another creator: apply the delta to theirs.
                        _ => match store.delta(key, up, by) {
                            Delta::Value(v) => Some(v),
                            _ => None,
                        },
                    }
                }
            };
            match v {
                Some(v) => {
                    if !quiet {
                        let cas = store.peek(key).map_or(0, |i| i.cas);
                        respond(out, r, OK, cas, &[], &[], &v.to_be_bytes());
                    }
                }
                None => error(out, r, NOT_FOUND),
            }
        }
        // Touch
        0x1c => {
            if !key_ok || extras.len() != 4 {
                error(out, r, INVALID);
                return false;
            }
            if store.touch(key, store.expiry(be32(extras) as i64)).is_some() {
                respond(out, r, OK, 0, &[], &[], &[]);
            } else {
                error(out, r, NOT_FOUND);
            }
        }
        // Quit (+Q)
        0x07 | 0x17 => {
            if r.op == 0x07 {
                respond(out, r, OK, 0, &[], &[], &[]);
            }
            return true;
        }
        // Flush (+Q)
        0x08 | 0x18 => {
            match extras.len() {
                0 => store.flush(),
                4 if be32(extras) == 0 => store.flush(),
                4 => {
                    let _ =
                        shared.flusher.send(std::time::Duration::from_secs(be32(extras) as u64));
                }
                _ => {
                    error(out, r, INVALID);
                    return false;
                }
            }
            if !quiet {
                respond(out, r, OK, 0, &[], &[], &[]);
            }
        }
        // Noop
        0x0a => respond(out, r, OK, 0, &[], &[], &[]),
        // Version
        0x0b => respond(out, r, OK, 0, &[], &[], crate::MEMCACHED_VERSION.as_bytes()),
        // Stat: one response per statistic, then an empty one. The key names the group
        // (empty: the general statistics), as `stats <group>` does in the text protocol; a
        // group this server does not have is "not found", as in memcached.
        0x10 => {
            let group = (!key.is_empty()).then_some(key);
            match crate::stats::group(shared, group) {
                Some(pairs) => {
                    for (k, v) in pairs {
                        respond(out, r, OK, 0, &[], k.as_bytes(), v.as_bytes());
                    }
                    respond(out, r, OK, 0, &[], &[], &[]);
                }
                None => error(out, r, NOT_FOUND),
            }
        }
        _ => error(out, r, UNKNOWN),
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A request: a real opcode (or any byte), key, extras and value lengths that are usually
    /// consistent with the header and sometimes not, and any bytes.
    fn packet() -> impl Strategy<Value = Vec<u8>> {
        (
            prop_oneof![
                prop::sample::select(vec![
                    0x00u8, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
                    0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19,
                    0x1a, 0x1c, 0x1d, 0x1e,
                ]),
                any::<u8>(),
            ],
            prop::sample::select(vec![b"k".to_vec(), b"key".to_vec(), vec![], vec![b'x'; 251]]),
            prop::sample::select(vec![0usize, 4, 8, 20]),
            prop::sample::select(vec![vec![], b"1".to_vec(), b"hello".to_vec(), vec![b'v'; 5000]]),
            any::<u32>(),
            any::<u64>(),
            prop::option::of(any::<u32>()),
            prop::bool::weighted(0.05),
        )
            .prop_map(|(op, key, extras, value, opaque, cas, bad_body, bad_magic)| {
                let body = extras + key.len() + value.len();
                let mut p = vec![if bad_magic { 0x42 } else { REQ }, op];
                p.extend_from_slice(&(key.len() as u16).to_be_bytes());
                p.push(extras as u8);
                p.extend_from_slice(&[0, 0, 0]);
                p.extend_from_slice(&bad_body.unwrap_or(body as u32).to_be_bytes());
                p.extend_from_slice(&opaque.to_be_bytes());
                p.extend_from_slice(&cas.to_be_bytes());
                p.resize(p.len() + extras, 0);
                p.extend_from_slice(&key);
                p.extend_from_slice(&value);
                p
            })
    }

    /// A Stat request (opcode 0x10) with `key` as its group.
    fn stat_request(key: &[u8]) -> Vec<u8> {
        let mut p = vec![REQ, 0x10];
        p.extend_from_slice(&(key.len() as u16).to_be_bytes());
        p.extend_from_slice(&[0, 0, 0, 0]);
        p.extend_from_slice(&(key.len() as u32).to_be_bytes());
        p.extend_from_slice(&7u32.to_be_bytes());
        p.extend_from_slice(&0u64.to_be_bytes());
        p.extend_from_slice(key);
        p
    }

    /// The (status, key, value) of each response in `out`.
    fn responses(out: &[u8]) -> Vec<(u16, String, String)> {
        let mut v = Vec::new();
        let mut at = 0;
        while at < out.len() {
            let (key_len, extras) = (be16(&out[at + 2..]) as usize, out[at + 4] as usize);
            let body = be32(&out[at + 8..]) as usize;
            let b = &out[at + HEADER..at + HEADER + body];
            let key = String::from_utf8_lossy(&b[extras..extras + key_len]).into_owned();
            let value = String::from_utf8_lossy(&b[extras + key_len..]).into_owned();
            v.push((be16(&out[at + 6..]), key, value));
            at += HEADER + body;
        }
        v
    }

    /// Stat answers the group its key names, with the same statistics as the text protocol's
    /// `stats <group>` (sifter's `policy_hit_writes` among the general ones), and "not found"
    /// for a group the server does not have.
    #[test]
    fn stat_answers_the_group_its_key_names() {
        let sh = crate::text::tests::shared();
        for (group, text) in [
            (&b""[..], "stats\r\n"),
            (b"settings", "stats settings\r\n"),
            (b"items", "stats items\r\n"),
            (b"slabs", "stats slabs\r\n"),
        ] {
            let mut out = Vec::new();
            let input = stat_request(group);
            assert_eq!(process(&sh, &input, &mut out, 1 << 20), (input.len(), false));
            let rs = responses(&out);
            let (last, stats) = rs.split_last().expect("a terminating response");
            assert_eq!(last, &(OK, String::new(), String::new()));
            let names: Vec<&str> = stats
                .iter()
                .map(|(st, k, _)| {
                    assert_eq!(*st, OK);
                    k.as_str()
                })
                .collect();
            let mut t = Vec::new();
            crate::text::process(&sh, &mut Default::default(), text.as_bytes(), &mut t, 1 << 20);
            let text_names: Vec<String> = String::from_utf8(t)
                .unwrap()
                .lines()
                .filter_map(|l| l.strip_prefix("STAT ")?.split(' ').next().map(String::from))
                .collect();
            assert_eq!(names, text_names, "group {:?}", String::from_utf8_lossy(group));
        }
        let names = |out: &[u8]| responses(out).into_iter().map(|r| r.1).collect::<Vec<_>>();
        let mut out = Vec::new();
        process(&sh, &stat_request(b""), &mut out, 1 << 20);
        assert!(names(&out).iter().any(|n| n == "policy_hit_writes"), "{:?}", names(&out));
        for bad in [&b"detail"[..], b"cachedump", b"nonsense"] {
            let mut out = Vec::new();
            process(&sh, &stat_request(bad), &mut out, 1 << 20);
            let rs = responses(&out);
            assert_eq!(rs.len(), 1, "{rs:?}");
            assert_eq!((rs[0].0, rs[0].2.as_str()), (NOT_FOUND, "Not found"));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Any sequence of requests (well-formed or not), fed in any split: no panic, never
        /// more consumed than given, every reply a well-formed response header with its body,
        /// and the same replies whatever the split.
        #[test]
        fn the_binary_parser_takes_any_input(
            packets in proptest::collection::vec(packet(), 0..20),
            noise in proptest::collection::vec(any::<u8>(), 0..64),
            split in 1usize..97,
        ) {
            let mut input: Vec<u8> = packets.concat();
            input.extend_from_slice(&noise);
            let sh = crate::text::tests::shared();
            let mut out = Vec::new();
            let (consumed, _) = process(&sh, &input, &mut out, 1 << 20);
            prop_assert!(consumed <= input.len());
            let mut at = 0;
            while at < out.len() {
                prop_assert!(out.len() - at >= HEADER, "a truncated response header");
                prop_assert_eq!(out[at], 0x81);
                let body = be32(&out[at + 8..]) as usize;
                prop_assert!(out.len() - at >= HEADER + body, "a truncated response body");
                at += HEADER + body;
            }
            let sh2 = crate::text::tests::shared();
            let mut out2 = Vec::new();
            let mut buf: Vec<u8> = Vec::new();
            for chunk in input.chunks(split) {
                buf.extend_from_slice(chunk);
                let (n, close) = process(&sh2, &buf, &mut out2, 1 << 20);
                buf.drain(..n.min(buf.len()));
                if close { break; }
            }
            // CAS uniques and statistics differ between stores only in numbers: compare the
            // response headers' magic, opcode and status.
            let heads = |o: &[u8]| {
                let mut v = Vec::new();
                let mut at = 0;
                while at + HEADER <= o.len() {
                    v.push((o[at + 1], be16(&o[at + 6..])));
                    at += HEADER + be32(&o[at + 8..]) as usize;
                }
                v
            };
            prop_assert_eq!(heads(&out), heads(&out2));
        }
    }
}

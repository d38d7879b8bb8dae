//! Requests and replies on the wire: memcached's text and binary protocols.

use crate::{Op, Protocol};

/// What a reply said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// GET hit; stored; deleted/touched.
    Ok,
    /// GET miss; not stored; not found.
    Not,
    /// An error reply.
    Error,
}

/// The result of parsing the start of a buffer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// More bytes needed.
    Incomplete,
    /// A whole reply of this many bytes.
    Reply(usize, Outcome),
    /// Not a reply to the request (what was received, shortened).
    Bad(String),
}

/// Value bytes (any content does; a repeated letter is easy to spot in a capture).
static VALUE: [u8; 4096] = [b'v'; 4096];

/// Writes key id `key` as `kvtg:<digits>`, zero-padded to `size` bytes.
fn put_key(buf: &mut Vec<u8>, key: u64, size: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut k = key;
    loop {
        i -= 1;
        digits[i] = b'0' + (k % 10) as u8;
        k /= 10;
        if k == 0 {
            break;
        }
    }
    let digits = &digits[i..];
    buf.extend_from_slice(b"kvtg:");
    let pad = size.saturating_sub(5 + digits.len());
    buf.resize(buf.len() + pad, b'0');
    buf.extend_from_slice(digits);
}

fn key_len(key: u64, size: usize) -> usize {
    let digits = if key == 0 { 1 } else { key.ilog10() as usize + 1 };
    (5 + digits).max(size)
}

fn put_value(buf: &mut Vec<u8>, mut n: usize) {
    while n > 0 {
        let k = n.min(VALUE.len());
        buf.extend_from_slice(&VALUE[..k]);
        n -= k;
    }
}

/// Appends the request `op key` (with a `size`-byte value where it stores one).
pub(crate) fn encode(
    p: Protocol,
    buf: &mut Vec<u8>,
    op: Op,
    key: u64,
    key_size: usize,
    size: usize,
) {
    match p {
        Protocol::Text => {
            let verb: &[u8] = match op {
                Op::Get => b"get ",
                Op::Set | Op::Fill => b"set ",
                Op::Add => b"add ",
                Op::Replace => b"replace ",
                Op::Delete => b"delete ",
                Op::Touch => b"touch ",
            };
            buf.extend_from_slice(verb);
            put_key(buf, key, key_size);
            if op.stores() {
                buf.extend_from_slice(b" 0 0 ");
                buf.extend_from_slice(size.to_string().as_bytes());
                buf.extend_from_slice(b"\r\n");
                put_value(buf, size);
            } else if op == Op::Touch {
                buf.extend_from_slice(b" 0");
            }
            buf.extend_from_slice(b"\r\n");
        }
        Protocol::Binary => {
            let (opcode, extras): (u8, usize) = match op {
                Op::Get => (0x00, 0),
                Op::Set | Op::Fill => (0x01, 8),
                Op::Add => (0x02, 8),
                Op::Replace => (0x03, 8),
                Op::Delete => (0x04, 0),
                Op::Touch => (0x1c, 4),
            };
            let klen = key_len(key, key_size);
            let vlen = if op.stores() { size } else { 0 };
            let body = extras + klen + vlen;
            buf.push(0x80);
            buf.push(opcode);
            buf.extend_from_slice(&(klen as u16).to_be_bytes());
            buf.push(extras as u8);
            buf.push(0); // data type
            buf.extend_from_slice(&[0, 0]); // vbucket
            buf.extend_from_slice(&(body as u32).to_be_bytes());
            buf.extend_from_slice(&[0; 4]); // opaque
            buf.extend_from_slice(&[0; 8]); // cas
            buf.resize(buf.len() + extras, 0); // flags 0, exptime 0
            put_key(buf, key, key_size);
            put_value(buf, vlen);
        }
    }
}

fn shown(b: &[u8]) -> String {
    String::from_utf8_lossy(&b[..b.len().min(200)]).into_owned()
}

/// Parses the reply to `op` at the start of `b`.
pub(crate) fn parse(p: Protocol, b: &[u8], op: Op) -> Parsed {
    match p {
        Protocol::Text => parse_text(b, op),
        Protocol::Binary => parse_binary(b, op),
    }
}

fn line(b: &[u8]) -> Option<&[u8]> {
    let i = memchr_crlf(b)?;
    Some(&b[..i])
}

fn memchr_crlf(b: &[u8]) -> Option<usize> {
    b.windows(2).position(|w| w == b"\r\n")
}

/// Longest reply line accepted before the reply is called bad (memcached's are short).
const MAX_LINE: usize = 4096;

fn parse_text(b: &[u8], op: Op) -> Parsed {
    let Some(l) = line(b) else {
        if b.len() > MAX_LINE {
            return Parsed::Bad(shown(b));
        }
        return Parsed::Incomplete;
    };
    let n = l.len() + 2;
    if l.starts_with(b"SERVER_ERROR") || l.starts_with(b"CLIENT_ERROR") || l == b"ERROR" {
        return Parsed::Reply(n, Outcome::Error);
    }
    let outcome = match op {
        Op::Get => {
            if l == b"END" {
                return Parsed::Reply(n, Outcome::Not);
            }
            // VALUE <key> <flags> <bytes> [<cas>]
            let mut parts = l.split(|&c| c == b' ');
            if parts.next() != Some(b"VALUE") {
                return Parsed::Bad(shown(l));
            }
            let Some(bytes) =
                parts.nth(2).and_then(|v| std::str::from_utf8(v).ok()?.parse::<usize>().ok())
            else {
                return Parsed::Bad(shown(l));
            };
            let end = n + bytes + 2 + 5;
            if b.len() < end {
                return Parsed::Incomplete;
            }
            if &b[n + bytes..end] != b"\r\nEND\r\n" {
                return Parsed::Bad(shown(&b[..end]));
            }
            return Parsed::Reply(end, Outcome::Ok);
        }
        Op::Set | Op::Fill | Op::Add | Op::Replace => match l {
            b"STORED" => Outcome::Ok,
            b"NOT_STORED" | b"EXISTS" | b"NOT_FOUND" => Outcome::Not,
            _ => return Parsed::Bad(shown(l)),
        },
        Op::Delete => match l {
            b"DELETED" => Outcome::Ok,
            b"NOT_FOUND" => Outcome::Not,
            _ => return Parsed::Bad(shown(l)),
        },
        Op::Touch => match l {
            b"TOUCHED" => Outcome::Ok,
            b"NOT_FOUND" => Outcome::Not,
            _ => return Parsed::Bad(shown(l)),
        },
    };
    Parsed::Reply(n, outcome)
}

fn parse_binary(b: &[u8], op: Op) -> Parsed {
    if b.len() < 24 {
        return Parsed::Incomplete;
    }
    if b[0] != 0x81 {
        return Parsed::Bad(format!("a binary reply starts with 0x81, got {:#04x}", b[0]));
    }
    let body = u32::from_be_bytes([b[8], b[9], b[10], b[11]]) as usize;
    if body > 1 << 30 {
        return Parsed::Bad(format!("binary reply body of {body} bytes"));
    }
    let n = 24 + body;
    if b.len() < n {
        return Parsed::Incomplete;
    }
    let status = u16::from_be_bytes([b[6], b[7]]);
    let outcome = match (status, op) {
        (0, _) => Outcome::Ok,
        // Key not found: a miss, or nothing to replace/delete/touch.
        (1, Op::Get | Op::Replace | Op::Delete | Op::Touch) => Outcome::Not,
        // Key exists (add) / item not stored.
        (2 | 5, Op::Add | Op::Replace | Op::Set | Op::Fill) => Outcome::Not,
        _ => Outcome::Error,
    };
    Parsed::Reply(n, outcome)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn keys_are_padded_and_counted() {
        let mut b = Vec::new();
        put_key(&mut b, 42, 16);
        assert_eq!(b, b"kvtg:00000000042");
        assert_eq!(key_len(42, 16), 16);
        b.clear();
        put_key(&mut b, u64::MAX, 4);
        assert_eq!(b.len(), key_len(u64::MAX, 4));
    }

    #[test]
    fn text_replies() {
        use Outcome::*;
        assert_eq!(parse_text(b"END\r\n", Op::Get), Parsed::Reply(5, Not));
        let hit = b"VALUE kvtg:1 0 3\r\nabc\r\nEND\r\nSTORED\r\n";
        assert_eq!(parse_text(hit, Op::Get), Parsed::Reply(hit.len() - 8, Ok));
        assert_eq!(parse_text(&hit[..20], Op::Get), Parsed::Incomplete);
        assert_eq!(parse_text(b"STORED\r\n", Op::Add), Parsed::Reply(8, Ok));
        assert_eq!(parse_text(b"NOT_STORED\r\n", Op::Add), Parsed::Reply(12, Not));
        assert_eq!(
            parse_text(b"SERVER_ERROR out of memory\r\n", Op::Set),
            Parsed::Reply(28, Error)
        );
        assert!(matches!(parse_text(b"DELETED\r\n", Op::Get), Parsed::Bad(_)));
        assert!(matches!(parse_text(b"VALUE k 0 x\r\n", Op::Get), Parsed::Bad(_)));
        assert!(matches!(parse_text(&[b'x'; 5000], Op::Get), Parsed::Bad(_)));
    }

    #[test]
    fn binary_requests_and_replies() {
        let mut b = Vec::new();
        encode(Protocol::Binary, &mut b, Op::Set, 7, 16, 10);
        assert_eq!(b.len(), 24 + 8 + 16 + 10);
        assert_eq!(&b[..2], &[0x80, 0x01]);
        let mut r = vec![0x81, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0];
        r.resize(24, 0);
        assert_eq!(parse_binary(&r, Op::Get), Parsed::Reply(24, Outcome::Not));
        assert_eq!(parse_binary(&r[..10], Op::Get), Parsed::Incomplete);
        r[0] = 0x80;
        assert!(matches!(parse_binary(&r, Op::Get), Parsed::Bad(_)));
    }
}

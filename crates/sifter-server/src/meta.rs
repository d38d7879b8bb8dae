//! memcached 1.6's meta commands: `mn`, `mg`, `ms`, `md`, `ma`, `me` (text protocol).
//!
//! `<cm> <key> [<datalen>] <flag>*`: a flag is one character, some followed by a token
//! (`T30`, `Oabc`). Replies are two-letter codes followed by the requested return flags in
//! request order. Common to all: `b` (the key is base64), `k` (echo the key), `O<opaque>` (echo,
//! ≤ 32 bytes), `q` (hide the "normal" reply: `EN` for mg, `HD` for ms, `HD`/`NF` for md and
//! ma; errors are always sent); `P` and `L` (proxy hints) are accepted and ignored. An unknown
//! flag is `CLIENT_ERROR invalid flag`.
//!
//! Anti-dogpiling: `mg N<ttl>` creates an empty item on a miss and hands this client the "win"
//! (`W`); `mg R<ttl>` hands out the win once when the TTL left is below the token; `md I` /
//! `ms I` mark an item stale (`X`), and the first reader of a stale item wins. Later readers of
//! an item whose win was handed out see `Z`, until the item is replaced.

use crate::store::{Item, MetaArith, MetaArithResult, MetaSet, Mode, Stored};
use crate::text::Session;
use crate::Shared;
use base64::Engine as _;
use std::io::Write;
use std::sync::atomic::Ordering;

const BAD_FORMAT: &[u8] = b"CLIENT_ERROR bad command line format\r\n";
const INVALID_FLAG: &[u8] = b"CLIENT_ERROR invalid flag\r\n";

/// One flag and its token.
type Flag<'a> = (u8, &'a [u8]);

/// The flags of a command, checked against those it accepts.
fn flags<'a>(tokens: &[&'a [u8]], allowed: &[u8]) -> Option<Vec<Flag<'a>>> {
    let mut v = Vec::with_capacity(tokens.len());
    for t in tokens {
        let (&c, tok) = t.split_first()?;
        if c == b'P' || c == b'L' {
            continue;
        }
        if !allowed.contains(&c) {
            return None;
        }
        v.push((c, tok));
    }
    Some(v)
}

fn has(f: &[Flag<'_>], c: u8) -> bool {
    f.iter().any(|x| x.0 == c)
}

fn token<'a>(f: &[Flag<'a>], c: u8) -> Option<&'a [u8]> {
    f.iter().find(|x| x.0 == c).map(|x| x.1)
}

/// A numeric token: `Ok(None)` if the flag is absent, `Err` if present but not a number.
fn num<T: std::str::FromStr>(f: &[Flag<'_>], c: u8) -> Result<Option<T>, ()> {
    match token(f, c) {
        None => Ok(None),
        Some(t) => std::str::from_utf8(t).ok().and_then(|s| s.parse().ok()).map(Some).ok_or(()),
    }
}

/// The key a command names: base64-decoded with `b`; checked for memcached's rules.
fn key(raw: &[u8], f: &[Flag<'_>]) -> Result<Vec<u8>, &'static [u8]> {
    let k = if has(f, b'b') {
        base64::engine::general_purpose::STANDARD
            .decode(raw)
            .map_err(|_| &b"CLIENT_ERROR error decoding key\r\n"[..])?
    } else {
        if !raw.iter().all(|&c| c > b' ' && c != 0x7f) {
            return Err(BAD_FORMAT);
        }
        raw.to_vec()
    };
    if k.is_empty() || k.len() > crate::text::KEY_MAX {
        return Err(BAD_FORMAT);
    }
    Ok(k)
}

/// A command's flags (checked against `allowed`) and its key; on an error, writes it to `out`
/// and gives `None`.
fn prologue<'a>(
    raw_key: &[u8],
    tokens: &[&'a [u8]],
    allowed: &[u8],
    out: &mut Vec<u8>,
) -> Option<(Vec<Flag<'a>>, Vec<u8>)> {
    let Some(f) = flags(tokens, allowed) else {
        out.extend_from_slice(INVALID_FLAG);
        return None;
    };
    match key(raw_key, &f) {
        Ok(k) => Some((f, k)),
        Err(e) => {
            out.extend_from_slice(e);
            None
        }
    }
}

/// Writes a reply line of just a code and the echo flags.
fn code_line(out: &mut Vec<u8>, code: &[u8], f: &[Flag<'_>], raw_key: &[u8]) {
    out.extend_from_slice(code);
    echo(out, f, raw_key);
    out.extend_from_slice(b"\r\n");
}

/// Appends the echo flags (`O`, `k` and `b`) in request order.
fn echo(out: &mut Vec<u8>, f: &[Flag<'_>], raw_key: &[u8]) {
    for &(c, tok) in f {
        match c {
            b'O' => {
                out.extend_from_slice(b" O");
                out.extend_from_slice(tok);
            }
            b'k' => {
                out.extend_from_slice(b" k");
                out.extend_from_slice(raw_key);
            }
            b'b' if has(f, b'k') => out.extend_from_slice(b" b"),
            _ => {}
        }
    }
}

/// Appends the item's return flags (and the echoes) in request order; `seen` is `mg`'s
/// (fetched before, seconds since the last access) for `h` and `l`.
fn item_flags(
    shared: &Shared,
    out: &mut Vec<u8>,
    f: &[Flag<'_>],
    raw_key: &[u8],
    item: &Item,
    seen: Option<(bool, u64)>,
) {
    for &(c, tok) in f {
        let _ = match (c, seen) {
            (b'h', Some((h, _))) => write!(out, " h{}", h as u8),
            (b'l', Some((_, l))) => write!(out, " l{l}"),
            _ => Ok(()),
        };
        let _ = match c {
            b'f' => write!(out, " f{}", item.flags),
            b'c' => write!(out, " c{}", item.cas),
            b's' => write!(out, " s{}", item.data.len()),
            b't' => write!(out, " t{}", shared.store.ttl_left(item)),
            b'O' => {
                out.extend_from_slice(b" O");
                out.extend_from_slice(tok);
                Ok(())
            }
            b'k' => {
                out.extend_from_slice(b" k");
                out.extend_from_slice(raw_key);
                Ok(())
            }
            b'b' if has(f, b'k') => {
                out.extend_from_slice(b" b");
                Ok(())
            }
            _ => Ok(()),
        };
    }
}

/// Runs a meta command (`t` are its tokens, `t[0]` the command). Returns the bytes of `rest`
/// it used (an `ms` data block), or `None` if the block is not all here yet.
pub(crate) fn command(
    shared: &Shared,
    s: &mut Session,
    t: &[&[u8]],
    rest: &[u8],
    out: &mut Vec<u8>,
) -> Option<usize> {
    let cmd = t[0];
    if cmd == b"mn" {
        out.extend_from_slice(b"MN\r\n");
        return Some(0);
    }
    let Some(&raw_key) = t.get(1) else {
        out.extend_from_slice(crate::text::ERROR);
        return Some(0);
    };
    match cmd {
        b"mg" => {
            mg(shared, raw_key, &t[2..], out);
            Some(0)
        }
        b"ms" => ms(shared, s, raw_key, &t[2..], rest, out),
        b"md" => {
            md(shared, raw_key, &t[2..], out);
            Some(0)
        }
        b"ma" => {
            ma(shared, raw_key, &t[2..], out);
            Some(0)
        }
        b"me" => {
            me(shared, raw_key, &t[2..], out);
            Some(0)
        }
        _ => {
            out.extend_from_slice(crate::text::ERROR);
            Some(0)
        }
    }
}

fn mg(shared: &Shared, raw_key: &[u8], tokens: &[&[u8]], out: &mut Vec<u8>) {
    let Some((f, k)) = prologue(raw_key, tokens, b"bcfhklOqstuvNRT", out) else { return };
    let (Ok(vivify), Ok(recache), Ok(touch)) =
        (num::<i64>(&f, b'N'), num::<u64>(&f, b'R'), num::<i64>(&f, b'T'))
    else {
        out.extend_from_slice(BAD_FORMAT);
        return;
    };
    let store = &shared.store;
    let (mut item, mut won) = match vivify {
        Some(ttl) => {
            let (i, won) = store.get_or_vivify(&k, store.expiry(ttl));
            (Some(i), won)
        }
        None => (store.peek(&k), false),
    };
    let Some(found) = item.take() else {
        if !has(&f, b'q') {
            code_line(out, b"EN", &f, raw_key);
        }
        return;
    };
    let mut item = found;
    if let Some(ttl) = touch {
        if let Some(i) = store.touch(&k, store.expiry(ttl)) {
            item = i;
        }
    }
    // `u`: no access recorded (memcached: no LRU bump); `h` is "fetched before this request".
    let last_access = item.atime.load(Ordering::Relaxed);
    let hit_before =
        if has(&f, b'u') { item.fetched.load(Ordering::Relaxed) } else { item.access(store.now()) };
    // Win tokens: a vivified miss (above), a stale item, or a TTL below the recache token.
    // Relaxed: the swap itself makes one winner; nothing else is published through it.
    if !won && (item.stale || recache.is_some_and(|r| (store.ttl_left(&item) as u64) < r)) {
        won = !item.win.swap(true, Ordering::Relaxed);
    }
    let lost = !won && item.win.load(Ordering::Relaxed);
    let with_value = has(&f, b'v');
    if with_value {
        let _ = write!(out, "VA {}", item.data.len());
    } else {
        out.extend_from_slice(b"HD");
    }
    let seen = (hit_before, store.now().saturating_sub(last_access));
    item_flags(shared, out, &f, raw_key, &item, Some(seen));
    if won {
        out.extend_from_slice(b" W");
    }
    if lost {
        out.extend_from_slice(b" Z");
    }
    if item.stale {
        out.extend_from_slice(b" X");
    }
    out.extend_from_slice(b"\r\n");
    if with_value {
        out.extend_from_slice(&item.data);
        out.extend_from_slice(b"\r\n");
    }
}

fn ms(
    shared: &Shared,
    s: &mut Session,
    raw_key: &[u8],
    tokens: &[&[u8]],
    rest: &[u8],
    out: &mut Vec<u8>,
) -> Option<usize> {
    let Some(len) = tokens
        .first()
        .and_then(|t| std::str::from_utf8(t).ok())
        .and_then(|t| t.parse::<usize>().ok())
    else {
        out.extend_from_slice(BAD_FORMAT);
        return Some(0);
    };
    // From here on the data block follows: on an error it is skipped.
    let fail = |s: &mut Session, out: &mut Vec<u8>, msg: &[u8]| {
        out.extend_from_slice(msg);
        s.swallow = len.saturating_add(2);
        Some(0)
    };
    let Some(f) = flags(&tokens[1..], b"bcCFIkMNOqsT") else {
        return fail(s, out, INVALID_FLAG);
    };
    let k = match key(raw_key, &f) {
        Ok(k) => k,
        Err(e) => return fail(s, out, e),
    };
    let (Ok(cas), Ok(fl), Ok(ttl), Ok(viv)) =
        (num::<u64>(&f, b'C'), num::<u32>(&f, b'F'), num::<i64>(&f, b'T'), num::<i64>(&f, b'N'))
    else {
        return fail(s, out, BAD_FORMAT);
    };
    let mode = match token(&f, b'M') {
        None => Mode::Set,
        Some(m) => match m.first().map(u8::to_ascii_uppercase) {
            Some(b'S') => Mode::Set,
            Some(b'E') => Mode::Add,
            Some(b'R') => Mode::Replace,
            Some(b'A') => Mode::Append,
            Some(b'P') => Mode::Prepend,
            _ => return fail(s, out, b"CLIENT_ERROR invalid mode for ms\r\n"),
        },
    };
    if len > shared.config.item_max {
        return fail(s, out, b"SERVER_ERROR object too large for cache\r\n");
    }
    if rest.len() < len + 2 {
        return None;
    }
    if &rest[len..len + 2] != b"\r\n" {
        out.extend_from_slice(b"CLIENT_ERROR bad data chunk\r\n");
        // As in the text protocol: exactly the block and two bytes are consumed (memcached).
        return Some(len + 2);
    }
    let store = &shared.store;
    let req = MetaSet {
        mode,
        cas,
        flags: fl.unwrap_or(0),
        expires: store.expiry(ttl.unwrap_or(0)),
        data: &rest[..len],
        invalidate: has(&f, b'I'),
        vivify: viv.map(|e| store.expiry(e)),
    };
    let (r, item) = store.meta_store(&k, &req);
    let code: &[u8] = match r {
        Stored::Stored => b"HD",
        Stored::NotStored => b"NS",
        Stored::Exists => b"EX",
        Stored::NotFound => b"NF",
    };
    if !(r == Stored::Stored && has(&f, b'q')) {
        out.extend_from_slice(code);
        match &item {
            // `c` (and `s`, `f`, `t`) report the stored item.
            Some(i) => item_flags(shared, out, &f, raw_key, i, None),
            None => echo(out, &f, raw_key),
        }
        out.extend_from_slice(b"\r\n");
    }
    Some(len + 2)
}

fn md(shared: &Shared, raw_key: &[u8], tokens: &[&[u8]], out: &mut Vec<u8>) {
    let Some((f, k)) = prologue(raw_key, tokens, b"bCIkOqT", out) else { return };
    let (Ok(cas), Ok(ttl)) = (num::<u64>(&f, b'C'), num::<i64>(&f, b'T')) else {
        out.extend_from_slice(BAD_FORMAT);
        return;
    };
    let store = &shared.store;
    let r = store.meta_delete(&k, cas, has(&f, b'I'), ttl.map(|t| store.expiry(t)));
    let code: &[u8] = match r {
        Stored::Stored => b"HD",
        Stored::Exists => b"EX",
        _ => b"NF",
    };
    if has(&f, b'q') && r != Stored::Exists {
        return;
    }
    code_line(out, code, &f, raw_key);
}

fn ma(shared: &Shared, raw_key: &[u8], tokens: &[&[u8]], out: &mut Vec<u8>) {
    let Some((f, k)) = prologue(raw_key, tokens, b"bcCDJkMNOqtTv", out) else { return };
    let nums = (
        num::<u64>(&f, b'D'),
        num::<u64>(&f, b'J'),
        num::<i64>(&f, b'N'),
        num::<u64>(&f, b'C'),
        num::<i64>(&f, b'T'),
    );
    let (Ok(delta), Ok(initial), Ok(viv), Ok(cas), Ok(ttl)) = nums else {
        out.extend_from_slice(b"CLIENT_ERROR invalid numeric delta argument\r\n");
        return;
    };
    let up = match token(&f, b'M') {
        None => true,
        Some(m) => match m.first().map(u8::to_ascii_uppercase) {
            Some(b'I' | b'+') => true,
            Some(b'D' | b'-') => false,
            _ => {
                out.extend_from_slice(b"CLIENT_ERROR invalid mode for ma\r\n");
                return;
            }
        },
    };
    let store = &shared.store;
    let req = MetaArith {
        up,
        delta: delta.unwrap_or(1),
        initial: initial.unwrap_or(0),
        vivify: viv.map(|e| store.expiry(e)),
        cas,
        expires: ttl.map(|e| store.expiry(e)),
    };
    let (r, item) = store.meta_arith(&k, &req);
    match (r, item) {
        (MetaArithResult::Done, Some(item)) => {
            if has(&f, b'v') {
                let _ = write!(out, "VA {}", item.data.len());
            } else if has(&f, b'q') {
                return;
            } else {
                out.extend_from_slice(b"HD");
            }
            item_flags(shared, out, &f, raw_key, &item, None);
            out.extend_from_slice(b"\r\n");
            if has(&f, b'v') {
                out.extend_from_slice(&item.data);
                out.extend_from_slice(b"\r\n");
            }
        }
        (MetaArithResult::NonNumeric, _) => out
            .extend_from_slice(b"CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"),
        (MetaArithResult::Exists, _) => code_line(out, b"EX", &f, raw_key),
        _ => {
            if !has(&f, b'q') {
                code_line(out, b"NF", &f, raw_key);
            }
        }
    }
}

fn me(shared: &Shared, raw_key: &[u8], tokens: &[&[u8]], out: &mut Vec<u8>) {
    let Some((_, k)) = prologue(raw_key, tokens, b"b", out) else { return };
    let store = &shared.store;
    match store.peek(&k) {
        None => out.extend_from_slice(b"EN\r\n"),
        Some(i) => {
            out.extend_from_slice(b"ME ");
            out.extend_from_slice(raw_key);
            let _ = write!(
                out,
                " exp={} la={} cas={} fetch={} cls=1 size={}\r\n",
                store.ttl_left(&i),
                store.now().saturating_sub(i.atime.load(Ordering::Relaxed)),
                i.cas,
                if i.fetched.load(Ordering::Relaxed) { "yes" } else { "no" },
                k.len() + i.data.len() + crate::store::ITEM_OVERHEAD as usize
            );
        }
    }
}

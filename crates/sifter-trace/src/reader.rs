//! Streaming trace readers.
//!
//! [`TraceReader`] opens a file (zstd-compressed or not: the magic number decides), picks the
//! format (given, or detected by [`crate::format::detect`]) and yields one [`Request`] at a time
//! without loading the file. Each request gets the trace's timestamp, or its 0-based index when
//! the format has none. Lines or records that the format's rules say to skip (comments, LIRS `*`
//! breakpoints, zero-size oracleGeneral requests, which libCacheSim also skips) are counted in
//! [`TraceReader::skipped`], never dropped silently. The first corrupt record ends the stream with
//! an error that names the file, the record or line, and the byte offset in the decompressed
//! stream.

use crate::blocks::{Block, BlockSource};
use crate::error::{Position, Result, TraceError};
use crate::format::{detect, BinaryFormat, CsvOptions, Field, Format, KeyMode};
use crate::request::{NextAccess, Op, Request};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// An ARC `.lis` line may expand to at most this many blocks (a larger count is corrupt input).
pub const MAX_LIS_BLOCKS: u64 = 1 << 24;

/// Opens `path` as a byte stream, decompressing zstd on the fly when the file starts with the
/// zstd magic number.
pub fn open_stream(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    let file = File::open(path).map_err(|e| TraceError::io(path, e))?;
    let mut raw = BufReader::with_capacity(1 << 16, file);
    let head = raw.fill_buf().map_err(|e| TraceError::io(path, e))?;
    if head.len() >= 4 && head[..4] == ZSTD_MAGIC {
        let dec =
            zstd::stream::read::Decoder::with_buffer(raw).map_err(|e| TraceError::io(path, e))?;
        Ok(Box::new(Decompressed::spawn(dec)))
    } else {
        Ok(Box::new(raw))
    }
}

/// Decompressed bytes produced by a background thread, a few 1 MiB blocks ahead of the
/// parser, so decompression and parsing run on different cores.
struct Decompressed {
    rx: std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    /// Spent blocks go back to the thread for reuse (no allocation per block).
    back: std::sync::mpsc::Sender<Vec<u8>>,
    buf: Vec<u8>,
    pos: usize,
    done: bool,
}

impl Decompressed {
    fn spawn<R: Read + Send + 'static>(mut dec: R) -> Self {
        let (tx, rx) = std::sync::mpsc::sync_channel(4);
        let (back, spent) = std::sync::mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || loop {
            let mut block = spent.try_recv().unwrap_or_default();
            block.resize(1 << 20, 0);
            let mut len = 0;
            let res = loop {
                match dec.read(&mut block[len..]) {
                    Ok(0) => break Ok(()),
                    Ok(n) => {
                        len += n;
                        if len == block.len() {
                            break Ok(());
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => break Err(e),
                }
            };
            block.truncate(len);
            let end = len == 0 || res.is_err();
            // Bytes before an error are delivered first, then the error.
            if len > 0 && tx.send(Ok(block)).is_err() {
                return; // the reader was dropped
            }
            if let Err(e) = res {
                let _ = tx.send(Err(e));
            }
            if end {
                return;
            }
        });
        Decompressed { rx, back, buf: Vec::new(), pos: 0, done: false }
    }
}

impl Read for Decompressed {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let avail = self.fill_buf()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Decompressed {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        while self.pos >= self.buf.len() && !self.done {
            match self.rx.recv() {
                Ok(Ok(block)) => {
                    // The thread may have ended: then the spent block is simply dropped.
                    let _ = self.back.send(std::mem::replace(&mut self.buf, block));
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                // The thread ended: end of stream.
                Err(_) => self.done = true,
            }
        }
        Ok(&self.buf[self.pos.min(self.buf.len())..])
    }

    fn consume(&mut self, n: usize) {
        self.pos += n;
    }
}

/// Whether `path` is zstd-compressed (starts with the zstd magic number).
pub fn is_zstd(path: &Path) -> Result<bool> {
    let mut head = [0u8; 4];
    let mut f = File::open(path).map_err(|e| TraceError::io(path, e))?;
    let mut got = 0;
    while got < 4 {
        match f.read(&mut head[got..]).map_err(|e| TraceError::io(path, e))? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got == 4 && head == ZSTD_MAGIC)
}

/// Reads up to `n` bytes of the (decompressed) start of `path`.
pub fn read_head(path: &Path, n: usize) -> Result<Vec<u8>> {
    let mut s = open_stream(path)?;
    let mut buf = Vec::with_capacity(n);
    s.by_ref().take(n as u64).read_to_end(&mut buf).map_err(|e| TraceError::io(path, e))?;
    Ok(buf)
}

/// A request as a source produces it: the time may be missing.
struct Raw {
    time: Option<u64>,
    key: u64,
    size: u32,
    op: Op,
    next: NextAccess,
}

trait Source: Send {
    fn next_raw(&mut self, ctx: &mut Ctx) -> Result<Option<Raw>>;
}

/// Shared state of a reader: the path (for errors) and the skip counter.
struct Ctx {
    path: PathBuf,
    skipped: u64,
}

impl Ctx {
    fn corrupt(&self, pos: Position, msg: impl Into<String>) -> TraceError {
        TraceError::Corrupt { path: self.path.clone(), pos, msg: msg.into() }
    }
}

/// A streaming reader of one trace file; an iterator of `Result<Request>`.
pub struct TraceReader {
    ctx: Ctx,
    format: Format,
    src: Box<dyn Source>,
    index: u64,
    failed: bool,
}

impl std::fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceReader")
            .field("path", &self.ctx.path)
            .field("format", &self.format)
            .field("index", &self.index)
            .finish()
    }
}

impl TraceReader {
    /// Opens `path` in `format`, or in the detected format when `format` is `None`.
    pub fn open(path: &Path, format: Option<&Format>) -> Result<Self> {
        let format = match format {
            Some(f) => f.clone(),
            None => detect(path, &read_head(path, 1 << 16)?)?,
        };
        let stream = open_stream(path)?;
        let ctx = Ctx { path: path.to_path_buf(), skipped: 0 };
        let src: Box<dyn Source> = match &format {
            Format::OracleGeneral => Box::new(BinarySource::oracle(stream)),
            Format::Binary(b) => Box::new(BinarySource::new(stream, b.clone(), 1, false)),
            Format::Vscsi => Box::new(BinarySource::vscsi(stream, &ctx)?),
            Format::Csv(o) => Box::new(CsvSource::new(stream, o.clone())),
            Format::Txt(mode) => Box::new(LineSource::new(stream, LineKind::Txt(*mode))),
            Format::Lirs => Box::new(LineSource::new(stream, LineKind::Lirs)),
            Format::WebCacheSim => Box::new(LineSource::new(stream, LineKind::WebCacheSim)),
            Format::Hex => Box::new(LineSource::new(stream, LineKind::Hex)),
            Format::Lis => Box::new(LineSource::new(stream, LineKind::Lis { key: 0, left: 0 })),
        };
        Ok(TraceReader { ctx, format, src, index: 0, failed: false })
    }

    /// The format being read.
    pub fn format(&self) -> &Format {
        &self.format
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.ctx.path
    }

    /// Lines or records skipped by the format's rules so far (comments, headers, `*`
    /// breakpoints, zero-size requests).
    pub fn skipped(&self) -> u64 {
        self.ctx.skipped
    }
}

impl Iterator for TraceReader {
    type Item = Result<Request>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.src.next_raw(&mut self.ctx) {
            Ok(Some(r)) => {
                let time = r.time.unwrap_or(self.index);
                self.index += 1;
                Some(Ok(Request { time, key: r.key, size: r.size, op: r.op, next_access: r.next }))
            }
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

// ------------------------------------------------------------------------------------------
// Binary records

struct BinarySource {
    stream: Box<dyn BufRead + Send>,
    fmt: BinaryFormat,
    /// Record size.
    n: usize,
    /// Byte offset of each field in a record.
    offsets: Vec<usize>,
    /// Whole records read ahead (one `read` per ~4,096 records, not one per record); the
    /// current record is `buf[at..at + n]`, the unread bytes `buf[pos..len]`.
    buf: Vec<u8>,
    at: usize,
    pos: usize,
    len: usize,
    eof: bool,
    index: u64,
    /// Divide the time field by this (vscsi: microseconds to seconds).
    time_div: u64,
    /// oracleGeneral rules: next access -1/INT64_MAX = never, zero-size requests skipped.
    oracle: bool,
}

#[derive(Clone, Copy)]
enum Val {
    I(i64),
    U(u64),
    F(f64),
}

impl BinarySource {
    fn new(
        stream: Box<dyn BufRead + Send>,
        fmt: BinaryFormat,
        time_div: u64,
        oracle: bool,
    ) -> Self {
        let n = fmt.record_size();
        let offsets = fmt
            .fields
            .iter()
            .scan(0, |off, f| {
                let at = *off;
                *off += f.width();
                Some(at)
            })
            .collect();
        BinarySource {
            stream,
            fmt,
            n,
            offsets,
            buf: vec![0; n * 4096],
            at: 0,
            pos: 0,
            len: 0,
            eof: false,
            index: 0,
            time_div,
            oracle,
        }
    }

    fn oracle(stream: Box<dyn BufRead + Send>) -> Self {
        let fmt = BinaryFormat {
            fields: vec![Field::U32, Field::U64, Field::U32, Field::I64],
            big_endian: false,
            key: 1,
            size: Some(2),
            time: Some(0),
            op: None,
            next: Some(3),
        };
        Self::new(stream, fmt, 1, true)
    }

    /// vscsi v1 (32 bytes: sn u32, len u32, nSG u32, cmd u16, ver u16, lbn u64, ts u64) or v2
    /// (40 bytes: cmd u16, ver u16, sn u32, len u32, nSG u32, lbn u64, ts u64, rt u64); the
    /// version is the high byte of `ver`, checked on the first record(s) as libCacheSim does.
    fn vscsi(mut stream: Box<dyn BufRead + Send>, ctx: &Ctx) -> Result<Self> {
        let head = stream.fill_buf().map_err(|e| TraceError::io(&ctx.path, e))?;
        let ver = |off: usize| -> Option<u8> { head.get(off + 1).copied() };
        let v1 = ver(14) == Some(1) && (head.len() < 64 || ver(32 + 14) == Some(1));
        let v2 = ver(2) == Some(2) && (head.len() < 80 || ver(40 + 2) == Some(2));
        let (fields, key, size, time) = if v1 {
            (
                vec![
                    Field::U32,
                    Field::U32,
                    Field::U32,
                    Field::U16,
                    Field::U16,
                    Field::U64,
                    Field::U64,
                ],
                5,
                1,
                6,
            )
        } else if v2 {
            (
                vec![
                    Field::U16,
                    Field::U16,
                    Field::U32,
                    Field::U32,
                    Field::U32,
                    Field::U64,
                    Field::U64,
                    Field::U64,
                ],
                5,
                3,
                6,
            )
        } else if head.is_empty() {
            return Ok(Self::new(stream, BinaryFormat::single(Field::U64, false), 1, false));
        } else {
            return Err(ctx.corrupt(
                Position::Record { index: 0, offset: 0 },
                "not a vscsi trace: the version byte is neither 1 (v1) nor 2 (v2)",
            ));
        };
        let fmt = BinaryFormat {
            fields,
            big_endian: false,
            key,
            size: Some(size),
            time: Some(time),
            op: None,
            next: None,
        };
        Ok(Self::new(stream, fmt, 1_000_000, false))
    }

    /// Moves to the next record (`buf[at..at + n]`); `Ok(false)` at a clean end of stream.
    #[inline]
    fn read_record(&mut self, ctx: &Ctx) -> Result<bool> {
        let n = self.n;
        if self.len - self.pos < n {
            self.refill(ctx)?;
            if self.len == 0 {
                return Ok(false);
            }
            if self.len < n {
                let got = self.len;
                return Err(ctx.corrupt(
                    self.pos(),
                    format!("truncated record: {got} of {n} bytes before the end of the file"),
                ));
            }
        }
        self.at = self.pos;
        self.pos += n;
        Ok(true)
    }

    /// Keeps the unread bytes and reads until the buffer is full or the stream ends.
    fn refill(&mut self, ctx: &Ctx) -> Result<()> {
        self.buf.copy_within(self.pos..self.len, 0);
        self.len -= self.pos;
        self.pos = 0;
        while self.len < self.buf.len() && !self.eof {
            match self.stream.read(&mut self.buf[self.len..]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.len += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TraceError::io(&ctx.path, e)),
            }
        }
        Ok(())
    }

    fn pos(&self) -> Position {
        Position::Record { index: self.index, offset: self.index * self.n as u64 }
    }

    #[inline]
    fn field(&self, i: usize) -> Val {
        let off = self.at + self.offsets[i];
        let f = self.fmt.fields[i];
        let b = &self.buf[off..off + f.width()];
        let mut a = [0u8; 8];
        // Normalise to little-endian 8 bytes.
        if self.fmt.big_endian {
            for (j, &x) in b.iter().rev().enumerate() {
                a[j] = x;
            }
        } else {
            a[..b.len()].copy_from_slice(b);
        }
        let u = u64::from_le_bytes(a);
        match f {
            Field::I8 => Val::I(u as u8 as i8 as i64),
            Field::I16 => Val::I(u as u16 as i16 as i64),
            Field::I32 => Val::I(u as u32 as i32 as i64),
            Field::I64 => Val::I(u as i64),
            Field::U8 | Field::U16 | Field::U32 | Field::U64 => Val::U(u),
            Field::F32 => Val::F(f32::from_bits(u as u32) as f64),
            Field::F64 => Val::F(f64::from_bits(u)),
        }
    }
}

impl BinarySource {
    /// oracleGeneral's fixed layout read directly (`u32 time, u64 id, u32 size, i64 next`,
    /// little-endian): the same rules as the generic path below, without its per-field dispatch.
    #[inline]
    fn next_oracle(&mut self, ctx: &mut Ctx) -> Result<Option<Raw>> {
        loop {
            if !self.read_record(ctx)? {
                return Ok(None);
            }
            let r = &self.buf[self.at..self.at + 24];
            let le4 = |o: usize| u32::from_le_bytes([r[o], r[o + 1], r[o + 2], r[o + 3]]);
            let le8 = |o: usize| {
                u64::from_le_bytes([
                    r[o],
                    r[o + 1],
                    r[o + 2],
                    r[o + 3],
                    r[o + 4],
                    r[o + 5],
                    r[o + 6],
                    r[o + 7],
                ])
            };
            let (time, key, size, next) = (le4(0) as u64, le8(4), le4(12), le8(16) as i64);
            let next = match next {
                -1 | i64::MAX => NextAccess::Never,
                i if i >= 1 => NextAccess::At(i as u64 - 1),
                _ => {
                    return Err(ctx.corrupt(
                        self.pos(),
                        "next-access field is not a 1-based position, -1 or INT64_MAX",
                    ))
                }
            };
            self.index += 1;
            if size == 0 {
                ctx.skipped += 1;
                continue;
            }
            return Ok(Some(Raw { time: Some(time), key, size, op: Op::Get, next }));
        }
    }
}

impl Source for BinarySource {
    fn next_raw(&mut self, ctx: &mut Ctx) -> Result<Option<Raw>> {
        if self.oracle {
            return self.next_oracle(ctx);
        }
        loop {
            if !self.read_record(ctx)? {
                return Ok(None);
            }
            let key = match self.field(self.fmt.key) {
                Val::I(i) => i as u64,
                Val::U(u) => u,
                Val::F(_) => unreachable!("float keys are rejected when the format is parsed"),
            };
            let size = match self.fmt.size.map(|i| self.field(i)) {
                None => 1,
                Some(Val::U(u)) if u <= u32::MAX as u64 => u as u32,
                Some(Val::I(i)) if (0..=u32::MAX as i64).contains(&i) => i as u32,
                Some(v) => {
                    let shown = match v {
                        Val::I(i) => i.to_string(),
                        Val::U(u) => u.to_string(),
                        Val::F(f) => f.to_string(),
                    };
                    return Err(ctx.corrupt(
                        self.pos(),
                        format!("object size {shown} is negative, fractional or above 4 GiB"),
                    ));
                }
            };
            let time = self.fmt.time.map(|i| match self.field(i) {
                Val::I(i) => i.max(0) as u64 / self.time_div,
                Val::U(u) => u / self.time_div,
                Val::F(f) => (f.max(0.0) as u64) / self.time_div,
            });
            let op = match self.fmt.op.map(|i| self.field(i)) {
                None => Op::Get,
                Some(Val::U(0)) | Some(Val::I(0)) => Op::Get,
                Some(Val::U(1)) | Some(Val::I(1)) => Op::Set,
                Some(Val::U(2)) | Some(Val::I(2)) => Op::Delete,
                Some(_) => Op::Other,
            };
            let next = match self.fmt.next.map(|i| self.field(i)) {
                None => NextAccess::Unknown,
                Some(Val::I(-1)) | Some(Val::I(i64::MAX)) => NextAccess::Never,
                Some(Val::U(u)) if u == u64::MAX || u == i64::MAX as u64 => NextAccess::Never,
                Some(Val::I(i)) if i >= 1 => NextAccess::At(i as u64 - 1),
                Some(Val::U(u)) if u >= 1 => NextAccess::At(u - 1),
                Some(_) => {
                    return Err(ctx.corrupt(
                        self.pos(),
                        "next-access field is not a 1-based position, -1 or INT64_MAX",
                    ))
                }
            };
            self.index += 1;
            if self.oracle && size == 0 {
                ctx.skipped += 1;
                continue;
            }
            return Ok(Some(Raw { time, key, size, op, next }));
        }
    }
}

// ------------------------------------------------------------------------------------------
// Text lines

/// Reads lines, tracking the line number and byte offset of each.
struct Lines {
    stream: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    line: u64,
    offset: u64,
    next_offset: u64,
}

impl Lines {
    fn new(stream: Box<dyn BufRead + Send>) -> Self {
        Lines { stream, buf: Vec::with_capacity(256), line: 0, offset: 0, next_offset: 0 }
    }

    /// Advances to the next line; `false` at the end.
    fn next(&mut self, ctx: &Ctx) -> Result<bool> {
        self.read_line().map_err(|e| TraceError::io(&ctx.path, e))
    }

    /// Reads the next line into the line buffer and counts it; `false` at the end.
    fn read_line(&mut self) -> std::io::Result<bool> {
        self.buf.clear();
        let n = self.stream.read_until(b'\n', &mut self.buf)?;
        if n > 0 {
            self.line += 1;
            self.offset = self.next_offset;
            self.next_offset += n as u64;
        }
        Ok(n > 0)
    }

    /// Advances to the next line and applies `f` to it (without its line ending) and its
    /// position: borrowed from the stream's buffer when the whole line is there (no copy),
    /// else read into the line buffer. `None` at the end.
    fn next_with<R>(&mut self, f: impl FnOnce(&[u8], Position) -> R) -> std::io::Result<Option<R>> {
        let avail = self.stream.fill_buf()?;
        if let Some(i) = memchr::memchr(b'\n', avail) {
            self.line += 1;
            self.offset = self.next_offset;
            self.next_offset += i as u64 + 1;
            let pos = Position::Line { line: self.line, offset: self.offset };
            let r = f(strip_eol(&avail[..=i]), pos);
            self.stream.consume(i + 1);
            return Ok(Some(r));
        }
        if !self.read_line()? {
            return Ok(None);
        }
        Ok(Some(f(self.line(), self.pos())))
    }

    /// The current line without its line ending.
    fn line(&self) -> &[u8] {
        strip_eol(&self.buf)
    }

    fn pos(&self) -> Position {
        Position::Line { line: self.line, offset: self.offset }
    }
}

/// `s` without a trailing `\n` or `\r\n`.
fn strip_eol(mut s: &[u8]) -> &[u8] {
    if let [rest @ .., b'\n'] = s {
        s = rest;
    }
    if let [rest @ .., b'\r'] = s {
        s = rest;
    }
    s
}

fn trim(s: &[u8]) -> &[u8] {
    let s = match s.iter().position(|b| !b.is_ascii_whitespace()) {
        Some(i) => &s[i..],
        None => return &[],
    };
    let end = s.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(0, |i| i + 1);
    &s[..end]
}

/// Parses an unsigned decimal (or `0x` hex) integer.
#[inline]
pub(crate) fn parse_u64(s: &[u8]) -> Option<u64> {
    if let [b'0', b'x' | b'X', h @ ..] = s {
        return parse_hex(h, 16);
    }
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    // Up to 19 digits cannot overflow (10^19 - 1 < 2^64): no checks. Eight digits at a time.
    let (head, last) = if s.len() == 20 { (&s[..19], Some(s[19])) } else { (s, None) };
    let mut v: u64 = 0;
    let mut eights = head.chunks_exact(8);
    for c in eights.by_ref() {
        v = v * 100_000_000 + parse8(u64::from_le_bytes(c.try_into().ok()?))?;
    }
    for &b in eights.remainder() {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + d as u64;
    }
    match last {
        None => Some(v),
        Some(b) => {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v.checked_mul(10)?.checked_add(d as u64)
        }
    }
}

/// The value of eight ASCII digits read as a little-endian word (the first digit in the lowest
/// byte), `None` if a byte is not a digit: a few multiplies instead of eight dependent steps.
#[inline]
fn parse8(chunk: u64) -> Option<u64> {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    // Every byte in 0x30..=0x3F, and (then without carries) adding 6 keeps it there: 0x30..=0x39.
    if chunk & HIGH != ZEROS || chunk.wrapping_add(0x0606_0606_0606_0606) & HIGH != ZEROS {
        return None;
    }
    let v = chunk - ZEROS;
    // Adjacent digits into two-digit values (in the even bytes), then those into the result.
    let v = (v * 10) + (v >> 8);
    let lo = (v & 0x0000_00FF_0000_00FF).wrapping_mul(100 + (1_000_000 << 32));
    let hi = ((v >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32));
    Some(lo.wrapping_add(hi) >> 32)
}

/// Parses a key number: unsigned, or a negative decimal taken as `i64 as u64`.
fn parse_key_num(s: &[u8]) -> Option<u64> {
    match s.strip_prefix(b"-") {
        Some(rest) => {
            let v = parse_u64(rest)?;
            if v > i64::MAX as u64 + 1 {
                return None;
            }
            Some((v as i64).wrapping_neg() as u64)
        }
        None => parse_u64(s),
    }
}

/// Parses at most `max_digits` leading hex digits (all digits must be hex).
fn parse_hex(s: &[u8], max_digits: usize) -> Option<u64> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s.iter().take(max_digits) {
        let d = (b as char).to_digit(16)? as u64;
        v = (v << 4) | d;
    }
    Some(v)
}

/// Parses a number that may have a fractional part, truncated (libCacheSim truncates times).
fn parse_num_trunc(s: &[u8]) -> Option<u64> {
    let int = match s.iter().position(|&b| b == b'.') {
        Some(i) => {
            if !s[i + 1..].iter().all(u8::is_ascii_digit) {
                return None;
            }
            &s[..i]
        }
        None => s,
    };
    if int.is_empty() && s.len() > 1 {
        return Some(0);
    }
    parse_u64(int)
}

fn hash_key(s: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(s)
}

fn text_key(s: &[u8], mode: &mut KeyMode) -> Option<u64> {
    match *mode {
        KeyMode::Number => parse_key_num(s),
        KeyMode::Hash => Some(hash_key(s)),
        KeyMode::Auto => {
            *mode = if parse_key_num(s).is_some() { KeyMode::Number } else { KeyMode::Hash };
            text_key(s, mode)
        }
    }
}

fn show(s: &[u8]) -> String {
    let t = String::from_utf8_lossy(s);
    if t.len() > 60 {
        format!("'{}...'", &t[..t.char_indices().nth(60).map_or(t.len(), |(i, _)| i)])
    } else {
        format!("'{t}'")
    }
}

enum LineKind {
    Txt(KeyMode),
    Lirs,
    WebCacheSim,
    Hex,
    /// Pending expansion of the current ARC line.
    Lis {
        key: u64,
        left: u64,
    },
}

struct LineSource {
    lines: Lines,
    kind: LineKind,
}

impl LineSource {
    fn new(stream: Box<dyn BufRead + Send>, kind: LineKind) -> Self {
        LineSource { lines: Lines::new(stream), kind }
    }
}

impl Source for LineSource {
    fn next_raw(&mut self, ctx: &mut Ctx) -> Result<Option<Raw>> {
        if let LineKind::Lis { key, left } = &mut self.kind {
            if *left > 0 {
                let k = *key;
                *key = key.wrapping_add(1);
                *left -= 1;
                return Ok(Some(Raw {
                    time: None,
                    key: k,
                    size: 1,
                    op: Op::Get,
                    next: NextAccess::Unknown,
                }));
            }
        }
        loop {
            if !self.lines.next(ctx)? {
                return Ok(None);
            }
            let pos = self.lines.pos();
            let line = trim(self.lines.line());
            let bad = |what: &str, _: &()| -> TraceError {
                ctx.corrupt(pos.clone(), format!("{what}, got {}", show(line)))
            };
            if line.is_empty() {
                ctx.skipped += 1;
                continue;
            }
            let simple =
                |key: u64| Raw { time: None, key, size: 1, op: Op::Get, next: NextAccess::Unknown };
            match &mut self.kind {
                LineKind::Txt(mode) => {
                    let k = text_key(line, mode)
                        .ok_or_else(|| bad("expected a numeric key (obj-id-is-num)", &()))?;
                    return Ok(Some(simple(k)));
                }
                LineKind::Lirs => {
                    if line == b"*" {
                        ctx.skipped += 1;
                        continue;
                    }
                    let k = parse_key_num(line)
                        .ok_or_else(|| bad("expected a block number or '*'", &()))?;
                    return Ok(Some(simple(k)));
                }
                LineKind::Hex => {
                    let k = parse_hex(line, 16)
                        .ok_or_else(|| bad("expected a hexadecimal key", &()))?;
                    return Ok(Some(simple(k)));
                }
                LineKind::WebCacheSim => {
                    let mut it = line.split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty());
                    let (Some(t), Some(id), Some(sz), None) =
                        (it.next(), it.next(), it.next(), it.next())
                    else {
                        return Err(bad("expected three fields 'time id size'", &()));
                    };
                    let time = parse_num_trunc(t).ok_or_else(|| bad("bad time", &()))?;
                    let key = parse_key_num(id).ok_or_else(|| bad("bad id", &()))?;
                    let size = parse_u64(sz)
                        .filter(|&s| s <= u32::MAX as u64)
                        .ok_or_else(|| bad("bad size (an integer up to 4 GiB)", &()))?;
                    return Ok(Some(Raw {
                        time: Some(time),
                        key,
                        size: size as u32,
                        op: Op::Get,
                        next: NextAccess::Unknown,
                    }));
                }
                LineKind::Lis { key, left } => {
                    let mut it = line.split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty());
                    let (Some(start), Some(n)) = (it.next(), it.next()) else {
                        return Err(bad("expected 'start_block n_blocks ...'", &()));
                    };
                    let start = parse_u64(start).ok_or_else(|| bad("bad start block", &()))?;
                    let n = parse_u64(n).ok_or_else(|| bad("bad block count", &()))?;
                    if n > MAX_LIS_BLOCKS {
                        return Err(bad(&format!("block count above {MAX_LIS_BLOCKS}"), &()));
                    }
                    if n == 0 {
                        ctx.skipped += 1;
                        continue;
                    }
                    *key = start.wrapping_add(1);
                    *left = n - 1;
                    return Ok(Some(simple(start)));
                }
            }
        }
    }
}

// ------------------------------------------------------------------------------------------
// csv

struct CsvSource {
    lines: Lines,
    st: CsvState,
}

/// A CSV reader's state apart from its lines (so a line borrowed from the stream's buffer can
/// be parsed against it).
#[derive(Clone)]
struct CsvState {
    o: CsvOptions,
    /// Set once the first data line (or header) has been seen.
    started: bool,
    fields: Vec<(usize, usize)>,
    /// Fields a data line is split into (the last column a request reads), once started.
    limit: usize,
}

const KEY_NAMES: &[&str] =
    &["obj_id", "obj-id", "objid", "object", "object_id", "obj", "id", "key", "lbn", "block"];
const TIME_NAMES: &[&str] = &["time", "timestamp", "ts", "clock", "wall_clock_time"];
const SIZE_NAMES: &[&str] =
    &["size", "obj_size", "object_size", "obj-size", "len", "length", "value_size", "bytes"];
const OP_NAMES: &[&str] = &["op", "operation", "cmd", "type", "opcode"];
const NEXT_NAMES: &[&str] = &["next_access_vtime", "next_access", "next"];

impl CsvSource {
    fn new(stream: Box<dyn BufRead + Send>, o: CsvOptions) -> Self {
        CsvSource {
            lines: Lines::new(stream),
            st: CsvState { o, started: false, fields: Vec::new(), limit: usize::MAX },
        }
    }
}

impl CsvState {
    /// Splits `line` into fields: all of them before the first data line (the header check
    /// reads them all), then only up to the last column a request needs.
    fn split(&mut self, line: &[u8]) {
        self.fields.clear();
        let d = self.o.delimiter.unwrap_or(b',');
        let limit = self.limit;
        let mut start = 0;
        for i in memchr::memchr_iter(d, line) {
            self.fields.push((start, i));
            start = i + 1;
            if self.fields.len() == limit {
                return;
            }
        }
        self.fields.push((start, line.len()));
    }

    fn field<'a>(&self, line: &'a [u8], col: usize) -> Option<&'a [u8]> {
        let &(a, b) = self.fields.get(col - 1)?;
        let f = trim(&line[a..b]);
        Some(f.strip_prefix(b"\"").and_then(|f| f.strip_suffix(b"\"")).unwrap_or(f))
    }

    /// Uses a header line (or a `#` comment holding one) to find columns not given.
    fn apply_header(&mut self, line: &[u8]) -> bool {
        let names: Vec<String> = (1..=self.fields.len())
            .map(|c| {
                String::from_utf8_lossy(self.field(line, c).unwrap_or_default())
                    .trim_start_matches('#')
                    .trim()
                    .to_ascii_lowercase()
            })
            .collect();
        let find =
            |set: &[&str]| names.iter().position(|n| set.contains(&n.as_str())).map(|i| i + 1);
        let Some(key) = find(KEY_NAMES) else { return false };
        if self.o.key_col.is_none() {
            self.o.key_col = Some(key);
            self.o.time_col = self.o.time_col.or(find(TIME_NAMES));
            self.o.size_col = self.o.size_col.or(find(SIZE_NAMES));
            self.o.op_col = self.o.op_col.or(find(OP_NAMES));
            self.o.next_col = self.o.next_col.or(find(NEXT_NAMES));
        }
        true
    }
}

impl Source for CsvSource {
    fn next_raw(&mut self, ctx: &mut Ctx) -> Result<Option<Raw>> {
        loop {
            let st = &mut self.st;
            let r = self.lines.next_with(|line, pos| st.parse(trim(line), pos, ctx));
            match r.map_err(|e| TraceError::io(&ctx.path, e))? {
                None => {
                    if !self.st.started && self.st.o.key_col.is_none() {
                        return Err(ctx.corrupt(Position::None, "empty csv trace"));
                    }
                    return Ok(None);
                }
                Some(r) => {
                    if let Some(raw) = r? {
                        return Ok(Some(raw));
                    }
                }
            }
        }
    }
}

#[cold]
fn missing_column(ctx: &Ctx, pos: &Position, what: &str, c: usize, n: usize) -> TraceError {
    ctx.corrupt(pos.clone(), format!("{what} column {c} missing: the line has {n} fields"))
}

impl CsvState {
    /// Parses one trimmed line (at `pos`): `None` for a line that is not a request (blank,
    /// comment, header).
    fn parse(&mut self, line: &[u8], pos: Position, ctx: &mut Ctx) -> Result<Option<Raw>> {
        if line.is_empty() {
            ctx.skipped += 1;
            return Ok(None);
        }
        if self.o.delimiter.is_none() {
            let body = if line.starts_with(b"#") { &line[1..] } else { line };
            // The first of these present wins (a space often follows a comma).
            let d =
                [b',', b'\t', b';', b'|'].into_iter().find(|d| body.contains(d)).unwrap_or(b' ');
            self.o.delimiter = Some(d);
        }
        self.split(line);
        if line.starts_with(b"#") {
            ctx.skipped += 1;
            if !self.started {
                self.apply_header(line);
            }
            return Ok(None);
        }
        if !self.started {
            self.started = true;
            let header = match self.o.header {
                Some(h) => h,
                // A first line is a header when none of its fields is a number.
                None => (1..=self.fields.len())
                    .all(|c| self.field(line, c).is_some_and(|f| parse_num_trunc(f).is_none())),
            };
            if header {
                ctx.skipped += 1;
                if !self.apply_header(line) && self.o.key_col.is_none() {
                    return Err(ctx.corrupt(
                        pos,
                        format!(
                            "cannot find the key column in header {}; pass csv:obj-id-col=N",
                            show(line)
                        ),
                    ));
                }
                return Ok(None);
            }
            if self.o.key_col.is_none() {
                return Err(ctx.corrupt(
                    pos,
                    "csv without a header naming its columns: pass the columns, e.g. \
                         --format 'csv:obj-id-col=2,time-col=1,obj-size-col=3'",
                ));
            }
        }
        if self.limit == usize::MAX {
            // The columns are settled: later lines are split only as far as they are read.
            self.limit =
                [self.o.key_col, self.o.time_col, self.o.size_col, self.o.op_col, self.o.next_col]
                    .into_iter()
                    .flatten()
                    .max()
                    .unwrap_or(usize::MAX);
        }
        // A column a request reads; the error (cold) names it when the line is too short.
        let need = |col: Option<usize>, what: &str, this: &Self| -> Result<Option<&[u8]>> {
            let Some(c) = col else { return Ok(None) };
            match this.field(line, c) {
                Some(f) => Ok(Some(f)),
                None => Err(missing_column(ctx, &pos, what, c, this.fields.len())),
            }
        };
        let key_f = need(self.o.key_col, "key", self)?.unwrap_or_default();
        let key = text_key(key_f, &mut self.o.key_mode).ok_or_else(|| {
            ctx.corrupt(
                pos.clone(),
                format!("key {} is not a number (obj-id-is-num=true)", show(key_f)),
            )
        })?;
        let time = match need(self.o.time_col, "time", self)? {
            None => None,
            Some(t) => Some(parse_num_trunc(t).ok_or_else(|| {
                ctx.corrupt(pos.clone(), format!("time {} is not a non-negative number", show(t)))
            })?),
        };
        let size = match need(self.o.size_col, "size", self)? {
            None => 1,
            Some(s) => parse_u64(s).filter(|&v| v <= u32::MAX as u64).ok_or_else(|| {
                ctx.corrupt(pos.clone(), format!("size {} is not an integer up to 4 GiB", show(s)))
            })? as u32,
        };
        let op = match need(self.o.op_col, "op", self)? {
            None => Op::Get,
            Some(o) => Op::parse(&String::from_utf8_lossy(o)),
        };
        let next = match need(self.o.next_col, "next-access", self)? {
            None => NextAccess::Unknown,
            Some(n) => match parse_key_num(n) {
                Some(v) if v as i64 == -1 || v >= i64::MAX as u64 => NextAccess::Never,
                Some(v) if v >= 1 => NextAccess::At(v - 1),
                _ => {
                    return Err(ctx.corrupt(
                        pos,
                        format!("next access {} is not a 1-based position or -1", show(n)),
                    ))
                }
            },
        };
        Ok(Some(Raw { time, key, size, op, next }))
    }
}

// ------------------------------------------------------------------------------------------
// CSV in blocks, parsed in parallel

/// Bytes of text read per step of [`CsvBlocks`] (split among the parser threads).
const CSV_STEP: usize = 4 << 20;
/// The longest line [`CsvBlocks`] accepts (a longer one is corrupt input, not a reason to
/// buffer without bound).
const CSV_MAX_LINE: usize = 64 << 20;
/// Parser threads of [`CsvBlocks`].
const CSV_PARTS: usize = 2;

/// A CSV trace in [`Block`]s: the lines up to the first request (header, comments, the
/// delimiter and key-mode detection) are read by the request reader's parser; after that the
/// text is read [`CSV_STEP`] bytes at a time, cut at line ends into [`CSV_PARTS`] parts parsed on
/// their own threads with copies of the settled parser state, and the parts' columns handed
/// out in order. Same requests, same rules and the same errors (the earliest corrupt line,
/// with its line number and byte offset) as [`TraceReader`].
pub(crate) struct CsvBlocks {
    /// The reader of the first lines (`None` once they are done).
    head: Option<CsvSource>,
    stream: Option<Box<dyn BufRead + Send>>,
    path: PathBuf,
    with_next: bool,
    st: Option<CsvState>,
    /// Text read and not parsed yet: `buf[..len]`, starting at a line start.
    buf: Vec<u8>,
    len: usize,
    eof: bool,
    /// Lines before `buf`, and the byte offset of its start.
    lines: u64,
    offset: u64,
    /// Parsed blocks not handed out yet, in order.
    ready: std::collections::VecDeque<Block>,
}

impl CsvBlocks {
    pub(crate) fn new(
        stream: Box<dyn BufRead + Send>,
        o: CsvOptions,
        path: PathBuf,
        with_next: bool,
    ) -> Self {
        CsvBlocks {
            head: Some(CsvSource::new(stream, o)),
            stream: None,
            path,
            with_next,
            st: None,
            buf: Vec::new(),
            len: 0,
            eof: false,
            lines: 0,
            offset: 0,
            ready: std::collections::VecDeque::new(),
        }
    }

    /// Reads the first lines with the request reader until the first request (returned), and
    /// takes the stream over from there.
    fn head(&mut self, mut src: CsvSource) -> Result<Option<Raw>> {
        let mut ctx = Ctx { path: self.path.clone(), skipped: 0 };
        let first = src.next_raw(&mut ctx)?;
        self.lines = src.lines.line;
        self.offset = src.lines.next_offset;
        self.st = Some(src.st);
        self.stream = Some(src.lines.stream);
        if first.is_none() {
            self.eof = true;
        }
        Ok(first)
    }

    /// Reads more text after `buf[..len]`; false at the end of the stream.
    fn fill(&mut self) -> Result<bool> {
        let Some(stream) = self.stream.as_mut() else { return Ok(false) };
        if self.buf.len() < self.len + CSV_STEP {
            self.buf.resize(self.len + CSV_STEP, 0);
        }
        let want = self.len + CSV_STEP;
        let start = self.len;
        while self.len < want {
            match stream.read(&mut self.buf[self.len..want]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(k) => self.len += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TraceError::io(&self.path, e)),
            }
        }
        Ok(self.len > start)
    }

    /// Parses the next step of text into `ready`; false when the text is done.
    fn step(&mut self) -> Result<bool> {
        // Whole lines: up to the last line end (all of it at the end of the stream).
        let cut = loop {
            if let Some(i) = memchr::memrchr(b'\n', &self.buf[..self.len]) {
                if !self.eof && self.len < CSV_STEP / 2 && self.fill()? {
                    continue; // top up a short read before cutting
                }
                break i + 1;
            }
            if self.eof {
                break self.len;
            }
            if self.len >= CSV_MAX_LINE {
                return Err(TraceError::Corrupt {
                    path: self.path.clone(),
                    pos: Position::Line { line: self.lines + 1, offset: self.offset },
                    msg: format!("a line longer than {} MiB", CSV_MAX_LINE >> 20),
                });
            }
            if !self.fill()? {
                continue; // end of stream: the rest is the last line
            }
        };
        if cut == 0 {
            return Ok(false);
        }
        // Settled by the first lines, which `next_block` reads before any step.
        let Some(st) = self.st.as_ref() else { return Ok(false) };
        let text = &self.buf[..cut];
        // Parts cut at line ends near equal sizes.
        let mut bounds = vec![0];
        for k in 1..CSV_PARTS {
            let at = (cut * k / CSV_PARTS).max(*bounds.last().unwrap_or(&0));
            let end = match memchr::memchr(b'\n', &text[at..]) {
                Some(i) => at + i + 1,
                None => cut,
            };
            bounds.push(end.min(cut));
        }
        bounds.push(cut);
        let mut starts = Vec::with_capacity(CSV_PARTS);
        let (mut line, mut offset) = (self.lines, self.offset);
        for w in bounds.windows(2) {
            starts.push((line, offset));
            line += memchr::memchr_iter(b'\n', &text[w[0]..w[1]]).count() as u64;
            offset += (w[1] - w[0]) as u64;
        }
        let (path, with_next) = (&self.path, self.with_next);
        let parse = |i: usize| {
            let (a, b) = (bounds[i], bounds[i + 1]);
            parse_csv_part(st.clone(), &text[a..b], starts[i], path, with_next)
        };
        let results: Vec<Result<Block>> = std::thread::scope(|sc| {
            let others: Vec<_> = (1..CSV_PARTS).map(|i| sc.spawn(move || parse(i))).collect();
            let mut out = vec![parse(0)];
            for h in others {
                out.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            }
            out
        });
        for r in results {
            // The earliest part's error is the first corrupt line.
            self.ready.push_back(r?);
        }
        self.lines = line;
        self.offset = offset;
        self.buf.copy_within(cut..self.len, 0);
        self.len -= cut;
        Ok(true)
    }
}

/// Parses whole lines `text` (the first being line `start.0 + 1` at byte offset `start.1`).
fn parse_csv_part(
    mut st: CsvState,
    text: &[u8],
    start: (u64, u64),
    path: &Path,
    with_next: bool,
) -> Result<Block> {
    let mut ctx = Ctx { path: path.to_path_buf(), skipped: 0 };
    let mut b = Block::default();
    let (mut line, mut offset) = start;
    let mut at = 0;
    while at < text.len() {
        let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i + 1);
        line += 1;
        let pos = Position::Line { line, offset };
        if let Some(r) = st.parse(trim(strip_eol(&text[at..end])), pos, &mut ctx)? {
            push_raw(&mut b, &r, with_next);
        }
        offset += (end - at) as u64;
        at = end;
    }
    Ok(b)
}

/// Appends a request to a block's columns (a zero-size one is counted, not stored).
fn push_raw(b: &mut Block, r: &Raw, with_next: bool) {
    if r.size == 0 {
        b.skipped_zero_size += 1;
        return;
    }
    b.keys.push(r.key);
    b.sizes.push(r.size);
    if with_next {
        b.next.push(crate::blocks::next_code(r.next));
    }
}

impl BlockSource for CsvBlocks {
    fn next_block(&mut self, b: &mut Block) -> Result<bool> {
        b.clear();
        if let Some(src) = self.head.take() {
            if let Some(r) = self.head(src)? {
                push_raw(b, &r, self.with_next);
            }
            return Ok(true);
        }
        loop {
            if let Some(mut got) = self.ready.pop_front() {
                std::mem::swap(b, &mut got);
                return Ok(true);
            }
            if self.stream.is_none() || (self.eof && self.len == 0) {
                return Ok(false);
            }
            if self.len == 0 && !self.fill()? {
                return Ok(false);
            }
            if !self.step()? {
                return Ok(false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The digit-by-digit parser `parse_u64` must equal.
    fn naive(s: &[u8]) -> Option<u64> {
        if s.is_empty() || s.len() > 20 || !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        s.iter().try_fold(0u64, |v, &b| v.checked_mul(10)?.checked_add((b - b'0') as u64))
    }

    proptest! {
        #[test]
        fn decimal_parsing_equals_the_naive_loop(s in "[0-9]{1,21}", junk in any::<u8>(), at in any::<usize>()) {
            prop_assert_eq!(parse_u64(s.as_bytes()), naive(s.as_bytes()));
            let mut b = s.into_bytes();
            let i = at % b.len();
            b[i] = junk;
            prop_assert_eq!(parse_u64(&b), if b.starts_with(b"0x") || b.starts_with(b"0X") { parse_u64(&b) } else { naive(&b) });
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"0x1f"), Some(31));
        assert_eq!(parse_u64(b"1234567890123456789"), Some(1234567890123456789));
        assert_eq!(parse_u64(b"12345678"), Some(12345678));
        assert_eq!(parse_u64(b"1234567/"), None);
        assert_eq!(parse_u64(b"123:5678"), None);
        assert_eq!(parse_u64(b"00000000000000000009"), Some(9));
        assert_eq!(parse_key_num(b"-1"), Some(u64::MAX));
        assert_eq!(parse_key_num(b"-9223372036854775808"), Some(1 << 63));
        assert_eq!(parse_num_trunc(b"12.75"), Some(12));
        assert_eq!(parse_num_trunc(b"1x"), None);
        assert_eq!(parse_hex(b"d05fdfe4022d6da89116ccbd91a8df8b", 16), Some(0xd05fdfe4022d6da8));
    }
}

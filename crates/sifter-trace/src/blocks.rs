//! Requests in columns, a block at a time: what the simulator's loaders read.
//!
//! A simulator pass needs each request's key and size (and, for Belady, the trace's own
//! next-access field), not a [`Request`] struct per request. [`TraceSource::blocks`] decodes a
//! trace into [`Block`]s of up to [`BLOCK`] requests in columns on a background thread, a few
//! blocks ahead of the consumer, and recycles the consumer's spent blocks (no allocation per
//! block at steady state). oracleGeneral — fixed 24-byte records, the format of large traces —
//! is decoded straight from the byte stream into the columns; every other format goes through
//! its [`TraceReader`](crate::TraceReader) (or the generator) on that thread.
//!
//! Zero-size requests are left out of the columns and counted in
//! [`Block::skipped_zero_size`], as the request readers count them.
//!
//! [`TraceSource::blocks`]: crate::TraceSource::blocks

use crate::error::{Position, Result, TraceError};
use crate::request::{NextAccess, Request};
use std::io::Read;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, Sender};

/// Requests per block.
pub const BLOCK: usize = 1 << 16;

/// [`Block::next`]: the object is never requested again.
pub const NEXT_NEVER: u64 = u64::MAX;
/// [`Block::next`]: the trace does not say (formats without next-access fields).
pub const NEXT_UNKNOWN: u64 = u64::MAX - 1;

/// A next-access field as [`Block::next`] holds it.
pub(crate) fn next_code(n: NextAccess) -> u64 {
    match n {
        NextAccess::At(p) => p.min(NEXT_UNKNOWN - 1),
        NextAccess::Never => NEXT_NEVER,
        NextAccess::Unknown => NEXT_UNKNOWN,
    }
}

/// About [`BLOCK`] consecutive requests in columns (zero-size requests left out).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Block {
    /// Keys.
    pub keys: Vec<u64>,
    /// Sizes in bytes (never 0).
    pub sizes: Vec<u32>,
    /// The trace's own next-access fields as 0-based positions, [`NEXT_NEVER`] or
    /// [`NEXT_UNKNOWN`]; filled only when asked for (else empty).
    pub next: Vec<u64>,
    /// Zero-size requests read and left out since the previous block.
    pub skipped_zero_size: u64,
}

impl Block {
    fn with_capacity(n: usize, with_next: bool) -> Self {
        Block {
            keys: Vec::with_capacity(n),
            sizes: Vec::with_capacity(n),
            next: Vec::with_capacity(if with_next { n } else { 0 }),
            skipped_zero_size: 0,
        }
    }

    /// Empties the block, keeping its buffers.
    pub fn clear(&mut self) {
        self.keys.clear();
        self.sizes.clear();
        self.next.clear();
        self.skipped_zero_size = 0;
    }

    /// Appends `other`'s requests (and its skipped count) to this block.
    pub fn append(&mut self, other: &Block) {
        self.keys.extend_from_slice(&other.keys);
        self.sizes.extend_from_slice(&other.sizes);
        self.next.extend_from_slice(&other.next);
        self.skipped_zero_size += other.skipped_zero_size;
    }

    /// Every remaining block of `src` in one.
    pub fn collect(src: &mut impl BlockSource) -> Result<Block> {
        let (mut all, mut b) = (Block::default(), Block::default());
        while src.next_block(&mut b)? {
            all.append(&b);
        }
        Ok(all)
    }

    /// Requests in the block.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the block holds no request (it may still count skipped ones).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// A source of blocks.
pub trait BlockSource {
    /// Fills `b` (cleared first) with the next requests: false when the stream had nothing
    /// left (then `b` is empty). A block may hold no request but count skipped ones. The first
    /// error ends the stream.
    fn next_block(&mut self, b: &mut Block) -> Result<bool>;
}

impl<S: BlockSource + ?Sized> BlockSource for Box<S> {
    fn next_block(&mut self, b: &mut Block) -> Result<bool> {
        (**self).next_block(b)
    }
}

/// Blocks from any request stream, in the calling thread.
#[derive(Debug)]
pub struct RequestBlocks<I> {
    reqs: I,
    with_next: bool,
}

impl<I> RequestBlocks<I> {
    /// Blocks of `reqs`; `with_next`: fill [`Block::next`] from the requests' next-access
    /// fields.
    pub fn new(reqs: I, with_next: bool) -> Self {
        RequestBlocks { reqs, with_next }
    }
}

impl<I: Iterator<Item = Result<Request>>> BlockSource for RequestBlocks<I> {
    fn next_block(&mut self, b: &mut Block) -> Result<bool> {
        b.clear();
        let mut any = false;
        for r in self.reqs.by_ref() {
            let r = r?;
            any = true;
            if r.size == 0 {
                b.skipped_zero_size += 1;
                continue;
            }
            b.keys.push(r.key);
            b.sizes.push(r.size);
            if self.with_next {
                b.next.push(next_code(r.next_access));
            }
            if b.keys.len() == BLOCK {
                break;
            }
        }
        Ok(any)
    }
}

/// oracleGeneral (`u32 time, u64 id, u32 size, i64 next`, little-endian, 24 bytes a record)
/// decoded from its byte stream straight into columns, with the request reader's rules: a
/// next-access field of -1 or `INT64_MAX` is "never", other values must be 1-based positions;
/// zero-size records are skipped and counted; a trailing partial record is an error.
pub(crate) struct OracleBlocks {
    stream: Box<dyn Read + Send>,
    path: PathBuf,
    with_next: bool,
    buf: Vec<u8>,
    /// Records decoded so far (the index of the next one).
    index: u64,
    eof: bool,
}

const ORACLE_RECORD: usize = 24;

impl OracleBlocks {
    pub(crate) fn new(stream: Box<dyn Read + Send>, path: PathBuf, with_next: bool) -> Self {
        OracleBlocks {
            stream,
            path,
            with_next,
            buf: vec![0; BLOCK * ORACLE_RECORD],
            index: 0,
            eof: false,
        }
    }

    fn corrupt(&self, index: u64, msg: impl Into<String>) -> TraceError {
        TraceError::Corrupt {
            path: self.path.clone(),
            pos: Position::Record { index, offset: index * ORACLE_RECORD as u64 },
            msg: msg.into(),
        }
    }
}

impl BlockSource for OracleBlocks {
    fn next_block(&mut self, b: &mut Block) -> Result<bool> {
        b.clear();
        let mut len = 0;
        while len < self.buf.len() && !self.eof {
            match self.stream.read(&mut self.buf[len..]) {
                Ok(0) => self.eof = true,
                Ok(k) => len += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TraceError::io(&self.path, e)),
            }
        }
        if len == 0 {
            return Ok(false);
        }
        let whole = len / ORACLE_RECORD * ORACLE_RECORD;
        for r in self.buf[..whole].chunks_exact(ORACLE_RECORD) {
            let key = u64::from_le_bytes(r[4..12].try_into().unwrap_or_default());
            let size = u32::from_le_bytes(r[12..16].try_into().unwrap_or_default());
            let next = i64::from_le_bytes(r[16..24].try_into().unwrap_or_default());
            let index = self.index;
            self.index += 1;
            let next = match next {
                -1 | i64::MAX => NEXT_NEVER,
                i if i >= 1 => i as u64 - 1,
                _ => {
                    return Err(self.corrupt(
                        index,
                        "next-access field is not a 1-based position, -1 or INT64_MAX",
                    ))
                }
            };
            if size == 0 {
                b.skipped_zero_size += 1;
                continue;
            }
            b.keys.push(key);
            b.sizes.push(size);
            if self.with_next {
                b.next.push(next);
            }
        }
        if whole < len {
            // Only at the end of the stream: the buffer is a whole number of records, so a
            // read loop that stopped short of filling it met the end.
            return Err(self.corrupt(
                self.index,
                format!(
                    "truncated record: {} of {ORACLE_RECORD} bytes before the end of the file",
                    len - whole
                ),
            ));
        }
        Ok(true)
    }
}

/// Blocks decoded on a background thread (see the module docs); a [`BlockSource`].
#[derive(Debug)]
pub struct Blocks {
    rx: Receiver<Result<Block>>,
    /// Spent blocks go back to the decoding thread for reuse.
    back: Sender<Block>,
    done: bool,
}

/// Blocks decoded ahead of the consumer.
const AHEAD: usize = 4;

impl Blocks {
    /// Runs `src` on a background thread, up to a few blocks ahead. Dropping the `Blocks`
    /// stops the thread at its next block.
    pub fn spawn<S: BlockSource + Send + 'static>(src: S) -> Blocks {
        let (tx, rx) = sync_channel::<Result<Block>>(AHEAD);
        let (back, spent) = std::sync::mpsc::channel::<Block>();
        std::thread::spawn(move || {
            let mut src = src;
            loop {
                let mut b = spent.try_recv().unwrap_or_else(|_| Block::with_capacity(BLOCK, true));
                match src.next_block(&mut b) {
                    Ok(true) => {
                        if tx.send(Ok(b)).is_err() {
                            return;
                        }
                    }
                    Ok(false) => return,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        Blocks { rx, back, done: false }
    }
}

impl BlockSource for Blocks {
    fn next_block(&mut self, b: &mut Block) -> Result<bool> {
        if self.done {
            b.clear();
            return Ok(false);
        }
        match self.rx.recv() {
            Ok(Ok(mut got)) => {
                std::mem::swap(b, &mut got);
                // The thread may have ended already: then the block is simply dropped.
                let _ = self.back.send(got);
                Ok(true)
            }
            Ok(Err(e)) => {
                self.done = true;
                b.clear();
                Err(e)
            }
            // The thread ended without an error: the stream is done.
            Err(_) => {
                self.done = true;
                b.clear();
                Ok(false)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oracle_bytes(reqs: &[(u64, u32, i64)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, &(key, size, next)) in reqs.iter().enumerate() {
            out.extend_from_slice(&(i as u32).to_le_bytes());
            out.extend_from_slice(&key.to_le_bytes());
            out.extend_from_slice(&size.to_le_bytes());
            out.extend_from_slice(&next.to_le_bytes());
        }
        out
    }

    fn all(src: &mut impl BlockSource) -> Result<Block> {
        Block::collect(src)
    }

    #[test]
    fn oracle_columns_follow_the_request_reader_rules() {
        let bytes = oracle_bytes(&[(7, 10, 3), (8, 0, -1), (7, 5, i64::MAX), (9, 1, -1)]);
        let mut src = OracleBlocks::new(Box::new(std::io::Cursor::new(bytes)), "t".into(), true);
        let b = all(&mut src).expect("decodes");
        assert_eq!(b.keys, [7, 7, 9]);
        assert_eq!(b.sizes, [10, 5, 1]);
        assert_eq!(b.next, [2, NEXT_NEVER, NEXT_NEVER]);
        assert_eq!(b.skipped_zero_size, 1);
    }

    #[test]
    fn oracle_errors_name_the_record() {
        let mut bytes = oracle_bytes(&[(1, 1, -1), (2, 1, 0)]);
        let mut src =
            OracleBlocks::new(Box::new(std::io::Cursor::new(bytes.clone())), "t".into(), false);
        let e = all(&mut src).expect_err("a zero next-access field is corrupt").to_string();
        assert!(e.contains("record 1") && e.contains("next-access"), "{e}");
        bytes.truncate(24 + 10);
        let mut src = OracleBlocks::new(Box::new(std::io::Cursor::new(bytes)), "t".into(), false);
        let e = all(&mut src).expect_err("a partial record is corrupt").to_string();
        assert!(e.contains("truncated record: 10 of 24 bytes"), "{e}");
    }

    #[test]
    fn spawned_blocks_equal_the_inline_ones() {
        let reqs: Vec<Request> = (0..200_000u64)
            .map(|i| Request { time: i, key: i % 1000, size: (i % 7) as u32, ..Default::default() })
            .collect();
        let inline =
            all(&mut RequestBlocks::new(reqs.clone().into_iter().map(Ok), false)).expect("inline");
        let threaded = all(&mut Blocks::spawn(RequestBlocks::new(reqs.into_iter().map(Ok), false)))
            .expect("threaded");
        assert_eq!(inline, threaded);
        assert_eq!(inline.skipped_zero_size, 200_000 / 7 + 1);
        assert_eq!(inline.len() as u64 + inline.skipped_zero_size, 200_000);
    }
}

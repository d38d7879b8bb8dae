//! # sifter-trace
//!
//! Cache traces for sifter: the [`Request`] type, streaming readers for the real trace formats
//! ([`TraceReader`], formats in [`mod@format`]), seeded synthetic workloads ([`synth`]), the
//! oracleGeneral writer ([`oracle`]) and trace statistics ([`stats`]).
//!
//! ```
//! use sifter_trace::TraceSource;
//! let src = TraceSource::parse("zipf:alpha=0.9,n=1000,requests=10000,seed=1", None).unwrap();
//! let n = src.requests().unwrap().filter_map(Result::ok).count();
//! assert_eq!(n, 10_000);
//! ```

pub mod blocks;
pub mod error;
pub mod format;
pub mod oracle;
pub mod reader;
pub mod request;
pub mod stats;
pub mod synth;

pub use blocks::{Block, BlockSource, Blocks, RequestBlocks};
pub use error::{Position, Result, TraceError};
pub use format::Format;
pub use reader::TraceReader;
pub use request::{NextAccess, Op, Request};
pub use stats::TraceStats;
pub use synth::SynthSpec;

use std::path::{Path, PathBuf};

/// Where requests come from: a trace file (format given or detected) or a synthetic workload.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceSource {
    /// A trace file.
    File {
        /// The path.
        path: PathBuf,
        /// The format, or `None` to detect it.
        format: Option<Format>,
    },
    /// A generator spec.
    Synthetic(SynthSpec),
}

impl TraceSource {
    /// Parses a trace argument: a generator spec like `zipf:alpha=1.0,n=1000` (when no file of
    /// that name exists), else a file path. `format` is a format spec for files.
    pub fn parse(arg: &str, format: Option<&str>) -> Result<TraceSource> {
        let is_synth = synth::KINDS
            .iter()
            .any(|k| arg == *k || arg.strip_prefix(k).is_some_and(|r| r.starts_with(':')));
        if is_synth && !Path::new(arg).exists() {
            if format.is_some() {
                return Err(TraceError::Spec(
                    "--format applies to trace files, not synthetic workloads".into(),
                ));
            }
            return Ok(TraceSource::Synthetic(SynthSpec::parse(arg)?));
        }
        let path = PathBuf::from(arg);
        if !path.exists() {
            return Err(TraceError::NotFound(arg.into()));
        }
        let format = format.map(Format::parse).transpose()?;
        Ok(TraceSource::File { path, format })
    }

    /// A short name for tables (the file name, or the spec).
    pub fn name(&self) -> String {
        match self {
            TraceSource::File { path, .. } => path
                .file_name()
                .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into()),
            TraceSource::Synthetic(s) => format!(
                "{:?}(alpha={},n={},requests={},seed={})",
                s.kind, s.alpha, s.n, s.requests, s.seed
            )
            .to_lowercase(),
        }
    }

    /// The format that will be read: the given one, or the one detected from the file's name and
    /// first bytes (`None` for synthetic workloads).
    pub fn resolved_format(&self) -> Result<Option<Format>> {
        match self {
            TraceSource::File { format: Some(f), .. } => Ok(Some(f.clone())),
            TraceSource::File { path, format: None } => {
                Ok(Some(format::detect(path, &reader::read_head(path, 1 << 16)?)?))
            }
            TraceSource::Synthetic(_) => Ok(None),
        }
    }

    /// Streams the requests in columns ([`Block`]s), decoded (or generated) on a background
    /// thread a few blocks ahead of the consumer; oracleGeneral files are decoded straight into
    /// the columns. `with_next`: fill [`Block::next`] from the trace's next-access fields.
    pub fn blocks(&self, with_next: bool) -> Result<Blocks> {
        Ok(match self {
            TraceSource::File { path, format } => {
                let format = match format {
                    Some(f) => f.clone(),
                    None => format::detect(path, &reader::read_head(path, 1 << 16)?)?,
                };
                if format == Format::OracleGeneral {
                    let stream = reader::open_stream(path)?;
                    Blocks::spawn(blocks::OracleBlocks::new(stream, path.clone(), with_next))
                } else if let Format::Csv(o) = &format {
                    let stream = reader::open_stream(path)?;
                    Blocks::spawn(reader::CsvBlocks::new(
                        stream,
                        o.clone(),
                        path.clone(),
                        with_next,
                    ))
                } else {
                    let reader = TraceReader::open(path, Some(&format))?;
                    Blocks::spawn(RequestBlocks::new(reader, with_next))
                }
            }
            TraceSource::Synthetic(s) => {
                Blocks::spawn(RequestBlocks::new(s.generate().map(Ok), with_next))
            }
        })
    }

    /// Streams the requests, decoded (or generated) on a background thread a few batches
    /// ahead of the consumer ([`read_ahead`]).
    pub fn requests(&self) -> Result<Box<dyn Iterator<Item = Result<Request>> + Send>> {
        Ok(match self {
            TraceSource::File { path, format } => {
                Box::new(read_ahead(TraceReader::open(path, format.as_ref())?))
            }
            TraceSource::Synthetic(s) => Box::new(read_ahead(s.generate().map(Ok))),
        })
    }
}

/// Requests per batch handed over by [`read_ahead`].
const AHEAD_BATCH: usize = 1 << 14;

/// Runs `inner` on a background thread that decodes batches of requests up to four batches
/// ahead, so decoding (and zstd decompression, and parsing) overlaps with whatever the
/// consumer does per request. Same items in the same order; an error ends the stream, as
/// with `inner`. Dropping the iterator stops the thread at its next batch.
pub fn read_ahead<I>(inner: I) -> ReadAhead
where
    I: Iterator<Item = Result<Request>> + Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::sync_channel::<(Vec<Request>, Option<TraceError>)>(4);
    std::thread::spawn(move || {
        let mut inner = inner;
        loop {
            let mut batch = Vec::with_capacity(AHEAD_BATCH);
            let mut end = None;
            for r in inner.by_ref() {
                match r {
                    Ok(r) => {
                        batch.push(r);
                        if batch.len() == AHEAD_BATCH {
                            break;
                        }
                    }
                    Err(e) => {
                        end = Some(Some(e));
                        break;
                    }
                }
            }
            if end.is_none() && batch.len() < AHEAD_BATCH {
                end = Some(None);
            }
            let last = end.is_some();
            if tx.send((batch, end.flatten())).is_err() || last {
                return;
            }
        }
    });
    ReadAhead { rx, cur: Vec::new().into_iter(), err: None, done: false }
}

/// The iterator of [`read_ahead`].
#[derive(Debug)]
pub struct ReadAhead {
    rx: std::sync::mpsc::Receiver<(Vec<Request>, Option<TraceError>)>,
    cur: std::vec::IntoIter<Request>,
    err: Option<TraceError>,
    done: bool,
}

impl Iterator for ReadAhead {
    type Item = Result<Request>;

    #[inline]
    fn next(&mut self) -> Option<Result<Request>> {
        loop {
            if let Some(r) = self.cur.next() {
                return Some(Ok(r));
            }
            if let Some(e) = self.err.take() {
                self.done = true;
                return Some(Err(e));
            }
            if self.done {
                return None;
            }
            match self.rx.recv() {
                Ok((batch, err)) => {
                    self.err = err;
                    self.cur = batch.into_iter();
                }
                // The thread ended without an error: the stream is done.
                Err(_) => self.done = true,
            }
        }
    }
}

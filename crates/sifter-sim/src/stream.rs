//! Streaming sweeps: a trace read twice and never held in memory, so memory is
//! O(objects + chunk) whatever the number of requests.
//!
//! * **Pass 1** ([`Scan::run`]) reads the trace once: it assigns each distinct key its dense
//!   id (one map of O(objects), the only per-trace state kept), and counts the requests,
//!   objects, footprint and sizes a sweep needs to resolve its cache sizes. When a policy of
//!   the sweep needs next-access positions (Belady), it also writes each request's id to an
//!   anonymous temporary file (4 B per request), then walks that file backwards in chunks,
//!   writing every request's next-access position to a second one (8 B per request, on disk,
//!   not in memory); the id file is deleted as soon as that is done.
//! * **Pass 2** ([`Scan::sweep`]) reads the trace again: a reader thread decodes chunks of
//!   [`STREAM_CHUNK`] requests, maps their keys through pass 1's map (read-only) and, with
//!   Belady, reads their next-access positions alongside; meanwhile every policy × size
//!   simulation of the sweep runs the previous chunk, in parallel on the rayon pool. Each
//!   simulation owns its state; the chunk is shared read-only; a few chunk buffers circulate.
//!
//! The requests and their order are those of [`crate::trace::LoadedTrace`] (zero-size requests
//! left out, ids in order of first appearance), and each simulation runs the same
//! [`Simulate::run_chunk`] as the in-memory sweep, so both modes give identical counts.
//! A trace that reads differently the second time (a file changed in between) is an error.

use crate::idmap::{Densifier, IdMap};
use crate::registry::PolicySpec;
use crate::runner::{CacheSize, Counts, SimResult, Simulate};
use crate::trace::{next_positions, Chunk, TraceSummary, BLOCK, NEVER};
use crate::SimError;
use rayon::prelude::*;
use sifter_trace::blocks::{NEXT_NEVER, NEXT_UNKNOWN};
use sifter_trace::{Block, BlockSource, TraceError};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel};
use std::time::Instant;

/// Requests per chunk of pass 2 (about 5 MB of buffers, 7 with next-access positions).
pub const STREAM_CHUNK: usize = 1 << 18;

/// Requests per step of the backward next-access pass.
const REVERSE_CHUNK: usize = 1 << 20;

/// Which pass a progress report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Pass 1: ids and totals (the count is requests read).
    Scan,
    /// Pass 1's backward walk for next-access positions (requests done, from the end).
    NextAccess,
    /// Pass 2: the simulations (requests every simulation has run).
    Simulate,
}

/// Progress callback: the phase and how many requests it has done so far.
pub type Progress<'a> = &'a (dyn Fn(Phase, u64) + Sync);

/// The result of pass 1: what the sweep needs to know of the trace, the id map, and the
/// next-access positions (on disk) if they were asked for.
#[derive(Debug)]
pub struct Scan {
    summary: TraceSummary,
    ids: IdMap,
    next: Option<NextSource>,
}

/// Where pass 2 gets next-access positions from.
#[derive(Debug)]
enum NextSource {
    /// The temporary file of the backward pass.
    File(File),
    /// The trace's own next-access fields (oracleGeneral), checked in pass 1 against the
    /// sequence itself: no temporary file is read, the positions stream with the requests.
    Declared,
}

/// Pass 1's check of a trace's own next-access fields: each object's declared next position
/// must be where that object next appears, and the last must say "never". O(objects).
struct Declared {
    /// Per id: the position its last request declared for the next one.
    pending: Vec<u64>,
    ok: bool,
}

impl Declared {
    fn check(&mut self, ids: &[u32], nexts: &[u64], first: u64) {
        if !self.ok {
            return;
        }
        for (j, (&id, &n)) in ids.iter().zip(nexts).enumerate() {
            let (id, pos) = (id as usize, first + j as u64);
            if id == self.pending.len() {
                self.pending.push(NEVER);
            } else if self.pending[id] != pos {
                self.ok = false;
                return;
            }
            self.pending[id] = match n {
                NEXT_NEVER => NEVER,
                p if p > pos && p != NEXT_UNKNOWN => p,
                _ => {
                    self.ok = false;
                    return;
                }
            };
        }
    }

    /// Whether every declared position checked out (and none is left dangling).
    fn valid(&self) -> bool {
        self.ok && self.pending.iter().all(|&p| p == NEVER)
    }
}

fn io_error(what: &str, e: std::io::Error) -> SimError {
    SimError::Io(format!("{what}: {e}"))
}

fn stopped() -> SimError {
    SimError::Stopped("stopped before any simulation finished".into())
}

impl Scan {
    /// Pass 1 over `reqs` (see the module docs). `with_next`: also compute next-access
    /// positions (into a temporary file). `stop` is polled between chunks of requests.
    pub fn run(
        name: &str,
        blocks: impl BlockSource,
        with_next: bool,
        progress: Progress<'_>,
        stop: &AtomicBool,
    ) -> Result<Scan, SimError> {
        let mut s = TraceSummary { name: name.to_string(), ..Default::default() };
        let mut d = Densifier::default();
        let mut id_file = if with_next {
            let f = tempfile::tempfile().map_err(|e| io_error("temporary id file", e))?;
            Some(BufWriter::with_capacity(1 << 20, f))
        } else {
            None
        };
        let mut ids = Vec::with_capacity(BLOCK);
        let mut raw = Vec::with_capacity(BLOCK * 4);
        let mut blocks = blocks;
        let mut b = Block::default();
        let mut declared = with_next.then(|| Declared { pending: Vec::new(), ok: true });
        while blocks.next_block(&mut b)? {
            ids.clear();
            s.skipped_zero_size += b.skipped_zero_size;
            s.requested_bytes += b.sizes.iter().map(|&z| z as u64).sum::<u64>();
            s.max_size = s.max_size.max(b.sizes.iter().copied().max().unwrap_or(0));
            d.map_block(&b.keys, &b.sizes, &mut ids, name)?;
            if let Some(dc) = &mut declared {
                if b.next.len() == b.keys.len() {
                    dc.check(&ids, &b.next, s.requests);
                } else {
                    dc.ok = false;
                }
            }
            s.requests += b.keys.len() as u64;
            if let Some(w) = &mut id_file {
                raw.clear();
                raw.extend(ids.iter().flat_map(|id| id.to_le_bytes()));
                w.write_all(&raw).map_err(|e| io_error("temporary id file", e))?;
            }
            progress(Phase::Scan, s.requests);
            if stop.load(Ordering::Relaxed) {
                return Err(stopped());
            }
        }
        s.n_objects = d.n_objects();
        s.footprint_bytes = d.footprint_bytes;
        let mut ids = d.into_map();
        // The map lives on beside every simulation of pass 2: fitted to its final size.
        ids.compact();
        progress(Phase::Scan, s.requests);
        // Positions in the skipped sequence equal the file's only without zero-size requests.
        let trusted =
            declared.is_some_and(|d| d.valid()) && s.skipped_zero_size == 0 && s.requests > 0;
        let next = match id_file {
            Some(_) if trusted => Some(NextSource::Declared),
            Some(w) => {
                let f =
                    w.into_inner().map_err(|e| io_error("temporary id file", e.into_error()))?;
                Some(NextSource::File(reverse_pass(f, &s, progress, stop)?))
            }
            None => None,
        };
        Ok(Scan { summary: s, ids, next })
    }

    /// The trace's totals.
    pub fn summary(&self) -> &TraceSummary {
        &self.summary
    }

    /// Whether Belady's next-access positions come from the trace's own (checked) fields
    /// rather than the temporary file of the backward pass.
    pub fn next_access_from_trace(&self) -> bool {
        matches!(self.next, Some(NextSource::Declared))
    }

    /// Pass 2: every `specs` × `sizes` simulation over `reqs` (the same trace again), all
    /// fed each chunk in parallel. Results in input order (policies outer, sizes inner), one
    /// per simulation (an error where a policy could not be built). If `stop` is raised, the
    /// sweep ends after the chunk in progress and the results cover the requests run so far
    /// ([`StreamOutcome::stopped_after`]).
    #[allow(clippy::too_many_arguments)]
    pub fn sweep(
        &self,
        blocks: impl BlockSource + Send,
        specs: &[PolicySpec],
        sizes: &[CacheSize],
        bytes: bool,
        seed: u64,
        progress: Progress<'_>,
        stop: &AtomicBool,
    ) -> Result<StreamOutcome, SimError> {
        let s = &self.summary;
        let mut jobs: Vec<Job> = Vec::new();
        for spec in specs {
            for &size in sizes {
                let capacity = size.resolve_summary(s, bytes);
                let sim = if capacity == 0 {
                    Err(SimError::Size(format!(
                        "size {} of {} gives a cache of 0 {}",
                        size.label(),
                        s.name,
                        if bytes { "bytes" } else { "objects" }
                    )))
                } else {
                    spec.build(&crate::policy::PolicyCtx { capacity, n_objects: s.n_objects, seed })
                };
                jobs.push(Job {
                    spec: spec.clone(),
                    size,
                    capacity,
                    sim,
                    counts: Counts::default(),
                    seconds: 0.0,
                    most_resident: 0,
                });
            }
        }
        let with_next = jobs.iter().any(|j| j.sim.as_ref().is_ok_and(|p| p.wants_next_access()));
        let next =
            match (&self.next, with_next) {
                (Some(NextSource::Declared), true) => Some(NextReader::Declared),
                (Some(NextSource::File(f)), true) => {
                    let mut f = f.try_clone().map_err(|e| io_error("next-access file", e))?;
                    f.seek(SeekFrom::Start(0)).map_err(|e| io_error("next-access file", e))?;
                    Some(NextReader::File(BufReader::with_capacity(1 << 20, f)))
                }
                (None, true) => return Err(SimError::Policy(
                    "a policy of the sweep needs next-access positions, which the scan did not \
                     compute (Scan::run with with_next)"
                        .into(),
                )),
                (_, false) => None,
            };
        let mut done = 0u64;
        let mut stopped_after = None;
        std::thread::scope(|sc| -> Result<(), SimError> {
            let (tx, rx) = sync_channel::<Result<Buf, SimError>>(2);
            let (back_tx, back_rx) = channel::<Buf>();
            let (map, name) = (&self.ids, s.name.as_str());
            sc.spawn(move || read_chunks(blocks, map, next, name, tx, back_rx));
            for msg in rx {
                let buf = msg?;
                if stop.load(Ordering::Relaxed) {
                    stopped_after = Some(done);
                    break;
                }
                let chunk = buf.chunk(with_next);
                if done + chunk.len() as u64 > s.requests {
                    return Err(changed(s, "more"));
                }
                jobs.par_iter_mut().for_each(|j| {
                    if let Ok(sim) = &mut j.sim {
                        let t0 = Instant::now();
                        j.counts.add(sim.run_chunk(chunk, bytes));
                        j.seconds += t0.elapsed().as_secs_f64();
                        j.most_resident = j.most_resident.max(sim.resident_len() as u64);
                    }
                });
                done += chunk.len() as u64;
                progress(Phase::Simulate, done);
                // The reader may have finished: then the buffer is simply dropped.
                let _ = back_tx.send(buf);
            }
            Ok(())
        })?;
        if stopped_after.is_none() && done != s.requests {
            return Err(changed(s, "fewer"));
        }
        let results = jobs
            .into_iter()
            .map(|j| {
                let sim = j.sim?;
                Ok(SimResult {
                    trace: s.name.clone(),
                    spec: j.spec.to_string(),
                    policy: sim.sim_name(),
                    size: j.size,
                    capacity: j.capacity,
                    bytes,
                    miss_ratio: j.counts.miss_ratio(),
                    byte_miss_ratio: j.counts.byte_miss_ratio(),
                    counts: j.counts,
                    seconds: j.seconds,
                    most_resident: j.most_resident,
                })
            })
            .collect();
        Ok(StreamOutcome { results, stopped_after })
    }
}

/// What a streaming sweep produced.
#[derive(Debug)]
pub struct StreamOutcome {
    /// One result per policy × size, in input order.
    pub results: Vec<Result<SimResult, SimError>>,
    /// `Some(n)` if the sweep was stopped: the results cover the first `n` requests only.
    pub stopped_after: Option<u64>,
}

struct Job {
    spec: PolicySpec,
    size: CacheSize,
    capacity: u64,
    sim: Result<Box<dyn Simulate>, SimError>,
    counts: Counts,
    seconds: f64,
    /// See [`SimResult::most_resident`].
    most_resident: u64,
}

fn changed(s: &TraceSummary, how: &str) -> SimError {
    SimError::Trace(TraceError::Spec(format!(
        "{}: the trace read differently the second time ({how} requests than the {} of the \
         first pass): was the file changed during the sweep?",
        s.name, s.requests
    )))
}

/// Pass 2's source of next-access positions.
enum NextReader {
    File(BufReader<File>),
    Declared,
}

/// One chunk of decoded, mapped requests.
#[derive(Default)]
struct Buf {
    ids: Vec<u32>,
    keys: Vec<u64>,
    sizes: Vec<u32>,
    next: Vec<u64>,
}

impl Buf {
    fn chunk(&self, with_next: bool) -> Chunk<'_> {
        Chunk {
            ids: &self.ids,
            keys: &self.keys,
            sizes: &self.sizes,
            next: with_next.then_some(&self.next[..]),
        }
    }
}

/// Pass 2's reader thread: fills chunks and sends them, until the trace ends, an error (sent
/// on), or the receiver hangs up (the sweep stopped).
fn read_chunks(
    mut blocks: impl BlockSource,
    map: &IdMap,
    mut next: Option<NextReader>,
    name: &str,
    tx: std::sync::mpsc::SyncSender<Result<Buf, SimError>>,
    back: std::sync::mpsc::Receiver<Buf>,
) {
    let mut raw = Vec::new();
    let mut b = Block::default();
    loop {
        let mut buf = back.try_recv().unwrap_or_else(|_| Buf {
            ids: Vec::with_capacity(STREAM_CHUNK + BLOCK),
            keys: Vec::with_capacity(STREAM_CHUNK + BLOCK),
            sizes: Vec::with_capacity(STREAM_CHUNK + BLOCK),
            next: Vec::new(),
        });
        buf.ids.clear();
        buf.keys.clear();
        buf.sizes.clear();
        buf.next.clear();
        let mut ended = false;
        // Whole blocks, until the chunk holds at least STREAM_CHUNK requests.
        while buf.keys.len() < STREAM_CHUNK {
            match blocks.next_block(&mut b) {
                Ok(false) => {
                    ended = true;
                    break;
                }
                Err(e) => {
                    let _ = tx.send(Err(e.into()));
                    return;
                }
                Ok(true) => {
                    buf.keys.extend_from_slice(&b.keys);
                    buf.sizes.extend_from_slice(&b.sizes);
                    if let Some(NextReader::Declared) = next {
                        if b.next.len() != b.keys.len() {
                            let _ = tx.send(Err(SimError::Policy(format!(
                                "{name}: the second pass was given blocks without the trace's \
                                 next-access fields (TraceSource::blocks(true))"
                            ))));
                            return;
                        }
                        buf.next.extend_from_slice(&b.next);
                    }
                }
            }
        }
        buf.ids.resize(buf.keys.len(), 0);
        if let Err(i) = map.get_batch(&buf.keys, &mut buf.ids) {
            let _ = tx.send(Err(SimError::Trace(TraceError::Spec(format!(
                "{name}: the trace read differently the second time (key {} was not in the \
                 first pass): was the file changed during the sweep?",
                buf.keys[i]
            )))));
            return;
        }
        if let Some(NextReader::File(f)) = &mut next {
            raw.resize(buf.ids.len() * 8, 0);
            if let Err(e) = f.read_exact(&mut raw) {
                let _ = tx.send(Err(io_error("next-access file", e)));
                return;
            }
            buf.next.extend(
                raw.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]))),
            );
        }
        if !buf.ids.is_empty() && tx.send(Ok(buf)).is_err() {
            return;
        }
        if ended {
            return;
        }
    }
}

/// Pass 1's backward walk: from the file of request ids, a file of next-access positions.
fn reverse_pass(
    mut ids: File,
    s: &TraceSummary,
    progress: Progress<'_>,
    stop: &AtomicBool,
) -> Result<File, SimError> {
    let err = |e| io_error("temporary next-access file", e);
    let mut out = tempfile::tempfile().map_err(err)?;
    out.set_len(s.requests * 8).map_err(err)?;
    let mut last = vec![NEVER; s.n_objects as usize];
    let mut raw = vec![0u8; REVERSE_CHUNK * 8];
    let mut id_buf = vec![0u32; REVERSE_CHUNK];
    let mut next_buf = vec![0u64; REVERSE_CHUNK];
    let mut end = s.requests;
    while end > 0 {
        let start = end.saturating_sub(REVERSE_CHUNK as u64);
        let len = (end - start) as usize;
        ids.seek(SeekFrom::Start(start * 4)).map_err(err)?;
        ids.read_exact(&mut raw[..len * 4]).map_err(err)?;
        for (d, b) in id_buf[..len].iter_mut().zip(raw.chunks_exact(4)) {
            *d = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        next_positions(&id_buf[..len], start, &mut last, &mut next_buf[..len]);
        for (b, n) in raw.chunks_exact_mut(8).zip(&next_buf[..len]) {
            b.copy_from_slice(&n.to_le_bytes());
        }
        out.seek(SeekFrom::Start(start * 8)).map_err(err)?;
        out.write_all(&raw[..len * 8]).map_err(err)?;
        progress(Phase::NextAccess, s.requests - start);
        if stop.load(Ordering::Relaxed) {
            return Err(stopped());
        }
        end = start;
    }
    Ok(out)
}

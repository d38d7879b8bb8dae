//! The native half of the `sifter` Python package (`sifter._native`): thin wrappers over the
//! library crates — a sweep ([`sifter_sim::sweep`]), the trace reader ([`sifter_trace`]),
//! the queueing model ([`sifter_model`]), the concurrent cache ([`sifter::Cache`]) and the
//! experiments of [`sifter_lab`] (the benchmark, the closed loop, the lab report). The
//! Python half (`python/sifter/`) turns columns into data frames and numpy arrays, shows
//! progress and raises warnings; everything it knows of sifter comes through here.
//!
//! Long work (sweeps, trace reads, model solves) runs with the interpreter released; a sweep
//! runs on its own thread while the calling thread reports progress and watches for Ctrl-C
//! (`KeyboardInterrupt` stops the sweep as the CLI's Ctrl-C does).

use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyString, PyTuple};
use sifter_lab::report::BenchSpec;
use sifter_sim::registry::{parse_policy_list, REGISTRY};
use sifter_sim::runner::SimResult;
use sifter_sim::sweep::{self as sw, Notice, Observer, Options};
use sifter_sim::trace::LoadedTrace;
use sifter_trace::{Request, TraceSource};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// The extension's Rust allocations go through the counting allocator, so that `bench` can
/// measure a cache's heap per entry and refuse a size the machine cannot hold before building
/// it (`sifter_lab::memory::fits`). It counts only while measuring.
#[global_allocator]
static ALLOC: sifter_lab::memory::Counting = sifter_lab::memory::Counting;

/// Bad input, as a `ValueError` with the CLI's message.
fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The progress and notices of a sweep running on another thread, polled by the caller.
#[derive(Default)]
struct Watch {
    /// Bumped when a phase begins or is relabelled (the caller redraws its bar).
    phase: AtomicU64,
    label: Mutex<String>,
    total: AtomicU64,
    done: AtomicU64,
    notices: Mutex<Vec<Notice>>,
}

impl Observer for Watch {
    fn notice(&self, n: &Notice) {
        self.notices.lock().unwrap_or_else(|e| e.into_inner()).push(n.clone());
    }
    fn begin(&self, label: &str, total: u64) {
        *self.label.lock().unwrap_or_else(|e| e.into_inner()) = label.to_string();
        // Relaxed (all): progress figures, read by a poller that tolerates staleness.
        self.total.store(total, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        self.phase.fetch_add(1, Ordering::Relaxed);
    }
    fn relabel(&self, label: &str) {
        *self.label.lock().unwrap_or_else(|e| e.into_inner()) = label.to_string();
        self.phase.fetch_add(1, Ordering::Relaxed);
    }
    fn position(&self, n: u64) {
        self.done.store(n, Ordering::Relaxed);
    }
    fn advance(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }
}

/// Runs `work` on a thread of its own, with a fresh progress [`Watch`] and stop flag, while
/// the calling thread, with the interpreter released between 100 ms polls, reports the watch's
/// progress to `progress` (label, done, total, new phase) and watches for signals: Ctrl-C (or a
/// raising callback) sets the stop flag (the work stops as the CLI's first Ctrl-C stops it),
/// waits for the thread and raises. Returns the work's result and the watch (its notices).
fn off_interpreter<T: Send + 'static>(
    py: Python<'_>,
    progress: Option<&Bound<'_, PyAny>>,
    work: impl FnOnce(&Watch, &AtomicBool) -> T + Send + 'static,
) -> PyResult<(T, Arc<Watch>)> {
    let watch = Arc::new(Watch::default());
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let rx = Mutex::new(rx);
    let (w, st) = (watch.clone(), stop.clone());
    let worker = std::thread::Builder::new()
        .name("sifter-work".into())
        .spawn(move || {
            let _ = tx.send(work(&w, &st));
        })
        .map_err(value_error)?;
    let mut seen_phase = u64::MAX;
    let outcome = loop {
        let got = py.detach(|| {
            rx.lock().unwrap_or_else(|e| e.into_inner()).recv_timeout(Duration::from_millis(100))
        });
        if let Some(cb) = progress {
            // Relaxed: progress figures.
            let phase = watch.phase.load(Ordering::Relaxed);
            let label = watch.label.lock().unwrap_or_else(|e| e.into_inner()).clone();
            let done = watch.done.load(Ordering::Relaxed);
            let total = watch.total.load(Ordering::Relaxed);
            if phase != 0 {
                let r = cb.call1((label, done, total, phase != seen_phase));
                seen_phase = phase;
                if let Err(e) = r {
                    // Relaxed: the worker polls the flag; the join below waits for it.
                    stop.store(true, Ordering::Relaxed);
                    let _ = py.detach(|| worker.join());
                    return Err(e);
                }
            }
        }
        match got {
            Ok(r) => break r,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    // Relaxed: as above.
                    stop.store(true, Ordering::Relaxed);
                    let _ = py.detach(|| worker.join());
                    return Err(e);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(PyValueError::new_err(
                    "the work's thread ended without a result (a panic)",
                ));
            }
        }
    };
    let _ = py.detach(|| worker.join());
    Ok((outcome, watch))
}

/// Where a sweep's requests come from.
enum Input {
    /// A file or a generator spec.
    Source(TraceSource),
    /// Arrays handed over from Python.
    Arrays(LoadedTrace),
}

/// Little-endian `u64`s from a byte buffer (numpy's `tobytes()` on x86-64 and aarch64).
fn u64s(b: &[u8], what: &str) -> PyResult<Vec<u64>> {
    if !b.len().is_multiple_of(8) {
        return Err(value_error(format!("{what}: {} bytes is not a whole number of u64", b.len())));
    }
    Ok(b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect())
}

fn u32s(b: &[u8], what: &str) -> PyResult<Vec<u32>> {
    if !b.len().is_multiple_of(4) {
        return Err(value_error(format!("{what}: {} bytes is not a whole number of u32", b.len())));
    }
    Ok(b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap_or([0; 4]))).collect())
}

/// A trace from arrays of keys and (optionally) sizes, decoded like a file's requests (ids by
/// first appearance, zero sizes left out and counted).
fn arrays_trace(name: &str, keys: &[u8], sizes: Option<&[u8]>) -> PyResult<LoadedTrace> {
    let keys = u64s(keys, "keys")?;
    let sizes = match sizes {
        Some(s) => {
            let v = u32s(s, "sizes")?;
            if v.len() != keys.len() {
                return Err(value_error(format!(
                    "{name}: {} keys but {} sizes: give one size per key",
                    keys.len(),
                    v.len()
                )));
            }
            Some(v)
        }
        None => None,
    };
    let reqs = keys.iter().enumerate().map(|(i, &k)| {
        let mut r = Request::get(i as u64, k);
        if let Some(s) = &sizes {
            r.size = s[i];
        }
        Ok(r)
    });
    let t = LoadedTrace::load(name, reqs, &|_| {}).map_err(value_error)?;
    if t.is_empty() {
        return Err(value_error(format!("{name}: the trace has no requests")));
    }
    Ok(t)
}

/// A trace for an analysis: a source (file or generator) or arrays, decoded into memory.
fn analysis_trace(
    py: Python<'_>,
    source: Option<String>,
    keys: Option<Vec<u8>>,
    sizes: Option<Vec<u8>>,
    name: &str,
    format: Option<String>,
) -> PyResult<LoadedTrace> {
    match (source, keys) {
        (Some(s), None) => {
            let src = TraceSource::parse(&s, format.as_deref()).map_err(value_error)?;
            py.detach(|| sw::load(&src, &sw::Silent)).map_err(value_error)
        }
        (None, Some(k)) => {
            if format.is_some() {
                return Err(value_error("format applies to trace files, not to arrays"));
            }
            py.detach(|| arrays_trace(name, &k, sizes.as_deref()))
        }
        _ => Err(PyTypeError::new_err("give a trace source or an array of keys")),
    }
}

/// One analysis of `sifter analyze` on one trace, as columns: `kind` is intervals, ideal,
/// warmup, hand or vectors; `policies` (None for hand and vectors), `size` (one size; vectors: a list), `n` (window or
/// sampling interval, None: the CLI's default), `phases` (ideal), `p`, `m` (vectors).
#[pyfunction]
#[pyo3(signature = (kind, source, keys, sizes, name, format, policies, size, n=None, phases=1, p=4, m=2))]
#[allow(clippy::too_many_arguments)]
fn analyze<'py>(
    py: Python<'py>,
    kind: &str,
    source: Option<String>,
    keys: Option<Vec<u8>>,
    sizes: Option<Vec<u8>>,
    name: String,
    format: Option<String>,
    policies: Option<String>,
    size: String,
    n: Option<usize>,
    phases: usize,
    p: usize,
    m: usize,
) -> PyResult<Bound<'py, PyDict>> {
    use sifter_sim::analysis as an;
    // hand and vectors take no policy list (SIEVE and multi-step LRU are theirs).
    let specs = match &policies {
        Some(p) => parse_policy_list(p).map_err(value_error)?,
        None => Vec::new(),
    };
    sw::check_specs(&specs).map_err(value_error)?;
    let d = PyDict::new(py);
    if kind == "vectors" {
        let grid = sw::parse_size_grid(&size).map_err(value_error)?;
        let t = analysis_trace(py, source, keys, sizes, &name, format)?;
        let rows = py.detach(|| an::vectors(&t, &grid, p, m)).map_err(value_error)?;
        d.set_item("size", rows.iter().map(|r| r.size.label()).collect::<Vec<_>>())?;
        d.set_item("capacity", rows.iter().map(|r| r.capacity).collect::<Vec<_>>())?;
        d.set_item("vector", rows.iter().map(|r| r.vector).collect::<Vec<_>>())?;
        d.set_item("hits", rows.iter().map(|r| r.hits).collect::<Vec<_>>())?;
        d.set_item("share_of_hits", rows.iter().map(|r| r.share_of_hits).collect::<Vec<_>>())?;
        d.set_item("hit_ratio", rows.iter().map(|r| r.hit_ratio).collect::<Vec<_>>())?;
        return Ok(d);
    }
    let one = an::one_size(&size).map_err(value_error)?;
    if !matches!(kind, "intervals" | "ideal" | "warmup" | "hand") {
        return Err(value_error(format!(
            "unknown analysis {kind:?}: expected intervals, ideal, warmup, hand or vectors"
        )));
    }
    let t = analysis_trace(py, source, keys, sizes, &name, format)?;
    let cap = an::capacity_of(&t, one).map_err(value_error)?;
    match kind {
        "intervals" | "warmup" => {
            let series = py
                .detach(|| {
                    if kind == "intervals" {
                        an::intervals(&t, &specs, cap, n.unwrap_or(100_000))
                    } else {
                        an::warmup(&t, &specs, cap, n)
                    }
                })
                .map_err(value_error)?;
            let y = if kind == "intervals" { "miss_ratio" } else { "hit_ratio" };
            let (mut pol, mut win, mut start, mut val) = (vec![], vec![], vec![], vec![]);
            for s in &series {
                for (w, &(x, v)) in s.points.iter().enumerate() {
                    pol.push(s.policy.clone());
                    win.push(w);
                    start.push(x as u64);
                    val.push(v);
                }
            }
            d.set_item("policy", pol)?;
            d.set_item("window", win)?;
            d.set_item("start", start)?;
            d.set_item(y, val)?;
        }
        "ideal" => {
            let series =
                py.detach(|| an::ideal(&t, &specs, cap, n, phases)).map_err(value_error)?;
            let (mut pol, mut req, mut ratio, mut mr) = (vec![], vec![], vec![], vec![]);
            for (name, pts) in &series {
                for q in pts {
                    pol.push(name.clone());
                    req.push(q.request);
                    ratio.push(q.ideal_object_ratio);
                    mr.push(q.miss_ratio_so_far);
                }
            }
            d.set_item("policy", pol)?;
            d.set_item("request", req)?;
            d.set_item("ideal_object_ratio", ratio)?;
            d.set_item("miss_ratio_so_far", mr)?;
        }
        _ => {
            let pts = py.detach(|| an::hand(&t, cap, n)).map_err(value_error)?;
            d.set_item("request", pts.iter().map(|h| h.request).collect::<Vec<_>>())?;
            d.set_item("hand_from_tail", pts.iter().map(|h| h.hand_from_tail).collect::<Vec<_>>())?;
            d.set_item("cached", pts.iter().map(|h| h.cached).collect::<Vec<_>>())?;
            d.set_item("position", pts.iter().map(|h| h.position).collect::<Vec<_>>())?;
        }
    }
    Ok(d)
}

/// `sifter analyze compare`: each source swept at one size (FIFO added), then the miss-ratio
/// reduction from FIFO summarised per policy. Returns `(summary, per_trace, skipped)`: two
/// column dicts and the messages of traces that could not be read (skipped, as the CLI does).
#[pyfunction]
#[pyo3(signature = (sources, format, policies, size))]
#[allow(clippy::type_complexity)]
fn analyze_compare<'py>(
    py: Python<'py>,
    sources: Vec<String>,
    format: Option<String>,
    policies: String,
    size: String,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>, Vec<String>)> {
    let specs = parse_policy_list(&policies).map_err(value_error)?;
    sw::check_specs(&specs).map_err(value_error)?;
    let one = sifter_sim::analysis::one_size(&size).map_err(value_error)?;
    if sources.is_empty() {
        return Err(value_error("no traces"));
    }
    let mut skipped = Vec::new();
    let mut per_trace = Vec::new();
    for f in &sources {
        let src = match TraceSource::parse(f, format.as_deref()) {
            Ok(s) => s,
            Err(e) => {
                skipped.push(format!("skipping {f}: {e}"));
                continue;
            }
        };
        let t = match py.detach(|| sw::load(&src, &sw::Silent)) {
            Ok(t) => t,
            Err(e) => {
                skipped.push(format!("skipping {f}: {e}"));
                continue;
            }
        };
        let opt = Options::default();
        let out = py
            .detach(|| {
                sw::sweep_loaded(&t, &specs, &[one], &opt, &sw::Silent, &AtomicBool::new(false))
            })
            .map_err(value_error)?;
        per_trace.push(out.results);
    }
    let rows = sifter_sim::analysis::compare(&per_trace);
    let summary = PyDict::new(py);
    summary.set_item("policy", rows.iter().map(|r| r.policy.clone()).collect::<Vec<_>>())?;
    summary.set_item("p10", rows.iter().map(|r| r.p10).collect::<Vec<_>>())?;
    summary.set_item("p25", rows.iter().map(|r| r.p25).collect::<Vec<_>>())?;
    summary.set_item("mean", rows.iter().map(|r| r.mean).collect::<Vec<_>>())?;
    summary.set_item("p75", rows.iter().map(|r| r.p75).collect::<Vec<_>>())?;
    summary.set_item("p90", rows.iter().map(|r| r.p90).collect::<Vec<_>>())?;
    summary.set_item("best_share", rows.iter().map(|r| r.best_share).collect::<Vec<_>>())?;
    let (mut tr, mut pol, mut mr, mut fm, mut red) = (vec![], vec![], vec![], vec![], vec![]);
    for res in &per_trace {
        let fifo = res.iter().find(|r| r.spec == "fifo").map_or(f64::NAN, |r| r.miss_ratio);
        for r in res.iter().filter(|r| r.spec != "fifo") {
            tr.push(r.trace.clone());
            pol.push(r.policy.clone());
            mr.push(r.miss_ratio);
            fm.push(fifo);
            red.push(if fifo > 0.0 { (fifo - r.miss_ratio) / fifo } else { 0.0 });
        }
    }
    let rows = PyDict::new(py);
    rows.set_item("trace", tr)?;
    rows.set_item("policy", pol)?;
    rows.set_item("miss_ratio", mr)?;
    rows.set_item("fifo_miss_ratio", fm)?;
    rows.set_item("reduction", red)?;
    Ok((summary, rows, skipped))
}

/// One trace's sweep: `(columns, notices)`. `columns` maps the CLI's CSV columns to lists;
/// `notices` are `(is_warning, text)` pairs. `progress(label, done, total)` is called from
/// this thread while the sweep runs on another.
#[pyfunction]
#[pyo3(signature = (source, keys, sizes, name, policies, cache_sizes, bytes, format, mode, seed, threads, progress))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn run_sweep<'py>(
    py: Python<'py>,
    source: Option<String>,
    keys: Option<Vec<u8>>,
    sizes: Option<Vec<u8>>,
    name: String,
    policies: String,
    cache_sizes: String,
    bytes: bool,
    format: Option<String>,
    mode: String,
    seed: u64,
    threads: Option<usize>,
    progress: Option<Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyDict>, Vec<(bool, String)>)> {
    let specs = parse_policy_list(&policies).map_err(value_error)?;
    sw::check_specs(&specs).map_err(value_error)?;
    let grid = sw::parse_size_grid(&cache_sizes).map_err(value_error)?;
    let mode: sw::Mode = mode.parse().map_err(value_error)?;
    let input = match (source, keys) {
        (Some(s), None) => {
            Input::Source(TraceSource::parse(&s, format.as_deref()).map_err(value_error)?)
        }
        (None, Some(k)) => {
            if mode == sw::Mode::Stream {
                return Err(value_error(
                    "mode='stream' reads a file or a generator twice; arrays are in memory already",
                ));
            }
            if format.is_some() {
                return Err(value_error("format applies to trace files, not to arrays"));
            }
            let t = py.detach(|| arrays_trace(&name, &k, sizes.as_deref()))?;
            if bytes && t.summary().sizeless() {
                return Err(value_error(sw::sizeless_error(&t.name)));
            }
            Input::Arrays(t)
        }
        _ => return Err(PyTypeError::new_err("give a trace source or an array of keys")),
    };
    let pool = match threads {
        Some(0) => return Err(value_error("threads must be at least 1")),
        Some(n) => {
            Some(rayon::ThreadPoolBuilder::new().num_threads(n).build().map_err(value_error)?)
        }
        None => None,
    };
    let opt = Options { bytes, seed, mode };
    let (outcome, watch) = off_interpreter(py, progress.as_ref(), move |w, st| {
        let run = || match &input {
            Input::Source(src) => sw::sweep_source(src, &specs, &grid, &opt, w, st),
            Input::Arrays(t) => sw::sweep_loaded(t, &specs, &grid, &opt, w, st),
        };
        match &pool {
            Some(p) => p.install(run),
            None => run(),
        }
    })?;
    let mut notices: Vec<(bool, String)> = watch
        .notices
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|n| (n.is_warning(), n.to_string()))
        .collect();
    let out = outcome.map_err(value_error)?;
    let rows = out.asked();
    // A run that stored nothing (miss ratio 1 by its admission rule) warns, as the CLI notes.
    if let Some(note) = sifter_sim::runner::stored_nothing_note(&rows) {
        notices.push((true, note.trim_end().to_string()));
    }
    Ok((columns(py, &rows)?, notices))
}

/// Results as the CLI's CSV columns.
fn columns<'py>(py: Python<'py>, rows: &[SimResult]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("trace", rows.iter().map(|r| r.trace.clone()).collect::<Vec<_>>())?;
    d.set_item("policy", rows.iter().map(|r| r.policy.clone()).collect::<Vec<_>>())?;
    d.set_item("spec", rows.iter().map(|r| r.spec.clone()).collect::<Vec<_>>())?;
    d.set_item("size", rows.iter().map(|r| r.size.label()).collect::<Vec<_>>())?;
    d.set_item("capacity", rows.iter().map(|r| r.capacity).collect::<Vec<_>>())?;
    d.set_item("bytes", rows.iter().map(|r| r.bytes).collect::<Vec<_>>())?;
    d.set_item("requests", rows.iter().map(|r| r.counts.requests).collect::<Vec<_>>())?;
    d.set_item("misses", rows.iter().map(|r| r.counts.misses).collect::<Vec<_>>())?;
    d.set_item("miss_ratio", rows.iter().map(|r| r.miss_ratio).collect::<Vec<_>>())?;
    d.set_item("byte_miss_ratio", rows.iter().map(|r| r.byte_miss_ratio).collect::<Vec<_>>())?;
    d.set_item("seconds", rows.iter().map(|r| r.seconds).collect::<Vec<_>>())?;
    Ok(d)
}

/// The simulator's policies: `(name, aliases, about, [(param, default, doc)])`.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn policies() -> Vec<(String, Vec<String>, String, Vec<(String, String, String)>)> {
    REGISTRY
        .iter()
        .map(|e| {
            (
                e.names[0].to_string(),
                e.names[1..].iter().map(|s| s.to_string()).collect(),
                e.about.to_string(),
                e.params
                    .iter()
                    .map(|p| (p.name.to_string(), p.default.to_string(), p.doc.to_string()))
                    .collect(),
            )
        })
        .collect()
}

/// A trace read in chunks: each `next_chunk` gives `(keys, sizes, times)` as little-endian
/// byte buffers (u64, u32, u64) of up to `chunk` requests, or `None` at the end.
#[pyclass(module = "sifter._native")]
struct TraceChunks {
    name: String,
    reqs: Mutex<Box<dyn Iterator<Item = sifter_trace::Result<Request>> + Send>>,
    chunk: usize,
    read: AtomicU64,
}

#[pymethods]
impl TraceChunks {
    #[new]
    #[pyo3(signature = (source, format=None, chunk=1 << 20))]
    fn new(py: Python<'_>, source: String, format: Option<String>, chunk: usize) -> PyResult<Self> {
        if chunk == 0 {
            return Err(value_error("chunk must be at least 1 request"));
        }
        let src = TraceSource::parse(&source, format.as_deref()).map_err(value_error)?;
        let reqs = py.detach(|| src.requests()).map_err(value_error)?;
        Ok(TraceChunks { name: src.name(), reqs: Mutex::new(reqs), chunk, read: AtomicU64::new(0) })
    }

    /// The trace's display name.
    #[getter]
    fn name(&self) -> String {
        self.name.clone()
    }

    /// Requests read so far.
    #[getter]
    fn requests_read(&self) -> u64 {
        // Relaxed: a count.
        self.read.load(Ordering::Relaxed)
    }

    #[allow(clippy::type_complexity)]
    fn next_chunk<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<(Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>)>> {
        let (k, s, t) = py
            .detach(|| {
                let mut it = self.reqs.lock().unwrap_or_else(|e| e.into_inner());
                let (mut k, mut s, mut t) = (Vec::new(), Vec::new(), Vec::new());
                for r in it.by_ref().take(self.chunk) {
                    let r = r?;
                    k.extend_from_slice(&r.key.to_le_bytes());
                    s.extend_from_slice(&r.size.to_le_bytes());
                    t.extend_from_slice(&r.time.to_le_bytes());
                }
                Ok::<_, sifter_trace::TraceError>((k, s, t))
            })
            .map_err(value_error)?;
        if k.is_empty() {
            return Ok(None);
        }
        // Relaxed: a count.
        self.read.fetch_add((k.len() / 8) as u64, Ordering::Relaxed);
        Ok(Some((PyBytes::new(py, &k), PyBytes::new(py, &s), PyBytes::new(py, &t))))
    }
}

/// The queueing model's network for `policy` at hit ratio `hit`.
fn network(
    policy: &str,
    hit: f64,
    disk_us: f64,
    cores: Option<u32>,
) -> PyResult<sifter_model::network::Network> {
    if !(0.0..=1.0).contains(&hit) {
        return Err(value_error(format!("hit ratio {hit}: must be between 0 and 1")));
    }
    if !(disk_us.is_finite() && disk_us >= 0.0) {
        return Err(value_error(format!(
            "backend latency {disk_us} µs: must be a finite number ≥ 0"
        )));
    }
    if cores == Some(0) {
        return Err(value_error("cores must be at least 1"));
    }
    let p =
        sifter_model::policies::Params { hit, disk_us, cpu_servers: cores, ..Default::default() };
    sifter_model::policies::build(policy, &p).map_err(value_error)
}

/// Throughput of `policy` at hit ratio `hit` with `mpl` requests in flight: a dict with the
/// solver's figures (`x` in Mops/s).
#[pyfunction]
#[pyo3(signature = (policy, hit, disk_us=100.0, mpl=72, cores=None, solver="mva"))]
fn model_solve<'py>(
    py: Python<'py>,
    policy: &str,
    hit: f64,
    disk_us: f64,
    mpl: u32,
    cores: Option<u32>,
    solver: &str,
) -> PyResult<Bound<'py, PyDict>> {
    if mpl == 0 {
        return Err(value_error("mpl must be at least 1"));
    }
    let net = network(policy, hit, disk_us, cores)?;
    let d = PyDict::new(py);
    match solver {
        "mva" => {
            let m = sifter_model::solve::mva(&net, mpl);
            d.set_item("x", m.x)?;
            d.set_item("response_us", m.r)?;
            let names: Vec<String> = net.stations.iter().map(|s| s.name.clone()).collect();
            d.set_item("stations", names)?;
            d.set_item("queue", m.q)?;
            d.set_item("utilization", m.u)?;
        }
        "bound" => {
            let b = sifter_model::solve::bound(&net, mpl);
            d.set_item("x", b.x)?;
            d.set_item("bottleneck", b.bottleneck)?;
            d.set_item("population_term", b.population_term)?;
            d.set_item("bottleneck_term", b.bottleneck_term)?;
            d.set_item("demand_us", b.demand)?;
            d.set_item("think_us", b.think)?;
        }
        _ => return Err(value_error(format!("unknown solver {solver:?}: expected mva or bound"))),
    }
    Ok(d)
}

/// The critical hit ratio p* of `policy` and the bound's peak throughput there.
#[pyfunction]
#[pyo3(signature = (policy, disk_us=100.0, mpl=72, cores=None))]
fn model_pstar(policy: &str, disk_us: f64, mpl: u32, cores: Option<u32>) -> PyResult<(f64, f64)> {
    if mpl == 0 {
        return Err(value_error("mpl must be at least 1"));
    }
    network(policy, 0.5, disk_us, cores)?;
    let x_of = |h: f64| {
        network(policy, h, disk_us, cores)
            .map(|n| sifter_model::solve::bound(&n, mpl).x)
            .unwrap_or(0.0)
    };
    Ok(sifter_model::solve::pstar(x_of, 2000))
}

/// `sifter model advise` as a list of `(policy, pstar, peak_mops, at_hit_mops)`.
#[pyfunction]
#[pyo3(signature = (policies, cores, mpl, disk_us, hit=None))]
#[allow(clippy::type_complexity)]
fn model_advise(
    policies: Vec<String>,
    cores: u32,
    mpl: u32,
    disk_us: f64,
    hit: Option<f64>,
) -> PyResult<Vec<(String, f64, f64, Option<f64>)>> {
    let a =
        sifter_model::advise::advise(&policies, cores, mpl, disk_us, hit).map_err(value_error)?;
    Ok(a.into_iter().map(|a| (a.policy, a.pstar, a.peak_mops, a.at_hit_mops)).collect())
}

/// A Python key as a Rust value, so the cache hashes and compares keys without running Python
/// code (and without the interpreter). Equal keys of a `dict` are equal here: `True == 1 ==
/// 1.0`, so bools and integral floats become integers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    None,
    Int(i64),
    /// An integer beyond 64 bits, by its decimal text.
    BigInt(Box<str>),
    /// A float that is not an integer, by its bits (all NaNs alike).
    Float(u64),
    Str(Box<str>),
    Bytes(Box<[u8]>),
    Tuple(Box<[Key]>),
}

impl Key {
    fn from_py(o: &Bound<'_, PyAny>) -> PyResult<Key> {
        if o.is_none() {
            return Ok(Key::None);
        }
        if o.is_instance_of::<PyBool>() {
            return Ok(Key::Int(i64::from(o.extract::<bool>()?)));
        }
        if o.is_instance_of::<PyInt>() {
            return Ok(match o.extract::<i64>() {
                Ok(i) => Key::Int(i),
                Err(_) => Key::BigInt(o.str()?.extract::<String>()?.into()),
            });
        }
        if o.is_instance_of::<PyFloat>() {
            let f: f64 = o.extract()?;
            if f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64 {
                return Ok(Key::Int(f as i64));
            }
            return Ok(Key::Float(if f.is_nan() { f64::NAN.to_bits() } else { f.to_bits() }));
        }
        if o.is_instance_of::<PyString>() {
            return Ok(Key::Str(o.extract::<String>()?.into()));
        }
        if o.is_instance_of::<PyBytes>() {
            return Ok(Key::Bytes(o.extract::<Vec<u8>>()?.into()));
        }
        if o.is_instance_of::<PyTuple>() {
            let items: PyResult<Vec<Key>> = o.try_iter()?.map(|i| Key::from_py(&i?)).collect();
            return Ok(Key::Tuple(items?.into()));
        }
        Err(PyTypeError::new_err(format!(
            "sifter.Cache keys are None, bool, int, float, str, bytes or tuples of them; got {}",
            o.get_type().name()?
        )))
    }
}

type Value = Arc<Py<PyAny>>;

/// The concurrent cache for Python objects: keys as [`Key`]s, values as shared references.
/// Every operation releases the interpreter while it runs inside the cache, so no Python code
/// (a key's `__eq__`, a value's `__del__`) ever runs under the cache's locks; values leaving the
/// cache are released when the interpreter is next held.
#[pyclass(module = "sifter._native")]
struct Cache {
    inner: sifter::Cache<Key, Value>,
}

#[pymethods]
impl Cache {
    #[new]
    #[pyo3(signature = (capacity, policy="mobius", ttl=None, tti=None))]
    fn new(capacity: u64, policy: &str, ttl: Option<f64>, tti: Option<f64>) -> PyResult<Self> {
        let p: sifter::Policy = policy.parse().map_err(value_error)?;
        let secs = |what: &str, s: f64| {
            if s.is_finite() && s > 0.0 {
                Ok(Duration::from_secs_f64(s))
            } else {
                Err(value_error(format!("{what} {s}: must be a positive number of seconds")))
            }
        };
        let mut b = sifter::Cache::builder().capacity(capacity).policy(p);
        if let Some(s) = ttl {
            b = b.time_to_live(secs("ttl", s)?);
        }
        if let Some(s) = tti {
            b = b.time_to_idle(secs("tti", s)?);
        }
        Ok(Cache { inner: b.try_build().map_err(value_error)? })
    }

    #[pyo3(signature = (key, default=None))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let k = Key::from_py(key)?;
        let v = py.detach(|| self.inner.get(&k));
        Ok(match v {
            Some(v) => Some(v.clone_ref(py)),
            None => default,
        })
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let k = Key::from_py(key)?;
        match py.detach(|| self.inner.get(&k)) {
            Some(v) => Ok(v.clone_ref(py)),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    fn insert(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: Py<PyAny>) -> PyResult<()> {
        let k = Key::from_py(key)?;
        let v = Arc::new(value);
        py.detach(|| self.inner.insert(k, v));
        Ok(())
    }

    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: Py<PyAny>,
    ) -> PyResult<()> {
        self.insert(py, key, value)
    }

    #[pyo3(signature = (key, default=None))]
    fn pop(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let k = Key::from_py(key)?;
        Ok(match py.detach(|| self.inner.remove(&k)) {
            Some(v) => Some(v.clone_ref(py)),
            None => default,
        })
    }

    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = Key::from_py(key)?;
        match py.detach(|| self.inner.remove(&k)) {
            Some(_) => Ok(()),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let k = Key::from_py(key)?;
        Ok(py.detach(|| self.inner.contains_key(&k)))
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn clear(&self, py: Python<'_>) {
        py.detach(|| self.inner.clear());
    }

    /// The statistics as a dict.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.stats();
        let d = PyDict::new(py);
        d.set_item("hits", s.hits)?;
        d.set_item("misses", s.misses)?;
        d.set_item("inserts", s.inserts)?;
        d.set_item("updates", s.updates)?;
        d.set_item("evictions", s.evictions)?;
        d.set_item("expirations", s.expirations)?;
        d.set_item("removals", s.removals)?;
        d.set_item("hit_writes", s.hit_writes)?;
        d.set_item("hit_ratio", s.hit_ratio())?;
        Ok(d)
    }

    #[getter]
    fn capacity(&self) -> u64 {
        self.inner.capacity()
    }

    #[getter]
    fn policy(&self) -> String {
        self.inner.policy().name().to_string()
    }

    /// Checks the cache's invariants (raises `ValueError` naming the first broken one).
    fn validate(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.inner.validate()).map_err(value_error)
    }

    fn __repr__(&self) -> String {
        format!(
            "sifter.Cache(capacity={}, policy={:?}, len={})",
            self.inner.capacity(),
            self.inner.policy().name(),
            self.inner.len()
        )
    }
}

/// `sifter bench`'s measurement ([`sifter_lab::report::measure`]) off the interpreter; the
/// rows as `sifter bench`'s `results.csv` text.
#[pyfunction]
#[pyo3(name = "bench", signature = (caches, threads, workload, mode, size, requests, duration, sequence, repeat, sample_every, fill, warmup_passes, warmup_limit, hit_only, touch, progress))]
#[allow(clippy::too_many_arguments)]
fn run_bench<'py>(
    py: Python<'py>,
    caches: String,
    threads: String,
    workload: String,
    mode: String,
    size: String,
    requests: u64,
    duration: Option<String>,
    sequence: usize,
    repeat: usize,
    sample_every: u32,
    fill: f64,
    warmup_passes: f64,
    warmup_limit: String,
    hit_only: bool,
    touch: u32,
    progress: Option<Bound<'py, PyAny>>,
) -> PyResult<String> {
    let spec = BenchSpec {
        caches,
        threads,
        workload,
        mode,
        size,
        requests,
        duration,
        sequence,
        repeat,
        sample_every,
        fill,
        warmup_passes,
        warmup_limit,
        hit_only,
        touch,
        fits: Some(sifter_lab::memory::fits),
    };
    let report = off_interpreter(py, progress.as_ref(), move |w, st| {
        sifter_lab::report::measure(&spec, w, st)
    })?
    .0
    .map_err(|e| value_error(format!("{e:#}")))?;
    Ok(sifter_lab::report::csv_text(&report.rows))
}

/// The closed-loop experiment ([`sifter_lab::closed_loop::Experiment`]) off the interpreter;
/// the rows as `sifter bench closed-loop --csv` text and the notices (warning?, text).
#[pyfunction]
#[pyo3(signature = (policies, mpls, backend_latency, sizes, hit_ratios, keys, secs, spin, workers, cores, progress))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn closed_loop<'py>(
    py: Python<'py>,
    policies: Vec<String>,
    mpls: Vec<usize>,
    backend_latency: String,
    sizes: Option<Vec<f64>>,
    hit_ratios: Option<Vec<f64>>,
    keys: u64,
    secs: f64,
    spin: bool,
    workers: String,
    cores: Option<u32>,
    progress: Option<Bound<'py, PyAny>>,
) -> PyResult<(String, Vec<(bool, String)>)> {
    use sifter_lab::closed_loop::{parse_latency, Event, Experiment, Sizing};
    let sizing = match (sizes, hit_ratios) {
        (Some(_), Some(_)) => return Err(value_error("give sizes or hit_ratios, not both")),
        (_, Some(t)) => Sizing::HitRatios(t),
        (Some(z), None) => Sizing::Fractions(z),
        (None, None) => Sizing::Fractions(vec![0.001, 0.01, 0.05, 0.2, 0.5]),
    };
    let cores = match cores {
        Some(0) => return Err(value_error("cores must be at least 1")),
        Some(c) => c,
        None => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
    };
    let experiment = Experiment {
        policies: policies.iter().map(|p| p.trim().to_lowercase()).collect(),
        mpls,
        backend: parse_latency(&backend_latency).map_err(|e| value_error(format!("{e:#}")))?,
        sizing,
        keys,
        secs,
        spin,
        workers: workers.parse().map_err(|e| value_error(format!("{e:#}")))?,
        cores,
    };
    let ((rows, notices), _) = off_interpreter(py, progress.as_ref(), move |w, st| {
        let mut notices = Vec::new();
        let rows = experiment.run(
            &mut |e| match e {
                Event::Sized { policy, target, entries, simulated } => notices.push((
                    false,
                    format!("{policy}: hit ratio {target} needs {entries} entries (simulated {simulated:.4})"),
                )),
                Event::OutOfReach { policy, target, keys } => notices.push((
                    true,
                    format!("{policy}: hit ratio {target} is out of reach with {keys} keys; skipped"),
                )),
                Event::Measuring { points } => w.begin("closed loop", points as u64),
                Event::Measured(r) => {
                    w.relabel(&format!("closed loop: {} MPL {}", r.policy, r.mpl));
                    w.advance(1);
                }
            },
            st,
        );
        (rows, notices)
    })?;
    let rows = rows.map_err(|e| value_error(format!("{e:#}")))?;
    Ok((sifter_lab::closed_loop::rows_csv(&rows), notices))
}

/// A lab run's steps relabel the bar (its tables are in the report it writes).
impl sifter_lab::lab::LabObserver for Watch {
    fn step(&self, what: &str) {
        self.relabel(what)
    }
}

/// `sifter lab` ([`sifter_lab::lab::run`]) off the interpreter: (files written, findings).
#[pyfunction]
#[pyo3(signature = (out, quick, traces, progress))]
fn lab<'py>(
    py: Python<'py>,
    out: std::path::PathBuf,
    quick: bool,
    traces: Vec<String>,
    progress: Option<Bound<'py, PyAny>>,
) -> PyResult<(Vec<String>, String)> {
    let opts = sifter_lab::lab::LabOptions {
        out,
        quick,
        traces,
        command: format!("sifter.lab (Python, sifter {})", env!("CARGO_PKG_VERSION")),
    };
    let outcome =
        off_interpreter(py, progress.as_ref(), move |w, st| sifter_lab::lab::run(&opts, w, st))?
            .0
            .map_err(|e| value_error(format!("{e:#}")))?;
    Ok((outcome.files.iter().map(|f| f.display().to_string()).collect(), outcome.findings))
}

/// The concurrent cache's policies.
#[pyfunction]
fn cache_policies() -> Vec<String> {
    sifter::Policy::ALL.iter().map(|p| p.name().to_string()).collect()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_compare, m)?)?;
    m.add_function(wrap_pyfunction!(model_solve, m)?)?;
    m.add_function(wrap_pyfunction!(model_pstar, m)?)?;
    m.add_function(wrap_pyfunction!(model_advise, m)?)?;
    m.add_function(wrap_pyfunction!(cache_policies, m)?)?;
    m.add_function(wrap_pyfunction!(run_bench, m)?)?;
    m.add_function(wrap_pyfunction!(closed_loop, m)?)?;
    m.add_function(wrap_pyfunction!(lab, m)?)?;
    m.add_class::<TraceChunks>()?;
    m.add_class::<Cache>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

//! KVTG, the key-value traffic generator of the NbQ-CLOCK report (§4): memcached-style requests
//! whose key popularity, request type, value size and inter-departure time follow
//! user-supplied distributions, sent to any memcached-protocol server (`sifter serve`, stock
//! memcached) over the text or the binary protocol.
//!
//! * **Connections**: `conns` TCP connections on a tokio runtime of `threads` workers; each
//!   connection has a writer task and a reader task (the socket's two halves). The writer
//!   records each request it sends (operation, key, time) in an in-order queue *before* writing
//!   it; the reader parses replies in order, pops the matching record, and counts and times it.
//! * **Closed loop** (default): each connection keeps `pipeline` requests in flight, sending
//!   as many as have room in one write; latency is measured from the send.
//! * **Open loop** (`rate`): requests are scheduled at fixed intervals (the total rate split
//!   over the connections) whatever the replies do, and latency is measured from the
//!   *intended* send time, so a stalled server shows as latency instead of silently lowering
//!   the offered load (no coordinated omission). At most `pipeline` requests are in flight per
//!   connection; when that bound binds, sending falls behind the schedule and the delay counts.
//! * **Phases**: an optional SET fill of the first keys (the report's warm-up: "N SET requests
//!   ... no data is collected"), an optional unmeasured warm-up of the mix, then the measured
//!   phase (a duration or a request count). Every phase is reported; connections drain their
//!   in-flight requests and wait for each other between phases.
//! * **Read-through** (`fill_on_miss`): a GET miss makes the connection SET that key (a
//!   cache-aside client), so the hit ratio measures the server's eviction policy.
//!
//! A server that closes the connection, answers out of protocol, or does not answer within
//! `timeout` ends the run with an error naming the connection and what was received.

use hdrhistogram::Histogram;
use rand::{Rng, SeedableRng};
use rand_distr::Distribution;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, Barrier, Semaphore};

mod proto;
mod spec;

pub use spec::{KeySpec, Mix, Op, ValueSize};

/// Errors of a run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A bad option (the message names it).
    #[error("{0}")]
    Config(String),
    /// A socket error on a connection.
    #[error("connection {conn} to {addr}: {source}")]
    Io {
        /// The connection (0-based).
        conn: usize,
        /// The server.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// The server answered something that is not a reply to the request sent.
    #[error("connection {conn}: unexpected reply to {op} (request {seq}): {reply:?}")]
    Protocol {
        /// The connection.
        conn: usize,
        /// The operation the reply was for.
        op: &'static str,
        /// Requests answered on that connection before it.
        seq: u64,
        /// What was received (up to 200 bytes).
        reply: String,
    },
    /// No reply within the timeout.
    #[error(
        "connection {conn}: no reply within {timeout:?} with {outstanding} request(s) outstanding"
    )]
    Timeout {
        /// The connection.
        conn: usize,
        /// The timeout.
        timeout: Duration,
        /// Requests sent and not answered.
        outstanding: usize,
    },
    /// Reading the key trace failed.
    #[error("key trace: {0}")]
    Trace(#[from] sifter_trace::TraceError),
}

/// The wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// memcached's text protocol.
    Text,
    /// memcached's binary protocol.
    Binary,
}

/// How long a phase runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    /// For this long.
    Time(Duration),
    /// Until this many requests were sent (over all connections).
    Requests(u64),
}

/// A run's settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// The server.
    pub server: SocketAddr,
    /// Text or binary.
    pub protocol: Protocol,
    /// Key popularity.
    pub keys: KeySpec,
    /// Every key is at least this long (zero-padded; at most 250).
    pub key_size: usize,
    /// Request type mix.
    pub mix: Mix,
    /// Value sizes of SET/ADD/REPLACE.
    pub values: ValueSize,
    /// Connections.
    pub conns: usize,
    /// Runtime worker threads.
    pub threads: usize,
    /// Most requests in flight per connection (pipelining depth).
    pub pipeline: usize,
    /// Open loop at this total rate (requests/s); `None`: closed loop.
    pub rate: Option<f64>,
    /// SETs of keys `0..fill_sets` before anything else (0: none).
    pub fill_sets: u64,
    /// Unmeasured warm-up of the mix.
    pub warmup: Option<Length>,
    /// The measured phase.
    pub measure: Length,
    /// A GET miss is followed by a SET of the key.
    pub fill_on_miss: bool,
    /// Seed of the key, mix and size draws (connection `c` uses `seed + c`).
    pub seed: u64,
    /// Longest wait for a reply before the run fails.
    pub timeout: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            server: SocketAddr::from(([127, 0, 0, 1], 11211)),
            protocol: Protocol::Text,
            keys: KeySpec::Zipf { alpha: 1.0, n: 100_000 },
            key_size: 16,
            mix: Mix::parse("get=0.9,set=0.1").unwrap_or_default(),
            values: ValueSize::Fixed(100),
            conns: 16,
            threads: 2,
            pipeline: 1,
            rate: None,
            fill_sets: 0,
            warmup: None,
            measure: Length::Time(Duration::from_secs(5)),
            fill_on_miss: false,
            seed: 1,
            timeout: Duration::from_secs(10),
        }
    }
}

impl Config {
    /// Checks the settings; the message names the bad one.
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |m: String| Err(Error::Config(m));
        if self.conns == 0 || self.threads == 0 || self.pipeline == 0 {
            return bad("connections, threads and pipeline depth must be at least 1".into());
        }
        if self.conns > 10_000 {
            return bad(format!("{} connections: at most 10000", self.conns));
        }
        // The runtime starts every worker first: 100,000 of them kept a run from starting
        // for longer than a user waits (and connections, at most 10,000, need no more).
        if self.threads > 1024 {
            return bad(format!("{} threads: at most 1024", self.threads));
        }
        if self.pipeline > 65_536 {
            return bad(format!("pipeline depth {}: at most 65536", self.pipeline));
        }
        if self.key_size > 250 {
            return bad(format!(
                "key size {}: memcached keys are at most 250 bytes",
                self.key_size
            ));
        }
        if let Some(r) = self.rate {
            if !(r.is_finite() && r > 0.0) {
                return bad(format!("rate {r}: must be a positive number of requests/s"));
            }
        }
        if let Length::Requests(0) = self.measure {
            return bad("the measured phase needs at least one request".into());
        }
        if self.values.max() > 64 << 20 {
            return bad(format!("value size up to {} bytes: at most 64 MiB", self.values.max()));
        }
        self.keys.validate()?;
        Ok(())
    }
}

/// Counts of one operation in one phase.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpCounts {
    /// Replies received.
    pub done: u64,
    /// GET: hits; SET/ADD/REPLACE: stored; DELETE/TOUCH: found.
    pub ok: u64,
    /// GET: misses; ADD/REPLACE: not stored; DELETE/TOUCH: not found.
    pub not: u64,
    /// Error replies (`SERVER_ERROR`, `CLIENT_ERROR`, binary error statuses).
    pub errors: u64,
}

/// Latency summary in microseconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Latency {
    /// Mean.
    pub mean: f64,
    /// Percentiles.
    pub p50: f64,
    /// 90th.
    pub p90: f64,
    /// 99th.
    pub p99: f64,
    /// 99.9th.
    pub p999: f64,
    /// Largest.
    pub max: f64,
}

/// What one phase measured.
#[derive(Debug, Clone)]
pub struct PhaseReport {
    /// `fill`, `warmup` or `measure`.
    pub name: &'static str,
    /// Whether this is the measured phase.
    pub measured: bool,
    /// Wall time from the first connection's start to the last one's end.
    pub secs: f64,
    /// Replies received.
    pub ops: u64,
    /// Counts per operation (only those that occurred), in [`Op::ALL`] order.
    pub per_op: Vec<(Op, OpCounts)>,
    /// Latency of every request.
    pub latency: Latency,
    /// The latency histogram (nanoseconds), for percentile plots.
    pub histogram: Histogram<u64>,
}

impl PhaseReport {
    /// Replies per second.
    pub fn throughput(&self) -> f64 {
        if self.secs > 0.0 {
            self.ops as f64 / self.secs
        } else {
            0.0
        }
    }

    /// GET hits / GETs (None without GETs).
    pub fn hit_ratio(&self) -> Option<f64> {
        let g = self.per_op.iter().find(|(o, _)| *o == Op::Get)?;
        (g.1.done > 0).then(|| g.1.ok as f64 / g.1.done as f64)
    }

    /// Error replies of every operation.
    pub fn errors(&self) -> u64 {
        self.per_op.iter().map(|(_, c)| c.errors).sum()
    }
}

/// What a run reports, phase by phase.
#[derive(Debug, Clone)]
pub struct Report {
    /// The phases in order.
    pub phases: Vec<PhaseReport>,
}

impl Report {
    /// The measured phase.
    pub fn measured(&self) -> Option<&PhaseReport> {
        self.phases.iter().find(|p| p.measured)
    }
}

/// Progress: the phase running and replies received in it so far.
pub type ProgressFn = dyn Fn(&'static str, u64) + Send + Sync;

/// One phase as the connections run it.
#[derive(Debug, Clone, Copy)]
enum Plan {
    /// SET keys `0..n` (handed out by a shared counter).
    Fill(u64),
    /// The mix, for this long.
    Mix(Length),
}

/// Shared state of the phase in progress.
struct PhaseState {
    /// Requests left (request-count phases) or keys handed out (fill).
    counter: AtomicU64,
    /// Replies received in this phase (progress).
    done: AtomicU64,
}

/// Per connection and phase.
struct ConnPhase {
    counts: [OpCounts; Op::ALL.len()],
    hist: Histogram<u64>,
    start: Instant,
    end: Instant,
}

fn new_hist() -> Histogram<u64> {
    // 1 ns .. 1 hour, 3 significant digits; auto-resize covers anything longer.
    let mut h = Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds");
    h.auto(true);
    h
}

/// Runs the phases against the server; `progress` is called about 5 times a second.
pub fn run(config: &Config, progress: Option<Arc<ProgressFn>>) -> Result<Report, Error> {
    config.validate()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.threads)
        .enable_all()
        .build()
        .map_err(|e| Error::Config(format!("tokio runtime: {e}")))?;
    rt.block_on(run_async(config.clone(), progress))
}

async fn run_async(config: Config, progress: Option<Arc<ProgressFn>>) -> Result<Report, Error> {
    let config = Arc::new(config);
    let mut plans: Vec<(&'static str, Plan)> = Vec::new();
    if config.fill_sets > 0 {
        plans.push(("fill", Plan::Fill(config.fill_sets)));
    }
    if let Some(w) = config.warmup {
        plans.push(("warmup", Plan::Mix(w)));
    }
    plans.push(("measure", Plan::Mix(config.measure)));
    let plans = Arc::new(plans);
    let keys = Arc::new(spec::Keys::new(&config.keys, config.seed)?);
    let states: Arc<Vec<PhaseState>> = Arc::new(
        plans
            .iter()
            .map(|(_, p)| PhaseState {
                counter: AtomicU64::new(match p {
                    Plan::Fill(_) => 0,
                    Plan::Mix(Length::Requests(n)) => *n,
                    Plan::Mix(Length::Time(_)) => 0,
                }),
                done: AtomicU64::new(0),
            })
            .collect(),
    );
    let barrier = Arc::new(Barrier::new(config.conns));
    let current = Arc::new(AtomicU64::new(0));
    let ticker = progress.map(|p| {
        let (states, plans, current) = (states.clone(), plans.clone(), current.clone());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let i = current.load(Ordering::Relaxed) as usize;
                if let (Some(s), Some((name, _))) = (states.get(i), plans.get(i)) {
                    p(name, s.done.load(Ordering::Relaxed));
                }
            }
        })
    });
    let mut tasks = tokio::task::JoinSet::new();
    for c in 0..config.conns {
        let stream = TcpStream::connect(config.server).await.map_err(|source| Error::Io {
            conn: c,
            addr: config.server,
            source,
        })?;
        let _ = stream.set_nodelay(true);
        let conn = Conn {
            id: c,
            config: config.clone(),
            keys: keys.clone(),
            plans: plans.clone(),
            states: states.clone(),
            barrier: barrier.clone(),
            current: current.clone(),
        };
        tasks.spawn(conn.run(stream));
    }
    let mut per_conn = Vec::with_capacity(config.conns);
    let mut first_err = None;
    while let Some(t) = tasks.join_next().await {
        let err = match t {
            Ok(Ok(v)) => {
                per_conn.push(v);
                continue;
            }
            Ok(Err(e)) => e,
            Err(j) => Error::Config(format!("a connection task failed: {j}")),
        };
        // One connection failed: the others would wait for it between phases.
        first_err = Some(err);
        tasks.abort_all();
        break;
    }
    if let Some(t) = ticker {
        t.abort();
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    let mut phases = Vec::with_capacity(plans.len());
    for (i, (name, _)) in plans.iter().enumerate() {
        let mut counts: [OpCounts; Op::ALL.len()] = Default::default();
        let mut hist = new_hist();
        let mut start: Option<Instant> = None;
        let mut end: Option<Instant> = None;
        for conn in &per_conn {
            let p: &ConnPhase = &conn[i];
            for (a, b) in counts.iter_mut().zip(p.counts.iter()) {
                a.done += b.done;
                a.ok += b.ok;
                a.not += b.not;
                a.errors += b.errors;
            }
            hist.add(&p.hist).map_err(|e| Error::Config(format!("histogram: {e}")))?;
            start = Some(start.map_or(p.start, |s| s.min(p.start)));
            end = Some(end.map_or(p.end, |s| s.max(p.end)));
        }
        let secs = match (start, end) {
            (Some(s), Some(e)) => e.duration_since(s).as_secs_f64(),
            _ => 0.0,
        };
        let per_op: Vec<(Op, OpCounts)> =
            Op::ALL.iter().zip(counts).filter(|(_, c)| c.done > 0).map(|(o, c)| (*o, c)).collect();
        let us = |v: u64| v as f64 / 1000.0;
        let latency = if hist.is_empty() {
            Latency::default()
        } else {
            Latency {
                mean: hist.mean() / 1000.0,
                p50: us(hist.value_at_quantile(0.5)),
                p90: us(hist.value_at_quantile(0.9)),
                p99: us(hist.value_at_quantile(0.99)),
                p999: us(hist.value_at_quantile(0.999)),
                max: us(hist.max()),
            }
        };
        phases.push(PhaseReport {
            name,
            measured: *name == "measure",
            secs,
            ops: per_op.iter().map(|(_, c)| c.done).sum(),
            per_op,
            latency,
            histogram: hist,
        });
    }
    Ok(Report { phases })
}

/// A request sent and not yet answered.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    op: Op,
    key: u64,
    /// Send time (closed loop) or intended send time (open loop).
    at: Instant,
    phase: u32,
}

/// In-flight records from the writer to the reader, in send order.
type Queue = Arc<Mutex<std::collections::VecDeque<InFlight>>>;

struct Conn {
    id: usize,
    config: Arc<Config>,
    keys: Arc<spec::Keys>,
    plans: Arc<Vec<(&'static str, Plan)>>,
    states: Arc<Vec<PhaseState>>,
    barrier: Arc<Barrier>,
    current: Arc<AtomicU64>,
}

impl Conn {
    async fn run(self, stream: TcpStream) -> Result<Vec<ConnPhase>, Error> {
        let (rd, wr) = stream.into_split();
        let depth = self.config.pipeline;
        let room = Arc::new(Semaphore::new(depth));
        let queue: Queue = Arc::new(Mutex::new(std::collections::VecDeque::with_capacity(depth)));
        let (fill_tx, fill_rx) = mpsc::unbounded_channel::<u64>();
        let reader = Reader {
            id: self.id,
            config: self.config.clone(),
            queue: queue.clone(),
            room: room.clone(),
            states: self.states.clone(),
            fills: self.config.fill_on_miss.then_some(fill_tx),
            phases: (0..self.plans.len())
                .map(|_| ConnPhase {
                    counts: Default::default(),
                    hist: new_hist(),
                    start: Instant::now(),
                    end: Instant::now(),
                })
                .collect(),
        };
        let mut reader = tokio::spawn(reader.run(rd));
        let joined = |r: Result<Result<Vec<ConnPhase>, Error>, tokio::task::JoinError>| {
            r.map_err(|j| Error::Config(format!("reader task failed: {j}")))?
        };
        // The reader ends when the writer has closed its half and the server closed the
        // connection in turn; if it ends first (an error, or the server hung up), the writer
        // is dropped wherever it waits.
        tokio::select! {
            written = self.write(wr, room, queue, fill_rx) => {
                let times = written?;
                let mut phases = joined(reader.await)?;
                for (p, (s, e)) in phases.iter_mut().zip(times) {
                    p.start = s;
                    p.end = e;
                }
                Ok(phases)
            }
            read = &mut reader => {
                joined(read)?;
                Err(Error::Io {
                    conn: self.id,
                    addr: self.config.server,
                    source: std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    ),
                })
            }
        }
    }

    /// Sends every phase's requests; returns each phase's (start, end).
    async fn write(
        &self,
        mut wr: tokio::net::tcp::OwnedWriteHalf,
        room: Arc<Semaphore>,
        queue: Queue,
        mut fills: mpsc::UnboundedReceiver<u64>,
    ) -> Result<Vec<(Instant, Instant)>, Error> {
        let cfg = &*self.config;
        let io = |source| Error::Io { conn: self.id, addr: cfg.server, source };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(cfg.seed.wrapping_add(self.id as u64));
        let mut keygen = self.keys.for_conn(self.id as u64);
        let mut buf = Vec::with_capacity(64 << 10);
        let mut times = Vec::with_capacity(self.plans.len());
        let per_conn_rate = cfg.rate.map(|r| r / cfg.conns as f64);
        for (i, (_, plan)) in self.plans.iter().enumerate() {
            let state = &self.states[i];
            self.barrier.wait().await;
            self.current.store(i as u64, Ordering::Relaxed);
            let start = Instant::now();
            let deadline = match plan {
                Plan::Mix(Length::Time(d)) => Some(start + *d),
                _ => None,
            };
            // Open loop: the next intended send time.
            let interval = per_conn_rate.map(|r| Duration::from_secs_f64(1.0 / r));
            let mut next_at = start;
            'phase: loop {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                // Room for at least one request.
                let Ok(p) = room.acquire().await else { break };
                p.forget();
                let mut n = 1;
                while n < 1024 {
                    match room.try_acquire() {
                        Ok(p) => {
                            p.forget();
                            n += 1;
                        }
                        Err(_) => break,
                    }
                }
                if let Some(iv) = interval {
                    // Send what is due; wait for the next intended time if nothing is.
                    let now = Instant::now();
                    if next_at > now {
                        tokio::time::sleep_until(next_at.into()).await;
                    }
                    let now = Instant::now();
                    let due = ((now.duration_since(next_at).as_secs_f64() / iv.as_secs_f64())
                        as usize)
                        + 1;
                    if due < n {
                        room.add_permits(n - due);
                        n = due;
                    }
                }
                buf.clear();
                let mut sent = 0;
                {
                    let mut q = queue.lock().unwrap_or_else(|e| e.into_inner());
                    for _ in 0..n {
                        let (op, key) = if let Ok(k) = fills.try_recv() {
                            (Op::Fill, k)
                        } else {
                            match plan {
                                Plan::Fill(total) => {
                                    let k = state.counter.fetch_add(1, Ordering::Relaxed);
                                    if k >= *total {
                                        break;
                                    }
                                    (Op::Set, k)
                                }
                                Plan::Mix(len) => {
                                    if let Length::Requests(_) = len {
                                        // Take one request from the phase's budget.
                                        let left = state.counter.fetch_update(
                                            Ordering::Relaxed,
                                            Ordering::Relaxed,
                                            |v| v.checked_sub(1),
                                        );
                                        if left.is_err() {
                                            break;
                                        }
                                    }
                                    (cfg.mix.draw(&mut rng), keygen.next(&mut rng)?)
                                }
                            }
                        };
                        let at = match interval {
                            Some(iv) => {
                                let at = next_at;
                                next_at += iv;
                                at
                            }
                            None => Instant::now(),
                        };
                        let size = cfg.values.draw(&mut rng);
                        proto::encode(cfg.protocol, &mut buf, op, key, cfg.key_size, size);
                        q.push_back(InFlight { op, key, at, phase: i as u32 });
                        sent += 1;
                    }
                }
                if sent < n {
                    room.add_permits(n - sent);
                }
                if sent > 0 {
                    wr.write_all(&buf).await.map_err(io)?;
                }
                if sent < n {
                    // The phase's requests are all out.
                    break 'phase;
                }
            }
            // Drain: every request of this phase answered.
            let all = room.acquire_many(cfg.pipeline as u32).await;
            drop(all);
            times.push((start, Instant::now()));
        }
        wr.shutdown().await.map_err(io)?;
        Ok(times)
    }
}

struct Reader {
    id: usize,
    config: Arc<Config>,
    queue: Queue,
    room: Arc<Semaphore>,
    states: Arc<Vec<PhaseState>>,
    fills: Option<mpsc::UnboundedSender<u64>>,
    phases: Vec<ConnPhase>,
}

impl Reader {
    async fn run(
        mut self,
        mut rd: tokio::net::tcp::OwnedReadHalf,
    ) -> Result<Vec<ConnPhase>, Error> {
        let cfg = self.config.clone();
        let mut buf: Vec<u8> = Vec::with_capacity(64 << 10);
        let mut start = 0;
        let mut seq = 0u64;
        loop {
            // Parse every complete reply in the buffer.
            loop {
                let Some(head) =
                    self.queue.lock().unwrap_or_else(|e| e.into_inner()).front().copied()
                else {
                    break;
                };
                let parsed = proto::parse(cfg.protocol, &buf[start..], head.op);
                let (len, outcome) = match parsed {
                    proto::Parsed::Incomplete => break,
                    proto::Parsed::Reply(len, outcome) => (len, outcome),
                    proto::Parsed::Bad(reply) => {
                        return Err(Error::Protocol {
                            conn: self.id,
                            op: head.op.name(),
                            seq,
                            reply,
                        })
                    }
                };
                start += len;
                seq += 1;
                self.queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                let now = Instant::now();
                let p = &mut self.phases[head.phase as usize];
                let c = &mut p.counts[head.op as usize];
                c.done += 1;
                match outcome {
                    proto::Outcome::Ok => c.ok += 1,
                    proto::Outcome::Not => {
                        c.not += 1;
                        if head.op == Op::Get {
                            if let Some(f) = &self.fills {
                                let _ = f.send(head.key);
                            }
                        }
                    }
                    proto::Outcome::Error => c.errors += 1,
                }
                let ns = now.saturating_duration_since(head.at).as_nanos().max(1) as u64;
                let _ = p.hist.record(ns);
                self.states[head.phase as usize].done.fetch_add(1, Ordering::Relaxed);
                self.room.add_permits(1);
            }
            if start > 0 && start == buf.len() {
                buf.clear();
                start = 0;
            } else if start > (32 << 10) {
                buf.drain(..start);
                start = 0;
            }
            // More bytes.
            if buf.capacity() - buf.len() < 16 << 10 {
                buf.reserve(64 << 10);
            }
            let outstanding = self.queue.lock().unwrap_or_else(|e| e.into_inner()).len();
            let read = if outstanding > 0 {
                match tokio::time::timeout(cfg.timeout, rd.read_buf(&mut buf)).await {
                    Ok(r) => r,
                    Err(_) => {
                        return Err(Error::Timeout {
                            conn: self.id,
                            timeout: cfg.timeout,
                            outstanding,
                        })
                    }
                }
            } else {
                rd.read_buf(&mut buf).await
            };
            match read {
                Ok(0) => {
                    let outstanding = self.queue.lock().unwrap_or_else(|e| e.into_inner()).len();
                    if outstanding > 0 {
                        return Err(Error::Io {
                            conn: self.id,
                            addr: cfg.server,
                            source: std::io::Error::new(
                                std::io::ErrorKind::UnexpectedEof,
                                format!("the server closed the connection with {outstanding} request(s) unanswered"),
                            ),
                        });
                    }
                    return Ok(self.phases);
                }
                Ok(_) => {}
                Err(source) => return Err(Error::Io { conn: self.id, addr: cfg.server, source }),
            }
        }
    }
}

/// Draws uniformly from `0..n` (used by the key and mix generators).
fn below(rng: &mut impl Rng, n: u64) -> u64 {
    rng.random_range(0..n)
}

/// A normal sample as a key in `0..n`, centred, `sd` wide, clamped.
fn normal_key(rng: &mut impl Rng, d: &rand_distr::Normal<f64>, n: u64) -> u64 {
    let x = d.sample(rng).round();
    x.clamp(0.0, (n - 1) as f64) as u64
}

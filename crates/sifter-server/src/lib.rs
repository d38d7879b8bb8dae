//! `sifter serve`: a memcached-compatible server (text protocol) on the sifter cache.
//!
//! One tokio runtime with `threads` workers; a task per connection reads into a bounded
//! buffer, answers every complete command in order (pipelining), and writes the replies of a
//! batch at once. Storage is [`store::Store`]: a byte-bounded `sifter::Cache` whose
//! read-modify-write commands are atomic per key. Bad input gets memcached's error strings and
//! the connection stays usable; a line longer than [`MAX_LINE`] without a newline closes that
//! connection; an oversized item's data block is still consumed.
//!
//! Implemented: `get`/`gets`/`gat`/`gats` (multi-key), `set`/`add`/`replace`/`append`/
//! `prepend`/`cas`, `delete`, `incr`/`decr`, `touch`, `flush_all [delay]`, `stats` (general,
//! `settings`, `items`, `slabs`, `cachedump`), `cache_memlimit`, `version`, `verbosity`,
//! `quit`, `noreply`; the meta commands `mn`/`mg`/`ms`/`md`/`ma`/`me`; and the binary protocol
//! (a connection whose first byte is 0x80), quiet variants included.

mod binary;
mod meta;
mod stats;
pub mod store;
mod text;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The memcached version the server reports (`version`, the binary Version, `stats`): the one
/// whose protocol and error strings it follows.
pub(crate) const MEMCACHED_VERSION: &str = "1.6.21";

/// The longest command line (without its data block) a client may send.
pub const MAX_LINE: usize = 8192;

/// Replies buffered per connection before the server stops reading from it until they are
/// written (a client that never reads its replies holds at most this much).
const MAX_PENDING_OUT: usize = 4 << 20;

/// Server settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to listen on (default 127.0.0.1:11211).
    pub addr: SocketAddr,
    /// Memory limit in bytes (`-m`, in MiB on the command line).
    pub memory: u64,
    /// Largest item (`-I`), 1 MiB by default.
    pub item_max: usize,
    /// Worker threads (`-t`).
    pub threads: usize,
    /// Most simultaneous connections (`-c`).
    pub max_conns: usize,
    /// Eviction policy.
    pub policy: sifter::Policy,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 11211)),
            memory: 64 << 20,
            item_max: 1 << 20,
            threads: 4,
            max_conns: 1024,
            policy: sifter::Policy::Mobius,
        }
    }
}

/// Shared by every connection.
#[derive(Debug)]
pub(crate) struct Shared {
    pub store: store::Store,
    pub config: Config,
    pub conns: AtomicUsize,
    pub total_conns: AtomicUsize,
    pub started: std::time::Instant,
    /// Delayed `flush_all`s: the delay, to a task that flushes after it.
    pub flusher: tokio::sync::mpsc::UnboundedSender<std::time::Duration>,
}

/// A running server (see [`serve`]); dropping it does not stop it: call [`Handle::shutdown`].
#[derive(Debug)]
pub struct Handle {
    /// The address it listens on (the real port when 0 was asked for).
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Handle {
    /// Stops accepting, lets open connections finish their current batch, and waits.
    pub fn shutdown(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts a server on its own runtime thread; returns once it listens.
pub fn serve(config: Config) -> std::io::Result<Handle> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.threads.max(1))
        .enable_all()
        .build()?;
    let store = store::Store::new(config.memory, config.policy)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    let listener = rt.block_on(TcpListener::bind(config.addr))?;
    let addr = listener.local_addr()?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (ftx, frx) = tokio::sync::mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        store,
        config,
        conns: AtomicUsize::new(0),
        total_conns: AtomicUsize::new(0),
        started: std::time::Instant::now(),
        flusher: ftx,
    });
    let thread = std::thread::Builder::new().name("sifter-serve".into()).spawn(move || {
        rt.block_on(async {
            tokio::spawn(delayed_flushes(shared.clone(), frx));
            accept_loop(listener, shared, rx).await
        });
        rt.shutdown_timeout(std::time::Duration::from_secs(2));
    })?;
    Ok(Handle { addr, stop: Some(tx), thread: Some(thread) })
}

async fn delayed_flushes(
    shared: Arc<Shared>,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<std::time::Duration>,
) {
    while let Some(d) = rx.recv().await {
        let s = shared.clone();
        tokio::spawn(async move {
            tokio::time::sleep(d).await;
            s.store.flush();
        });
    }
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    loop {
        let accepted = tokio::select! {
            _ = &mut stop => return,
            a = listener.accept() => a,
        };
        let Ok((mut sock, _)) = accepted else {
            // Out of descriptors or a transient error: back off a little, keep serving.
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            continue;
        };
        // Relaxed (connection counts): statistics and a soft limit.
        if shared.conns.load(Ordering::Relaxed) >= shared.config.max_conns {
            let _ = sock.write_all(b"SERVER_ERROR too many open connections\r\n").await;
            continue;
        }
        shared.conns.fetch_add(1, Ordering::Relaxed);
        shared.total_conns.fetch_add(1, Ordering::Relaxed);
        let _ = sock.set_nodelay(true);
        let s = shared.clone();
        tokio::spawn(async move {
            let _ = connection(sock, &s).await;
            s.conns.fetch_sub(1, Ordering::Relaxed);
        });
    }
}

/// Serves one connection until it closes, quits, or breaks the line limit.
async fn connection(mut sock: TcpStream, shared: &Shared) -> std::io::Result<()> {
    let mut input: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut out: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut session = text::Session::default();
    let mut chunk = vec![0u8; 64 * 1024];
    // The protocol, from the connection's first byte (0x80: binary).
    let mut binary = None;
    loop {
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        input.extend_from_slice(&chunk[..n]);
        let binary = *binary.get_or_insert(input[0] == 0x80);
        let consumed = if binary {
            let (n, close) = binary::process(shared, &input, &mut out, MAX_PENDING_OUT);
            session.close |= close;
            n
        } else {
            text::process(shared, &mut session, &input, &mut out, MAX_PENDING_OUT)
        };
        input.drain(..consumed);
        if !out.is_empty() {
            sock.write_all(&out).await?;
            out.clear();
        }
        if session.close {
            return Ok(());
        }
        // A partial line longer than the limit: memcached closes the connection.
        if !binary && session.swallow == 0 && input.len() > MAX_LINE && !input.contains(&b'\n') {
            sock.write_all(b"CLIENT_ERROR line too long\r\n").await?;
            return Ok(());
        }
        if input.capacity() > 4 * MAX_LINE && input.len() < MAX_LINE {
            input.shrink_to(MAX_LINE);
        }
    }
}

/// Serves until Ctrl-C or SIGTERM, then stops accepting, lets connections finish their batch,
/// and returns. Prints the address it listens on.
pub fn run(config: Config) -> std::io::Result<()> {
    let policy = config.policy;
    let memory = config.memory;
    let h = serve(config)?;
    eprintln!(
        "sifter serve: listening on {} ({} policy, {} MiB); Ctrl-C or SIGTERM stops it",
        h.addr,
        policy.name(),
        memory >> 20
    );
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async {
        #[cfg(unix)]
        {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
            tokio::select! {
                r = tokio::signal::ctrl_c() => r?,
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        tokio::signal::ctrl_c().await?;
        Ok::<(), std::io::Error>(())
    })?;
    eprintln!("sifter serve: stopping");
    h.shutdown();
    Ok(())
}

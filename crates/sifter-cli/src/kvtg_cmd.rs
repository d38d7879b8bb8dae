//! `sifter kvtg`: the traffic generator ([`sifter_kvtg`]) from the command line — tables,
//! CSV/JSON and a latency-percentile plot.

use crate::output::{csv_line, table, write_to};
use anyhow::{anyhow, Context, Result};
use sifter_kvtg::{Config, KeySpec, Length, Mix, Protocol, Report, ValueSize};
use sifter_lab::closed_loop::parse_latency;
use sifter_lab::plot;
use std::net::ToSocketAddrs;
use std::path::PathBuf;
use std::sync::Arc;

/// Arguments of `sifter kvtg`.
#[derive(clap::Args, Debug)]
pub struct KvtgArgs {
    /// The server (host:port): `sifter serve`, memcached, or anything speaking its protocol.
    #[arg(short, long, default_value = "127.0.0.1:11211")]
    pub server: String,
    /// Use the binary protocol (default: text).
    #[arg(long)]
    pub binary: bool,
    /// Key popularity: zipf:alpha=A,n=N | uniform:n=N | normal:n=N[,sd=S] | trace:PATH (a trace
    /// file or a `sifter sim` generator; its keys replayed in order).
    #[arg(short, long, default_value = "zipf:alpha=1.0,n=100k")]
    pub keys: String,
    /// Keys are at least this many bytes (`kvtg:` and the zero-padded key number; ≤ 250).
    #[arg(long, default_value_t = 16)]
    pub key_size: usize,
    /// Request mix as weights: get, set, add, replace, delete, touch (e.g. get=0.7,add=0.3).
    #[arg(short, long, default_value = "get=0.9,set=0.1")]
    pub mix: String,
    /// Value sizes in bytes: N | uniform:MIN-MAX | normal:mean=M,sd=S.
    #[arg(long, default_value = "100")]
    pub value_size: String,
    /// Connections.
    #[arg(short, long, default_value_t = 16)]
    pub conns: usize,
    /// Client threads (1 to 1024).
    #[arg(short, long, default_value_t = 2)]
    pub threads: usize,
    /// Requests in flight per connection (pipelining depth).
    #[arg(long, default_value_t = 1)]
    pub pipeline: usize,
    /// Open loop at this total rate (requests/s; latency from the intended send times).
    /// Default: closed loop.
    #[arg(long)]
    pub rate: Option<f64>,
    /// SET the first N keys before anything else (the report's warm-up; reported, not
    /// measured).
    #[arg(long, default_value = "0")]
    pub fill: String,
    /// Unmeasured warm-up of the mix: a duration (2s) or a request count (100k).
    #[arg(long)]
    pub warmup: Option<String>,
    /// Measured phase length.
    #[arg(short, long, default_value = "5s", conflicts_with = "requests")]
    pub duration: String,
    /// Measured phase as a request count instead (e.g. 1m).
    #[arg(short, long)]
    pub requests: Option<String>,
    /// A GET miss is followed by a SET of the key (a cache-aside client), so the hit ratio
    /// reflects the server's eviction.
    #[arg(long)]
    pub fill_on_miss: bool,
    /// Seed of the key, mix and size draws.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Longest wait for a reply before the run fails.
    #[arg(long, default_value = "10s")]
    pub timeout: String,
    /// Output directory for results.csv, results.json and latency.svg/png.
    #[arg(short, long, default_value = "kvtg-results")]
    pub out: PathBuf,
    /// Print the JSON results to stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Skip the plots.
    #[arg(long)]
    pub no_plots: bool,
    /// No progress display.
    #[arg(short, long)]
    pub quiet: bool,
}

fn count(v: &str, what: &str) -> Result<u64> {
    sifter_trace::synth::parse_count(v)
        .ok_or_else(|| anyhow!("{what} {v:?}: expected a count such as 1000, 100k or 1m"))
}

/// A duration (`2s`, `500ms`) or a request count (`100k`).
fn length(v: &str, what: &str) -> Result<Length> {
    if v.chars().last().is_some_and(|c| c == 's') {
        return Ok(Length::Time(parse_latency(v).with_context(|| what.to_string())?));
    }
    Ok(Length::Requests(count(v, what)?))
}

/// The library's settings from the arguments (errors name the flag).
pub fn config(a: &KvtgArgs) -> Result<Config> {
    let server = a
        .server
        .to_socket_addrs()
        .with_context(|| format!("--server {}", a.server))?
        .next()
        .ok_or_else(|| anyhow!("--server {}: no address", a.server))?;
    let measure = match &a.requests {
        Some(r) => Length::Requests(count(r, "--requests")?),
        None => Length::Time(parse_latency(&a.duration).context("--duration")?),
    };
    let c = Config {
        server,
        protocol: if a.binary { Protocol::Binary } else { Protocol::Text },
        keys: KeySpec::parse(&a.keys).context("--keys")?,
        key_size: a.key_size,
        mix: Mix::parse(&a.mix).context("--mix")?,
        values: ValueSize::parse(&a.value_size).context("--value-size")?,
        conns: a.conns,
        threads: a.threads,
        pipeline: a.pipeline,
        rate: a.rate,
        fill_sets: count(&a.fill, "--fill")?,
        warmup: a.warmup.as_deref().map(|w| length(w, "--warmup")).transpose()?,
        measure,
        fill_on_miss: a.fill_on_miss,
        seed: a.seed,
        timeout: parse_latency(&a.timeout).context("--timeout")?,
    };
    c.validate()?;
    Ok(c)
}

/// Runs `sifter kvtg`.
pub fn run(a: KvtgArgs) -> Result<()> {
    let c = config(&a)?;
    let bar = crate::progress::bar(0, "fill", a.quiet || a.json);
    let b = bar.clone();
    let progress: Arc<sifter_kvtg::ProgressFn> = Arc::new(move |phase, n| {
        b.set_message(phase);
        b.set_position(n);
    });
    let report = sifter_kvtg::run(&c, Some(progress))
        .map_err(|e| anyhow!("sifter kvtg against {}: {e}", c.server))?;
    bar.finish_and_clear();
    std::fs::create_dir_all(&a.out).with_context(|| format!("{}", a.out.display()))?;
    let json = to_json(&c, &a, &report);
    let json_text = serde_json::to_string_pretty(&json)? + "\n";
    write_to(&a.out.join("results.json"), &json_text)?;
    write_to(&a.out.join("results.csv"), &to_csv(&report))?;
    let mut wrote = vec![a.out.join("results.csv"), a.out.join("results.json")];
    if !a.no_plots {
        wrote.extend(plot_latency(&a, &report)?);
    }
    if a.json {
        print!("{json_text}");
    } else {
        print!("{}", render(&c, &report));
        let names: Vec<String> = wrote.iter().map(|p| p.display().to_string()).collect();
        println!("wrote {}", names.join(", "));
    }
    Ok(())
}

const HEADER: [&str; 12] = [
    "phase",
    "secs",
    "requests",
    "kreq/s",
    "get hit ratio",
    "mean µs",
    "p50 µs",
    "p90 µs",
    "p99 µs",
    "p99.9 µs",
    "max µs",
    "errors",
];

fn phase_row(p: &sifter_kvtg::PhaseReport) -> Vec<String> {
    let l = &p.latency;
    vec![
        p.name.to_string(),
        format!("{:.2}", p.secs),
        p.ops.to_string(),
        format!("{:.1}", p.throughput() / 1e3),
        p.hit_ratio().map_or("-".into(), |h| format!("{h:.4}")),
        format!("{:.1}", l.mean),
        format!("{:.1}", l.p50),
        format!("{:.1}", l.p90),
        format!("{:.1}", l.p99),
        format!("{:.1}", l.p999),
        format!("{:.1}", l.max),
        p.errors().to_string(),
    ]
}

/// The tables printed: one row per phase, then the measured phase per operation.
fn render(c: &Config, r: &Report) -> String {
    let mut out = format!(
        "kvtg → {} ({}, {} connections, {}, pipeline {})\n",
        c.server,
        if c.protocol == Protocol::Binary { "binary" } else { "text" },
        c.conns,
        c.rate.map_or("closed loop".to_string(), |r| format!("open loop at {r} req/s")),
        c.pipeline
    );
    let rows: Vec<Vec<String>> = r.phases.iter().map(phase_row).collect();
    out.push_str(&table(&HEADER, &rows));
    if let Some(m) = r.measured() {
        out.push('\n');
        let rows: Vec<Vec<String>> = m
            .per_op
            .iter()
            .map(|(op, k)| {
                vec![
                    op.name().to_string(),
                    k.done.to_string(),
                    k.ok.to_string(),
                    k.not.to_string(),
                    k.errors.to_string(),
                ]
            })
            .collect();
        out.push_str(&table(
            &["measured", "replies", "hit/stored/found", "miss/not stored/not found", "errors"],
            &rows,
        ));
    }
    out
}

fn to_csv(r: &Report) -> String {
    let mut out = csv_line(&HEADER);
    for p in &r.phases {
        let row = phase_row(p);
        out.push_str(&csv_line(&row.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    out
}

fn to_json(c: &Config, a: &KvtgArgs, r: &Report) -> serde_json::Value {
    let phases: Vec<serde_json::Value> = r
        .phases
        .iter()
        .map(|p| {
            let ops: serde_json::Map<String, serde_json::Value> = p
                .per_op
                .iter()
                .map(|(o, k)| {
                    (
                        o.name().to_string(),
                        serde_json::json!({"replies": k.done, "ok": k.ok, "not": k.not, "errors": k.errors}),
                    )
                })
                .collect();
            let l = &p.latency;
            serde_json::json!({
                "phase": p.name,
                "measured": p.measured,
                "secs": p.secs,
                "requests": p.ops,
                "throughput": p.throughput(),
                "get_hit_ratio": p.hit_ratio(),
                "errors": p.errors(),
                "latency_us": {"mean": l.mean, "p50": l.p50, "p90": l.p90, "p99": l.p99, "p999": l.p999, "max": l.max},
                "ops": ops,
            })
        })
        .collect();
    serde_json::json!({
        "command": std::env::args().collect::<Vec<_>>().join(" "),
        "server": c.server.to_string(),
        "protocol": if c.protocol == Protocol::Binary { "binary" } else { "text" },
        "keys": a.keys,
        "mix": a.mix,
        "value_size": a.value_size,
        "connections": c.conns,
        "threads": c.threads,
        "pipeline": c.pipeline,
        "rate": c.rate,
        "fill_on_miss": c.fill_on_miss,
        "phases": phases,
    })
}

/// Latency against percentile, one line per phase.
fn plot_latency(a: &KvtgArgs, r: &Report) -> Result<Vec<PathBuf>> {
    const QS: [(f64, &str); 7] = [
        (0.5, "p50"),
        (0.75, "p75"),
        (0.9, "p90"),
        (0.99, "p99"),
        (0.999, "p99.9"),
        (0.9999, "p99.99"),
        (1.0, "max"),
    ];
    let names: Vec<&str> = QS.iter().map(|q| q.1).collect();
    let series: Vec<plot::Series> = r
        .phases
        .iter()
        .filter(|p| !p.histogram.is_empty())
        .map(|p| {
            let pts = QS
                .iter()
                .enumerate()
                .map(|(i, (q, _))| ((i + 1) as f64, p.histogram.value_at_quantile(*q) as f64 / 1e3))
                .collect();
            (p.name.to_string(), pts)
        })
        .collect();
    let title = format!("kvtg latency: {} ({}, {} conns)", a.server, a.mix, a.conns);
    let axes = plot::Axes {
        title: &title,
        xlabel: "percentile",
        ylabel: "latency (µs)",
        log_y: true,
        x_names: Some(&names),
    };
    plot::lines_svg_png(&a.out.join("latency"), &axes, &series)
}

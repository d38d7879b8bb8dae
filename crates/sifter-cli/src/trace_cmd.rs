//! `sifter trace`: stats, gen, convert.

use crate::output::table;
use crate::progress::bar;
use anyhow::{bail, Context, Result};
use sifter_trace::oracle::write_oracle_general;
use sifter_trace::{Request, SynthSpec, TraceSource, TraceStats};
use std::path::PathBuf;

/// `sifter trace ...`
#[derive(clap::Subcommand, Debug)]
pub enum TraceCmd {
    /// Requests, distinct keys, byte footprint, one-hit wonders, estimated Zipf alpha.
    Stats {
        /// Trace file or synthetic workload spec.
        trace: String,
        /// Format spec (default: detected).
        #[arg(short, long)]
        format: Option<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Generate a synthetic workload as an oracleGeneral trace (with next-access fields).
    Gen {
        /// Workload spec, e.g. `zipf:alpha=1.0,n=1000000,requests=10000000,seed=1`.
        spec: String,
        /// Output file (`.zst` suffix compresses).
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Convert any supported trace to oracleGeneral (next-access fields recomputed).
    Convert {
        /// Input trace.
        input: String,
        /// Input format spec (default: detected).
        #[arg(short, long)]
        format: Option<String>,
        /// Output file (`.zst` suffix compresses).
        #[arg(short, long)]
        output: PathBuf,
    },
}

fn collect(src: &TraceSource) -> Result<Vec<Request>> {
    let pb = bar(0, &format!("reading {}", src.name()), false);
    let mut v = Vec::new();
    for r in src.requests()? {
        v.push(r?);
        if v.len() & 0xffff == 0 {
            pb.set_position(v.len() as u64);
        }
    }
    pb.finish_and_clear();
    Ok(v)
}

fn write(mut reqs: Vec<Request>, out: &std::path::Path) -> Result<()> {
    if reqs.is_empty() {
        bail!("no requests to write");
    }
    let n = write_oracle_general(out, &mut reqs)
        .with_context(|| format!("writing {}", out.display()))?;
    eprintln!("wrote {n} requests to {}", out.display());
    Ok(())
}

/// Runs a `trace` subcommand.
pub fn run(cmd: TraceCmd) -> Result<()> {
    match cmd {
        TraceCmd::Stats { trace, format, json } => {
            let src = TraceSource::parse(&trace, format.as_deref())?;
            let pb = bar(0, &format!("reading {}", src.name()), false);
            let mut n = 0u64;
            let s = TraceStats::compute(src.requests()?.inspect(|_| {
                n += 1;
                if n & 0xffff == 0 {
                    pb.set_position(n);
                }
            }))?;
            pb.finish_and_clear();
            let rows: Vec<Vec<String>> =
                s.rows().into_iter().map(|(k, v)| vec![k.to_string(), v]).collect();
            if json {
                let m: serde_json::Map<String, serde_json::Value> = s
                    .rows()
                    .into_iter()
                    .map(|(k, v)| (k.replace(' ', "_"), serde_json::Value::String(v)))
                    .collect();
                println!("{}", serde_json::to_string_pretty(&m)?);
            } else {
                println!("{}", src.name());
                print!("{}", table(&["statistic", "value"], &rows));
            }
            Ok(())
        }
        TraceCmd::Gen { spec, output } => {
            let s = SynthSpec::parse(&spec)?;
            write(s.generate().collect(), &output)
        }
        TraceCmd::Convert { input, format, output } => {
            let src = TraceSource::parse(&input, format.as_deref())?;
            write(collect(&src)?, &output)
        }
    }
}

//! Prints `index hit` (1/0) for every request of a trace under one policy: the tool used to
//! find the first request where a policy departs from another simulator's per-request output.
//!
//! `cargo run --release -p sifter-sim --example hits -- TRACE POLICY CAPACITY [bytes]`

use sifter_sim::policy::{PolicyCtx, Req};
use sifter_sim::registry::PolicySpec;
use sifter_sim::trace::{LoadedTrace, NEVER};
use sifter_trace::TraceSource;
use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 3 {
        return Err("usage: hits TRACE POLICY CAPACITY [bytes]".into());
    }
    let bytes = a.get(3).is_some_and(|s| s == "bytes");
    let src = TraceSource::parse(&a[0], None)?;
    let t = LoadedTrace::load("t", src.requests()?, &|_| {})?;
    let mut p = PolicySpec::parse(&a[1])?.build(&PolicyCtx {
        capacity: a[2].parse()?,
        n_objects: t.n_objects,
        seed: 0,
    })?;
    let next = t.next_access();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for i in 0..t.len() {
        let size = if bytes { t.sizes[i] } else { 1 };
        let nx = if p.wants_next_access() { next[i] } else { NEVER };
        let hit = p.step(&Req { id: t.ids[i], key: t.keys[i], size, next: nx });
        let st = p.state();
        if st.is_empty() {
            writeln!(out, "{i} {}", hit as u8)?;
        } else {
            writeln!(out, "{i} {} {st}", hit as u8)?;
        }
    }
    Ok(())
}

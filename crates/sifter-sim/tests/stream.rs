//! The streaming sweep ([`sifter_sim::stream`]) gives exactly the in-memory sweep's counts:
//! every registered policy (Belady included, through its on-disk next-access pass), object and
//! byte mode, on a synthetic trace spanning several stream chunks and on the real traces of
//! `../shared/traces` (skipped with a message when absent).

use sifter_sim::registry::{PolicySpec, REGISTRY};
use sifter_sim::runner::{sweep, CacheSize, SimResult};
use sifter_sim::stream::{Scan, STREAM_CHUNK};
use sifter_sim::trace::LoadedTrace;
use sifter_sim::SimError;
use sifter_trace::TraceSource;
use std::sync::atomic::AtomicBool;

fn specs() -> Vec<PolicySpec> {
    REGISTRY.iter().map(|e| PolicySpec::parse(e.names[0]).expect("spec")).collect()
}

fn in_memory(
    src: &TraceSource,
    specs: &[PolicySpec],
    sizes: &[CacheSize],
    bytes: bool,
) -> Vec<SimResult> {
    let t = LoadedTrace::load(src.name(), src.requests().expect("open"), &|_| {}).expect("load");
    sweep(&t, specs, sizes, bytes, 7, &|_| {}).into_iter().map(|r| r.expect("sim")).collect()
}

fn streamed(
    src: &TraceSource,
    specs: &[PolicySpec],
    sizes: &[CacheSize],
    bytes: bool,
) -> Vec<SimResult> {
    let stop = AtomicBool::new(false);
    let scan = Scan::run(&src.name(), src.blocks(true).expect("open"), true, &|_, _| {}, &stop)
        .expect("scan");
    let out = scan
        .sweep(src.blocks(true).expect("open"), specs, sizes, bytes, 7, &|_, _| {}, &stop)
        .expect("sweep");
    assert_eq!(out.stopped_after, None);
    out.results.into_iter().map(|r| r.expect("sim")).collect()
}

fn same(src: &TraceSource, sizes: &[CacheSize], bytes: bool) {
    let specs = specs();
    let a = in_memory(src, &specs, sizes, bytes);
    let b = streamed(src, &specs, sizes, bytes);
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(
            (&x.policy, x.capacity, x.counts),
            (&y.policy, y.capacity, y.counts),
            "{} at {} (bytes {bytes}): in-memory vs streamed",
            x.spec,
            x.size.label()
        );
    }
}

#[test]
fn streaming_equals_in_memory_on_a_multi_chunk_trace() {
    let requests = STREAM_CHUNK as u64 * 2 + 12_345;
    let spec = format!("zipf:alpha=0.9,n=20000,requests={requests},seed=3,size=1..4000");
    let src = TraceSource::parse(&spec, None).expect("source");
    let sizes = [CacheSize::Fraction(0.01), CacheSize::Fraction(0.1)];
    same(&src, &sizes, false);
    same(&src, &sizes, true);
}

#[test]
fn streaming_equals_in_memory_on_the_shared_traces() {
    let shared = std::env::var("SIFTER_SHARED")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared").to_string());
    let dir = format!("{shared}/traces");
    let files = ["cloudPhysicsIO.oracleGeneral.bin", "P3.lis.zst"];
    let mut ran = 0;
    for f in files {
        let p = format!("{dir}/{f}");
        if !std::path::Path::new(&p).exists() {
            eprintln!("SKIPPED: {p} not found (../shared, or $SIFTER_SHARED, is not there)");
            continue;
        }
        let src = TraceSource::parse(&p, None).expect("source");
        same(&src, &[CacheSize::Fraction(0.001), CacheSize::Fraction(0.05)], false);
        ran += 1;
    }
    eprintln!("{ran} shared traces compared");
}

#[test]
fn a_stopped_sweep_reports_how_far_it_got() {
    let src =
        TraceSource::parse("zipf:alpha=1.0,n=1000,requests=100000,seed=1", None).expect("src");
    let go = AtomicBool::new(false);
    let scan = Scan::run(&src.name(), src.blocks(false).expect("open"), false, &|_, _| {}, &go)
        .expect("scan");
    assert_eq!(scan.summary().requests, 100_000);
    let stop = AtomicBool::new(true);
    let specs = [PolicySpec::parse("lru").expect("spec")];
    let out = scan
        .sweep(
            src.blocks(false).expect("open"),
            &specs,
            &[CacheSize::Fraction(0.1)],
            false,
            0,
            &|_, _| {},
            &stop,
        )
        .expect("sweep");
    assert_eq!(out.stopped_after, Some(0));
    // A stopped scan is an error, not a partial summary.
    let e = Scan::run(&src.name(), src.blocks(false).expect("open"), false, &|_, _| {}, &stop);
    assert!(matches!(e, Err(SimError::Stopped(_))), "{e:?}");
}

#[test]
fn a_trace_that_changes_between_the_passes_is_an_error() {
    let a = TraceSource::parse("zipf:alpha=1.0,n=1000,requests=50000,seed=1", None).expect("a");
    let b = TraceSource::parse("zipf:alpha=1.0,n=5000,requests=50000,seed=2", None).expect("b");
    let go = AtomicBool::new(false);
    let scan =
        Scan::run("a", a.blocks(false).expect("open"), false, &|_, _| {}, &go).expect("scan");
    let specs = [PolicySpec::parse("fifo").expect("spec")];
    let e = scan.sweep(
        b.blocks(false).expect("open"),
        &specs,
        &[CacheSize::Fraction(0.1)],
        false,
        0,
        &|_, _| {},
        &go,
    );
    let msg = format!("{:?}", e.expect_err("a different trace must be refused"));
    assert!(msg.contains("read differently"), "{msg}");
}

#[test]
fn belady_streams_from_an_oracle_files_own_next_access_fields_once_checked() {
    let dir = tempfile::tempdir().expect("tmp");
    let src = TraceSource::parse("zipf:alpha=0.9,n=3000,requests=300000,seed=5,size=1..100", None)
        .expect("src");
    let mut reqs: Vec<sifter_trace::Request> =
        src.requests().expect("open").collect::<Result<_, _>>().expect("requests");
    let good = dir.path().join("good.oracleGeneral.bin");
    sifter_trace::oracle::write_oracle_general(&good, &mut reqs).expect("write");
    // The same requests with one next-access field pointing at the wrong place (record 10's
    // next moved by one): the check must refuse it and fall back to computing them.
    let mut bytes = std::fs::read(&good).expect("read");
    let at = 10 * 24 + 16;
    let n = i64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let wrong = if n == -1 { 5 } else { n + 1 };
    bytes[at..at + 8].copy_from_slice(&wrong.to_le_bytes());
    let bad = dir.path().join("bad.oracleGeneral.bin");
    std::fs::write(&bad, &bytes).expect("write");
    let specs =
        [PolicySpec::parse("belady").expect("spec"), PolicySpec::parse("lru").expect("spec")];
    let sizes = [CacheSize::Fraction(0.01), CacheSize::Fraction(0.1)];
    let stop = AtomicBool::new(false);
    for (path, trusted) in [(&good, true), (&bad, false)] {
        let src = TraceSource::parse(path.to_str().expect("utf-8"), None).expect("src");
        let scan =
            Scan::run("t", src.blocks(true).expect("open"), true, &|_, _| {}, &stop).expect("scan");
        assert_eq!(scan.next_access_from_trace(), trusted, "{}", path.display());
        let streamed = scan
            .sweep(src.blocks(true).expect("open"), &specs, &sizes, false, 0, &|_, _| {}, &stop)
            .expect("sweep");
        let memory = in_memory(&src, &specs, &sizes, false);
        for (x, y) in memory.iter().zip(&streamed.results) {
            let y = y.as_ref().expect("sim");
            assert_eq!((&x.policy, x.counts), (&y.policy, y.counts), "{}", path.display());
        }
    }
}

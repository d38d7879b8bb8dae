//! End-to-end tests of the `sifter` binary.

use std::path::Path;
use std::process::{Command, Output};

fn sifter(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sifter"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run sifter")
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs `sifter` with the whitespace-separated `args`: it succeeds, and its stderr names every
/// one of `needles` (a warning).
fn warns(args: &str, dir: &Path, needles: &[&str]) {
    let o = sifter(&args.split_whitespace().collect::<Vec<_>>(), dir);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(needles.iter().all(|n| err.contains(n)), "stderr lacks one of {needles:?}: {err}");
}

fn fails_with(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "should fail");
    assert!(err.contains(needle), "stderr lacks '{needle}': {err}");
    assert!(!err.contains("panicked"), "must not panic: {err}");
}

#[test]
fn gen_stats_sim_round_trip() {
    let d = tempfile::tempdir().expect("tmp");
    let p = d.path();
    ok(&sifter(
        &[
            "trace",
            "gen",
            "zipf:alpha=1.0,n=1000,requests=20000,seed=1",
            "-o",
            "z.oracleGeneral.bin",
        ],
        p,
    ));
    assert_eq!(std::fs::metadata(p.join("z.oracleGeneral.bin")).expect("file").len(), 20000 * 24);
    let stats = ok(&sifter(&["trace", "stats", "z.oracleGeneral.bin"], p));
    assert!(stats.contains("20000"), "{stats}");
    // the generated file and the generator spec give the same miss ratios
    let a = ok(&sifter(
        &["sim", "z.oracleGeneral.bin", "-p", "sieve,lru", "-s", "0.1", "-q", "--csv", "-"],
        p,
    ));
    let b = ok(&sifter(
        &[
            "sim",
            "zipf:alpha=1.0,n=1000,requests=20000,seed=1",
            "-p",
            "sieve,lru",
            "-s",
            "0.1",
            "-q",
            "--csv",
            "-",
        ],
        p,
    ));
    let col = |s: &str| {
        s.lines()
            .skip(1)
            .map(|l| l.rsplit(',').nth(2).unwrap_or("").to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(col(&a), col(&b));
    assert_eq!(col(&a).len(), 2);
    // convert: text in, oracleGeneral out, same keys
    std::fs::write(p.join("k.trace"), "1\n2\n1\n3\n").expect("write");
    ok(&sifter(&["trace", "convert", "k.trace", "-o", "k.oracleGeneral.bin"], p));
    let json = ok(&sifter(&["trace", "stats", "k.oracleGeneral.bin", "--json"], p));
    assert!(json.contains("\"distinct_keys\": \"3\""), "{json}");
}

#[test]
fn sim_table_json_and_bench() {
    let d = tempfile::tempdir().expect("tmp");
    let p = d.path();
    let out = ok(&sifter(
        &[
            "sim",
            "scan:n=2000,requests=30000",
            "-p",
            "sieve,s3fifo(threshold=1),belady",
            "-s",
            "0.01,100",
            "-q",
            "--json",
            "r.json",
        ],
        p,
    ));
    assert!(out.contains("reduction vs FIFO") && out.contains("Belady"), "{out}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("r.json")).expect("json"))
            .expect("valid json");
    assert_eq!(j["results"].as_array().expect("array").len(), 6);
    let bench = ok(&sifter(
        &[
            "sim",
            "--bench",
            "zipf:n=1000,requests=10000",
            "-p",
            "fifo",
            "-s",
            "0.1",
            "-q",
            "--repeat",
            "1",
        ],
        p,
    ));
    assert!(bench.contains("Mreq/s"), "{bench}");
}

#[test]
fn bad_input_gives_clear_errors() {
    let d = tempfile::tempdir().expect("tmp");
    let p = d.path();
    fails_with(&sifter(&["sim", "nope.bin"], p), "no such file");
    fails_with(&sifter(&["sim", "zipf:alpha=9"], p), "alpha");
    fails_with(&sifter(&["sim", "zipf:n=100,requests=100", "-p", "lfu2"], p), "unknown policy");
    fails_with(&sifter(&["sim", "zipf:n=100,requests=100", "-p", "gclock(bits=99)"], p), "bits");
    fails_with(&sifter(&["sim", "zipf:n=100,requests=100", "-s", "0.001"], p), "empty cache");
    for j in ["0", "5000"] {
        let o = sifter(&["sim", "zipf:n=100,requests=100", "-j", j], p);
        fails_with(&o, &format!("-j {j}: worker threads must be between 1 and 1024"));
    }
    let o = sifter(&["sim", "zipf:n=100,requests=100", "-s", "0.001,0.1", "-q"], p);
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("size 0.001 gives a cache of 0 objects; skipped"));
    ok(&o);
    fails_with(&sifter(&["sim", "zipf:n=100,requests=100", "-s", "abc"], p), "cache size");
    fails_with(&sifter(&["sim", "zipf:n=100,requests=100", "--bytes"], p), "no object sizes");
    let mut rec = vec![0u8; 30];
    rec[12] = 1; // size 1
    rec[16..24].copy_from_slice(&(-1i64).to_le_bytes());
    std::fs::write(p.join("t.oracleGeneral.bin"), rec).expect("write");
    fails_with(&sifter(&["sim", "t.oracleGeneral.bin"], p), "byte offset 24");
    fails_with(&sifter(&["sim", "t.oracleGeneral.bin", "-f", "bogus"], p), "unknown trace format");
}

#[test]
fn lab_quick_writes_a_report() {
    let d = tempfile::tempdir().expect("tmp");
    let stdout = ok(&sifter(&["lab", "--quick", "-q", "--out", "rep"], d.path()));
    let html = std::fs::read_to_string(d.path().join("rep/index.html")).expect("html");
    // Findings first, computed from the run; the terminal ends with them.
    let at = |w: &str| html.find(w).unwrap_or_else(|| panic!("report lacks {w}"));
    assert!(at("id=\"findings\"") < at("id=\"throughput\""), "findings must come first");
    assert!(at("fastest cache is") < at("id=\"throughput\""));
    // The model section leads with what was measured; the extrapolation follows, labelled.
    assert!(at("id=\"model-vs-measured\"") < at("id=\"model-extrapolation\""));
    assert!(at("Extrapolation to larger machines (model only)") > at("id=\"model-vs-measured\""));
    assert!(
        at("Measured hit ratios at the 0.99 target") < at("Extrapolated by the queueing model")
    );
    assert!(stdout
        .trim_end()
        .rsplit("Findings of this run")
        .next()
        .is_some_and(|t| t.contains("Best policy")));
    assert!(stdout.contains("fastest cache is"), "{stdout}");
    // Plots: no floating-point noise in labels, a hover title on every point.
    for noise in ["0.30000000000000004", "0.7999999999999999", "100000.0", "00000001"] {
        assert!(!html.contains(noise), "float noise {noise} in the report");
    }
    assert!(html.matches("<title>").count() > 20, "plot points carry no hover titles");
    assert!(html.contains("<details>"), "long tables are not collapsed");
    for w in [
        "zipf",
        "scan",
        "twophase",
        "latest",
        "SIEVE",
        "Belady",
        "id=\"miss-ratios\"",
        "id=\"throughput\"",
        "id=\"latency\"",
        "id=\"throughput-model\"",
        "id=\"model-vs-measured\"",
        "id=\"model-extrapolation\"",
        "Harness ceiling",
        "quick_cache",
        "moka",
        "mobius",
        "<svg",
    ] {
        assert!(html.contains(w), "report lacks {w}");
    }
    // Self-contained: plots inline, nothing loaded from elsewhere.
    assert!(html.matches("<svg").count() >= 5, "plots are not inline");
    assert!(!html.contains("<img") && !html.contains("src=\"http"), "report refers to files");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.path().join("rep/results.json")).expect("json"),
    )
    .expect("valid json");
    for key in ["simulation", "throughput", "model", "machine", "command"] {
        assert!(json.get(key).is_some(), "results.json lacks {key}");
    }
    // Every closed-loop policy measured up to the 0.99 target, prefilled (a cold cache capped
    // the hit ratio near 0.75 before).
    let closed = json["model"]["closed_loop_100us_mpl72"].as_array().expect("closed-loop rows");
    for pol in sifter_lab::lab::CLOSED_LOOP_POLICIES {
        assert!(
            closed.iter().any(|r| r["policy"] == pol && r["target_hit"].as_f64() == Some(0.5)),
            "no closed-loop row for {pol} at 0.5"
        );
        let top =
            closed.iter().find(|r| r["policy"] == pol && r["target_hit"].as_f64() == Some(0.99));
        let Some(top) = top else {
            // Only a set-associative cache may find the top target out of reach, and the
            // report says so.
            let skipped = json["model"]["closed_loop_out_of_reach"].as_array().expect("list");
            assert!(
                pol == "multistep"
                    && skipped
                        .iter()
                        .any(|r| { r["policy"] == pol && r["target_hit"].as_f64() == Some(0.99) }),
                "no closed-loop row for {pol} at 0.99, and not reported out of reach"
            );
            continue;
        };
        let hit = top["hit"].as_f64().expect("hit");
        assert!(hit > 0.97, "{pol}: measured hit ratio {hit} at the 0.99 target");
    }
    let rows = json["throughput"]["rows"].as_array().expect("throughput rows");
    assert!(rows.iter().any(|r| r["cache"] == "null" && r["mops"].as_f64().unwrap_or(0.0) > 0.0));
    assert!(
        d.path().join("rep/sim.csv").exists() && d.path().join("rep/bench/results.csv").exists()
    );
}

#[test]
fn model_commands() {
    let d = tempfile::tempdir().expect("tmp");
    let p = d.path();
    let out = ok(&sifter(
        &["model", "pstar", "--policy", "lru,fifo", "--mpl", "72", "--disk-us", "100"],
        p,
    ));
    assert!(out.contains("0.8429") && out.contains("never falls"), "{out}");
    let out = ok(&sifter(
        &[
            "model",
            "solve",
            "--policy",
            "lru",
            "--hit",
            "0.95",
            "--disk-us",
            "5",
            "--sim-requests",
            "20000",
        ],
        p,
    ));
    assert!(out.contains("delink"), "{out}");
    ok(&sifter(
        &[
            "model", "sweep", "--policy", "lru", "--hit", "0:1:0.1", "--csv", "s.csv", "--svg",
            "s.svg",
        ],
        p,
    ));
    assert_eq!(std::fs::read_to_string(p.join("s.csv")).expect("csv").lines().count(), 1 + 11 * 2);
    assert!(std::fs::read_to_string(p.join("s.svg")).expect("svg").contains("<svg"));
    fails_with(&sifter(&["model", "pstar", "--policy", "nope"], p), "unknown policy");
    fails_with(&sifter(&["model", "solve", "--hit", "2"], p), "hit ratio");
    fails_with(&sifter(&["model", "solve", "--hit", "0.5", "--set", "bogus=1"], p), "no station");
}

#[test]
fn calibrate_and_closed_loop() {
    let d = tempfile::tempdir().expect("tmp");
    let p = d.path();
    let out = ok(&sifter(
        &["model", "calibrate", "--policy", "mobius,lru,multistep", "--capacity", "1000"],
        p,
    ));
    assert!(out.contains("mobius") && out.contains("lru") && out.contains("multistep"), "{out}");
    let out = ok(&sifter(
        &["model", "calibrate", "--policy", "lru", "--capacity", "1000", "--threads", "2"],
        p,
    ));
    assert!(out.contains("2 thread(s) at once") && out.contains("lru"), "{out}");
    fails_with(
        &sifter(&["model", "calibrate", "--policy", "lru", "--threads", "0"], p),
        "--threads",
    );
    let out = ok(&sifter(
        &["model", "calibrate", "--policy", "fifo", "--capacity", "1000", "--hit-ratio", "0.5"],
        p,
    ));
    assert!(out.contains("would hit 0.5") && out.contains("fifo"), "{out}");
    // The policy's own hit ratio on the stream, beside the costs: below the ideal cache's.
    let row = out.lines().find(|l| l.starts_with("fifo")).expect("a fifo row");
    let hit: f64 = row.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("hit ratio");
    assert!((0.3..0.55).contains(&hit), "{row}");
    fails_with(
        &sifter(&["model", "calibrate", "--policy", "lru", "--hit-ratio", "1"], p),
        "--hit-ratio must be between 0 and 0.999",
    );
    // A capacity no cache can have: an error naming it, not a panic.
    fails_with(
        &sifter(&["model", "calibrate", "--policy", "mobius", "--capacity", "1000000000000"], p),
        "capacity 1000000000000 is too large",
    );
    let out = ok(&sifter(
        &[
            "bench",
            "closed-loop",
            "--policy",
            "mobius,multistep",
            "--mpl",
            "4",
            "--backend-latency",
            "50us",
            "--sizes",
            "0.1",
            "--keys",
            "2000",
            "--secs",
            "0.2",
            "--csv",
            "c.csv",
        ],
        p,
    ));
    assert!(out.contains("model"), "{out}");
    let csv = std::fs::read_to_string(p.join("c.csv")).expect("csv");
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.lines().nth(2).is_some_and(|l| l.starts_with("multistep,")), "{csv}");
    // The point's calibration is reported: with 4 workers on this machine's cores, at most
    // that many threads at once, and positive costs.
    let (head, row) = (csv.lines().next().expect("header"), csv.lines().nth(1).expect("row"));
    let col = |name: &str| {
        let i = head.split(',').position(|h| h == name).unwrap_or_else(|| panic!("{name}"));
        row.split(',').nth(i).expect("field").to_string()
    };
    let threads: usize = col("calib_threads").parse().expect("threads");
    assert!((1..=4).contains(&threads), "{row}");
    for c in ["hit_us", "miss_us", "busy_hit_us", "busy_miss_us"] {
        assert!(col(c).parse::<f64>().expect("cost") > 0.0, "{c}: {row}");
    }
    fails_with(&sifter(&["bench", "closed-loop", "--backend-latency", "fast"], p), "latency");
    fails_with(
        &sifter(&["bench", "closed-loop", "--policy", "nope", "--secs", "0.1"], p),
        "unknown policy",
    );
}

#[test]
fn analyze_commands() {
    let d = tempfile::tempdir().expect("tmp");
    let p = d.path();
    ok(&sifter(
        &[
            "analyze",
            "mrc",
            "zipf:n=2000,requests=20000",
            "-p",
            "lru,sieve",
            "-s",
            "0.01:0.5:5",
            "--csv",
            "m.csv",
            "--svg",
            "m.svg",
        ],
        p,
    ));
    assert_eq!(std::fs::read_to_string(p.join("m.csv")).expect("csv").lines().count(), 1 + 2 * 5);
    std::fs::create_dir(p.join("tr")).expect("dir");
    for (i, a) in ["0.8", "1.0", "1.2"].iter().enumerate() {
        ok(&sifter(
            &[
                "trace",
                "gen",
                &format!("zipf:alpha={a},n=2000,requests=20000,seed={i}"),
                "-o",
                &format!("tr/t{i}.oracleGeneral.bin"),
            ],
            p,
        ));
    }
    std::fs::write(p.join("tr/README.md"), "not a trace").expect("write");
    let out = ok(&sifter(
        &["analyze", "compare", "tr", "-p", "lru,sieve", "-s", "0.1", "--svg", "c.svg"],
        p,
    ));
    assert!(out.contains("3 traces") && out.contains("P90"), "{out}");
    let out = ok(&sifter(
        &[
            "analyze",
            "intervals",
            "twophase:n=2000,requests=20000",
            "-p",
            "lru",
            "--window",
            "5000",
        ],
        p,
    ));
    assert_eq!(out.lines().count(), 1 + 4);
    fails_with(
        &sifter(&["analyze", "intervals", "zipf:n=100,requests=100", "--window", "0"], p),
        "window",
    );
    let z = "zipf:n=2000,requests=20000";
    // hand: one row per sample, positions within [0, 1]
    let out = ok(&sifter(&["analyze", "hand", z, "--every", "5000"], p));
    assert_eq!(out.lines().count(), 1 + 4, "{out}");
    for line in out.lines().skip(1) {
        let pos: f64 = line.rsplit(',').next().expect("field").parse().expect("number");
        assert!((0.0..=1.0).contains(&pos), "{line}");
    }
    // ideal: 4 policies × 2 samples; S3-FIFO does not list its contents
    let out = ok(&sifter(&["analyze", "ideal", z, "--every", "10000"], p));
    assert_eq!(out.lines().count(), 1 + 4 * 2, "{out}");
    fails_with(&sifter(&["analyze", "ideal", z, "-p", "s3fifo"], p), "does not list");
    ok(&sifter(&["analyze", "ideal", z, "-p", "fifo,clock", "--every", "10000"], p));
    // ideal per phase (Fig. 10b): after a popularity change LFU keeps the old popular objects
    // and holds almost none of the new ideal set, while SIEVE has sifted in most of it
    let two = "twophase:n=1000,requests=40000,seed=1";
    let args = ["analyze", "ideal", two, "-p", "lfu,sieve", "--every", "20000", "--phases", "2"];
    let out = ok(&sifter(&args, p));
    let ratio = |policy: &str| -> f64 {
        let line = out.lines().find(|l| l.starts_with(&format!("{policy},40000,"))).expect("row");
        line.split(',').nth(2).expect("ratio").parse().expect("number")
    };
    assert!(ratio("LFU") < 0.1 && ratio("SIEVE") > 0.6, "{out}");
    fails_with(&sifter(&["analyze", "ideal", two, "--phases", "0"], p), "--phases");
    // vectors: M rows per size, shares summing to 1
    let out = ok(&sifter(&["analyze", "vectors", z, "-s", "0.1", "--m", "4"], p));
    let shares: f64 = out
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(4).expect("share").parse::<f64>().expect("f"))
        .sum();
    assert!((shares - 1.0).abs() < 1e-4 && out.lines().count() == 1 + 4, "{out}");
    // warmup: 3 policies × 4 windows; Belady cannot run without next uses
    let out = ok(&sifter(&["analyze", "warmup", z, "--window", "5000"], p));
    assert_eq!(out.lines().count(), 1 + 3 * 4, "{out}");
    fails_with(&sifter(&["analyze", "warmup", z, "-p", "belady"], p), "next use");
    // one-size analyses refuse a list instead of silently taking its first size
    fails_with(&sifter(&["analyze", "hand", z, "-s", "0.01,0.1"], p), "one cache size");
}

#[test]
fn bench_writes_table_csv_json_and_plots() {
    let d = tempfile::tempdir().expect("tmp");
    let p = d.path();
    let args = [
        "bench",
        "--caches",
        "mobius,lru,null",
        "--threads",
        "1,2",
        "--workload",
        "ycsb:b,keys=5000",
        "--requests",
        "20000",
        "--sequence",
        "50000",
        "--repeat",
        "2",
        "-q",
        "--out",
        "b",
    ];
    let out = ok(&sifter(&args, p));
    assert!(out.contains("mobius") && out.contains("null"), "{out}");
    let csv = std::fs::read_to_string(p.join("b/results.csv")).expect("csv");
    assert_eq!(csv.lines().count(), 1 + 3 * 2, "{csv}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("b/results.json")).expect("json"))
            .expect("valid json");
    assert!(
        json["machine"].is_object()
            && json["command"].as_str().is_some_and(|c| c.contains("bench"))
    );
    assert_eq!(json["report"]["rows"].as_array().map(Vec::len), Some(6));
    for f in ["throughput", "latency", "hit-ratio"] {
        for ext in ["svg", "png"] {
            let path = p.join(format!("b/{f}-shared-0.1.{ext}"));
            assert!(path.metadata().is_ok_and(|m| m.len() > 1000), "{} missing", path.display());
        }
    }
    // several sizes add the Fig. 10 views against size
    let sizes = [
        "bench",
        "--caches",
        "mobius,mobius-wd",
        "--threads",
        "1",
        "--size",
        "0.1,0.5",
        "--workload",
        "zipf:keys=5000",
        "--requests",
        "5000",
        "--sequence",
        "20000",
        "--repeat",
        "1",
        "-q",
        "--out",
        "s",
    ];
    ok(&sifter(&sizes, p));
    for f in
        ["max-throughput-vs-size-shared", "throughput-vs-size-shared", "hit-ratio-vs-size-shared"]
    {
        assert!(
            p.join(format!("s/{f}.png")).exists() && p.join(format!("s/{f}.svg")).exists(),
            "{f}"
        );
    }
    // --json prints the same document to stdout
    let mut j = args.to_vec();
    j.extend(["--json", "--no-plots"]);
    let out = ok(&sifter(&j, p));
    assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok(), "{out}");
    // bad input: clear errors
    fails_with(&sifter(&["bench", "--caches", "nope"], p), "unknown cache");
    fails_with(&sifter(&["bench", "--threads", "0"], p), "--threads");
    fails_with(&sifter(&["bench", "--workload", "zipf:alpha=x"], p), "alpha");
    fails_with(
        &sifter(&["bench", "--sample-every", "3", "--requests", "10", "-q"], p),
        "power of two",
    );
    fails_with(&sifter(&["bench", "--duration", "soon"], p), "--duration");
    fails_with(&sifter(&["bench", "--sequence", "100000000000"], p), "8 GiB");
    fails_with(&sifter(&["bench", "--touch", "12", "-q"], p), "multiple of 8");
    fails_with(&sifter(&["bench", "--warmup-passes=-1", "-q"], p), "--warmup-passes");
    fails_with(&sifter(&["bench", "--warmup-passes", "nan", "-q"], p), "--warmup-passes");
    // A whole-sequence warm-up would leave only replays to measure: refused.
    fails_with(&sifter(&["bench", "--warmup-passes", "1", "-q"], p), "[0, 1)");
    // More requests asked than the warm-up left: measured up to the sequence's end, with a
    // warning naming the remedy and the CSV counting the runs cut short.
    warns(
        "bench -c mobius -t 1 -w zipf:keys=2000 --requests 5000 --sequence 6000 -r 2 -q \
         --no-plots --out short",
        p,
        &["in 2 of 2 runs", "longer --sequence"],
    );
    let csv = std::fs::read_to_string(p.join("short/results.csv")).expect("csv");
    let head: Vec<&str> = csv.lines().next().unwrap_or("").split(',').collect();
    let col = head.iter().position(|&h| h == "exhausted_runs").expect("exhausted_runs column");
    assert_eq!(csv.lines().nth(1).map(|l| l.split(',').nth(col)), Some(Some("2")), "{csv}");
    // A trace shared by two threads (one part each) ends early too; the warning names the
    // trace's remedy, not `--sequence` (which a trace ignores). Fewer requests than threads:
    // refused.
    warns(
        "bench -c mobius -t 2 -w uniform:n=500,requests=4000 --requests 5000 -r 1 -q \
         --no-plots --out short-trace",
        p,
        &["in 1 of 1 runs", "longer trace"],
    );
    fails_with(
        &sifter(&["bench", "-t", "3", "-w", "uniform:n=10,requests=2", "-q"], p),
        "cannot be shared out among 3 threads",
    );
    // --touch: the object size is part of the recorded configuration.
    let touch = [
        "bench",
        "-c",
        "mobius",
        "-t",
        "1",
        "-w",
        "zipf:keys=2000",
        "--requests",
        "2000",
        "--sequence",
        "5000",
        "-r",
        "1",
        "--touch",
        "64",
        "-q",
        "--json",
        "--no-plots",
    ];
    let out = ok(&sifter(&touch, p));
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["report"]["config"]["touch"], 64, "{out}");
    // --list describes every cache
    let out = ok(&sifter(&["bench", "--list"], p));
    assert!(out.contains("foyer") && out.contains("mutex-lru") && out.contains("null"), "{out}");
}

/// Runs `sifter` and returns its stdout and its peak resident memory in KiB (the last
/// `VmHWM` read from /proc while it ran, polled every 5 ms: it can only miss growth in the
/// last 5 ms). `None` where /proc is not there.
fn sifter_peak_rss(args: &[&str], dir: &Path) -> (String, Option<u64>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sifter"))
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run sifter");
    let status = format!("/proc/{}/status", child.id());
    let mut peak = None;
    // The pipes are read after exit: the output of these runs is a few lines, far below a
    // pipe's buffer.
    while child.try_wait().expect("wait").is_none() {
        if let Ok(s) = std::fs::read_to_string(&status) {
            if let Some(kb) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = Some(kb);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let o = child.wait_with_output().expect("output");
    (ok(&o), peak)
}

#[test]
fn streaming_sim_memory_stays_bounded_where_in_memory_grows_with_the_trace() {
    if !Path::new("/proc/self/status").exists() {
        eprintln!("skipped: no /proc to read peak memory from");
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    // 20M requests over 1,000 objects: in memory that is 320 MB of decoded requests; streamed,
    // the id map and a few chunks.
    let trace = "zipf:alpha=1.0,n=1000,requests=20000000,seed=1";
    let args = |mode| vec!["sim", trace, "-p", "lru,sieve", "-s", "0.1", "--mode", mode, "-q"];
    let (streamed, s_kb) = sifter_peak_rss(&args("stream"), dir.path());
    let (in_memory, m_kb) = sifter_peak_rss(&args("memory"), dir.path());
    assert_eq!(streamed, in_memory, "the two modes must print the same table");
    let (s_kb, m_kb) = (s_kb.expect("peak"), m_kb.expect("peak"));
    eprintln!("peak RSS: streamed {s_kb} KiB, in memory {m_kb} KiB");
    assert!(s_kb < 64 * 1024, "streaming peaked at {s_kb} KiB for a 1,000-object trace");
    // The measurement itself sees the difference (else the bound above proves nothing).
    assert!(m_kb > 250 * 1024, "in-memory peaked at only {m_kb} KiB for 20M requests");
}

#[test]
fn sim_mode_flag_is_checked() {
    let dir = tempfile::tempdir().expect("tmp");
    let o = sifter(
        &["sim", "zipf:alpha=1.0,n=100,requests=1000,seed=1", "--bench", "--mode", "stream"],
        dir.path(),
    );
    fails_with(&o, "drop --mode stream");
    let o =
        sifter(&["sim", "zipf:alpha=1.0,n=100,requests=1000,seed=1", "--mode", "disk"], dir.path());
    fails_with(&o, "invalid value 'disk'");
}

#[test]
fn ctrl_c_in_the_first_pass_of_a_streaming_sweep_ends_it_cleanly() {
    if Command::new("kill").arg("-l").output().is_err() {
        eprintln!("skipped: no kill command to send SIGINT with");
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let child = Command::new(env!("CARGO_BIN_EXE_sifter"))
        .args(["sim", "zipf:alpha=1.0,n=100000,requests=4000000000,seed=1", "-p", "lru"])
        .args(["-s", "0.1", "--mode", "stream", "-q", "--csv", "out.csv"])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run sifter");
    // A stop in pass 1 has no rows to write. Wait until the handler is installed (SIGINT, bit 1
    // of the caught-signals mask in /proc), so a slow start cannot turn this into a plain kill.
    let mut stderr = String::new();
    let pid = child.id().to_string();
    let caught = |pid: &str| {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| {
                let m = s.lines().find_map(|l| l.strip_prefix("SigCgt:"))?.trim().to_string();
                u64::from_str_radix(&m, 16).ok()
            })
            .is_some_and(|m| m & 0x2 != 0)
    };
    for _ in 0..1000 {
        if caught(&pid) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    let sent = Command::new("kill").args(["-INT", &pid]).status().expect("kill");
    assert!(sent.success());
    let o = child.wait_with_output().expect("output");
    stderr.push_str(&String::from_utf8_lossy(&o.stderr));
    // 4G requests cannot have been scanned in 0.8 s: the stop came in pass 1.
    assert!(!o.status.success(), "a sweep stopped in pass 1 has no results: {stderr}");
    assert!(stderr.contains("stopped (Ctrl-C) during the first pass"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn model_advise_gives_each_policy_its_critical_hit_ratio() {
    let d = tempfile::tempdir().expect("tmp");
    let out = ok(&sifter(
        &["model", "advise", "--cores", "72", "--backend-latency", "100us", "-p", "lru,fifo"],
        d.path(),
    ));
    // The paper's headline (Fig. 1): LRU peaks at p* = 0.84 with a 100 µs disk and MPL 72.
    let lru = out.lines().find(|l| l.starts_with("lru")).expect("lru row");
    assert!(lru.contains("0.843"), "{out}");
    let fifo = out.lines().find(|l| l.starts_with("fifo")).expect("fifo row");
    assert!(fifo.contains("never falls"), "{out}");
    // The same p* as `model pstar` for the same machine.
    let pstar = ok(&sifter(
        &["model", "pstar", "-p", "lru", "--mpl", "72", "--disk-us", "100", "--cpu-servers", "72"],
        d.path(),
    ));
    assert!(pstar.contains("0.8429"), "{pstar}");
    // With the user's hit ratio: a verdict and a plot.
    let out = ok(&sifter(
        &["model", "advise", "--cores", "8", "--backend-latency", "5us", "--hit", "0.99"],
        d.path(),
    ));
    assert!(out.contains("Mops/s at your hit ratio") && out.contains("more hits, more throughput"));
    ok(&sifter(
        &["model", "advise", "--cores", "8", "--backend-latency", "1ms", "--plot", "adv"],
        d.path(),
    ));
    assert!(d.path().join("adv.svg").exists() && d.path().join("adv.png").exists());
    fails_with(
        &sifter(&["model", "advise", "--cores", "8", "--backend-latency", "soon"], d.path()),
        "soon",
    );
    fails_with(
        &sifter(
            &["model", "advise", "--cores", "8", "--backend-latency", "5us", "--hit", "2"],
            d.path(),
        ),
        "hit ratio is in [0, 1]",
    );
    fails_with(
        &sifter(&["model", "advise", "--cores", "0", "--backend-latency", "5us"], d.path()),
        "--cores must be at least 1",
    );
}

#[test]
fn closed_loop_sizes_for_target_hit_ratios_over_several_mpls() {
    let d = tempfile::tempdir().expect("tmp");
    let out = ok(&sifter(
        &[
            "bench",
            "closed-loop",
            "-p",
            "mobius",
            "--mpl",
            "1,16",
            "--backend-latency",
            "50us",
            "--hit-ratios",
            "0.8",
            "--secs",
            "0.1",
            "--keys",
            "5000",
            "--csv",
            "cl.csv",
        ],
        d.path(),
    ));
    let csv = std::fs::read_to_string(d.path().join("cl.csv")).expect("csv");
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2, "{out}\n{csv}");
    for (r, mpl) in rows.iter().zip(["1", "16"]) {
        assert_eq!((r[0], r[1], r[3]), ("mobius", mpl, "0.8"), "{csv}");
        let (prefill, hit): (f64, f64) =
            (r[6].parse().expect("prefill"), r[7].parse().expect("hit"));
        // Sized for 0.8 and prefilled: both near the target, not capped by a cold start.
        assert!((0.75..0.9).contains(&prefill) && (0.75..0.95).contains(&hit), "{csv}");
    }
    fails_with(
        &sifter(&["bench", "closed-loop", "--mpl", "0"], d.path()),
        "--mpl between 1 and 1024",
    );
    fails_with(
        &sifter(&["bench", "closed-loop", "--hit-ratios", "1.5"], d.path()),
        "--hit-ratios are in (0, 1)",
    );
    // Event loops: 16 workers on this machine's cores, each miss waiting exactly 50 µs.
    let out = ok(&sifter(
        &[
            "bench",
            "closed-loop",
            "-p",
            "lru",
            "--mpl",
            "16",
            "--workers",
            "loops",
            "--backend-latency",
            "50us",
            "--sizes",
            "0.2",
            "--secs",
            "0.1",
            "--keys",
            "5000",
            "--csv",
            "loops.csv",
        ],
        d.path(),
    ));
    assert!(out.contains("(loops workers)"), "{out}");
    let csv = std::fs::read_to_string(d.path().join("loops.csv")).expect("csv");
    let row: Vec<&str> = csv.lines().nth(1).expect("a row").split(',').collect();
    let wait: f64 = row[11].parse().expect("wait_us");
    assert!((50.0..50.5).contains(&wait), "{csv}");
    fails_with(
        &sifter(&["bench", "closed-loop", "--workers", "loops", "--spin"], d.path()),
        "--spin needs --workers threads",
    );
    fails_with(&sifter(&["bench", "closed-loop", "--workers", "fibers"], d.path()), "fibers");
    fails_with(
        &sifter(&["bench", "closed-loop", "--cores", "0"], d.path()),
        "--cores must be at least 1",
    );
}

#[test]
fn kvtg_against_sifter_serve_writes_table_csv_json_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_sifter"))
        .args(["serve", "-p", &port.to_string(), "-m", "16", "-t", "2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let addr = format!("127.0.0.1:{port}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(std::time::Instant::now() < deadline, "sifter serve did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = dir.path().join("kv");
    let o = sifter(
        &[
            "kvtg",
            "-s",
            &addr,
            "-k",
            "zipf:alpha=1.0,n=5k",
            "--fill",
            "5k",
            "-m",
            "get=0.7,add=0.3",
            "-c",
            "4",
            "--pipeline",
            "4",
            "-r",
            "20k",
            "-o",
            out.to_str().unwrap(),
            "-q",
        ],
        dir.path(),
    );
    let text = ok(&o);
    assert!(text.contains("measure") && text.contains("get hit ratio"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let m = &json["phases"][1];
    assert_eq!(m["phase"], "measure");
    assert_eq!(m["requests"], 20000);
    assert_eq!(m["get_hit_ratio"], 1.0, "all 5k keys were filled in 16 MiB");
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(out.join("latency.svg").exists() && out.join("latency.png").exists());
    // Bad flags are refused by name; a dead server is an error, not a hang.
    fails_with(&sifter(&["kvtg", "-s", &addr, "--mix", "get=1,put=1"], dir.path()), "--mix");
    fails_with(&sifter(&["kvtg", "-s", &addr, "--pipeline", "0"], dir.path()), "pipeline");
    // On the live server's port: were the bound not checked, this would fail to bind (fast,
    // with another message) rather than start.
    let threads = sifter(&["serve", "-p", &port.to_string(), "-t", "1025"], dir.path());
    fails_with(&threads, "-t 1025: at most 1024 worker threads");
    server.kill().unwrap();
    let _ = server.wait();
    fails_with(&sifter(&["kvtg", "-s", &addr, "-r", "10"], dir.path()), "refused");
}

/// Every output flag of `sim` and `analyze mrc` works in every mode (or is refused by name):
/// the files exist and parse.
#[test]
fn sim_and_analyze_flags_work_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&sifter(
        &[
            "trace",
            "gen",
            "zipf:alpha=0.9,n=2000,requests=20000,seed=2,size=100..5000",
            "-o",
            "t.oracleGeneral",
        ],
        d,
    ));
    let mut n = 0;
    for bench in [false, true] {
        for bytes in [false, true] {
            for quiet in [false, true] {
                n += 1;
                let (csv, json) = (format!("r{n}.csv"), format!("r{n}.json"));
                let mut args = vec!["sim", "t.oracleGeneral", "-p", "fifo,sieve", "-s", "0.01,0.1"];
                args.extend(["--csv", &csv, "--json", &json]);
                if bench {
                    args.extend(["--bench", "--repeat", "2"]);
                } else {
                    args.extend(["-j", "2"]);
                }
                if bytes {
                    args.push("--bytes");
                }
                if quiet {
                    args.push("-q");
                }
                let out = ok(&sifter(&args, d));
                assert!(out.contains("SIEVE"), "{args:?}: table printed: {out}");
                let c = std::fs::read_to_string(d.join(&csv)).unwrap();
                let widths: Vec<usize> = c.lines().map(|l| l.split(',').count()).collect();
                assert_eq!(widths.len(), 5, "{args:?}: header + 4 rows: {c}");
                assert!(widths.iter().all(|w| *w == widths[0]), "{args:?}: {c}");
                let j: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(d.join(&json)).unwrap()).unwrap();
                assert_eq!(j["results"].as_array().unwrap().len(), 4, "{args:?}");
            }
        }
    }
    // JSON to stdout alone is parseable, in both modes.
    for extra in [&[][..], &["--bench", "--repeat", "1"][..]] {
        let mut args =
            vec!["sim", "t.oracleGeneral", "-p", "lru", "-s", "0.1", "--json", "-", "-q"];
        args.extend(extra);
        let out = ok(&sifter(&args, d));
        let j: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(j["results"].as_array().unwrap().len(), 1, "{args:?}");
    }
    // Flags that have no meaning in a mode are refused, not ignored.
    fails_with(&sifter(&["sim", "t.oracleGeneral", "--repeat", "2"], d), "--bench");
    fails_with(&sifter(&["sim", "t.oracleGeneral", "--bench", "-j", "2"], d), "--threads");
    for bytes in [false, true] {
        let mut args =
            vec!["analyze", "mrc", "t.oracleGeneral", "-p", "fifo,lru", "-s", "0.01:0.5:4"];
        args.extend(["--csv", "m.csv", "--svg", "m.svg"]);
        if bytes {
            args.push("--bytes");
        }
        ok(&sifter(&args, d));
        let c = std::fs::read_to_string(d.join("m.csv")).unwrap();
        assert!(c.lines().count() > 4, "{args:?}: {c}");
        let svg = std::fs::read_to_string(d.join("m.svg")).unwrap();
        assert!(svg.contains("<svg"), "{args:?}");
    }
    // Every other analysis writes a rectangular CSV and an SVG when asked.
    let analyses: [&[&str]; 6] = [
        &["intervals", "t.oracleGeneral", "-p", "fifo,sieve", "-s", "0.1", "--window", "5000"],
        &["ideal", "t.oracleGeneral", "-p", "lru,sieve", "-s", "0.1", "--phases", "2"],
        &["vectors", "t.oracleGeneral", "-s", "0.01,0.1"],
        &["warmup", "t.oracleGeneral", "-p", "lru,sieve", "-s", "0.1"],
        &["hand", "t.oracleGeneral", "-s", "0.1"],
        &["compare", "t.oracleGeneral", "t.oracleGeneral", "-p", "lru,sieve", "-s", "0.1"],
    ];
    for a in analyses {
        let mut args = vec!["analyze"];
        args.extend(a);
        args.extend(["--csv", "a.csv", "--svg", "a.svg"]);
        ok(&sifter(&args, d));
        let c = std::fs::read_to_string(d.join("a.csv")).unwrap();
        let widths: Vec<usize> = c.lines().map(|l| l.split(',').count()).collect();
        assert!(widths.len() > 1 && widths.iter().all(|w| *w == widths[0]), "{args:?}: {c}");
        let svg = std::fs::read_to_string(d.join("a.svg")).unwrap();
        assert!(svg.contains("<svg"), "{args:?}");
        std::fs::remove_file(d.join("a.csv")).unwrap();
        std::fs::remove_file(d.join("a.svg")).unwrap();
    }
}

/// The SVG files in `dir`.
fn svgs(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|r| {
            r.filter(|e| e.as_ref().is_ok_and(|e| e.path().extension().is_some_and(|x| x == "svg")))
                .count()
        })
        .unwrap_or(0)
}

/// A CSV whose lines all have as many fields as its header (no quoted commas in these files).
fn rectangular(csv: &str, rows: usize, what: &str) {
    let widths: Vec<usize> = csv.lines().map(|l| l.split(',').count()).collect();
    assert_eq!(widths.len(), rows + 1, "{what}: header + {rows} rows: {csv}");
    assert!(widths.iter().all(|w| *w == widths[0]), "{what}: {csv}");
}

#[test]
fn bench_model_trace_and_closed_loop_flags_work_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let json = |s: &str| -> serde_json::Value { serde_json::from_str(s).expect("JSON") };
    // bench: --json, --no-plots, -q and --hit-only in every combination.
    let base = [
        "bench",
        "-c",
        "mobius,lru",
        "-t",
        "1,2",
        "-w",
        "zipf:alpha=1.0,keys=2000",
        "--sequence",
        "5000",
        "--requests",
        "2000",
        "-r",
        "1",
        "--sample-every",
        "8",
        "--warmup-limit",
        "1s",
    ];
    let mut n = 0;
    for as_json in [false, true] {
        for no_plots in [false, true] {
            for quiet in [false, true] {
                for hit_only in [false, true] {
                    n += 1;
                    let out = format!("b{n}");
                    let mut args: Vec<&str> = base.to_vec();
                    args.extend(["-o", &out]);
                    for (on, flag) in [
                        (as_json, "--json"),
                        (no_plots, "--no-plots"),
                        (quiet, "-q"),
                        (hit_only, "--hit-only"),
                    ] {
                        if on {
                            args.push(flag);
                        }
                    }
                    let stdout = ok(&sifter(&args, d));
                    if as_json {
                        let j = json(&stdout);
                        assert_eq!(j["report"]["rows"].as_array().unwrap().len(), 4, "{args:?}");
                    } else {
                        assert!(stdout.contains("Mops/s") && stdout.contains("mobius"), "{args:?}");
                    }
                    let o = d.join(&out);
                    let csv = std::fs::read_to_string(o.join("results.csv")).unwrap();
                    rectangular(&csv, 4, &format!("{args:?}"));
                    let j = json(&std::fs::read_to_string(o.join("results.json")).unwrap());
                    let rows = j["report"]["rows"].as_array().unwrap();
                    if hit_only {
                        for r in rows {
                            let h = r["hit_ratio"].as_f64().unwrap();
                            assert!(h > 0.99, "{args:?}: hit-only hit ratio {h}");
                        }
                    }
                    assert_eq!(svgs(&o) == 0, no_plots, "{args:?}: plots iff not --no-plots");
                }
            }
        }
    }
    // --duration, per-thread key spaces and two sizes.
    let mut args = base.to_vec();
    args.extend(["--duration", "50ms", "-m", "shared,per-thread", "-s", "0.1,0.5"]);
    args.extend(["-o", "bd", "--no-plots", "-q"]);
    ok(&sifter(&args, d));
    let csv = std::fs::read_to_string(d.join("bd/results.csv")).unwrap();
    rectangular(&csv, 2 * 2 * 2 * 2, "--duration -m -s");
    // --mem writes its table and memory.csv; throughput options are refused with it.
    let out = ok(&sifter(&["bench", "--mem", "-c", "mobius,quick_cache,null", "-o", "m", "-q"], d));
    assert!(out.contains("bytes/entry"), "{out}");
    rectangular(&std::fs::read_to_string(d.join("m/memory.csv")).unwrap(), 2, "--mem");
    // --size gives the capacities (entries only): a row per capacity and cache, each cache
    // built for it (Mobius preallocates its arena: more capacity, more heap).
    ok(&sifter(
        &["bench", "--mem", "-c", "mobius,quick_cache", "-s", "1k,2500", "-o", "m2", "-q"],
        d,
    ));
    let csv = std::fs::read_to_string(d.join("m2/memory.csv")).unwrap();
    rectangular(&csv, 4, "--mem -s");
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let caps: Vec<&str> = rows.iter().map(|f| f[1]).collect();
    assert_eq!(caps, ["1000", "1000", "2500", "2500"], "{csv}");
    for f in &rows {
        let (cap, held): (u64, u64) = (f[1].parse().unwrap(), f[2].parse().unwrap());
        assert!(held > 0 && held <= cap, "{csv}");
    }
    let heap = |r: &[&str]| r[3].parse::<u64>().unwrap();
    assert!(heap(&rows[0]) < heap(&rows[2]), "Mobius's heap grows with its capacity: {csv}");
    fails_with(&sifter(&["bench", "--mem", "-c", "mobius", "-s", "0.1"], d), "numbers of entries");
    // A capacity beyond the machine's memory is refused before the cache is filled (2,000M
    // entries take over 100 GB, 6,400M over 300 GB), naming the cache, the estimate and what
    // is available.
    let available_gb = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        let l = m.lines().find(|l| l.starts_with("MemAvailable:"))?.to_string();
        l.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib / 1_000_000)
    });
    match available_gb {
        Some(gb) if gb < 80 => {
            let out = sifter(&["bench", "--mem", "-c", "mobius", "-s", "2000M", "-o", "m3"], d);
            fails_with(&out, "mobius with 2000000000 entries needs about");
            fails_with(&out, "give a smaller size");
            assert!(!d.join("m3/memory.csv").exists(), "nothing written for a refused run");
            // The throughput bench asks before it builds anything: the 10k size does not run
            // first, and a per-thread capacity counts every thread's key space.
            let out =
                sifter(&["bench", "-c", "quick_cache,mobius", "-s", "10k,2000M", "-o", "m4"], d);
            fails_with(&out, "quick_cache with 2000000000 entries needs about");
            assert!(!d.join("m4").exists(), "nothing run or written for a refused bench");
            let mut args = vec!["bench", "-c", "mobius", "-m", "per-thread", "-s", "100M"];
            args.extend(["-t", "1,64", "-o", "m5"]);
            fails_with(&sifter(&args, d), "mobius with 6400000000 entries needs about");
        }
        other => eprintln!("skipped the --mem memory check: {other:?} GB available"),
    }
    for extra in [&["-t", "2"][..], &["--json"], &["--hit-only"], &["-r", "2"], &["--no-plots"]] {
        let mut args = vec!["bench", "--mem", "-c", "mobius"];
        args.extend(extra);
        fails_with(&sifter(&args, d), "cannot be used with");
    }
    fails_with(&sifter(&["bench", "--hit-only", "-s", "0.5"], d), "cannot be used with");
    fails_with(&sifter(&["bench", "--list", "-q"], d), "cannot be used with");
    let mut args = base.to_vec();
    args.extend(["--hit-only", "-m", "per-thread", "-q"]);
    fails_with(&sifter(&args, d), "--mode shared");

    // closed loop: --csv to a file and to stdout, --spin, --cores; sizes and targets exclusive.
    let cl = [
        "bench",
        "closed-loop",
        "-p",
        "fifo,lru",
        "--mpl",
        "1,2",
        "--keys",
        "2000",
        "--secs",
        "0.05",
        "--backend-latency",
        "2us",
    ];
    for spin in [false, true] {
        for to_stdout in [false, true] {
            let mut args = cl.to_vec();
            args.extend(["--sizes", "0.1,0.5", "--cores", "2"]);
            if spin {
                args.push("--spin");
            }
            args.extend(["--csv", if to_stdout { "-" } else { "cl.csv" }]);
            let stdout = ok(&sifter(&args, d));
            let csv = if to_stdout {
                stdout
                    .lines()
                    .skip_while(|l| !l.starts_with("policy,mpl"))
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                std::fs::read_to_string(d.join("cl.csv")).unwrap()
            };
            rectangular(&csv, 2 * 2 * 2, &format!("{args:?}"));
        }
    }
    let mut args = cl.to_vec();
    args.extend(["--sizes", "0.1", "--hit-ratios", "0.5"]);
    fails_with(&sifter(&args, d), "cannot be used with");

    // model: every subcommand's output flags.
    let out = ok(&sifter(
        &[
            "model",
            "solve",
            "-p",
            "lru,fifo",
            "--mpl",
            "4,8",
            "--disk-us",
            "5,100",
            "--hit",
            "0.9",
            "--sim-requests",
            "0",
        ],
        d,
    ));
    assert_eq!(
        out.lines().filter(|l| l.starts_with("lru") || l.starts_with("fifo")).count(),
        8,
        "{out}"
    );
    for solver in ["bound", "mva"] {
        let out =
            ok(&sifter(&["model", "pstar", "-p", "lru", "--mpl", "8,72", "--solver", solver], d));
        assert_eq!(out.lines().filter(|l| l.starts_with("lru")).count(), 2, "{solver}: {out}");
    }
    ok(&sifter(
        &[
            "model",
            "sweep",
            "-p",
            "lru,fifo",
            "--hit",
            "0.5:0.9:0.2",
            "--solver",
            "bound,mva,sim",
            "--csv",
            "s.csv",
            "--svg",
            "s.svg",
        ],
        d,
    ));
    rectangular(&std::fs::read_to_string(d.join("s.csv")).unwrap(), 2 * 3 * 3, "model sweep");
    assert!(std::fs::read_to_string(d.join("s.svg")).unwrap().contains("<svg"));
    let out =
        ok(&sifter(&["model", "sweep", "-p", "lru", "--hit", "0.5:0.9:0.2", "--csv", "-"], d));
    rectangular(&out, 3 * 2, "model sweep --csv -");
    ok(&sifter(
        &["model", "calibrate", "-p", "fifo,lru", "--capacity", "1000", "--json", "cal.json"],
        d,
    ));
    let j = json(&std::fs::read_to_string(d.join("cal.json")).unwrap());
    assert!(
        j["fifo"]["hit_us"].as_f64().is_some() && j["lru"]["miss_us"].as_f64().is_some(),
        "{j}"
    );
    assert!(j["lru"]["hit_ratio"].as_f64().is_some_and(|h| h > 0.5 && h < 1.0), "{j}");
    let out =
        ok(&sifter(&["model", "calibrate", "-p", "fifo", "--capacity", "1000", "--json", "-"], d));
    let j = json(
        out.lines().skip_while(|l| !l.starts_with('{')).collect::<Vec<_>>().join("\n").as_str(),
    );
    assert!(j["fifo"]["hit_us"].as_f64().is_some(), "{j}");
    let out = ok(&sifter(
        &[
            "model",
            "advise",
            "--cores",
            "4",
            "--backend-latency",
            "100us",
            "--hit",
            "0.9",
            "--mpl",
            "8",
            "--plot",
            "adv",
        ],
        d,
    ));
    assert!(out.contains("advice"), "{out}");
    assert!(d.join("adv.svg").exists() && d.join("adv.png").exists());

    // trace: stats as a table and as JSON, explicit formats, compressed outputs.
    ok(&sifter(
        &["trace", "gen", "zipf:alpha=0.9,n=500,requests=5000,seed=3", "-o", "g.oracleGeneral.zst"],
        d,
    ));
    ok(&sifter(
        &[
            "trace",
            "convert",
            "-f",
            "oracleGeneral",
            "g.oracleGeneral.zst",
            "-o",
            "c.oracleGeneral",
        ],
        d,
    ));
    for (file, format) in
        [("g.oracleGeneral.zst", None), ("c.oracleGeneral", Some("oracleGeneral"))]
    {
        let mut args = vec!["trace", "stats", file];
        if let Some(f) = format {
            args.extend(["-f", f]);
        }
        assert!(ok(&sifter(&args, d)).contains("5000"), "{args:?}");
        args.push("--json");
        let j = json(&ok(&sifter(&args, d)));
        assert_eq!(j["requests"].as_str(), Some("5000"), "{args:?}: {j}");
    }

    // lab: a real trace beside the built-in workloads, quietly.
    let out = ok(&sifter(&["lab", "--quick", "-q", "-o", "lab", "--trace", "c.oracleGeneral"], d));
    assert!(out.contains("c.oracleGeneral — real trace"), "{out}");
    let sim = std::fs::read_to_string(d.join("lab/sim.csv")).unwrap();
    assert!(sim.lines().any(|l| l.starts_with("c.oracleGeneral,")), "{sim}");
}

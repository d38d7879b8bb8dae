"""The Python package against the CLI it shares its library with.

Run by scripts/python-tests.sh (a venv, `maturin develop --release`, pytest). SIFTER_BIN is
the CLI binary (default: target/release/sifter); tests that read ../shared skip with a message
when it is absent (SIFTER_SHARED points elsewhere).
"""

import csv
import math
import io
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import sifter
from sifter import _native

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(os.environ.get("SIFTER_BIN", ROOT / "target" / "release" / "sifter"))
SHARED = Path(os.environ.get("SIFTER_SHARED", ROOT.parent / "shared"))
ZIPF = "zipf:alpha=1.0,n=20000,requests=300000,seed=7"


def cli(*args, check=True):
    if not BIN.exists():
        pytest.skip(f"the CLI binary {BIN} is not built (cargo build --release -p sifter-cli)")
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, check=check)


def cli_rows(*args):
    out = cli("sim", *args, "--csv", "-", "-q").stdout
    return list(csv.DictReader(io.StringIO(out)))


def shared_trace(name):
    p = SHARED / "traces" / name
    if not p.exists():
        pytest.skip(f"SKIPPED: {p} not found (../shared absent; set SIFTER_SHARED)")
    return p


def assert_same_rows(df, rows):
    assert len(df) == len(rows)
    for (_, a), b in zip(df.iterrows(), rows):
        assert a["policy"] == b["policy"] and a["spec"] == b["spec"] and a["size"] == b["size"]
        assert a["capacity"] == int(b["capacity"])
        assert a["requests"] == int(b["requests"]) and a["misses"] == int(b["misses"])
        assert abs(a["miss_ratio"] - float(b["miss_ratio"])) < 1e-6
        assert abs(a["byte_miss_ratio"] - float(b["byte_miss_ratio"])) < 1e-6


def test_columns_are_the_clis():
    df = sifter.simulate(ZIPF, "lru", "0.1", progress=False)
    header = cli("sim", ZIPF, "-p", "lru", "-s", "0.1", "--csv", "-", "-q").stdout.splitlines()[0]
    assert list(df.columns) == header.split(",") == sifter.COLUMNS


def test_synthetic_sweep_equals_the_cli():
    pols, sizes = "fifo,lru,sieve,s3fifo,clock,arc", "0.001,0.01,0.1"
    # S3-FIFO at 0.1 % (18 objects) stores nothing, and says so.
    with pytest.warns(UserWarning, match=r"S3-FIFO\(0.10,2\) on .* at size 0.001 \(capacity 18\)"):
        df = sifter.simulate(ZIPF, pols, sizes, progress=False)
    assert_same_rows(df, cli_rows(ZIPF, "-p", pols, "-s", sizes))


@pytest.mark.parametrize("name,fmt,bytes_mode", [
    ("cloudPhysicsIO.oracleGeneral.bin", None, False),
    ("cloudPhysicsIO.oracleGeneral.bin", None, True),
    ("cloudPhysicsIO.vscsi", None, False),
])
def test_shared_traces_equal_the_cli(name, fmt, bytes_mode):
    p = shared_trace(name)
    pols, sizes = "fifo,lru,sieve,s3fifo,lirs,belady", "0.001,0.01,0.1"
    args = [str(p), "-p", pols, "-s", sizes] + (["--bytes"] if bytes_mode else [])
    df = sifter.simulate(p, pols.split(","), sizes, bytes=bytes_mode, format=fmt, progress=False)
    assert_same_rows(df, cli_rows(*args))


def test_streaming_and_memory_modes_agree():
    a = sifter.simulate(ZIPF, "lru,sieve", "0.01,0.1", mode="memory", progress=False)
    b = sifter.simulate(ZIPF, "lru,sieve", "0.01,0.1", mode="stream", progress=False)
    assert list(a["misses"]) == list(b["misses"])


def test_array_input_equals_file_input():
    p = shared_trace("cloudPhysicsIO.oracleGeneral.bin")
    t = sifter.read_trace(p)
    assert t["keys"].dtype == np.uint64 and t["sizes"].dtype == np.uint32
    assert len(t["keys"]) == len(t["sizes"]) == len(t["times"]) > 0
    for bytes_mode in (False, True):
        f = sifter.simulate(p, "lru,sieve,s3fifo", "0.01,0.1", bytes=bytes_mode, progress=False)
        a = sifter.simulate((t["keys"], t["sizes"]), "lru,sieve,s3fifo", "0.01,0.1",
                            bytes=bytes_mode, progress=False)
        assert list(f["capacity"]) == list(a["capacity"])
        assert list(f["misses"]) == list(a["misses"])
        assert list(f["byte_miss_ratio"]) == list(a["byte_miss_ratio"])
    # Keys alone, of any integer dtype, and a dict with a name.
    k = np.array([1, 2, 3, 1, 2, 4, 1, 5, 1, 2] * 100, dtype=np.int32)
    d = sifter.simulate({"keys": k, "name": "mine"}, "lru", "3", progress=False)
    assert list(d["trace"]) == ["mine"]
    assert list(d["misses"]) == list(sifter.simulate(k.astype(np.uint64), "lru", "3", progress=False)["misses"])


def test_iter_trace_chunks_equal_read_trace():
    whole = sifter.read_trace(ZIPF)
    chunks = list(sifter.iter_trace(ZIPF, chunk=70000))
    assert [len(c["keys"]) for c in chunks] == [70000] * 4 + [20000]
    assert np.array_equal(np.concatenate([c["keys"] for c in chunks]), whole["keys"])


def cli_error(*args):
    r = cli(*args, check=False)
    assert r.returncode != 0
    line = [l for l in r.stderr.splitlines() if l.startswith("error: ")][-1]
    return line[len("error: "):]


@pytest.mark.parametrize("kwargs,cli_args", [
    (dict(policies="bogus"), ["-p", "bogus"]),
    (dict(policies="gclock(bits=99)"), ["-p", "gclock(bits=99)"]),
    (dict(sizes="abc"), ["-s", "abc"]),
    (dict(sizes="0.1", bytes=True), ["-s", "0.1", "--bytes"]),
])
def test_bad_input_raises_value_error_with_the_clis_message(kwargs, cli_args):
    with pytest.raises(ValueError) as e:
        sifter.simulate(ZIPF, **{"policies": "lru", "sizes": "0.1", "progress": False, **kwargs})
    assert str(e.value) == cli_error("sim", ZIPF, *(["-p", "lru"] if "-p" not in cli_args else []), *cli_args)


def test_bad_trace_files_raise_value_error_naming_the_file(tmp_path):
    missing = tmp_path / "nope.oracleGeneral.bin"
    with pytest.raises(ValueError) as e:
        sifter.simulate(missing, "lru", "0.1", progress=False)
    assert "nope.oracleGeneral.bin" in str(e.value)
    assert str(e.value) == cli_error("sim", str(missing), "-p", "lru", "-s", "0.1")
    bad = tmp_path / "bad.oracleGeneral.bin"
    bad.write_bytes(b"\x01" * 30)  # one record and a truncated one
    with pytest.raises(ValueError) as e:
        sifter.read_trace(bad)
    assert "bad.oracleGeneral.bin" in str(e.value)


def test_bad_arrays_are_refused():
    with pytest.raises(ValueError, match="integers"):
        sifter.simulate(np.array([1.5, 2.5]), "lru", "1", progress=False)
    with pytest.raises(ValueError, match="one size per key"):
        sifter.simulate((np.arange(5), np.arange(4)), "lru", "1", progress=False)
    with pytest.raises(ValueError, match="between 0 and"):
        sifter.simulate((np.arange(5), -np.ones(5, dtype=int)), "lru", "1", progress=False)
    with pytest.raises(ValueError, match="arrays are in memory"):
        sifter.simulate(np.arange(5), "lru", "1", mode="stream", progress=False)
    with pytest.raises(ValueError, match="no requests"):
        sifter.simulate(np.zeros(0, dtype=np.uint64), "lru", "1", progress=False)


def test_skipped_sizes_are_python_warnings():
    with pytest.warns(UserWarning, match="gives a cache of 0 objects; skipped"):
        df = sifter.simulate("zipf:alpha=1.0,n=100,requests=1000,seed=1", "lru", "0.001,0.5", progress=False)
    assert list(df["size"]) == ["0.5"]


def test_a_run_that_stored_nothing_is_a_python_warning():
    # S3-FIFO below 20 objects admits nothing (libCacheSim's rule): its miss ratio of 1 warns.
    with pytest.warns(UserWarning, match=r"stored no object at all[\s\S]*S3-FIFO\(0.10,2\) on .* at size 10 "):
        df = sifter.simulate("zipf:alpha=1.0,n=1000,requests=5000,seed=1", "s3fifo", "10,100", progress=False)
    assert list(df["miss_ratio"])[0] == 1.0 and list(df["miss_ratio"])[1] < 1.0


def test_a_failing_progress_callback_stops_the_sweep():
    calls = []

    def cb(label, done, total, new_phase):
        calls.append(label)
        raise RuntimeError("stop here")

    big = "zipf:alpha=1.0,n=1000000,requests=400000000,seed=1"
    with pytest.raises(RuntimeError, match="stop here"):
        _native.run_sweep(big, None, None, "x", "lru", "0.1", False, None, "stream", 0, None, cb)
    assert calls


def test_mrc_grid():
    df = sifter.mrc(ZIPF, "lru,sieve", "0.001:0.5:6", progress=False)
    assert len(df) == 12
    lru = df[df["spec"] == "lru"]["miss_ratio"].tolist()
    assert lru == sorted(lru, reverse=True)


def test_policies_list_matches_the_registry():
    names = [p["name"] for p in sifter.policies()]
    out = cli("policies").stdout
    for n in names:
        assert f"\n{n}" in "\n" + out
    assert "sieve" in names and "belady" in names


def test_model_matches_the_cli():
    a = sifter.model.advise(["lru", "mobius"], cores=16, disk_us=100, mpl=72, hit=0.95)
    out = cli("model", "advise", "--cores", "16", "--mpl", "72", "--backend-latency", "100us",
              "-p", "lru,mobius", "--hit", "0.95").stdout
    table = {l.split()[0]: l.split() for l in out.splitlines()[3:] if l.strip()}
    for r in a:
        row = table[r["policy"]]
        pstar = 1.0 if row[1] == "never" else float(row[1])
        assert abs(r["pstar"] - pstar) < 1e-3
        at_hit = float(row[4] if row[1] == "never" else row[3])
        assert abs(r["at_hit_mops"] - at_hit) < 1e-3
    p, peak = sifter.model.pstar("lru", disk_us=100, mpl=72, cores=16)
    assert abs(p - a[0]["pstar"]) < 1e-9
    assert sifter.model.pstar("mobius", cores=16)[0] == 1.0
    s = sifter.model.solve("lru", 0.9, solver="bound")
    assert s["x"] > 0 and isinstance(s["bottleneck"], str)
    with pytest.raises(ValueError, match="unknown"):
        sifter.model.solve("bogus", 0.9)
    with pytest.raises(ValueError, match="between 0 and 1"):
        sifter.model.solve("lru", 1.5)


def test_cache_semantics():
    c = sifter.Cache(1000, policy="sieve")
    assert c.policy == "sieve" and c.capacity == 1000 and len(c) == 0
    c["a"] = 1
    c[7] = "seven"
    c[(1, "x", b"y")] = [3]
    assert c["a"] == 1 and c[7.0] == "seven" and c[(1, "x", b"y")] == [3]
    c[True] = "one"
    assert c[1] == "one"  # True == 1, as in a dict
    assert c.get("missing") is None and c.get("missing", 5) == 5
    with pytest.raises(KeyError):
        c["missing"]
    assert "a" in c and "b" not in c
    assert c.pop("a") == 1 and "a" not in c
    del c[7]
    with pytest.raises(KeyError):
        del c[7]
    big = 1 << 100
    c[big] = "big"
    assert c[big] == "big" and c.get(big + 1) is None
    with pytest.raises(TypeError, match="keys are"):
        c[[1, 2]] = 3
    s = c.stats()
    assert s["hits"] >= 5 and s["misses"] >= 2
    assert 0 <= s["hit_writes"] <= s["hits"]
    c.clear()
    assert len(c) == 0
    c.validate()
    with pytest.raises(ValueError, match="unknown policy"):
        sifter.Cache(10, policy="bogus")
    with pytest.raises(ValueError, match="ttl"):
        sifter.Cache(10, ttl=-1)
    assert "mobius" in sifter.cache_policies()


def test_cache_evicts_to_its_capacity_and_releases_values():
    import gc
    import weakref

    class V:
        pass

    c = sifter.Cache(100, policy="mobius")
    refs = []
    for i in range(5000):
        v = V()
        refs.append(weakref.ref(v))
        c[i] = v
    assert len(c) <= 100
    c.validate()
    c.clear()
    del v
    # Values left the cache; their references are released once the interpreter is held again
    # and the cache's reclamation has run (clear with no other thread inside drops them all).
    gc.collect()
    alive = sum(r() is not None for r in refs)
    assert alive == 0, f"{alive} values still referenced after clear"


def test_cache_from_8_python_threads():
    c = sifter.Cache(500, policy="mobius")
    errors = []

    def work(t):
        try:
            rng = np.random.default_rng(t)
            for k in rng.zipf(1.2, 20000):
                k = int(k % 5000)
                v = c.get(k)
                if v is None:
                    c[k] = ("v", k)
                elif v != ("v", k):
                    errors.append((k, v))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[:5]
    assert len(c) <= 500
    c.validate()
    s = c.stats()
    assert s["hits"] + s["misses"] == 8 * 20000


def test_ttl_expires_entries():
    import time

    c = sifter.Cache(100, ttl=0.05)
    c["k"] = 1
    assert c["k"] == 1
    time.sleep(0.2)
    assert c.get("k") is None


@pytest.mark.parametrize("kind,kwargs,cli_args", [
    ("intervals", dict(policies="lru,sieve", size="0.1", window=20000), ["-p", "lru,sieve", "-s", "0.1", "--window", "20000"]),
    ("ideal", dict(policies="lru,sieve", size="0.1", phases=4), ["-p", "lru,sieve", "-s", "0.1", "--phases", "4"]),
    ("warmup", dict(policies="lru,sieve", size="0.1"), ["-p", "lru,sieve", "-s", "0.1"]),
    ("hand", dict(size="0.1"), ["-s", "0.1"]),
    ("vectors", dict(sizes="0.01,0.1", p=4, m=2), ["-s", "0.01,0.1", "--p", "4", "--m", "2"]),
])
def test_analyses_equal_the_cli(kind, kwargs, cli_args):
    df = getattr(sifter.analyze, kind)(ZIPF, **kwargs)
    rows = list(csv.DictReader(io.StringIO(cli("analyze", kind, ZIPF, *cli_args, "--csv", "-").stdout)))
    assert list(df.columns) == list(rows[0].keys())
    assert len(df) == len(rows)
    for (_, a), b in zip(df.iterrows(), rows):
        for c, v in b.items():
            if isinstance(a[c], str):
                assert a[c] == v, (c, a[c], v)
            else:
                assert abs(float(a[c]) - float(v)) < 1e-6, (c, a[c], v)


def test_analysis_errors_are_value_errors():
    with pytest.raises(ValueError, match="one cache size"):
        sifter.analyze.hand(ZIPF, size="0.1,0.2")
    with pytest.raises(ValueError, match="does not list its contents"):
        sifter.analyze.ideal(ZIPF, policies="belady")
    with pytest.raises(ValueError, match="p and m"):
        sifter.analyze.vectors(ZIPF, p=0)


def test_compare_equals_the_cli(tmp_path):
    traces = [ZIPF, "zipf:alpha=0.8,n=20000,requests=300000,seed=7", str(tmp_path / "missing.oracleGeneral.bin")]
    with pytest.warns(UserWarning, match="skipping .*missing.oracleGeneral.bin"):
        summary, rows = sifter.analyze.compare(traces, "lru,sieve,s3fifo", "0.1")
    out = tmp_path / "c.csv"
    text = cli("analyze", "compare", *traces, "-p", "lru,sieve,s3fifo", "-s", "0.1", "--csv", str(out)).stdout
    ref = list(csv.DictReader(out.open()))
    assert len(rows) == len(ref) == 6
    for (_, a), b in zip(rows.iterrows(), ref):
        assert a["policy"] == b["policy"] and abs(a["reduction"] - float(b["reduction"])) < 1e-6
    table = {l.split()[0]: l.split() for l in text.splitlines()[3:] if l.strip()}
    for _, r in summary.iterrows():
        t = table[r["policy"]]
        assert abs(r["mean"] - float(t[3])) < 1e-4 and abs(r["p10"] - float(t[1])) < 1e-4


# The experiments: the same library as `sifter bench`, `sifter bench closed-loop` and `sifter lab`.

BENCH = dict(workload="zipf:alpha=1.0,keys=2000", sequence=5000, requests=2000, repeat=1, sample_every=8, progress=False)


def test_bench_has_the_clis_columns_and_rows(tmp_path):
    df = sifter.bench("mobius,lru,null", threads=[1, 2], mode="shared,per-thread", **BENCH)
    cli("bench", "-c", "mobius,lru,null", "-t", "1,2", "-m", "shared,per-thread", "-w", BENCH["workload"],
        "--sequence", "5000", "--requests", "2000", "-r", "1", "--sample-every", "8", "-q", "--no-plots",
        "-o", str(tmp_path))
    rows = list(csv.DictReader(open(tmp_path / "results.csv")))
    assert list(df.columns) == list(rows[0].keys())
    key = lambda r: (r["mode"], r["cache"], int(r["threads"]), int(r["capacity"]))  # noqa: E731
    assert sorted(key(r) for _, r in df.iterrows()) == sorted(key(r) for r in rows)
    # Hit ratios are ratios (the harness's null cache reports none); throughputs are measured,
    # positive and finite. No speed comparison here: this machine is shared, a timed test flakes.
    assert (df["hit_ratio"].between(0, 1) | (df["cache"] == "null")).all()
    assert (df["mops_median"] > 0).all() and df["mops_median"].map(math.isfinite).all()


def test_bench_hit_only_hits_and_bad_options_are_the_clis_errors():
    df = sifter.bench("mobius", threads=1, hit_only=True, **BENCH)
    assert df["hit_ratio"].iloc[0] > 0.99
    for kwargs, cli_args, needle in [
        (dict(caches="nope"), ["-c", "nope"], "--caches"),
        (dict(caches="mobius", threads=0), ["-c", "mobius", "-t", "0"], "--threads"),
        (dict(caches="mobius", sample_every=3), ["-c", "mobius", "--sample-every", "3"], "--sample-every"),
        (dict(caches="mobius", warmup_passes=-1), ["-c", "mobius", "--warmup-passes=-1"], "--warmup-passes"),
        (dict(caches="mobius", warmup_passes=1), ["-c", "mobius", "--warmup-passes", "1"], "[0, 1)"),
        (dict(caches="mobius", size=0), ["-c", "mobius", "-s", "0"], "--size"),
    ]:
        with pytest.raises(ValueError) as e:
            sifter.bench(**{**BENCH, **kwargs})
        err = cli("bench", *cli_args, "-q", "--no-plots", check=False).stderr
        assert needle in str(e.value) and str(e.value).splitlines()[0] in err, (str(e.value), err)


def test_bench_refuses_a_size_beyond_the_machines_memory():
    # Two billion u64 entries need some 100 GB of heap: refused before anything is built, with
    # the CLI's message (a machine with 80 GB or more available might hold it: skipped there).
    meminfo = open("/proc/meminfo").read() if os.path.exists("/proc/meminfo") else ""
    avail = [int(l.split()[1]) * 1024 for l in meminfo.splitlines() if l.startswith("MemAvailable:")]
    if not avail or avail[0] >= 80e9:
        pytest.skip("available memory unknown or 80 GB or more")
    with pytest.raises(ValueError) as e:
        sifter.bench(**{**BENCH, "caches": "mobius", "threads": 1, "size": "2000M"})
    err = cli("bench", "-c", "mobius", "-t", "1", "-s", "2000M", "-q", "--no-plots", check=False).stderr
    assert "mobius with 2000000000 entries needs about" in str(e.value), str(e.value)
    assert "give a smaller size" in str(e.value) and str(e.value).splitlines()[0] in err, (str(e.value), err)


def test_bench_sizes_are_fractions_or_entries():
    df = sifter.bench("null", threads=1, size=[0.1, 150, "1k"], **BENCH)
    assert list(df["capacity"])[1:] == [150, 1000], df
    assert df["capacity"].iloc[0] == round(df["size"].iloc[0] * df["capacity"].iloc[1] / df["size"].iloc[1])


def test_closed_loop_rows_and_warnings():
    cols = cli("bench", "closed-loop", "-p", "fifo", "--mpl", "1", "--keys", "2000", "--secs", "0.05",
               "--sizes", "0.5", "--backend-latency", "1us", "--csv", "-").stdout
    header = [l for l in cols.splitlines() if l.startswith("policy,mpl")][0].split(",")
    df = sifter.closed_loop("fifo,mobius", mpl=[1, 2], backend_latency="1us", sizes=[0.1, 0.5], keys=2000, secs=0.05, progress=False)
    assert list(df.columns) == header
    assert len(df) == 2 * 2 * 2
    assert df["hit_ratio"].between(0, 1).all() and (df["measured_mops"] > 0).all() and (df["model_mops"] > 0).all()
    # A target beyond what every key gives is skipped with a warning, as the CLI does. (In
    # steady state a cache of every key hits always, unless keys first show up late: a million
    # keys leave many to the second half of the sizing stream.)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        df = sifter.closed_loop("lru", mpl=1, backend_latency="1us", hit_ratios=[0.5, 0.99999], keys=1_000_000, secs=0.05, progress=False)
    assert len(df) == 1 and df["target_hit"].iloc[0] == 0.5
    assert any("out of reach" in str(x.message) for x in w)
    with pytest.raises(ValueError, match="not both"):
        sifter.closed_loop("lru", sizes=[0.1], hit_ratios=[0.5], progress=False)
    with pytest.raises(ValueError, match="--mpl between 1 and 1024"):
        sifter.closed_loop("lru", mpl=0, progress=False)
    with pytest.raises(ValueError, match="unknown"):
        sifter.closed_loop("nope", progress=False)
    # Event loops instead of threads: the wait is the latency itself.
    df = sifter.closed_loop("lru", mpl=8, backend_latency="50us", sizes=[0.2], keys=2000, secs=0.05, workers="loops", progress=False)
    assert len(df) == 1 and 50 <= df["wait_us"].iloc[0] < 50.5
    with pytest.raises(ValueError, match="expected threads or loops"):
        sifter.closed_loop("lru", workers="fibers", progress=False)


def test_lab_quick_writes_the_report(tmp_path):
    r = sifter.lab(tmp_path / "lab", quick=True, progress=False)
    assert "Findings of this run" in r["findings"]
    for f in r["files"]:
        assert Path(f).exists(), f
    page = (tmp_path / "lab" / "index.html").read_text()
    assert page.index("Findings of this run") < page.index("Throughput of the concurrent caches")
    assert (tmp_path / "lab" / "bench" / "results.csv").exists()

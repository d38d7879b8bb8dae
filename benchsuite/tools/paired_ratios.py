#!/usr/bin/env python3
"""Paired per-repetition throughput ratios from a `sifter bench` results.json.

`sifter bench -r N` round-robins the thread counts and the caches inside each repetition, so
repetition i of two caches (or of one cache at two thread counts) ran close together in time;
their ratio cancels the host's drift better than a ratio of medians. Prints the median and
min–max of those ratios (with `--geomean`: their geometric mean and an interval of two
standard errors of the mean log ratio, which resolves a few percent from many repetitions):

* `NUM/DEN` (two caches): for every (size, threads);
* `NUM@T/DEN@U` (a cache at T threads over one at U threads, e.g. `mobius@16/mobius@2`): for
  every size;
* `NUM:C/DEN:D` (a cache at capacity C entries over one at capacity D, e.g.
  `mobius:11500/quick_cache:10000`, the two sizes of one `-s` list): for every thread count. Results written before the thread counts took turns (sifter before 2026-11-28)
  ran them one after the other: their ratios across thread counts are not paired.

Several results files (one per process, say alternated rounds of two builds): each file gives
one value per point, the geometric mean of its repetitions' ratios, and the summary is over
files. Repetitions of one process share its hash seed and memory layout, so their spread
understates the variation between processes, and an interval over one file's repetitions is
too narrow; the interval over files is the one to quote.

`--host fast` (or `slow`) keeps only the repetitions whose multi-thread runs found the host's
cache-line transfer time within (or beyond) twice the smallest of all the files' figures
(`transfer_ns_runs`, recorded by sifter bench since stop 87; a one-thread run has none and
never excludes its repetition). On a VM whose vCPUs sometimes move a line 4× slower, every
cache with shared writes runs ~3× slower at two threads then (docs/BENCHMARKS.md, "The host's
two-thread modes are its cache-line transfer time"): this compares caches within one state.

`--medians`: each file's value is the ratio of the two sides' medians over its repetitions
instead of the geometric mean of its paired ratios (the summary of stops 105 and 106's
layout runs; with one file per process, both read alike within a fraction of a percent).

`--layouts OUT BUILD...`: the files are the processes `benchsuite/tools/layout_rounds.sh`
wrote into OUT (`OUT/BUILD-L*-r*/results.json`, one per round and code layout of each
build), summarised per build: the A/B of builds over several code layouts (README, "sifter
bench"). BUILD names are the arguments without a `/`.

  paired_ratios.py [--geomean] [--medians] [--host fast|slow] results.json [more.json ...] mobius/quick_cache s3fifo/mobius mobius@16/mobius@2 mobius:11500/quick_cache:10000
  paired_ratios.py --geomean --medians --layouts out head nopf mobius/quick_cache mobius@2/mobius@1
"""
import glob
import json
import math
import statistics
import sys


def side(spec):
    """`cache`, `cache@threads` or `cache:capacity` -> (cache, threads or None, capacity or None)."""
    if ":" in spec:
        c, n = spec.rsplit(":", 1)
        if not n.isdigit():
            sys.exit(f"{spec!r}: the capacity after : is not a number of entries")
        return c, None, int(n)
    if "@" in spec:
        c, t = spec.rsplit("@", 1)
        if not t.isdigit():
            sys.exit(f"{spec!r}: the thread count after @ is not a number")
        return c, int(t), None
    return spec, None, None


GEOMEAN = False
# `--medians`: a file's value is the ratio of its medians, not the mean of its paired ratios.
MEDIANS = False
# `--host`: None, or ("fast" | "slow", the threshold in ns).
HOST = None


def summary(rs):
    """Median [min–max] of ratios `rs`, or with `--geomean` their geometric mean [2 s.e.]."""
    if GEOMEAN and len(rs) > 1:
        logs = [math.log(r) for r in rs]
        m, se = statistics.mean(logs), statistics.stdev(logs) / math.sqrt(len(logs))
        return f"{math.exp(m):.3f} [{math.exp(m - 2 * se):.3f}, {math.exp(m + 2 * se):.3f}]".ljust(28)
    return f"{statistics.median(rs):.3f} [{min(rs):.2f}–{max(rs):.2f}]".ljust(28)


def kept(a, b):
    """The repetitions of a pair of (throughputs, transfer times) rows that `--host` keeps, as
    (numerator, denominator) throughput lists."""
    (ma, ta), (mb, tb) = a, b
    idx = range(min(len(ma), len(mb)))
    if HOST is not None:
        state, limit = HOST
        def figures(i):
            return [t[i] for t in (ta, tb) if t is not None and i < len(t) and t[i] is not None]
        # A repetition with no figure (one thread on both sides) is kept in either state.
        idx = [i for i in idx if not figures(i) or any(x > limit for x in figures(i)) == (state == "slow")]
    return [ma[i] for i in idx], [mb[i] for i in idx]


def cell(runs):
    """`runs`: per results file, the (numerator, denominator) rows of its repetitions, each
    (throughputs, transfer times or None), or None where the file lacks the point."""
    runs = [kept(a, b) for a, b in runs if a and b]
    runs = [(a, b) for a, b in runs if a and b]
    if not runs:
        return "-".ljust(28)
    if len(runs) == 1:
        a, b = runs[0]
        return summary([x / y for x, y in zip(a, b)])
    if MEDIANS:
        return summary([statistics.median(a) / statistics.median(b) for a, b in runs])
    # One value per file: the geometric mean of its paired ratios.
    return summary(
        [math.exp(statistics.mean(math.log(x / y) for x, y in zip(a, b))) for a, b in runs]
    )


def main():
    global GEOMEAN, MEDIANS, HOST
    args = sys.argv[1:]
    state = layouts = None
    while args and args[0] in ("--geomean", "--medians", "--host", "--layouts"):
        if args[0] == "--geomean":
            GEOMEAN, args = True, args[1:]
        elif args[0] == "--medians":
            MEDIANS, args = True, args[1:]
        elif args[0] == "--layouts":
            if len(args) < 2:
                sys.exit("--layouts takes the output directory of layout_rounds.sh")
            layouts, args = args[1], args[2:]
        else:
            if len(args) < 2 or args[1] not in ("fast", "slow"):
                sys.exit("--host takes fast or slow")
            state, args = args[1], args[2:]
    files = [a for a in args if a.endswith(".json")]
    specs = [a for a in args if not a.endswith(".json") and "/" in a]
    builds = [a for a in args if not a.endswith(".json") and "/" not in a]
    if layouts is None and builds:
        sys.exit(f"{builds[0]!r}: not a results file or a NUM/DEN pair (build names go with --layouts)")
    if layouts is not None:
        if files or not builds:
            sys.exit("--layouts OUT takes build names, not results files")
        groups = []
        for b in builds:
            found = sorted(glob.glob(f"{layouts}/{b}-L*-r*/results.json"))
            if not found:
                sys.exit(f"no processes of build {b!r} in {layouts} ({b}-L*-r*/results.json)")
            groups.append((b, found))
    else:
        groups = [(None, files)]
    if not specs or not groups[0][1]:
        sys.exit(__doc__)
    pairs = []
    for p in specs:
        if p.count("/") != 1:
            sys.exit(f"{p!r}: a pair is NUM/DEN")
        n, m = (side(x) for x in p.split("/"))
        if (n[1] is None) != (m[1] is None):
            sys.exit(f"{p!r}: give a thread count on both sides (NUM@T/DEN@U) or on neither")
        if (n[2] is None) != (m[2] is None):
            sys.exit(f"{p!r}: give a capacity on both sides (NUM:C/DEN:D) or on neither")
        pairs.append((p, n, m))
    bys_all = [[load(f) for f in fs] for _, fs in groups]
    if state is not None:
        figures = [t for bys in bys_all for by in bys for _, ts in by.values() for t in (ts or []) if t is not None]
        if not figures:
            sys.exit("--host: no transfer_ns_runs in these files (sifter bench before stop 87, or no multi-thread run)")
        # The factor is sifter's own (`SLOW_TRANSFER` in crates/sifter-lab/src/report.rs): the
        # runs `sifter bench` and `sifter lab` call slow are the ones dropped here.
        HOST = (state, 2 * min(figures))
        print(f"host {state}: repetitions whose transfer times are {'within' if state == 'fast' else 'beyond'} {HOST[1]:.1f} ns")
    for i, ((b, fs), bys) in enumerate(zip(groups, bys_all)):
        if b is not None:
            print(("\n" if i else "") + f"build {b}: {len(fs)} processes")
        table(bys, pairs)


def load(f):
    """{(size, threads, cache): (throughputs, transfer times or None)} of one results file; the
    size is the capacity in entries where the file records it (sifter bench since stop 64),
    else the size as given on the command line."""
    d = json.load(open(f))
    reports = d["report"] if isinstance(d["report"], list) else [d["report"]]
    return {
        (r.get("capacity", r["size"]), r["threads"], r["cache"]): (r["mops_runs"], r.get("transfer_ns_runs"))
        for rep in reports for r in rep["rows"]
    }


def table(bys, pairs):
    """Print the ratios of `pairs` over the files `bys`: a block per kind of pair, a row per
    point (size and threads, size, or threads)."""
    keys = {k for by in bys for k in by}
    blocks = [
        # (pairs of the kind, header, points, row label, the two sides' keys at a point)
        (
            [x for x in pairs if x[1][1] is None and x[1][2] is None],
            "size    thr  ",
            sorted({(s, t) for (s, t, _) in keys}),
            lambda pt: f"{pt[0]:<7} {pt[1]:<4} ",
            lambda pt, n, m: ((pt[0], pt[1], n[0]), (pt[0], pt[1], m[0])),
        ),
        (
            [x for x in pairs if x[1][1] is not None],
            "size    ",
            sorted({s for (s, _, _) in keys}),
            lambda pt: f"{pt:<7} ",
            lambda pt, n, m: ((pt, n[1], n[0]), (pt, m[1], m[0])),
        ),
        (
            [x for x in pairs if x[1][2] is not None],
            "thr  ",
            sorted({t for (_, t, _) in keys}),
            lambda pt: f"{pt:<4} ",
            lambda pt, n, m: ((n[2], pt, n[0]), (m[2], pt, m[0])),
        ),
    ]
    first = True
    for kind, header, points, label, at in blocks:
        if not kind:
            continue
        if not first:
            print()
        first = False
        print(header + "  ".join(p.replace("/", "÷").ljust(28) for p, _, _ in kind))
        for pt in points:
            cells = []
            for _, n, m in kind:
                a, b = at(pt, n, m)
                cells.append(cell([(by.get(a), by.get(b)) for by in bys]))
            print(label(pt) + "  ".join(cells))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Paired per-repetition throughput ratios from a `sifter bench` results.json.

`sifter bench -r N` round-robins the thread counts and the caches inside each repetition, so
repetition i of two caches (or of one cache at two thread counts) ran close together in time;
their ratio cancels the host's drift better than a ratio of medians. Prints the median and
min–max of those ratios (with `--geomean`: their geometric mean and an interval of two
standard errors of the mean log ratio, which resolves a few percent from many repetitions):

* `NUM/DEN` (two caches): for every (size, threads);
* `NUM@T/DEN@U` (a cache at T threads over one at U threads, e.g. `mobius@16/mobius@2`): for
  every size. Results written before the thread counts took turns (sifter before 2026-11-28)
  ran them one after the other: their ratios across thread counts are not paired.

Several results files (one per process, say alternated rounds of two builds): each file gives
one value per point, the geometric mean of its repetitions' ratios, and the summary is over
files. Repetitions of one process share its hash seed and memory layout, so their spread
understates the variation between processes, and an interval over one file's repetitions is
too narrow; the interval over files is the one to quote.

  paired_ratios.py [--geomean] results.json [more.json ...] mobius/quick_cache s3fifo/mobius mobius@16/mobius@2
"""
import json
import math
import statistics
import sys


def side(spec):
    """`cache` or `cache@threads` -> (cache, threads or None)."""
    if "@" in spec:
        c, t = spec.rsplit("@", 1)
        if not t.isdigit():
            sys.exit(f"{spec!r}: the thread count after @ is not a number")
        return c, int(t)
    return spec, None


GEOMEAN = False


def summary(rs):
    """Median [min–max] of ratios `rs`, or with `--geomean` their geometric mean [2 s.e.]."""
    if GEOMEAN and len(rs) > 1:
        logs = [math.log(r) for r in rs]
        m, se = statistics.mean(logs), statistics.stdev(logs) / math.sqrt(len(logs))
        return f"{math.exp(m):.3f} [{math.exp(m - 2 * se):.3f}, {math.exp(m + 2 * se):.3f}]".ljust(28)
    return f"{statistics.median(rs):.3f} [{min(rs):.2f}–{max(rs):.2f}]".ljust(28)


def cell(runs):
    """`runs`: per results file, the (numerator, denominator) throughputs of its repetitions
    (None where the file lacks the point)."""
    runs = [(a, b) for a, b in runs if a and b]
    if not runs:
        return "-".ljust(28)
    if len(runs) == 1:
        a, b = runs[0]
        return summary([x / y for x, y in zip(a, b)])
    # One value per file: the geometric mean of its paired ratios.
    return summary(
        [math.exp(statistics.mean(math.log(x / y) for x, y in zip(a, b))) for a, b in runs]
    )


def main():
    global GEOMEAN
    args = sys.argv[1:]
    if args and args[0] == "--geomean":
        GEOMEAN, args = True, args[1:]
    files = [a for a in args if a.endswith(".json")]
    specs = [a for a in args if not a.endswith(".json")]
    if not files or not specs:
        sys.exit(__doc__)
    bys = []
    for f in files:
        d = json.load(open(f))
        reports = d["report"] if isinstance(d["report"], list) else [d["report"]]
        bys.append({(r["size"], r["threads"], r["cache"]): r["mops_runs"] for rep in reports for r in rep["rows"]})
    pairs = []
    for p in specs:
        if p.count("/") != 1:
            sys.exit(f"{p!r}: a pair is NUM/DEN")
        n, m = (side(x) for x in p.split("/"))
        if (n[1] is None) != (m[1] is None):
            sys.exit(f"{p!r}: give a thread count on both sides (NUM@T/DEN@U) or on neither")
        pairs.append((p, n, m))
    caches = [x for x in pairs if x[1][1] is None]
    threads = [x for x in pairs if x[1][1] is not None]
    if caches:
        points = sorted({(s, t) for by in bys for (s, t, _) in by})
        print("size  thr  " + "  ".join(p.replace("/", "÷").ljust(28) for p, _, _ in caches))
        for s, t in points:
            cells = [
                cell([(by.get((s, t, n)), by.get((s, t, m))) for by in bys])
                for _, (n, _), (m, _) in caches
            ]
            print(f"{s:<5} {t:<4} " + "  ".join(cells))
    if threads:
        if caches:
            print()
        sizes = sorted({s for by in bys for (s, _, _) in by})
        print("size  " + "  ".join(p.replace("/", "÷").ljust(28) for p, _, _ in threads))
        for s in sizes:
            cells = [
                cell([(by.get((s, tn, n)), by.get((s, tm, m))) for by in bys])
                for _, (n, tn), (m, tm) in threads
            ]
            print(f"{s:<5} " + "  ".join(cells))


if __name__ == "__main__":
    main()

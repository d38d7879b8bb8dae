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

  paired_ratios.py [--geomean] results.json mobius/quick_cache s3fifo/mobius mobius@16/mobius@2
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


def cell(a, b):
    if not a or not b:
        return "-".ljust(28)
    rs = [x / y for x, y in zip(a, b)]
    if GEOMEAN and len(rs) > 1:
        logs = [math.log(r) for r in rs]
        m, se = statistics.mean(logs), statistics.stdev(logs) / math.sqrt(len(logs))
        return f"{math.exp(m):.3f} [{math.exp(m - 2 * se):.3f}, {math.exp(m + 2 * se):.3f}]".ljust(28)
    return f"{statistics.median(rs):.3f} [{min(rs):.2f}–{max(rs):.2f}]".ljust(28)


def main():
    global GEOMEAN
    args = sys.argv[1:]
    if args and args[0] == "--geomean":
        GEOMEAN, args = True, args[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    d = json.load(open(args[0]))
    reports = d["report"] if isinstance(d["report"], list) else [d["report"]]
    rows = [r for rep in reports for r in rep["rows"]]
    by = {}
    for r in rows:
        by[(r["size"], r["threads"], r["cache"])] = r["mops_runs"]
    pairs = []
    for p in args[1:]:
        if p.count("/") != 1:
            sys.exit(f"{p!r}: a pair is NUM/DEN")
        n, m = (side(x) for x in p.split("/"))
        if (n[1] is None) != (m[1] is None):
            sys.exit(f"{p!r}: give a thread count on both sides (NUM@T/DEN@U) or on neither")
        pairs.append((p, n, m))
    caches = [x for x in pairs if x[1][1] is None]
    threads = [x for x in pairs if x[1][1] is not None]
    if caches:
        points = sorted({(s, t) for (s, t, _) in by})
        print("size  thr  " + "  ".join(p.replace("/", "÷").ljust(28) for p, _, _ in caches))
        for s, t in points:
            cells = [cell(by.get((s, t, n)), by.get((s, t, m))) for _, (n, _), (m, _) in caches]
            print(f"{s:<5} {t:<4} " + "  ".join(cells))
    if threads:
        if caches:
            print()
        sizes = sorted({s for (s, _, _) in by})
        print("size  " + "  ".join(p.replace("/", "÷").ljust(28) for p, _, _ in threads))
        for s in sizes:
            cells = [cell(by.get((s, tn, n)), by.get((s, tm, m))) for _, (n, tn), (m, tm) in threads]
            print(f"{s:<5} " + "  ".join(cells))


if __name__ == "__main__":
    main()

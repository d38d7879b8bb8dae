#!/usr/bin/env python3
"""Paired per-repetition throughput ratios from a `sifter bench` results.json.

`sifter bench -r N` round-robins the caches inside each repetition, so repetition i of two
caches ran side by side; their ratio cancels the host's drift better than a ratio of medians.
Prints, for every (size, threads) and pair NUM/DEN, the median and min–max of those ratios.

  paired_ratios.py results.json mobius/quick_cache s3fifo/mobius nbq-clock/mobius
"""
import json
import statistics
import sys


def main():
    d = json.load(open(sys.argv[1]))
    reports = d["report"] if isinstance(d["report"], list) else [d["report"]]
    rows = [r for rep in reports for r in rep["rows"]]
    by = {}
    for r in rows:
        by[(r["size"], r["threads"], r["cache"])] = r["mops_runs"]
    points = sorted({(s, t) for (s, t, _) in by})
    pairs = [p.split("/") for p in sys.argv[2:]]
    print("size  thr  " + "  ".join(f"{n}÷{m}".ljust(28) for n, m in pairs))
    for s, t in points:
        cells = []
        for n, m in pairs:
            a, b = by.get((s, t, n)), by.get((s, t, m))
            if not a or not b:
                cells.append("-".ljust(28))
                continue
            rs = [x / y for x, y in zip(a, b)]
            cells.append(f"{statistics.median(rs):.3f} [{min(rs):.2f}–{max(rs):.2f}]".ljust(28))
        print(f"{s:<5} {t:<4} " + "  ".join(cells))


if __name__ == "__main__":
    main()

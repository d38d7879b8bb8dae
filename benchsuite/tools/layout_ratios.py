#!/usr/bin/env python3
"""Throughput ratios per build from `layout_rounds.sh`'s processes.

For each build, each process (one round of one code layout) gives the ratio of two caches'
median throughputs at each size and thread count (`NUM DEN`), or of one cache at two thread
counts (`mobius@2 mobius@1`); prints the geometric mean over the build's processes with an
interval of two standard errors of the mean log ratio (over processes, whose layouts and
hash seeds differ: the variation that matters between builds).

  layout_ratios.py OUT NUM DEN BUILD...    e.g. layout_ratios.py out mobius quick_cache head nopf
"""
import csv
import glob
import math
import sys


def side(spec):
    """`cache` or `cache@threads` -> (cache, threads or None)."""
    cache, _, t = spec.partition("@")
    return cache, t or None


def load(d):
    with open(f"{d}/results.csv") as f:
        return {(r["capacity"], r["threads"], r["cache"]): float(r["mops_median"])
                for r in csv.DictReader(f)}


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    out, num, den, builds = argv[1], side(argv[2]), side(argv[3]), argv[4:]
    if (num[1] is None) != (den[1] is None):
        sys.exit("give thread counts on both sides (mobius@2 mobius@1) or on neither")
    for b in builds:
        dirs = sorted(glob.glob(f"{out}/{b}-L*-r*"))
        if not dirs:
            sys.exit(f"no processes of build {b!r} in {out}")
        runs = [load(d) for d in dirs]
        caps = sorted({k[0] for k in runs[0]}, key=int)
        threads = [num[1]] if num[1] else sorted({k[1] for k in runs[0]}, key=int)
        for cap in caps:
            for t in threads:
                tn, td = (num[1], den[1]) if num[1] else (t, t)
                try:
                    logs = [math.log(r[(cap, tn, num[0])] / r[(cap, td, den[0])]) for r in runs]
                except KeyError as e:
                    sys.exit(f"{b}: no {e} in a process's results.csv")
                n = len(logs)
                m = sum(logs) / n
                se = (sum((x - m) ** 2 for x in logs) / (n - 1) / n) ** 0.5 if n > 1 else 0.0
                label = f"{argv[2]}/{argv[3]}" if num[1] else f"{t}T {argv[2]}/{argv[3]}"
                print(f"{cap:>7} {label:28} {b:10} {math.exp(m):.3f} "
                      f"[{math.exp(m - 2 * se):.3f}, {math.exp(m + 2 * se):.3f}] n={n}")


if __name__ == "__main__":
    main(sys.argv)

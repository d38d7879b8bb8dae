#!/usr/bin/env python3
"""Ratios per round from run.sh's CSVs: Mobius ÷ quick_cache, S3-FIFO and NbQ-CLOCK ÷ Mobius,
and the hit ratios, for the new warm-up (pass1) and the old (pass0)."""
import csv, glob, statistics

def load(f):
    rows = {}
    for r in csv.DictReader(open(f)):
        rows[(r["cache"], float(r["size"]), int(r["threads"]))] = (float(r["mops_median"]), float(r["hit_ratio"]))
    return rows

for w in ("pass1", "pass0"):
    files = sorted(glob.glob(f"{w}-r*.csv"))
    runs = [load(f) for f in files]
    print(f"## {w} ({'one pass of warm-up, the new default' if w == 'pass1' else 'until 98 % full, the old warm-up'}): {len(runs)} rounds")
    for num, den in (("mobius", "quick_cache"), ("s3fifo", "mobius"), ("nbq-clock", "mobius")):
        for size in (0.01, 0.1):
            for t in (1, 2):
                rs = [r[(num, size, t)][0] / r[(den, size, t)][0] for r in runs]
                hn = statistics.mean(r[(num, size, t)][1] for r in runs)
                hd = statistics.mean(r[(den, size, t)][1] for r in runs)
                print(f"{num:>9} / {den:<11} {size:>4} {t} thr: " + " ".join(f"{x:.2f}" for x in rs)
                      + f"  (mean {statistics.mean(rs):.3f}; hit ratio {hn:.4f} vs {hd:.4f})")
    print()

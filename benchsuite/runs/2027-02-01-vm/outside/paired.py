#!/usr/bin/env python3
"""S3-FIFO and NbQ-CLOCK ÷ Mobius paired per repetition from the outside harness's CSV
(geometric mean over repetitions, ±2 s.e.). Usage: python3 paired.py u64.csv"""
import csv, math, sys

d = {}
for r in csv.reader(open(sys.argv[1])):
    if r[0] == "values":
        continue
    d[(int(r[1]), int(r[2]), int(r[3]), r[4])] = float(r[5])
reps = sorted({k[2] for k in d})
for t in sorted({k[0] for k in d}):
    for n in sorted({k[1] for k in d}):
        for c in ("s3fifo", "nbq-clock"):
            xs = [math.log(d[(t, n, k, c)] / d[(t, n, k, "mobius")]) for k in reps]
            m = sum(xs) / len(xs)
            se = (sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs)) ** 0.5
            print(f"{n} entries, {t} thread(s): {c} ÷ mobius {math.exp(m):.3f} "
                  f"[{math.exp(m - 2 * se):.3f}, {math.exp(m + 2 * se):.3f}]")

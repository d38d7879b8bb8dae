#!/usr/bin/env python3
"""Stats + TTL (main's mobius-ttl) against neither (the nostats build's mobius), per round:
the two binaries ran back to back in each round, so host drift mostly cancels."""
import csv, os, statistics as st, sys
here = os.path.dirname(os.path.abspath(__file__))
base = os.path.join(here, "ns")
def load(d):
    return {(r["size"], r["threads"], r["cache"]): float(r["mops_median"])
            for r in csv.DictReader(open(os.path.join(d, "results.csv")))}
rounds = sorted({int(n.split("-")[1]) for n in os.listdir(base)})
out = {}
for i in rounds:
    a, b = load(f"{base}/main-{i}"), load(f"{base}/nostats-{i}")
    for (size, thr, cache), x in a.items():
        if cache == "mobius-ttl":
            out.setdefault((size, thr), []).append(x / b[(size, thr, "mobius")])
print("size  thr  stats+TTL (main) / neither (nostats), per round  median")
for (size, thr), v in sorted(out.items()):
    print(f"{size:5} {thr:>3}  {' '.join(f'{x:.2f}' for x in v)}  {st.median(v):.3f}")

"""Mobius ÷ quick_cache at 10k, new build's process over the old one's before it, per thread
count: geometric mean over the pairs, ±2 standard errors. Usage: ratio10k.py PREFIX N"""
import csv, math, sys
def load(d):
    return {(r["capacity"], r["threads"], r["cache"]): float(r["mops_median"]) for r in csv.DictReader(open(f"{d}/results.csv"))}
pre, n = sys.argv[1], int(sys.argv[2])
for t in ["1", "2"]:
    logs = []
    for i in range(1, n + 1):
        o, w = load(f"{pre}old{i}"), load(f"{pre}new{i}")
        r = lambda d: d[("10000", t, "mobius")] / d[("10000", t, "quick_cache")]
        logs.append(math.log(r(w) / r(o)))
    m = sum(logs) / len(logs)
    se = (sum((x - m) ** 2 for x in logs) / (len(logs) - 1) / len(logs)) ** 0.5
    print(f"{t}T new/old {math.exp(m):.3f} [{math.exp(m-2*se):.3f},{math.exp(m+2*se):.3f}] n={n}")

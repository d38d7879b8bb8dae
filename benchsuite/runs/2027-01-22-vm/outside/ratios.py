"""Paired ratios from the outside harness's CSV: a/b within each repetition, and a cache's
thread counts against each other; geometric mean with ±2 s.e. over repetitions.
Usage: python3 ratios.py FILE.csv"""
import csv, math, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
m = {(r['entries'], r['threads'], r['rep'], r['cache']): float(r['mops']) for r in rows}
def gm(xs):
    ls = [math.log(x) for x in xs]
    mu = sum(ls) / len(ls)
    se = (sum((l - mu) ** 2 for l in ls) / (len(ls) - 1) / len(ls)) ** 0.5 if len(ls) > 1 else 0
    return f"{math.exp(mu):.3f} [{math.exp(mu - 2 * se):.3f}, {math.exp(mu + 2 * se):.3f}]"
entries = sorted({k[0] for k in m}, key=int)
threads = sorted({k[1] for k in m}, key=int)
reps = sorted({k[2] for k in m}, key=int)
caches = sorted({k[3] for k in m})
print("| entries | ratio | geomean [±2 s.e.] |\n|---|---|---|")
for e in entries:
    for a in caches:
        for t in threads[1:]:
            xs = [m[(e, t, r, a)] / m[(e, threads[0], r, a)] for r in reps if (e, t, r, a) in m and (e, threads[0], r, a) in m]
            if xs:
                print(f"| {e} | {a} {t} thr ÷ {threads[0]} thr | {gm(xs)} |")
    for t in threads:
        for a in caches:
            if a == 'mobius':
                continue
            xs = [m[(e, t, r, a)] / m[(e, t, r, 'mobius')] for r in reps if (e, t, r, a) in m and (e, t, r, 'mobius') in m]
            if xs:
                print(f"| {e} | {a} ÷ mobius, {t} thr | {gm(xs)} |")

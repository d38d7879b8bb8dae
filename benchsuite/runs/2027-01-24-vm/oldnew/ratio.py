"""(cache ÷ quick_cache in the new build's process) ÷ (the same in the old build's process just
before it), per (size, threads), geometric mean over the pairs and ±2 standard errors."""
import csv, math, sys, glob
def load(d):
    out = {}
    for r in csv.DictReader(open(f"{d}/results.csv")):
        out[(r["capacity"], r["threads"], r["cache"])] = float(r["mops_median"])
    return out
pairs = sorted({int(p[3:]) for p in glob.glob("new*")})
for cache in ["mobius", "s3fifo"]:
    for cap in ["10000", "100000"]:
        for t in ["1", "2"]:
            logs = []
            for i in pairs:
                o, n = load(f"old{i}"), load(f"new{i}")
                a = n[(cap, t, cache)] / n[(cap, t, "quick_cache")]
                b = o[(cap, t, cache)] / o[(cap, t, "quick_cache")]
                logs.append(math.log(a / b))
            m = sum(logs) / len(logs)
            se = (sum((x - m) ** 2 for x in logs) / (len(logs) - 1) / len(logs)) ** 0.5
            print(f"{cache:7} {cap:>6} {t}T new/old {math.exp(m):.3f} [{math.exp(m-2*se):.3f},{math.exp(m+2*se):.3f}] n={len(logs)}")

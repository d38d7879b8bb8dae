"""Medians over rounds of each cache's median Mops/s, and per-round paired ratios to quick_cache
(geometric mean over rounds). Usage: python3 table.py DIR (holding roundR-VARIANT/results.csv)."""
import csv, glob, math, statistics, sys, collections
d = sys.argv[1]
runs = collections.defaultdict(dict)  # (variant, round) -> {(cap, thr, cache): (mops, hit)}
for f in glob.glob(f"{d}/round*-*/results.csv"):
    name = f.split("/")[-2]
    r, v = name[len("round"):].split("-", 1)
    for row in csv.DictReader(open(f)):
        runs[(v, int(r))][(int(row["capacity"]), int(row["threads"]), row["cache"])] = (
            float(row["mops_median"]), float(row["hit_ratio"]))
variants = sorted({v for v, _ in runs}, key=lambda v: v != "main")
keys = sorted({k for m in runs.values() for k in m})
print("| entries | threads | cache | " + " | ".join(f"{v}: Mops/s (÷ quick_cache), hit ratio" for v in variants) + " |")
print("|---|---|---|" + "---|" * len(variants))
for k in keys:
    if k[2] == "quick_cache":
        continue
    cells = []
    for v in variants:
        ms, rs, hs = [], [], []
        for (vv, r), m in runs.items():
            if vv != v or k not in m:
                continue
            ms.append(m[k][0]); hs.append(m[k][1])
            q = m.get((k[0], k[1], "quick_cache"))
            if q:
                rs.append(math.log(m[k][0] / q[0]))
        g = math.exp(sum(rs) / len(rs)) if rs else float("nan")
        cells.append(f"{statistics.median(ms):.2f} ({g:.2f}×), {statistics.median(hs):.4f}")
    print(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(cells) + " |")
for k in keys:
    if k[2] != "quick_cache":
        continue
    cells = []
    for v in variants:
        ms = [m[k][0] for (vv, r), m in runs.items() if vv == v and k in m]
        hs = [m[k][1] for (vv, r), m in runs.items() if vv == v and k in m]
        cells.append(f"{statistics.median(ms):.2f}, {statistics.median(hs):.4f}")
    print(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(cells) + " |")

"""Old vs new per round: Mops/s (hit ratio) of each cache, and the sifter caches ÷ quick_cache
in the same run, from {old,new}-<workload>-<round>/results.csv. Usage: python3 table.py"""
import csv
import glob
import os

runs = sorted(glob.glob("*-*-[0-9]/results.csv"))
by = {}
for path in runs:
    d = os.path.dirname(path)
    build, rest = d.split("-", 1)
    work, rnd = rest.rsplit("-", 1)
    for r in csv.DictReader(open(path)):
        key = (work, r["size"], int(r["threads"]), r["cache"])
        by.setdefault(key, {}).setdefault(build, []).append(
            (int(rnd), float(r["mops_median"]), float(r["hit_ratio"])))
for work in sorted({k[0] for k in by}):
    print(f"== {work}")
    for key in sorted(k for k in by if k[0] == work):
        _, size, t, cache = key
        cells = []
        for build in ("old", "new"):
            rs = sorted(by[key].get(build, []))
            qc = dict((x[0], x[1]) for x in sorted(by.get((work, size, t, "quick_cache"), {}).get(build, [])))
            txt = " ".join(f"{m:.2f}({h:.3f})/qc {m / qc[rn]:.2f}" for rn, m, h in rs if rn in qc)
            cells.append(f"{build}: {txt}")
        print(f"  size {size} thr {t} {cache:12s} " + " | ".join(cells))

"""Mean time per operation kind (ns) from the bench's sampled time shares: for each round's
median throughput, the time per request (1000 / Mops ns) split by each kind's share of the
sampled time, divided by that kind's count per request. Medians over rounds, per build,
thread count and cache. Usage: python3 per_op.py base res"""
import csv, glob, statistics, sys
for v in sys.argv[1:]:
    acc = {}
    for f in sorted(glob.glob(f"round*-{v}/results.csv")):
        for r in csv.DictReader(open(f)):
            req = 1000.0 / float(r["mops_median"])  # ns per request (all threads: per thread x threads)
            req *= int(r["threads"])
            n = sum(float(r[f"{k}_count"] or 0) for k in ("hit", "miss"))
            row = {}
            for k in ("hit", "miss", "insert", "evict"):
                c, s = r.get(f"{k}_count") or "", r.get(f"{k}_time_share") or ""
                if c and s and float(c) > 0:
                    row[k] = req * float(s) * n / float(c)
                    row[k + "/req"] = req * float(s)
            row["req"] = req
            acc.setdefault((r["threads"], r["cache"]), []).append(row)
    for (t, c), rows in sorted(acc.items()):
        keys = ["req", "hit", "miss", "insert", "evict", "insert/req", "evict/req"]
        out = "  ".join(f"{k}={statistics.median(x[k] for x in rows if k in x):6.1f}"
                        for k in keys if any(k in x for x in rows))
        print(f"{v:5} {t}T {c:12} {out}")

"""Geometric mean [2 s.e.] of the paired Mobius ÷ quick_cache ratios over every repetition of
every round, per build, size and thread count. `python3 summarize.py` for `ab.sh`'s rounds,
`python3 summarize.py z10-` for `ab-z10.sh`'s."""
import glob, json, math, statistics, sys
prefix = sys.argv[1] if len(sys.argv) > 1 else ""
for v in ["cgu4", "inl"]:
    files = sorted(glob.glob(f"{prefix}round*-{v}/results.json"))
    rows0 = json.load(open(files[0]))["report"]["rows"]
    for cap, thr in sorted({(r["capacity"], r["threads"]) for r in rows0}):
        logs = []
        for f in files:
            rows = json.load(open(f))["report"]["rows"]
            by = {r["cache"]: r["mops_runs"] for r in rows
                  if r["threads"] == thr and r["capacity"] == cap}
            logs += [math.log(a / b) for a, b in zip(by["mobius"], by["quick_cache"])]
        m, se = statistics.mean(logs), statistics.stdev(logs) / math.sqrt(len(logs))
        print(f"{v:5} {cap:>7} {thr} thr  n={len(logs)}  {math.exp(m):.3f} "
              f"[{math.exp(m - 2 * se):.3f}, {math.exp(m + 2 * se):.3f}]")

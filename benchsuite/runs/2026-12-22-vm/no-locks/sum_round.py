"""As sum.py, but one value per process (round): the geometric mean of its repetitions' paired
ratios; the interval over rounds (repetitions of one process share its hash seed and layout)."""
import glob, json, math, statistics, sys
for v in sys.argv[1:]:
    files = sorted(glob.glob(f"round*-{v}/results.json"))
    rows0 = json.load(open(files[0]))["report"]["rows"]
    for cap, thr in sorted({(r["capacity"], r["threads"]) for r in rows0}):
        per = []
        for f in files:
            rows = json.load(open(f))["report"]["rows"]
            by = {r["cache"]: r["mops_runs"] for r in rows if r["threads"] == thr and r["capacity"] == cap}
            per.append(statistics.mean(math.log(a / b) for a, b in zip(by["mobius"], by["quick_cache"])))
        m, se = statistics.mean(per), statistics.stdev(per) / math.sqrt(len(per))
        print(f"{v:12} {cap:>7} {thr} thr  rounds={len(per)}  {math.exp(m):.3f} [{math.exp(m - 2 * se):.3f}, {math.exp(m + 2 * se):.3f}]")

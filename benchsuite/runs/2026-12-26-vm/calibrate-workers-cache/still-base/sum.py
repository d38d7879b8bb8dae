import glob, json, math, statistics, sys
for v in sys.argv[1:]:
    files = sorted(glob.glob(f"round*-{v}/results.json"))
    rows0 = json.load(open(files[0]))["report"]["rows"]
    for cap, thr in sorted({(r["capacity"], r["threads"]) for r in rows0}):
        logs = []; mo=[]
        for f in files:
            rows = json.load(open(f))["report"]["rows"]
            by = {r["cache"]: r["mops_runs"] for r in rows if r["threads"] == thr and r["capacity"] == cap}
            logs += [math.log(a / b) for a, b in zip(by["mobius"], by["quick_cache"])]
            mo += by["mobius"]
        m, se = statistics.mean(logs), statistics.stdev(logs) / math.sqrt(len(logs))
        print(f"{v:5} {cap:>7} {thr} thr  n={len(logs)}  {math.exp(m):.3f} [{math.exp(m - 2 * se):.3f}, {math.exp(m + 2 * se):.3f}]  mobius median {statistics.median(mo):.2f}")

"""Per-round Mobius ÷ quick_cache of two variants (alternated processes), and the geometric
mean [2 s.e.] over rounds of variant B's ratio over variant A's, per size and thread count;
with --scaling, Mobius's own 2 ÷ 1 thread instead of Mobius ÷ quick_cache.
usage: rounds.py [--scaling] PREFIX_A PREFIX_B ROUNDS"""
import json, math, sys, statistics as st
args = sys.argv[1:]
scaling = args[0] == '--scaling'
if scaling:
    args = args[1:]
a, b, n = args[0], args[1], int(args[2])
def runs(rows, cache, size, threads):
    return [r for r in rows if r['capacity'] == size and r['cache'] == cache
            and r['threads'] == threads][0]['mops_runs']
def ratios(path):
    rows = json.load(open(path))['report']['rows']
    out = {}
    for size, threads in sorted({(r['capacity'], r['threads']) for r in rows}):
        if scaling:
            if threads == 1:
                continue
            num, den = runs(rows, 'mobius', size, threads), runs(rows, 'mobius', size, 1)
        else:
            num, den = runs(rows, 'mobius', size, threads), runs(rows, 'quick_cache', size, threads)
        out[(size, threads)] = math.exp(st.mean(math.log(x / y) for x, y in zip(num, den)))
    return out
per = [(ratios(f'{a}{i}/results.json'), ratios(f'{b}{i}/results.json')) for i in range(1, n + 1)]
what = 'Mobius 2÷1 thr' if scaling else 'Mobius÷quick_cache'
for key in per[0][0]:
    ra = [p[0][key] for p in per]; rb = [p[1][key] for p in per]
    logs = [math.log(y / x) for x, y in zip(ra, rb)]
    g, se = st.mean(logs), st.stdev(logs) / math.sqrt(len(logs))
    print(f"{key[0]:>7} entries, {key[1]} thr, {what}: {a} {' '.join(f'{x:.3f}' for x in ra)} | "
          f"{b} {' '.join(f'{x:.3f}' for x in rb)} | {b}/{a} {math.exp(g):.3f} "
          f"[{math.exp(g-2*se):.3f}, {math.exp(g+2*se):.3f}]")

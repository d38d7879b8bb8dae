"""Per-round Mobius ÷ quick_cache of two variants (alternated processes), and the geometric
mean [2 s.e.] over rounds of variant B's ratio over variant A's, per size.
usage: rounds.py PREFIX_A PREFIX_B ROUNDS"""
import json, math, sys, statistics as st
a, b, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def ratios(path):
    rows = json.load(open(path))['report']['rows']
    out = {}
    for size in sorted({r['capacity'] for r in rows}):
        m = [r for r in rows if r['capacity'] == size and r['cache'] == 'mobius'][0]['mops_runs']
        q = [r for r in rows if r['capacity'] == size and r['cache'] == 'quick_cache'][0]['mops_runs']
        out[size] = math.exp(st.mean(math.log(x / y) for x, y in zip(m, q)))
    return out
per = [(ratios(f'{a}{i}/results.json'), ratios(f'{b}{i}/results.json')) for i in range(1, n + 1)]
for size in per[0][0]:
    ra = [p[0][size] for p in per]; rb = [p[1][size] for p in per]
    logs = [math.log(y / x) for x, y in zip(ra, rb)]
    g, se = st.mean(logs), st.stdev(logs) / math.sqrt(len(logs))
    print(f"{size:>7} entries: {a} {' '.join(f'{x:.3f}' for x in ra)} | {b} {' '.join(f'{x:.3f}' for x in rb)}"
          f" | {b}/{a} {math.exp(g):.3f} [{math.exp(g-2*se):.3f}, {math.exp(g+2*se):.3f}]")

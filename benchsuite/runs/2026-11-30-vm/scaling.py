import sys, collections, statistics
d = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 7: continue
    d[(f[0], f[5], f[3])].setdefault(f[1], {})[f[4]] = float(f[6])
for key in sorted(d):
    rs = [v['2']/v['1'] for r, v in sorted(d[key].items()) if '1' in v and '2' in v]
    print(key, " ".join(f"{x:.2f}" for x in rs), "median", f"{statistics.median(rs):.2f}")

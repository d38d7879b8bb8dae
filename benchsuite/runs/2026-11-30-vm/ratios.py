import sys, collections, statistics
# lines: "base r1 shared SIZE THR CACHE MOPS ..."
num, den = sys.argv[2], sys.argv[3]
d = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 7: continue
    b, r, size, thr, cache, mops = f[0], f[1], f[3], f[4], f[5], float(f[6])
    d[(b, size, thr)].setdefault(r, {})[cache] = mops
for key in sorted(d):
    rs = [d[key][r][num] / d[key][r][den] for r in sorted(d[key]) if num in d[key][r] and den in d[key][r]]
    print(key, " ".join(f"{x:.3f}" for x in rs), "median", f"{statistics.median(rs):.3f}")

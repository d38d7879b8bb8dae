import csv,collections,statistics as st
sizes=[int(x) for x in "300 400 500 600 700 800 900 1000 1100 1200 1300 1400 1500 1600 1800 2000 2500 3000 4000 5000".split()]
res=collections.defaultdict(dict)
for s in (1,2,3):
    for r in csv.DictReader(open(f'/tmp/simsens-{s}.csv')):
        res[(s,r['spec'])][int(r['capacity'])]=float(r['miss_ratio'])
agg=collections.defaultdict(list)
for (s,spec),m in res.items():
    for c in sizes:
        d=max(abs(m[c-1]-m[c]),abs(m[c+1]-m[c]))
        agg[spec].append((c,d))
for spec,v in sorted(agg.items()):
    small=[d for c,d in v if c<3000]; big=[d for c,d in v if c>=3000]
    n2=sum(1 for d in small if d>0.002)
    print(f"{spec:28} max|sim(C±1)-sim(C)|: <3000 mean {st.mean(small):.5f} max {max(small):.5f} (>0.002 at {n2}/{len(small)})  >=3000 mean {st.mean(big):.5f} max {max(big):.5f}")

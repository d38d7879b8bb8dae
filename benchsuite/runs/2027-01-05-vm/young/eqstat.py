import sys,collections,statistics as st
for f in sys.argv[1:]:
    d=collections.defaultdict(list)
    for l in open(f):
        p=l.split()
        if len(p)<5: continue
        d[p[2]].append((int(p[1]),float(p[-1])))
    for k,v in sorted(d.items()):
        xs=[x for _,x in v]
        small=[x for c,x in v if c<3000]; big=[x for c,x in v if c>=3000]
        print(f"{f.split('/')[-1]:14} {k:28} n={len(xs):3} mean {st.mean(xs):+.5f} rms {st.mean([x*x for x in xs])**.5:.5f} max {max(abs(x) for x in xs):.5f} | <3000 mean {st.mean(small):+.5f} max {max(abs(x) for x in small):.5f} | >=3000 max {max([abs(x) for x in big] or [0]):.5f}")

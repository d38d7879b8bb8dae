import csv,glob,collections
for kind in ["mpl72-100us","mpl2-spin5us"]:
    for b in ["base","new"]:
        errs=collections.defaultdict(list)
        for f in sorted(glob.glob(f"./{kind}-{b}-r*.csv")):
            for r in csv.DictReader(open(f)):
                errs[(r["policy"],r["target_hit"])].append(float(r["error"])*100)
        print(kind,b)
        for k,v in errs.items():
            m=sum(v)/len(v)
            print(f"  {k[0]:12s} {k[1]:6s} " + " ".join(f"{x:+6.1f}" for x in v) + f"  mean {m:+6.1f}" + ("" if abs(m)<=10 else "  MISS"))

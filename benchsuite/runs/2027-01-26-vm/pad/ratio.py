import csv,math,sys,glob
num,den=sys.argv[1],sys.argv[2]; vs=sys.argv[3:]
def load(d): return {(r["capacity"],r["threads"],r["cache"]):float(r["mops_median"]) for r in csv.DictReader(open(f"{d}/results.csv"))}
for cap in ["10000","100000"]:
  for t in "12":
    for v in vs:
      ds=sorted(glob.glob(f"out/{v}-L*-r*"))
      l=[math.log(load(d)[(cap,t,num)]/load(d)[(cap,t,den)]) for d in ds]
      n=len(l); m=sum(l)/n; se=(sum((x-m)**2 for x in l)/(n-1)/n)**.5
      print(f"{cap:>6} {t}T {v:8} {num}/{den} {math.exp(m):.3f} [{math.exp(m-2*se):.3f},{math.exp(m+2*se):.3f}] n={n}")

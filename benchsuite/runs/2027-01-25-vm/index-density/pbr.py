import csv,math,sys
pre=sys.argv[1]; n=int(sys.argv[2]); vs=sys.argv[3].split(","); num,den=sys.argv[4],sys.argv[5]
def load(d):
    return {(r["capacity"],r["threads"],r["cache"]):(float(r["mops_median"]),float(r["hit_ratio"])) for r in csv.DictReader(open(f"{d}/results.csv"))}
caps=sorted({k[0] for k in load(f"{pre}{vs[0]}1")},key=int)
for cap in caps:
  for t in "12":
    for v in vs:
      l=[];h=[]
      for i in range(1,n+1):
        d=load(f"{pre}{v}{i}")
        l.append(math.log(d[(cap,t,num)][0]/d[(cap,t,den)][0])); h.append(d[(cap,t,num)][1])
      m=sum(l)/n; se=(sum((x-m)**2 for x in l)/(n-1)/n)**.5
      print(f"cap {cap} {t}T {v:8} {num}/{den} {math.exp(m):.3f} [{math.exp(m-2*se):.3f},{math.exp(m+2*se):.3f}] hit {sum(h)/n:.4f}")

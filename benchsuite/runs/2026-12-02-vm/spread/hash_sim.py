import random, collections
M=(1<<64)-1
def fold(a,b):
    p=a*b
    return (p&M)^(p>>64)
def overflow(acc,fs,nb,keys):
    cnt=collections.Counter()
    for x in keys:
        h=fold(x^acc,fs)
        cnt[((h&0xffffffff)*nb)>>32]+=1
    return sum(max(0,c-7) for c in cnt.values()), max(cnt.values())
random.seed(1)
nb=4941//4+2
keys=range(2000)
res=[]
for t in range(2000):
    acc=random.getrandbits(64); fs=random.getrandbits(64)
    o,m=overflow(acc,fs,nb,keys)
    res.append((o,m,acc,fs))
res.sort(reverse=True)
print("buckets",nb)
for r in res[:12]: print(r[0],r[1],hex(r[2]),hex(r[3]), hex(r[3]&0xffffffff))
print("median",res[len(res)//2][:2], "frac>0", sum(1 for r in res if r[0]>0)/len(res))
K=0x9E3779B97F4A7C15
def mixA(h): return (((h*K)&M)>>32) | (((h*K)&0xffffffff)<<32)
def mixF(h): return fold(h,K)
def ov(acc,fs,nb,keys,mix):
    cnt=collections.Counter()
    for x in keys:
        h=mix(fold(x^acc,fs))
        cnt[((h&0xffffffff)*nb)>>32]+=1
    return sum(max(0,c-7) for c in cnt.values()), max(cnt.values())
for name,mix in (("A",mixA),("F",mixF)):
    worst=[ov(r[2],r[3],nb,keys,mix) for r in res[:50]]
    print(name, "on 50 worst seeds:", max(worst), sum(w[0] for w in worst))
    rnd=[]
    random.seed(7)
    for t in range(300):
        rnd.append(ov(random.getrandbits(64),random.getrandbits(64),nb,keys,mix))
    print(name, "random 300: max", max(rnd), "frac>0", sum(1 for r in rnd if r[0]>0)/300)
# baseline: truly random
cnt=collections.Counter(random.randrange(nb) for _ in range(2000)); print("ideal max",max(cnt.values()))
def ovid(keys,mix,nb):
    cnt=collections.Counter()
    for x in keys:
        h=mix(x&M)
        cnt[((h&0xffffffff)*nb)>>32]+=1
    tags=collections.Counter((mix(x&M)>>32, (mix(x&M)&0xffffffff)) for x in keys)
    return sum(max(0,c-7) for c in cnt.values()), max(cnt.values()), max(tags.values())
for name,mix in (("none",lambda h:h),("A",mixA),("F",mixF)):
    print(name, [ovid([x*s for x in range(20000)],mix,20000*2//4+2) for s in (1,1<<32,4096,1<<20, 1<<40)])

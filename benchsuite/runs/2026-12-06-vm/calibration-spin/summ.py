import csv,glob,collections,sys
err=collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1]+'/*.csv')):
    b,i=f.split('/')[-1][:-4].split('-')
    for r in csv.DictReader(open(f)):
        err[(r['policy'],r['target_hit'])].setdefault(b,[]).append(float(r['error'])*100)
for k in err:
    print(f"{k[0]:8} {k[1]:6}  {' '.join(f'{x:+6.1f}' for x in err[k].get('base',[]))}  ->  {' '.join(f'{x:+6.1f}' for x in err[k].get('new',[]))}")
for b in ['base','new']:
    xs=[x for k in err for x in err[k].get(b,[])]
    if xs: print(b, 'within 10%:', sum(abs(x)<=10 for x in xs),'/',len(xs), 'mean|e|', round(sum(abs(x) for x in xs)/len(xs),1), 'mean', round(sum(xs)/len(xs),1))

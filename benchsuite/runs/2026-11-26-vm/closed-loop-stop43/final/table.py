import csv,glob,collections,sys,statistics
def table(prefix):
    for b in ['final','base']:
        rows=collections.defaultdict(list)
        for f in sorted(glob.glob(f'{prefix}-{b}-r*.csv')):
            for r in csv.DictReader(open(f)):
                rows[(r['policy'],r['target_hit'])].append((float(r['measured_mops']),float(r['model_mops'])))
        print(prefix,b)
        for k,v in rows.items():
            m=statistics.mean(x for x,_ in v); mo=statistics.mean(y for _,y in v)
            print('  %-12s %-6s'%k, 'mean %7.2f model %7.2f err %+6.1f%% | rounds: '%(m,mo,100*(mo-m)/m)+' '.join('%+5.1f'%(100*(y-x)/x) for x,y in v), ' meas:',' '.join('%.1f'%x for x,_ in v))
for p in sys.argv[1:]: table(p)

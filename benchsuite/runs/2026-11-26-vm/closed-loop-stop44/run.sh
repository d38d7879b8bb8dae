#!/bin/bash
for r in 1 2; do
for b in base new; do
sifter-$b bench closed-loop -p lru,problru-mpl,mobius --mpl 72 --backend-latency 100us --hit-ratios 0.95,0.98,0.99,0.995 --secs 1 --workers loops --csv mpl72-100us-$b-r$r.csv > mpl72-100us-$b-r$r.txt 2>&1
sifter-$b bench closed-loop -p lru,problru,clock,mobius --mpl 2 --backend-latency 5us --spin --hit-ratios 0.9,0.98,0.995 --secs 1 --csv mpl2-spin5us-$b-r$r.csv > mpl2-spin5us-$b-r$r.txt 2>&1
done
done
echo done

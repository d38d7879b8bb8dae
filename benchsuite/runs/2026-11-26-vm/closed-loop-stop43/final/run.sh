#!/bin/bash
# Stop 43's end-of-session comparison: final build against the session's base (9c421e9), alternated.
S=..
for r in 1 2 3; do
  for b in final base; do
    $S/sifter-$b bench closed-loop -p lru,problru-mpl,fifo,clock,mobius --mpl 72 --backend-latency 100us \
      --hit-ratios 0.9,0.95,0.98,0.99,0.995 --secs 1 --workers loops --csv mpl72-100us-$b-r$r.csv > mpl72-100us-$b-r$r.txt 2>/dev/null
    $S/sifter-$b bench closed-loop -p lru,problru,clock,mobius --mpl 2 --backend-latency 5us --spin \
      --hit-ratios 0.9,0.98,0.995 --secs 1 --csv mpl2-spin5us-$b-r$r.csv > mpl2-spin5us-$b-r$r.txt 2>/dev/null
  done
done
for r in 1 2; do
  for b in final base; do
    $S/sifter-$b bench closed-loop -p lru,fifo,clock,mobius --mpl 72 --backend-latency 5us \
      --hit-ratios 0.5,0.9,0.98,0.99,0.995 --secs 1 --workers loops --csv mpl72-5us-$b-r$r.csv > mpl72-5us-$b-r$r.txt 2>/dev/null
  done
done
echo done > done

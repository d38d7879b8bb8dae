#!/bin/sh
# alternated base/new closed-loop rounds: run.sh ROUNDS
cd "$(dirname "$0")"
for r in $(seq 1 $1); do for lat in 5us 100us; do for b in base new; do
  ${SIFTER_DIR:-/tmp}/sifter-$b bench closed-loop -p lru,fifo,clock,mobius --mpl 72 --backend-latency $lat --hit-ratios 0.5,0.9,0.95,0.99 --secs 1 --workers loops --csv ./$lat-$b-r$r.csv > /dev/null 2>&1
  echo "$lat $b r$r: $(cut -d, -f11 ./$lat-$b-r$r.csv | tail -n +2 | xargs printf '%+.3f ')"
done; done; done

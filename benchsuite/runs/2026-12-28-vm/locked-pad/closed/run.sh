#!/bin/sh
# The closed-loop points where the model was pessimistic in every round of stop 76 (Prob-LRU
# at MPL 72, LRU at MPL 8), before (base: ef7241c) and after (pad) the locked list's padding,
# alternated. Usage: sh run.sh ROUNDS VARIANT...   (binaries /tmp/sifter-VARIANT)
set -e
R=$1; shift
T=0.9,0.95,0.98,0.99,0.995
for r in $(seq 1 "$R"); do
  for v in "$@"; do
    /tmp/sifter-$v bench closed-loop -p lru,problru,problru-mpl --mpl 72 --backend-latency 100us \
      --workers loops --hit-ratios $T --secs 0.5 --csv mpl72-$v-r$r.csv > /dev/null 2>&1
    /tmp/sifter-$v bench closed-loop -p lru,problru-mpl --mpl 8 --backend-latency 100us \
      --workers loops --hit-ratios $T --secs 0.5 --csv mpl8-$v-r$r.csv > /dev/null 2>&1
  done
done

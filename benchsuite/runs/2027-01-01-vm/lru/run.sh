#!/bin/sh
# LRU's off points of the figures, main at stop 79 (/tmp/sifter-af05, af05e5a) against the
# paced calibration (/tmp/sifter-e197), alternated. Usage: sh run.sh ROUNDS
T=0.5,0.8,0.9,0.95,0.98,0.99,0.995
for r in $(seq 1 "$1"); do
  for v in af05 e197; do
    S=/tmp/sifter-$v
    $S bench closed-loop -p lru --mpl 72 --backend-latency 20us --workers loops \
      --hit-ratios $T --secs 0.5 --csv $v-mpl72-20us-r$r.csv > /dev/null 2>&1
    $S bench closed-loop -p lru --mpl 8,24 --backend-latency 100us --workers loops \
      --hit-ratios $T --secs 0.5 --csv $v-mpl8-24-100us-r$r.csv > /dev/null 2>&1
  done
done

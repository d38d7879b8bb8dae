#!/bin/sh
# Alternated rounds: main (/tmp/sifter-f5e7) against the paced calibration (/tmp/sifter-gap).
# Usage: sh run.sh FIRST LAST
for r in $(seq "$1" "$2"); do
  for v in base gap; do
    [ "$v" = base ] && S=/tmp/sifter-f5e7 || S=/tmp/sifter-gap
    $S bench closed-loop -p mobius,fifo --mpl 8,72 --backend-latency 100us --workers loops \
      --hit-ratios 0.98,0.99,0.995 --secs 0.5 --csv $v-r$r.csv > $v-r$r.log 2>&1
  done
done

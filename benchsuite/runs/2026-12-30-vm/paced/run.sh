#!/usr/bin/env bash
# Issue 15, stop 79: the calibration's lookups paced by the backend's waits (as the workers'
# requests are) against main's back-to-back lookups, on the figures' points that calibrate
# with waits (MPL 2: threads with a sleeping 100 µs backend, spinning 1 µs and 5 µs).
# Builds alternated round by round. Usage: sh run.sh ROUNDS   (builds: /tmp/sifter-base,
# /tmp/sifter-paced)
set -eu
cd "$(dirname "$0")"
T=0.5,0.8,0.9,0.95,0.98,0.99,0.995
for r in $(seq 1 "$1"); do
  for v in base paced; do
    S=/tmp/sifter-$v
    mkdir -p $v
    $S bench closed-loop -p lru,mobius --mpl 2 --backend-latency 100us --hit-ratios $T \
      --secs 0.5 --csv $v/fig12-mpl2-100us-r$r.csv > /dev/null
    for l in 1us 5us; do
      $S bench closed-loop -p lru,mobius --mpl 2 --spin --backend-latency $l --hit-ratios $T \
        --secs 0.5 --csv $v/fig12-mpl2-spin$l-r$r.csv > /dev/null
    done
  done
done

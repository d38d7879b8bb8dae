#!/bin/bash
# The runs of this directory (stop 42). SIFTER=path/to/sifter (default: target/release/sifter).
# ROUNDS="1 2 3". Each round: threads then loops at MPL 72 / 100 µs; then loops at 5 and 500 µs.
set -euo pipefail
cd "$(dirname "$0")"
S=${SIFTER:-../../../../target/release/sifter}
for r in ${ROUNDS:-1 2 3}; do
  for w in threads loops; do
    $S bench closed-loop -p lru,problru-mpl,fifo,clock,mobius --mpl 72 --backend-latency 100us \
      --hit-ratios 0.9,0.95,0.98,0.99,0.995 --secs 1 --workers $w --csv mpl72-100us-$w-r$r.csv > mpl72-100us-$w-r$r.txt
  done
done
for r in ${ROUNDS:-1 2 3}; do
  for l in 5us 500us; do
    $S bench closed-loop -p lru,fifo,clock,mobius --mpl 72 --backend-latency $l \
      --hit-ratios 0.5,0.9,0.98,0.99,0.995 --secs 1 --workers loops --csv mpl72-$l-loops-r$r.csv > mpl72-$l-loops-r$r.txt
  done
done

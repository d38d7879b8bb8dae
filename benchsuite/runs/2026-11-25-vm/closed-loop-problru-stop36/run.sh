#!/usr/bin/env bash
# Figs. 7/8 of the hit-ratio-vs-throughput paper (Prob-LRU) with the corrected closed loop
# (stop 36): LRU, Prob-LRU q = 0.5 and q = 1 - 1/MPL, interleaved in each round (ROUNDS, default "1 2 3"; this directory has 1-6), sleeping
# 100 µs backend at MPL 72, targets up to 0.995.
set -euo pipefail
SIFTER=${SIFTER:-target/release/sifter}
OUT=${OUT:-$(dirname "$0")}
for r in ${ROUNDS:-1 2 3}; do
  "$SIFTER" bench closed-loop -p lru,problru,problru-mpl --mpl 72 --backend-latency 100us \
    --hit-ratios 0.5,0.8,0.9,0.95,0.98,0.99,0.995 --secs 1 --csv "$OUT/sleep100us-mpl72-r$r.csv"
done

#!/usr/bin/env bash
# Figs. 3/5/10 of the hit-ratio-vs-throughput paper, hits calibrated warm (stop 37):
# 3 rounds, sleeping 100 µs backend at MPL 72 and spinning 5 µs at MPL 2.
set -euo pipefail
SIFTER=${SIFTER:-target/release/sifter}
for r in 1 2 3; do
  "$SIFTER" bench closed-loop -p lru,fifo,clock,mobius --mpl 72 --backend-latency 100us \
    --hit-ratios 0.5,0.8,0.9,0.95,0.98,0.99,0.995 --secs 1 --csv sleep100us-mpl72-r$r.csv
  "$SIFTER" bench closed-loop -p lru,fifo,clock,mobius --mpl 2 --spin --backend-latency 5us \
    --hit-ratios 0.5,0.8,0.9,0.95,0.98,0.99,0.995 --secs 1 --csv spin5us-mpl2-r$r.csv
done

#!/usr/bin/env bash
# The hit-ratio-vs-throughput paper's Fig. 12 (p* against backend latency and MPL), measured:
# LRU and Mobius, targets 0.5-0.995, two runs of each configuration.
set -euo pipefail
cd "$(dirname "$0")"
S=${SIFTER:-../../../../target/release/sifter}
T=0.5,0.8,0.9,0.95,0.98,0.99,0.995
for r in 1 2; do
  $S bench closed-loop -p lru,mobius --mpl 2,8,24,72 --backend-latency 100us --hit-ratios $T \
    --secs 0.5 --csv sleep100us-r$r.csv
  for l in 20us 500us; do
    $S bench closed-loop -p lru,mobius --mpl 72 --backend-latency $l --hit-ratios $T \
      --secs 0.5 --csv sleep$l-mpl72-r$r.csv
  done
  for l in 1us 5us; do
    $S bench closed-loop -p lru,mobius --mpl 2 --spin --backend-latency $l --hit-ratios $T \
      --secs 0.5 --csv spin$l-mpl2-r$r.csv
  done
done

#!/usr/bin/env bash
# The hit-ratio-vs-throughput paper's Figs. 3, 5, 7/8, 10 and 12 on sifter's caches, measured
# with the model as it stands at stop 57 (calibrated at each point on the workers' own stream, lock held on the worker's
# core, misses timed among hits, the waits a core sits through). Workers are event loops
# where the MPL exceeds the cores (one request per core at a time, none preempted, as on the
# paper's one-worker-per-core machine); at MPL 2, threads. Three rounds, configurations
# interleaved. Usage: [OUT=dir] SIFTER=path/to/sifter ./run.sh [ROUNDS]   (OUT: base or new)
set -euo pipefail
cd /tmp/dump
S=${SIFTER:-../../../../../target/release/sifter}
R=${1:-3}
T=0.5,0.8,0.9,0.95,0.98,0.99,0.995
for r in $(seq 1 "$R"); do
  # Figs. 3, 5, 7/8 and 10: every policy at MPL 72, 100 µs.
  SIFTER_DUMP_SLICES=/tmp/dump/slices-$r.jsonl $S bench closed-loop -p lru,problru,problru-mpl,fifo,clock,sieve,mobius,s3fifo,nbq-clock \
    --mpl 72 --backend-latency 100us --workers loops --hit-ratios $T --secs 0.5 \
    --csv fig3-10-mpl72-100us-r$r.csv
  # Fig. 12: p* against MPL (100 µs) ...
  SIFTER_DUMP_SLICES=/tmp/dump/slices-$r.jsonl $S bench closed-loop -p lru,mobius --mpl 2 --backend-latency 100us --hit-ratios $T \
    --secs 0.5 --csv fig12-mpl2-100us-r$r.csv
  SIFTER_DUMP_SLICES=/tmp/dump/slices-$r.jsonl $S bench closed-loop -p lru,mobius --mpl 8,24,72 --backend-latency 100us --workers loops \
    --hit-ratios $T --secs 0.5 --csv fig12-mpl8-72-100us-r$r.csv
  # ... and against the backend's latency (Fig. 3's three latencies for LRU among them).
  for l in 20us 500us; do
    SIFTER_DUMP_SLICES=/tmp/dump/slices-$r.jsonl $S bench closed-loop -p lru,mobius --mpl 72 --backend-latency $l --workers loops \
      --hit-ratios $T --secs 0.5 --csv fig12-mpl72-$l-r$r.csv
  done
  for l in 1us 5us; do
    SIFTER_DUMP_SLICES=/tmp/dump/slices-$r.jsonl $S bench closed-loop -p lru,mobius --mpl 2 --spin --backend-latency $l --hit-ratios $T \
      --secs 0.5 --csv fig12-mpl2-spin$l-r$r.csv
  done
done

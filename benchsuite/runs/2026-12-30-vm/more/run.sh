#!/usr/bin/env bash
# Two more rounds of the figures' event-loop configurations (MPL 72 at 100 µs for every
# policy; MPL 8 / 24 / 72 at 100 µs for LRU and Mobius), after the session's CI.
# Usage: [OUT=dir] SIFTER=path sh run.sh ROUNDS   (OUT: where the CSVs go, relative to this
# directory; default here)
set -eu
cd "$(dirname "$0")/${OUT:-.}"
T=0.5,0.8,0.9,0.95,0.98,0.99,0.995
for r in $(seq 1 "$1"); do
  $SIFTER bench closed-loop -p lru,problru,problru-mpl,fifo,clock,sieve,mobius,s3fifo,nbq-clock \
    --mpl 72 --backend-latency 100us --workers loops --hit-ratios $T --secs 0.5 \
    --csv fig3-10-mpl72-100us-m$r.csv > /dev/null
  $SIFTER bench closed-loop -p lru,mobius --mpl 8,24,72 --backend-latency 100us --workers loops \
    --hit-ratios $T --secs 0.5 --csv fig12-mpl8-72-100us-m$r.csv > /dev/null
done

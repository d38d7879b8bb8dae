#!/usr/bin/env bash
# Issue 11's and 12's ratios on the new host (Intel Xeon, 2 vCPUs): N processes of one bench,
# caches and thread counts paired in every repetition. Usage: SIFTER=bin ./run.sh N
set -euo pipefail
for i in $(seq 1 "$1"); do
  "$SIFTER" bench -c mobius,s3fifo,nbq-clock,quick_cache -t 1,2 -s 10k,100k \
    -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots -q -o "r$i" > /dev/null
  echo "process $i done"
done

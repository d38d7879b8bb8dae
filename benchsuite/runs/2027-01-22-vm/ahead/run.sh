#!/usr/bin/env bash
# Read-ahead against none, paired in one process: the head with `scratch-no-ahead.patch`
# applied (adds `mobius-na`, `s3fifo-na`, `nbq-clock-na`: the same caches without reading ahead).
# Usage: SIFTER=bin ./run.sh N
set -euo pipefail
for i in $(seq 1 "$1"); do
  "$SIFTER" bench -c mobius,mobius-na,s3fifo,s3fifo-na,nbq-clock,nbq-clock-na,quick_cache -t 1,2 \
    -s 10k,100k -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots -q -o "r$i" > /dev/null
  echo "process $i done"
done

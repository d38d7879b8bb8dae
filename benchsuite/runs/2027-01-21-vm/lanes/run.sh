#!/usr/bin/env bash
# Lanes against one lane, paired in one process: the head with `scratch-one-lane.patch`
# applied (adds `mobius-1l`, `s3fifo-1l`, `nbq-clock-1l`: the same caches built with one lane).
# Usage: SIFTER=bin ./run.sh N
set -euo pipefail
for i in $(seq 1 "$1"); do
  "$SIFTER" bench -c mobius,mobius-1l,s3fifo,s3fifo-1l,nbq-clock,quick_cache -t 1,2 \
    -s 10k,100k -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots -q -o "r$i" > /dev/null
  echo "process $i done"
done

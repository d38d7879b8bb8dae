#!/usr/bin/env bash
# As run.sh, each pair in the other order (the variant without reading ahead first), 100k only.
# Usage: SIFTER=bin ./run-swapped.sh N
set -euo pipefail
for i in $(seq 1 "$1"); do
  "$SIFTER" bench -c mobius-na,mobius,s3fifo-na,s3fifo,nbq-clock-na,nbq-clock,quick_cache -t 1,2 \
    -s 100k -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots -q -o "s$i" > /dev/null
  echo "process $i done"
done

#!/usr/bin/env bash
# Stop 114: the head before (/tmp/sifter-head, d3e7e323) and after the lazy tables
# (/tmp/sifter-lazy), in alternating processes of the targets' configuration.
set -euo pipefail
for i in 1 2 3 4; do
  for b in head lazy; do
    /tmp/sifter-$b bench -c mobius,s3fifo,nbq-clock,quick_cache -t 1,2 -s 10k,100k \
        -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots -q -o "$b$i" > /dev/null
  done
  echo "round $i done" >&2
done

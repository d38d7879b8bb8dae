#!/usr/bin/env bash
# Stop 115: the head before (/tmp/sifter-old, bdb77c23) and after multi-step LRU's sets and
# the locked lists' links moved into `Table` (/tmp/sifter-head), in alternating processes of
# the targets' configuration (tables below 32 MiB: built as before, read through `Table`).
set -euo pipefail
for i in 1 2 3 4; do
  for b in old head; do
    /tmp/sifter-$b bench -c sieve,lru,multistep,quick_cache -t 1,2 -s 10k,100k \
        -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots -q -o "$b$i" > /dev/null
  done
  echo "round $i done" >&2
done

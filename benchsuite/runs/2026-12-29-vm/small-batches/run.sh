#!/bin/sh
# Stop 78: batching in small caches. Binaries: /tmp/sifter-main (d15f6e7), /tmp/sifter-new (this stop's final cache code).
# Usage: sh run.sh ROUNDS   (from this directory)
set -e
R=${1:-3}
for r in $(seq 1 "$R"); do
  for v in main new; do
    /tmp/sifter-$v bench -c mobius,s3fifo,clock,nbq-clock,quick_cache -t 1,2 -s 256,1000 \
      -w zipf:alpha=1.0,keys=100000 -r 3 --no-plots -q -o "small/round$r-$v" > /dev/null
  done
done
# Oversubscribed: 16 threads against 2, shorter sequences (1M per thread, 250k measured).
for r in $(seq 1 "$R"); do
  for v in main new; do
    /tmp/sifter-$v bench -c mobius,quick_cache -t 2,16 -s 256,1000 -w zipf:alpha=1.0,keys=100000 \
      --sequence 1000000 --requests 250000 -r 3 --no-plots -q -o "over/round$r-$v" > /dev/null
  done
done
# Issue 11's stream at 10k (the sizes batched before too): paired Mobius ÷ quick_cache.
sh ../../2026-12-23-vm/reuse/ab.sh "$R" 1 10k main new
sh ../../2026-12-23-vm/reuse/ab.sh "$R" 2 10k main new

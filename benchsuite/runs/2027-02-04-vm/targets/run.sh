#!/usr/bin/env bash
# The open targets' same-run ratios on the head: Mobius, S3-FIFO, NbQ-CLOCK and quick_cache at
# 10k and 100k entries, one and two threads, in one process each.
# Usage: SIFTER=bin ./run.sh N [swapped]
set -euo pipefail
caches=mobius,s3fifo,nbq-clock,quick_cache
prefix=r
if [ "${2:-}" = swapped ]; then caches=quick_cache,nbq-clock,s3fifo,mobius; prefix=s; fi
for i in $(seq 1 "$1"); do
  "$SIFTER" bench -c "$caches" -t 1,2 -s 10k,100k -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots \
    -q -o "$prefix$i" > /dev/null
  echo "process $prefix$i done"
done

#!/usr/bin/env bash
# S3-FIFO's ranking insert emptying the bucket's dead ghost words (the head) against leaving
# them (stop 102's), paired in one process: the head with `scratch-no-clean.patch` applied
# (adds `s3fifo-nc`).
# Usage: SIFTER=bin ./run.sh N [swapped]
set -euo pipefail
caches=mobius,s3fifo,s3fifo-nc
prefix=r
if [ "${2:-}" = swapped ]; then caches=s3fifo-nc,s3fifo,mobius; prefix=s; fi
for i in $(seq 1 "$1"); do
  "$SIFTER" bench -c "$caches" -t 1,2 -s 10k,100k -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots \
    -q -o "$prefix$i" > /dev/null
  echo "process $prefix$i done"
done

#!/usr/bin/env bash
# S3-FIFO with a scan-ahead cursor per queue (the head) against one cursor (stop 102's), paired
# in one process: the head with `scratch-one-cursor.patch` applied (adds `s3fifo-1c`).
# Usage: SIFTER=bin ./run.sh N [swapped]
set -euo pipefail
caches=mobius,s3fifo,s3fifo-1c,nbq-clock,quick_cache
prefix=r
if [ "${2:-}" = swapped ]; then caches=quick_cache,nbq-clock,s3fifo-1c,s3fifo,mobius; prefix=s; fi
for i in $(seq 1 "$1"); do
  "$SIFTER" bench -c "$caches" -t 1,2 -s 100k -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots -q \
    -o "$prefix$i" > /dev/null
  echo "process $prefix$i done"
done

#!/usr/bin/env bash
# S3-FIFO's cursors reading up to 16 links ahead against 8 (AHEAD), paired in one process: the
# head with `scratch-ahead16.patch` applied (adds `s3fifo-a16`).
# Usage: SIFTER=bin ./run.sh N [swapped]
set -euo pipefail
caches=mobius,s3fifo,s3fifo-a16
prefix=r
if [ "${2:-}" = swapped ]; then caches=s3fifo-a16,s3fifo,mobius; prefix=s; fi
for i in $(seq 1 "$1"); do
  "$SIFTER" bench -c "$caches" -t 1,2 -s 100k -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots -q \
    -o "$prefix$i" > /dev/null
  echo "process $prefix$i done"
done

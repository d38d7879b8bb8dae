#!/bin/sh
set -e
R=$1; T=$2; shift 2
for r in $(seq 1 "$R"); do
  for v in "$@"; do
    /tmp/sifter-$v bench -c mobius,s3fifo -t $T -s 10k,100k -w zipf:alpha=1.0,keys=1000000 -r 3 \
      --no-plots -q -o "t$T/round$r-$v" > /dev/null
  done
done

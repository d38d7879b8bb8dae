#!/bin/sh
set -e
R=$1; shift
for r in $(seq 1 "$R"); do
  for v in "$@"; do
    /tmp/sifter-$v bench -c mobius,nbq-clock -t 1,2 -s 10k -w zipf:alpha=1.0,keys=1000000 -r 3 \
      --no-plots -q -o "round$r-$v" > /dev/null
  done
done

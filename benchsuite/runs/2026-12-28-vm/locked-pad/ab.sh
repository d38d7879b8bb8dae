#!/bin/sh
# Usage: sh ab.sh ROUNDS VARIANT...   (binaries /tmp/sifter-VARIANT)
# One `sifter bench` of the locked baselines beside Mobius per variant per round, alternated,
# on the stream (Zipf 1.0 over 1M keys), 3 paired repetitions each, 1 and 2 threads.
set -e
R=$1; shift
for r in $(seq 1 "$R"); do
  for v in "$@"; do
    /tmp/sifter-$v bench -c mobius,lru,sieve,problru -t 1,2 -s 10k,100k -w zipf:alpha=1.0,keys=1000000 -r 3 \
      --no-plots -q -o "round$r-$v" > /dev/null
  done
done

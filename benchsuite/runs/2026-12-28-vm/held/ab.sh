#!/bin/sh
# Usage: sh ab.sh ROUNDS THREADS SIZE VARIANT...   (binaries /tmp/sifter-VARIANT)
# One `sifter bench` of Mobius and quick_cache per variant per round, alternated, on the
# issue's stream (Zipf 1.0 over 1M keys), 5 paired repetitions each; results in
# t$THREADS-s$SIZE/round$R-$VARIANT/.
set -e
R=$1; T=$2; S=$3; shift 3
for r in $(seq 1 "$R"); do
  for v in "$@"; do
    /tmp/sifter-$v bench -c mobius,quick_cache -t "$T" -s "$S" -w zipf:alpha=1.0,keys=1000000 -r 5 \
      --no-plots -q -o "t$T-s$S/round$r-$v" > /dev/null
  done
done

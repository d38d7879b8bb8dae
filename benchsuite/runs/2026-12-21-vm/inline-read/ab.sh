#!/bin/sh
# Alternated rounds of two builds: base (4e557d5's cache code) and `read` #[inline(always)].
# Usage: sh ab.sh ROUNDS DIR-OF-BINARIES
set -e
for r in $(seq 1 "$1"); do
  for v in cgu4 inl; do
    "$2/sifter-$v" bench -c mobius,quick_cache -t 1,2 -s 10k -w zipf:alpha=1.2,keys=1000000 -r 5 \
      --no-plots -q -o "round$r-$v" > /dev/null
  done
done

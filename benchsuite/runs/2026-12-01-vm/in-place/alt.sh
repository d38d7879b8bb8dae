#!/bin/sh
# alternated rounds: base vs new; $1 = rounds, rest = bench args
R=$1; shift
for r in $(seq 1 $R); do
  for b in base new; do
    if [ $b = base ]; then B=/tmp/base-target/release/sifter; else B=/tmp/sifter-new; fi
    $B bench -q --no-plots -o /tmp/alt-$b-$r "$@" 2>&1 | grep "^shared" | sed "s/^/$b r$r /"
  done
done

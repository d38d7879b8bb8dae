#!/bin/sh
# alternated rounds: base vs new; $1 = rounds, rest = bench args.
# BASE and NEW name the binaries (defaults: /tmp/base-target/release/sifter, /tmp/sifter-new).
R=$1; shift
BASE=${BASE:-/tmp/base-target/release/sifter}
NEW=${NEW:-/tmp/sifter-new}
for r in $(seq 1 $R); do
  for b in base new; do
    if [ $b = base ]; then B=$BASE; else B=$NEW; fi
    $B bench -q --no-plots -o /tmp/alt-$b-$r "$@" 2>&1 | grep "^shared" | sed "s/^/$b r$r /"
  done
done

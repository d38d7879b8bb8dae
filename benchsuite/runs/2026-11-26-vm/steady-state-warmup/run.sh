#!/bin/sh
# Same binary (a885963), same session: the new warm-up (one pass of every thread's sequence,
# the default) against the old one (`--warmup-passes 0`: until the cache is 98 % full),
# alternated round by round.
set -e
BIN=${BIN:-/tmp/sifter-ss}
for r in 1 2 3; do
  for w in 1 0; do
    $BIN bench -c mobius,s3fifo,nbq-clock,quick_cache -t 1,2 -s 0.01,0.1 -r 3 \
      --warmup-passes $w --no-plots -q -o out-pass$w-r$r > pass$w-r$r.txt 2>&1
    cp out-pass$w-r$r/results.csv pass$w-r$r.csv && rm -rf out-pass$w-r$r
  done
done

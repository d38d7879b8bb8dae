#!/bin/sh
# Issue 11's thread targets: Mobius and quick_cache at 1, 2, 8 and 16 threads (2 cores), both
# sizes, three invocations of 3 repetitions each. Run from the repository root's build:
#   cargo build --release -p sifter-cli && sh run.sh
set -e
S=${SIFTER:-../../../../target/release/sifter}
for r in 1 2 3; do
  "$S" bench -c mobius,quick_cache -t 1,2,8,16 -s 0.01,0.1 -r 3 -q --no-plots -o round$r > round$r.txt 2>&1
done

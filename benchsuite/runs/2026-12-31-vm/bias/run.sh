#!/bin/sh
# Stop 80: owner bias. SIFTER=/tmp/sifter-9b413b4 sh run.sh
set -e
S=${SIFTER:-sifter}
for i in 9 10 11 12 13 14 15 16; do
  $S bench -c mobius,mobius-shared,quick_cache -t 1,2 -s 10k,100k -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots -q -o paired/p$i > /dev/null
done
for i in 1 2 3; do
  $S bench --hit-only -c mobius,mobius-shared,quick_cache,ceiling -t 1,2 -r 3 --no-plots -q -o hit-only/p$i > /dev/null
done
for i in 1 2 3 4; do
  $S bench -c mobius,quick_cache -t 2,16 -s 10k,100k -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots -q -o over16/p$i > /dev/null
done
echo done > DONE2

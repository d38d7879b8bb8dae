#!/bin/bash
# usage: run.sh ROUNDS variant...  (binaries /tmp/lay/<variant>/sifter-L*)
R=$1; shift
for i in $(seq 1 $R); do for L in 1 2 3 4; do for v in "$@"; do
  /tmp/lay/$v/sifter-L$L bench -c ${C:-mobius,s3fifo} -t 1,2 -s 10k,100k -w zipf:alpha=1.0,keys=1000000 -r 3 -q --no-plots -o out/$v-L$L-r$i >/dev/null 2>&1
done; done; echo "round $i $(date +%T)"; done

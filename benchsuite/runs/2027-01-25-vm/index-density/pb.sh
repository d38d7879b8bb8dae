#!/bin/bash
for i in $(seq 1 6); do for v in head pb35 pb4; do /tmp/sifter_$v bench -c mobius,s3fifo -t 1,2 -s 10k,100k -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots -q -o pb$v$i >/dev/null 2>&1; echo "$v$i $(date +%T)"; done; done

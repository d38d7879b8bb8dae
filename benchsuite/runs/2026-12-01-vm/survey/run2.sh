#!/bin/sh
# The survey's workloads again on the build with updates in place (and the two that were
# misspelt in run.sh: cachebench's shares are percentages, uniform's key count is `n`).
S=${SIFTER:-/work/main/target/release/sifter}
for w in ycsb:a "cachebench:lookup=60,insert=20,lookup-insert=10,erase=10" uniform:n=1000000 ; do
  n=$(echo "$w" | tr ':=,.' '____')
  $S bench -q -c mobius,s3fifo,quick_cache,moka -t 1,2,8 -w "$w" -s 0.1 -r 3 --duration 300ms --no-plots -o out2-$n > new-$n.txt 2>&1
done

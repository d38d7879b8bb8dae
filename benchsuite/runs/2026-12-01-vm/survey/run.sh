#!/bin/sh
# A survey of workloads beyond the default Zipf read-through: where does Mobius lose to its peers?
S=${SIFTER:-/work/main/target/release/sifter}
for w in ycsb:a ycsb:b "cachebench:lookup=0.6,insert=0.2,lookup-insert=0.1,erase=0.1" uniform:keys=1000000 "zipf:alpha=0.7,keys=1000000" "zipf:alpha=1.2,keys=1000000" ; do
  n=$(echo "$w" | tr ':=,.' '____')
  $S bench -q -c mobius,quick_cache,moka -t 1,2,8 -w "$w" -s 0.1 -r 3 --duration 300ms --no-plots -o out-$n > $n.txt 2>&1
done

#!/bin/sh
# Write-heavy workloads (stop 47): updates and removals of Zipf keys against the read-only mix
# of the same keys, every sifter queue policy beside locked SIEVE/LRU and quick_cache, same
# session, nothing else running. S=/path/to/sifter sh run.sh
set -e
S=${S:-sifter}
for r in 1 2; do
  for w in ycsb:c ycsb:a cachebench:lookup=50,insert=20,lookup-insert=10,erase=20; do
    n=$(echo $w | tr ':,=' '---')
    "$S" bench -w $w -c mobius,s3fifo,nbq-clock,sieve,lru,quick_cache -t 1,2 -s 0.1 -r 3 \
      --duration 300ms -q --no-plots -o $n-$r > $n-$r.txt 2>&1
  done
done

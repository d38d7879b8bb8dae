#!/bin/sh
# Updates before and after stop 46's change (the rotating sweep, S3-FIFO's sweep, updates as uses
# that take no tokens up front), alternated round by round, same session, nothing else running.
#   OLD: sifter built at f9af8d3 (stop 45), NEW: built at the stop's commit.
#   OLD=/path/to/old/sifter NEW=/path/to/new/sifter sh run.sh
set -e
for r in 1 2 3; do
  for b in old new; do
    if [ $b = old ]; then S=$OLD; else S=$NEW; fi
    for w in ycsb:a ycsb:b; do
      n=$(echo $w | tr ':' '-')
      "$S" bench -w $w -c mobius,s3fifo,nbq-clock,lru,quick_cache -t 1,2 -s 0.1 -r 3 -q \
        --no-plots -o $b-$n-$r > $b-$n-$r.txt 2>&1
    done
    # The default read-through stream (issue 11's targets): the update check must not cost it.
    "$S" bench -c mobius,s3fifo,quick_cache -t 1,2 -s 0.01,0.1 -r 3 -q --no-plots \
      -o $b-zipf-$r > $b-zipf-$r.txt 2>&1
  done
done

#!/bin/sh
# S3-FIFO's updated entries of main stay in main (stop 47): before and after, alternated round by
# round, same session. OLD: sifter built at 89d9f89, NEW: at the change's commit.
#   OLD=/path/to/old/sifter NEW=/path/to/new/sifter sh run.sh
set -e
for r in 1 2; do
  for b in old new; do
    if [ $b = old ]; then S=$OLD; else S=$NEW; fi
    for w in ycsb:c ycsb:a ycsb:b; do
      n=$(echo $w | tr ':' '-')
      "$S" bench -w $w -c s3fifo,mobius,quick_cache -t 1,2 -s 0.1 -r 3 --duration 300ms -q \
        --no-plots -o $b-$n-$r > $b-$n-$r.txt 2>&1
    done
    # The read-through stream (issues 11/12's targets): the place check must not cost it.
    "$S" bench -c s3fifo,mobius,quick_cache -t 1,2 -s 0.01,0.1 -r 3 --duration 300ms -q \
      --no-plots -o $b-zipf-$r > $b-zipf-$r.txt 2>&1
  done
done

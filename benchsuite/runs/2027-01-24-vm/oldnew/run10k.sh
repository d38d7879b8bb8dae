#!/usr/bin/env bash
# As run.sh, Mobius and quick_cache at 10k only (a second look at the 10k figures).
# Usage: P=prefix OLD=bin NEW=bin ./run10k.sh N (results in PREFIXoldI, PREFIXnewI)
set -euo pipefail
for i in $(seq 1 "$1"); do
  for v in old new; do
    bin=$OLD; [ $v = new ] && bin=$NEW
    "$bin" bench -c mobius,quick_cache -t 1,2 -s 10k -w zipf:alpha=1.0,keys=1000000 -r 3 \
      --no-plots -q -o "$P$v$i" > /dev/null
    echo "process $P$v$i done"
  done
done

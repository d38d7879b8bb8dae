#!/usr/bin/env bash
# Stop 104's head (spare announcements, the tokens' wait, the user-code mark) against stop 103's
# (abfe000b), alternating processes: old then new, N times; quick_cache in each process is the
# reference that cancels the drift between processes.
# Usage: OLD=bin NEW=bin ./run.sh N
set -euo pipefail
for i in $(seq 1 "$1"); do
  for v in old new; do
    bin=$OLD; [ $v = new ] && bin=$NEW
    "$bin" bench -c mobius,s3fifo,quick_cache -t 1,2 -s 10k,100k -w zipf:alpha=1.0,keys=1000000 -r 3 \
      --no-plots -q -o "$v$i" > /dev/null
    echo "process $v$i done"
  done
done

#!/usr/bin/env bash
# As run.sh, per-thread key spaces (capacity × threads): the threads share no entry (no
# ceiling: it needs shared mode).
set -euo pipefail
cd "$(dirname "$0")"
for i in $(seq 1 ${N:-4}); do
  /tmp/sifter-0ca7 bench -m per-thread -c mobius,quick_cache -t 1,2 -s 10k -w zipf:alpha=1.0,keys=1000000 \
    -r 3 --no-plots -o pt$i > /dev/null 2>&1
  echo "process $i done"
done

#!/usr/bin/env bash
# Issue 11's ratios on the same day: eight processes, Mobius and quick_cache paired in each
# (main's cache code: 31e9e42 = 8c56518).
set -euo pipefail
cd "$(dirname "$0")"
for i in $(seq 1 8); do
  /tmp/sifter-0ca7 bench -c mobius,quick_cache -t 1,2 -s 10k,100k -w zipf:alpha=1.0,keys=1000000 \
    -r 3 --no-plots -o p$i > /dev/null 2>&1
  echo "process $i done"
done

#!/usr/bin/env bash
# Prob-LRU's hits' lock measured against its twin that never promotes (stop 82), alternated
# with main before the change. Usage: sh run.sh FIRST LAST
set -euo pipefail
cd "$(dirname "$0")"
for r in $(seq "$1" "$2"); do
  for b in e197 twin; do
    /tmp/sifter-$b bench closed-loop -p problru-mpl,problru,lru --mpl 72 --backend-latency 100us \
      --workers loops --hit-ratios 0.9,0.95,0.98,0.99,0.995 --secs 0.5 --csv $b-r$r.csv
  done
done

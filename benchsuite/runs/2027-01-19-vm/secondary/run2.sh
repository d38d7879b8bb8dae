#!/usr/bin/env bash
# Six more rounds of 2 against 8 and 16 threads (after run.sh's six).
set -euo pipefail
BIN=${BIN:?sifter binary}
cd "$(dirname "$0")"
for r in 7 8 9 10 11 12; do
  echo "== round $r $(date +%T)"
  $BIN bench -c mobius,quick_cache -t 2,8,16 -s 10k,100k -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots -q -o oversub/round$r
done
echo done

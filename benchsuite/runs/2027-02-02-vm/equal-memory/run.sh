#!/usr/bin/env bash
# Mobius and quick_cache at equal heap memory: quick_cache at 10k and 100k entries, Mobius at
# the capacities whose heap bytes are at most quick_cache's (13,600 and 114,500; `sifter bench
# --mem -s ...`, memory-*.csv), all four sizes in each process.
# Usage: SIFTER=bin ./run.sh N [swapped]
set -euo pipefail
caches=mobius,quick_cache
prefix=r
if [ "${2:-}" = swapped ]; then caches=quick_cache,mobius; prefix=s; fi
for i in $(seq 1 "$1"); do
  "$SIFTER" bench -c "$caches" -t 1,2 -s 10k,13600,100k,114500 -w zipf:alpha=1.0,keys=1000000 -r 3 \
    --no-plots -q -o "$prefix$i" > /dev/null
  echo "process $prefix$i done"
done

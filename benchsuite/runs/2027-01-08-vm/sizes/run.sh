#!/usr/bin/env bash
# Mobius and quick_cache paired, one thread, across cache sizes (stop 88): N processes.
set -euo pipefail
cd "$(dirname "$0")"
for i in $(seq 1 "${1:-10}"); do
  ${SIFTER:-sifter} bench -c mobius,quick_cache -t 1 -s 2k,5k,10k,20k,50k,100k,200k \
    -w zipf:alpha=1.0,keys=1000000 -r 3 -q --no-plots -o p$i > /dev/null 2>&1
done
echo done

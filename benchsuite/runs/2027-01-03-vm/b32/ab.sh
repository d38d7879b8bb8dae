#!/usr/bin/env bash
# Scratch A/B: batches of 32 (b32.patch on 31e9e42: chains and eviction batches up to 32)
# against main's 8, alternated processes, Mobius and quick_cache paired in each.
set -euo pipefail
cd "$(dirname "$0")"
for i in $(seq 1 ${ROUNDS:-6}); do
  /tmp/sifter-0ca7 bench -c mobius,quick_cache -t 1,2 -s ${SIZES:-10k} -w zipf:alpha=1.0,keys=1000000 \
    -r 3 --no-plots -o ${TAG:-}A$i > /dev/null 2>&1
  /tmp/sifter-b32 bench -c mobius,quick_cache -t 1,2 -s ${SIZES:-10k} -w zipf:alpha=1.0,keys=1000000 \
    -r 3 --no-plots -o ${TAG:-}B$i > /dev/null 2>&1
  echo "round $i done"
done

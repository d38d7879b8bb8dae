#!/usr/bin/env bash
# Scratch A/B of two builds, alternated processes, Mobius and quick_cache paired in each:
# A = main before the change (31e9e42), B = d3c8315 (small caches unbatched at one thread).
set -euo pipefail
cd "$(dirname "$0")"
for i in $(seq 1 ${ROUNDS:-5}); do
  /tmp/sifter-0ca7 bench -c mobius,quick_cache -t ${THREADS:-1} -s ${SIZES:-500,1000} -w zipf:alpha=1.0,keys=1000000 \
    -r 3 --no-plots -o ${TAG:-}A$i > /dev/null 2>&1
  /tmp/sifter-solo-scratch bench -c mobius,quick_cache -t ${THREADS:-1} -s ${SIZES:-500,1000} -w zipf:alpha=1.0,keys=1000000 \
    -r 3 --no-plots -o ${TAG:-}B$i > /dev/null 2>&1
  echo "round $i done"
done

#!/usr/bin/env bash
# Scratch A/B: one-thread batches on (default) vs off at every size (SCRATCH_SOLO=all, a
# scratch build of d3c8315 that reads the variable), alternated processes, Mobius and
# quick_cache paired in each.
set -euo pipefail
cd "$(dirname "$0")"
BIN=${BIN:-/tmp/sifter-solo-scratch}
for i in $(seq 1 ${ROUNDS:-6}); do
  $BIN bench -c mobius,quick_cache -t 1 -s ${SIZES:-10k,100k} -w zipf:alpha=1.0,keys=1000000 \
    -r 3 --no-plots -o ${TAG:-}base$i > /dev/null 2>&1
  SCRATCH_SOLO=all $BIN bench -c mobius,quick_cache -t 1 -s ${SIZES:-10k,100k} -w zipf:alpha=1.0,keys=1000000 \
    -r 3 --no-plots -o ${TAG:-}solo$i > /dev/null 2>&1
  echo "round $i done"
done

#!/usr/bin/env bash
# The old and the new attribution solved on the same slices (scratch build printing both:
# SCRATCH_OLD=1 makes /tmp/sifter-scratch also solve each slice with Mobius as the hits' base).
set -euo pipefail
cd "$(dirname "$0")"
for r in $(seq "$1" "$2"); do
  SCRATCH_OLD=1 /tmp/sifter-scratch bench closed-loop -p problru-mpl,problru --mpl 72 \
    --backend-latency 100us --workers loops --hit-ratios 0.95,0.98,0.99,0.995 --secs 0.5 \
    --csv paired-r$r.csv 2> paired-r$r.log
done

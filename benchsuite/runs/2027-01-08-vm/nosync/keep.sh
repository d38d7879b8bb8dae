#!/usr/bin/env bash
# Main, the no-synchronisation bound and the bound with one mechanism kept, alternated in
# each round (stop 88). Binaries /tmp/sifter-{base,nosync,keep*}: main and stop 73's patches
# (benchsuite/runs/2026-12-24-vm/nosync/*.patch) applied to it.
set -euo pipefail
cd "$(dirname "$0")"
V="base nosync keephaz keepstripe keeptoken keepquiet keepvictim keephome"
for i in $(seq 1 "${ROUNDS:-20}"); do
  for v in $V; do
    /tmp/sifter-$v bench -c mobius,quick_cache -t 1 -s "${SIZES:-2k,10k}" \
      -w zipf:alpha=1.0,keys=1000000 -r 3 -q --no-plots -o "k-$v/r$i" > /dev/null 2>&1
  done
done
echo done

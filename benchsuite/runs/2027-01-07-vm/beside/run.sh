#!/usr/bin/env bash
# Does the cache run beside Mobius in one process change Mobius's one-thread figure? (stop 86
# saw 17-22 Mops/s beside the ceiling, 33-34 beside the peers.) N rounds; each round runs one
# process per pairing, one after another, so the pairings share the host's drift.
# Usage: SIFTER=path/to/sifter ./run.sh [N]
set -euo pipefail
cd "$(dirname "$0")"
S=${SIFTER:-../../../../target/release/sifter}
for i in $(seq "${FIRST:-1}" "${1:-4}"); do
  for pair in ceiling,mobius mobius,quick_cache mobius ceiling,quick_cache; do
    d=r$i-${pair//,/+}
    $S bench -c "$pair" -t 1 -s 10k -w zipf:alpha=1.0,keys=1000000 -r 3 -q --no-plots -o "$d" > "$d.txt"
  done
done

#!/usr/bin/env bash
# A/B of two builds in alternated processes, the caches paired in each process (Mobius and
# quick_cache unless CACHES says), results into OUT/TAG_A/rN and OUT/TAG_B/rN (OUT relative
# to this directory).
# Usage: OUT=dir A=bin B=bin [ROUNDS=40] [THREADS=1,2] [SIZES=10k] [CACHES=mobius,quick_cache]
#        ./ab.sh TAG_A TAG_B
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p "${OUT:?give OUT, a directory here}"
cd "$OUT"
for i in $(seq 1 "${ROUNDS:-40}"); do
  for side in A B; do
    bin=${!side}; tag=$([ $side = A ] && echo "$1" || echo "$2")
    $bin bench -c "${CACHES:-mobius,quick_cache}" -t "${THREADS:-1,2}" -s "${SIZES:-10k}" \
      -w zipf:alpha=1.0,keys=1000000 -r 3 -q --no-plots -o "$tag/r$i" > /dev/null 2>&1
  done
done
echo done

#!/usr/bin/env bash
# Runs each binary given, in turn, ROUNDS times (one process per binary per round), the caches
# paired in each process; results into OUT/<binary's name>/rN (OUT relative to this directory).
# Usage: OUT=dir [ROUNDS=5] [THREADS=1,2] [SIZES=10k,100k] [CACHES=mobius,quick_cache] ./layouts.sh BIN...
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p "${OUT:?give OUT, a directory here}"
cd "$OUT"
for i in $(seq 1 "${ROUNDS:-5}"); do
  for bin in "$@"; do
    "$bin" bench -c "${CACHES:-mobius,quick_cache}" -t "${THREADS:-1,2}" -s "${SIZES:-10k,100k}" \
      -w zipf:alpha=1.0,keys=1000000 -r 3 -q --no-plots -o "$(basename "$bin")/r$i" > /dev/null 2>&1
  done
  echo "round $i" >&2
done
echo done

#!/usr/bin/env bash
# A/B, alternated rounds: BASE and NEW builds on the same closed-loop points.
# Usage: BASE=bin NEW=bin ./ab.sh ROUNDS DIR_A DIR_B -- closed-loop args...
set -euo pipefail
cd "$(dirname "$0")"
R=$1; A=$2; B=$3; shift 4
for r in $(seq 1 "$R"); do
  "$BASE" bench closed-loop "$@" --csv "$A/r$r.csv" > "$A/r$r.log" 2>&1
  "$NEW" bench closed-loop "$@" --csv "$B/r$r.csv" > "$B/r$r.log" 2>&1
done

#!/usr/bin/env bash
# Runs `sifter bench` on several builds, each over the code layouts `layout_builds.sh` made,
# alternating builds and layouts inside every round, so that host drift falls on all of them
# alike. One process per (round, layout, build), written to OUT/<build>-L<layout>-r<round>/
# (results.json and results.csv); summarise with
# `paired_ratios.py --geomean --medians --layouts OUT BUILD... NUM/DEN`.
#
# Usage: benchsuite/tools/layout_rounds.sh ROUNDS OUT BUILD_DIR...
#   BUILD_DIR: a directory of sifter-L<n> binaries (layout_builds.sh DIR N); its name is the
#   build's name. Environment: C (caches, default mobius,s3fifo), T (threads, default 1,2),
#   S (sizes, default 10k,100k), W (workload, default zipf:alpha=1.0,keys=1000000),
#   R (repetitions per process, default 3).
set -euo pipefail
rounds=${1:?ROUNDS}; out=$(realpath -m "${2:?OUT}"); shift 2
[ $# -gt 0 ] || { echo "usage: $0 ROUNDS OUT BUILD_DIR..." >&2; exit 2; }
mkdir -p "$out"
layouts=$(ls "$1" | sed -n 's/^sifter-L\([0-9]*\)$/\1/p' | sort -n)
[ -n "$layouts" ] || { echo "no sifter-L<n> binaries in $1" >&2; exit 2; }
for b in "$@"; do
  for l in $layouts; do
    [ -x "$b/sifter-L$l" ] || { echo "$b has no sifter-L$l (every build needs $1's layouts)" >&2; exit 2; }
  done
done
total=$((rounds * $(echo $layouts | wc -w) * $#)); done_=0
for i in $(seq 1 "$rounds"); do
  for l in $layouts; do
    for b in "$@"; do
      name=$(basename "$b")
      "$b/sifter-L$l" bench -c "${C:-mobius,s3fifo}" -t "${T:-1,2}" -s "${S:-10k,100k}" \
        -w "${W:-zipf:alpha=1.0,keys=1000000}" -r "${R:-3}" -q --no-plots \
        -o "$out/$name-L$l-r$i" > /dev/null
      done_=$((done_ + 1))
      echo "[$done_/$total] round $i, layout $l, $name" >&2
    done
  done
  echo "round $i of $rounds done $(date +%T)" >&2
done

#!/bin/sh
# Tables on huge pages (stop 54): the base build (58eccd6, 4 KiB pages) and the new one
# alternated, R rounds each of the given `sifter bench` arguments; raw lines into the out file.
#   BASE=/path/base-sifter NEW=/path/new-sifter sh run.sh R OUT ARGS...
R=$1; OUT=$2; shift 2
: > "$OUT"
for r in $(seq 1 "$R"); do
  for b in base new; do
    if [ $b = base ]; then B=$BASE; else B=$NEW; fi
    $B bench -q --no-plots -o "/tmp/hp-$b-$r" "$@" 2>&1 | grep "^shared" | sed "s/^/$b r$r /" | tee -a "$OUT"
    cp "/tmp/hp-$b-$r/results.json" "$(basename "$OUT" .txt)-$b-r$r.json"
  done
done

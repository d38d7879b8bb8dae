#!/bin/sh
# Alternates base and new closed-loop runs: BASE=.. NEW=.. sh run.sh ROUNDS OUTDIR ARGS...
R=$1; OUT=$2; shift 2
mkdir -p $OUT
for i in $(seq 1 $R); do
  for b in base new; do
    if [ $b = base ]; then B=$BASE; else B=$NEW; fi
    $B bench closed-loop "$@" --csv $OUT/$b-$i.csv > $OUT/$b-$i.txt 2>&1
    echo "$b $i done $(date +%T)"
  done
done

#!/bin/bash
B=$1; O=$2; : > $O
for s in ${SEEDS:-4 5 6}; do ONLY=${ONLY:-mobius} $B "zipf:alpha=${ALPHA:-1.0},n=${N:-100000},requests=${REQ:-4000000},seed=$s" ${SIZES} | sed "s/^/seed$s /" >> $O & done; wait

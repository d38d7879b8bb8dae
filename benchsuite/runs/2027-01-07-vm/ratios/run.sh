#!/usr/bin/env bash
# Issue 11's and 12's ratios on the day (stop 87; the script of stop 86): N processes of the default bench on the
# issue's stream, one after another, into this directory or DIR (relative to it).
# Usage: SIFTER=path/to/sifter [FIRST=1] [DIR=.] ./run.sh [N]
set -euo pipefail
cd "$(dirname "$0")/${DIR:-.}"
S=${SIFTER:-../../../../target/release/sifter}
for i in $(seq "${FIRST:-1}" "${1:-6}"); do
  $S bench -c mobius,quick_cache,s3fifo,nbq-clock -t 1,2 -s 10k,100k \
    -w zipf:alpha=1.0,keys=1000000 -r 3 -q --no-plots -o p$i > p$i.txt
done

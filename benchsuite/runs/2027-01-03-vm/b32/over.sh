#!/usr/bin/env bash
# Oversubscription with batches of 32: 2 and 16 threads paired in each process (10k),
# main (A) and the scratch build (B) alternated.
set -euo pipefail
cd "$(dirname "$0")"
for i in $(seq 1 ${ROUNDS:-4}); do
  /tmp/sifter-0ca7 bench -c mobius,quick_cache -t 2,16 -s 10k -w zipf:alpha=1.0,keys=1000000 \
    -r 3 --no-plots -o o-A$i > /dev/null 2>&1
  /tmp/sifter-b32 bench -c mobius,quick_cache -t 2,16 -s 10k -w zipf:alpha=1.0,keys=1000000 \
    -r 3 --no-plots -o o-B$i > /dev/null 2>&1
  echo "round $i done"
done

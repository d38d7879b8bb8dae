#!/usr/bin/env bash
# Stop 115's oversubscribed runs (stop 114's script): twelve processes of Mobius and quick_cache at 2, 8 and 16
# threads, six in each cache order (r*: Mobius first, s*: quick_cache first).
# Usage: SIFTER=/path/to/sifter ./run.sh
set -euo pipefail
S=${SIFTER:-sifter}
for i in 1 2 3 4 5 6; do
  "$S" bench -c mobius,quick_cache -t 2,8,16 -s 10k,100k -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots -q -o "r$i"
  "$S" bench -c quick_cache,mobius -t 2,8,16 -s 10k,100k -w zipf:alpha=1.0,keys=1000000 -r 3 --no-plots -q -o "s$((i + 6))"
  echo "pair $i done" >&2
done

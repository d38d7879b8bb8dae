#!/usr/bin/env bash
# Issue 11's secondary targets on the head (see ../README.md): memory, hit-only against the
# ceiling, and 8 / 16 threads against 2 paired in one process.
set -euo pipefail
BIN=${BIN:?sifter binary}
cd "$(dirname "$0")"
W=zipf:alpha=1.0,keys=1000000
$BIN bench --mem -c mobius,clock,fifo,sieve,lru,s3fifo,nbq-clock,quick_cache,moka -q -o mem
for r in 1 2 3 4 5 6; do
  echo "== round $r $(date +%T)"
  $BIN bench -c mobius,quick_cache -t 2,8,16 -s 10k,100k -w $W -r 3 --no-plots -q -o oversub/round$r
  $BIN bench --hit-only -c mobius,quick_cache,ceiling -t 1,2 -w $W -r 3 --no-plots -q -o hit-only/round$r
done
echo done

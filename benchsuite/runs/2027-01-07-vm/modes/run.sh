#!/usr/bin/env bash
# The host's two-thread modes: per process, the time of one cache-line transfer between the
# two CPUs (pingpong.c) before and after a bench of the ceiling, Mobius and quick_cache at one
# and two threads, with /proc/stat's user and steal jiffies over the bench.
# Usage: PINGPONG=path/to/pingpong SIFTER=path/to/sifter ./run.sh [N]
set -euo pipefail
cd "$(dirname "$0")"
S=${SIFTER:-../../../../target/release/sifter}
P=${PINGPONG:-./pingpong}
echo "process transfer_ns_before transfer_ns_after user steal ceiling1 mobius1 quick_cache1 ceiling2 mobius2 quick_cache2" > modes.txt
for i in $(seq "${FIRST:-1}" "${1:-40}"); do
  a=$($P)
  read -r _ u1 _ _ _ _ _ _ st1 _ < /proc/stat
  $S bench -c ceiling,mobius,quick_cache -t 1,2 -s 10k -w zipf:alpha=1.0,keys=1000000 -r 3 -q --no-plots -o p$i > p$i.txt
  read -r _ u2 _ _ _ _ _ _ st2 _ < /proc/stat
  b=$($P)
  m=$(awk -F, 'NR > 1 { v[$4 "," $5] = $6 } END { printf "%s %s %s %s %s %s", v["1,ceiling"], v["1,mobius"], v["1,quick_cache"], v["2,ceiling"], v["2,mobius"], v["2,quick_cache"] }' p$i/results.csv)
  echo "p$i $a $b $((u2-u1)) $((st2-st1)) $m" >> modes.txt
done

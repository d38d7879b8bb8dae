#!/usr/bin/env bash
# Is the two-thread slow mode the hypervisor's? N processes of the two-thread bench, each with
# the CPU time /proc/stat counts in its wall time (user, system, idle, steal; jiffies summed
# over both CPUs) written beside its results.
# Usage: SIFTER=path/to/sifter ./run.sh [N]
set -euo pipefail
cd "$(dirname "$0")"
S=${SIFTER:-../../../../target/release/sifter}
echo "process user system idle iowait steal mobius_mops quick_cache_mops" > steal.txt
for i in $(seq "${FIRST:-1}" "${1:-8}"); do
  read -r _ u1 n1 s1 i1 w1 q1 sq1 st1 _ < /proc/stat
  $S bench -c mobius,quick_cache -t 2 -s 10k -w zipf:alpha=1.0,keys=1000000 -r 3 -q --no-plots -o p$i > p$i.txt
  read -r _ u2 n2 s2 i2 w2 q2 sq2 st2 _ < /proc/stat
  m=$(awk -F, '$5=="mobius"{print $6}' p$i/results.csv)
  q=$(awk -F, '$5=="quick_cache"{print $6}' p$i/results.csv)
  echo "p$i $((u2-u1)) $((s2-s1)) $((i2-i1)) $((w2-w1)) $((st2-st1)) $m $q" >> steal.txt
done

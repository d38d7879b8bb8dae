#!/usr/bin/env bash
# Two threads against one at 10k and 100k, with the ceiling (read-only lookups in an immutable
# map over the same stream) as the host's own scaling. The compute probes (spin.c, spin2.c:
# `gcc -O2`, one process alone, then two pinned to CPUs 0 and 1) were run by hand before.
set -euo pipefail
cd "$(dirname "$0")"
for i in $(seq 1 ${N:-4}); do
  /tmp/sifter-0ca7 bench -c mobius,quick_cache,ceiling -t 1,2 -s 10k,100k -w zipf:alpha=1.0,keys=1000000 \
    -r 3 --no-plots -o p$i > /dev/null 2>&1
  echo "process $i done"
done

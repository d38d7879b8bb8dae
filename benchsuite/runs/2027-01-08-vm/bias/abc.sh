#!/usr/bin/env bash
# Main, the owner-bias patch (stop 80) and the patch with reads left unbracketed (a scratch
# bound), alternated in each round.
set -euo pipefail
cd "$(dirname "$0")"
for i in $(seq 1 "${ROUNDS:-20}"); do
  for v in base bias biasg nosync; do
    /tmp/sifter-$v bench -c mobius,quick_cache -t 1 -s "${SIZES:-2k,10k}" \
      -w zipf:alpha=1.0,keys=1000000 -r 3 -q --no-plots -o "c-$v/r$i" > /dev/null 2>&1
  done
done
echo done

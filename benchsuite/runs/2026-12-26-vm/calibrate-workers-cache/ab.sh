#!/usr/bin/env bash
# Two alternated rounds of /tmp/sifter-NEW against /tmp/sifter-base, run in DIR:
#   bash ab.sh NEW DIR     (note/, warm-read-through/ and apart/ ran it with NEW = note, wrt, apart)
set -euo pipefail
new=$1; cd "$2"
mkdir -p fig 20us mpl8
for i in 1 2; do for b in "$new" base; do
/tmp/sifter-$b bench closed-loop -p lru,problru-mpl,mobius,fifo,sieve,s3fifo --mpl 72 --backend-latency 100us --workers loops --hit-ratios 0.95,0.98,0.99,0.995 --secs 0.5 --csv fig/$b-r$i.csv > /dev/null 2>&1
/tmp/sifter-$b bench closed-loop -p lru,mobius --mpl 72 --backend-latency 20us --workers loops --hit-ratios 0.5,0.9,0.98,0.995 --secs 0.5 --csv 20us/$b-r$i.csv > /dev/null 2>&1
/tmp/sifter-$b bench closed-loop -p lru,mobius --mpl 8 --backend-latency 100us --workers loops --hit-ratios 0.5,0.9,0.98,0.995 --secs 0.5 --csv mpl8/$b-r$i.csv > /dev/null 2>&1
done; done

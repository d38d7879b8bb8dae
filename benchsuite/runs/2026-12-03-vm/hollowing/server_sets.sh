#!/bin/sh
# alternate base/new server under a set-heavy kvtg mix; prints ops/s and server RSS
KV=${NEW:-target/release/sifter}
for r in 1 2 3; do
 for b in base new; do
  if [ $b = base ]; then S=${BASE:-/tmp/sifter-base}; else S=${NEW:-target/release/sifter}; fi
  $S serve -p 22199 -m 64 -t 2 > /dev/null 2>&1 &
  sleep 0.5
  P=$(pgrep -f "serve -p 22199")
  $KV kvtg -s 127.0.0.1:22199 -k zipf:alpha=1.0,n=10k -m get=0.5,set=0.5 --value-size 1000 -c 8 -t 1 --fill 10000 -d 3s -q --no-plots -o /tmp/kvtg-$b-$r > /dev/null 2>&1; out=$(python3 -c "import json; d=json.load(open(\"/tmp/kvtg-$b-$r/results.json\")); print(round([p for p in d[\"phases\"] if p[\"measured\"]][0][\"throughput\"]))")
  rss=$(grep VmRSS /proc/$P/status | awk '{print $2}')
  echo "$b r$r rss_kib=$rss $out"
  kill $P; sleep 0.3
 done
done

#!/usr/bin/env bash
# Reproduces the multi-step LRU paper's throughput figures (docs/BENCHMARKS.md, "Multi-step
# LRU") with `sifter bench`, scaled to this machine: Fig. 6 (a four-item cache), Fig. 10 (a
# 64-byte object touched through every hit and miss, on a cache smaller and one larger than a
# 32 MiB L3), Fig. 11 (vectors per set) and Fig. 14 (threads, the large cache), and on a host
# whose L3 is larger, one more point beyond it. 15–25 minutes on two cores and 1.3 GB of memory
# at most (Fig. 14's eight sequences), plus 9 minutes and 7 GB for a 480 MiB L3.
#
#   scripts/bench-multistep.sh [OUT_DIR]   # default: benchsuite/runs/<date>-<host>/multistep
#
# GCLOCK is sifter's NbQ-CLOCK (Generalized CLOCK, 8-bit counters), in-vector LRU is
# `multistep-m1` (one vector of four ways per set), exact LRU is `lru`. Run on an otherwise idle
# machine: the figures are ratios between caches measured in the same run.
# Progress bars show on a terminal (stderr); the tables go to stdout and the .txt files.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-benchsuite/runs/$(date +%F)-$(hostname -s)/multistep}
mkdir -p "$OUT"
cargo build --release -q -p sifter-cli
S=target/release/sifter
# The paper's large point (32M items of 100M keys) scaled: Zipf 1.0 over 20M keys, a cache of
# 2.06M entries (0.9 of the 2.29M distinct keys in 10M requests; more than a 32 MiB L3); its
# small point (64k items) is 64,191 entries (0.028 of them). Warm-up stops at 80 % full: a
# set-associative cache never holds 98 % of its capacity, and every cache must start measuring
# at the same place. It runs at least the first half of each thread's 16M requests and at most
# 12M (`sifter bench` stops it there), so the measured phase's 4M requests always fit in the
# rest: with 10M requests, one thread's warm-up needed more than half of them to fill the large
# cache that far (in-vector LRU never did) and the measured phase was cut short.
BIG=(-w zipf:alpha=1.0,keys=20000000 --sequence 16000000 --fill 0.8)
SMALL=64191
LARGE=2063289

echo "== Fig. 6: a four-item cache over 10, 20 and 40 keys (YCSB's Zipf 0.99), all miss, all hit"
for k in 10 20 40; do
  size=$(python3 -c "print(4 / $k)")
  $S bench -c multistep-m1,nbq-clock,lru -t 1 -w "zipf:alpha=0.99,keys=$k" -s "$size" \
    --sequence 16000000 --requests 6000000 -r 5 --no-plots -o "$OUT/fig6-keys$k" | tee "$OUT/fig6-keys$k.txt"
done
# All miss: uniform over 100M keys, so a four-item cache never hits.
$S bench -c multistep-m1,nbq-clock,lru -t 1 -w uniform:n=100000000,requests=16000000 \
  -s 4 --sequence 16000000 --requests 6000000 -r 5 --no-plots -o "$OUT/fig6-miss" | tee "$OUT/fig6-miss.txt"
$S bench -c multistep-m1,nbq-clock,lru -t 1 -w zipf:alpha=0.99,keys=4 --hit-only \
  --sequence 16000000 --requests 6000000 -r 5 --no-plots -o "$OUT/fig6-hit" | tee "$OUT/fig6-hit.txt"

echo "== Figs. 8 and 10: without and with a 64-byte object, small and large cache, one thread"
for t in 0 64; do
  $S bench -c multistep,multistep-m1,nbq-clock,lru -t 1 "${BIG[@]}" -s "$SMALL,$LARGE" \
    --requests 4000000 -r 3 --touch "$t" --no-plots -o "$OUT/fig10-touch$t" \
    | tee "$OUT/fig10-touch$t.txt"
done

echo "== Fig. 11: vectors per set"
$S bench -c multistep-m1,multistep,multistep-m4,multistep-m8,multistep-p8,lru -t 1 \
  -s 0.01,0.1 -r 5 --sequence 16000000 --requests 6000000 --no-plots -o "$OUT/fig11" | tee "$OUT/fig11.txt"

echo "== Fig. 14: threads 1, 2, 4, 8 on the large cache (shared keys)"
$S bench -c multistep,nbq-clock,lru -t 1,2,4,8 "${BIG[@]}" -s "$LARGE" --requests 4000000 -r 3 \
  -o "$OUT/fig14" | tee "$OUT/fig14.txt"

# The large point's 2.06M entries (43 MB of multi-step sets) are larger than a 32 MiB L3 but
# not than every host's (one had 480 MiB). On a host with more than 32 MiB, one more point
# beyond its L3: as many entries as 1.4 L3s of multi-step sets (21 bytes per entry), over
# 100/32 times as many keys with a sequence three times the keys (the paper's 32M items of
# 100M keys in 300M requests), one thread. About 220 bytes of memory per entry (the sequence,
# its distinct keys, the largest cache) and 9 minutes at 32M entries.
l3=$(cat /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null || true)
case "$l3" in
  *K) l3=$(( ${l3%K} * 1024 )) ;;
  *M) l3=$(( ${l3%M} * 1024 * 1024 )) ;;
  *) l3=$(getconf LEVEL3_CACHE_SIZE 2>/dev/null || true) ;;
esac
case "$l3" in ''|*[!0-9]*) l3=0 ;; esac  # unknown: no point beyond it
if [ "$l3" -gt $(( 32 * 1024 * 1024 )) ]; then
  entries=$(( l3 * 14 / 10 / 21 ))
  keys=$(( entries * 100 / 32 ))
  need=$(( entries * 220 ))
  # In kibibytes, multiplied here: awk prints large products in exponent form, which `[`
  # cannot compare (the check then failed and the point ran whatever the memory).
  avail=$(( $(awk '/MemAvailable/ { print $2 }' /proc/meminfo) * 1024 ))
  if [ "$need" -gt "$avail" ]; then
    echo "== Beyond this host's L3 ($l3 bytes): skipped, $entries entries need about $need bytes of memory, $avail available"
  else
    echo "== Beyond this host's L3 ($l3 bytes): $entries entries, $keys keys, one thread"
    $S bench -c multistep,lru,clock,mobius,quick_cache -t 1 -w "zipf:alpha=1.0,keys=$keys" \
      --sequence $(( keys * 3 )) -s "$entries" --fill 0.8 --warmup-limit 120s --duration 1s -r 3 \
      --no-plots -o "$OUT/beyond-l3" | tee "$OUT/beyond-l3.txt"
  fi
fi
echo "wrote $OUT"

#!/usr/bin/env bash
# Reproduces the throughput figures of docs/BENCHMARKS.md with `sifter bench` (about 30 minutes
# on two cores, 25 of them the first experiment's, whose sixteen-thread runs of the peers are
# slow). Each experiment writes results.csv, results.json and SVG/PNG plots.
#
#   scripts/bench-repro.sh [OUT_DIR]      # default: benchsuite/runs/<date>-<host>/bench
#
# Needs ../shared/traces/twitter_cluster52.csv.zst for the SIEVE Fig. 6 run (skipped without it).
# Run on an otherwise idle machine: every figure is a ratio between caches measured in the same
# run, but a compile or test in parallel shifts all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-benchsuite/runs/$(date +%F)-$(hostname -s)/bench}
mkdir -p "$OUT"
cargo build --release -q -p sifter-cli
S=target/release/sifter
# Each thread's sequence: the warm-up runs its first half (more, up to three quarters, while
# the cache is not full), the measured phase 1M requests of the rest (never a replay of the
# warm-up's requests). In per-thread mode every thread has its own sequence and key space, so
# the sixteen-thread runs make 16 times the requests: with 12M-request sequences and 5M
# measured per thread (the settings until stop 117) the first experiment alone ran over 40
# minutes.
# Progress bars show on a terminal (stderr); the tables go to stdout and the .txt files.
common=(--sequence 4000000 --requests 1000000 --repeat 3)

echo "== Mobius Figs. 2b, 7 and 9: per-thread key spaces, 1 % and 10 %, 1-16 threads"
$S bench "${common[@]}" --mode per-thread --size 0.01,0.1 --threads 1,2,4,8,16 \
  --caches mobius,sieve,lru,fifo,clock,quick_cache,moka,foyer,mutex-lru \
  --workload zipf:alpha=1.0,keys=1000000 -o "$OUT/mobius-fig7" | tee "$OUT/mobius-fig7.txt"

echo "== Mobius Fig. 10: consecutive detection across cache sizes 10-90 %"
$S bench "${common[@]}" --mode per-thread --size 0.1,0.3,0.5,0.7,0.9 --threads 1,2,4 \
  --caches mobius,mobius-wd,sieve,quick_cache \
  --workload zipf:alpha=1.0,keys=1000000 -o "$OUT/mobius-fig10" | tee "$OUT/mobius-fig10.txt"

TW=../shared/traces/twitter_cluster52.csv.zst
if [ -f "$TW" ]; then
  echo "== SIEVE Fig. 6: Twitter trace, each thread its own key space, cache scaled with threads"
  # A trace is its own sequence: a thread's warm-up runs half of it, up to three quarters
  # while the cache is not full, so each thread measures 200k requests of the trace's 1M and
  # never reaches its end (with 300ms, or 300k requests, runs ended there: 59 and 18 of 90).
  $S bench --requests 200000 --repeat 3 --mode per-thread --size 0.5 --threads 1,2,4,8,16 \
    --caches sieve,mobius,lru,mutex-lru,quick_cache,moka \
    --workload "$TW" -o "$OUT/sieve-fig6" | tee "$OUT/sieve-fig6.txt"
else
  echo "SKIPPED SIEVE Fig. 6: $TW not found"
fi

echo "== NbQ-CLOCK mix (70 % GET / 30 % ADD), shared keys"
$S bench "${common[@]}" --workload nbq:get=0.7,alpha=1.0,keys=1000000 --threads 1,2,4,8 \
  --caches clock,fifo,mobius,sieve,quick_cache -o "$OUT/nbq-mix" | tee "$OUT/nbq-mix.txt"

echo "== Harness cost: latency sampling on (1/256) vs off, and the null cache"
for every in 256 0; do
  # 3M measured: a thread's warm-up may run to three quarters of its 12M requests (a fast
  # thread runs on while the other fills the cache), and 5M then ran out (14 of 60 runs).
  $S bench --sequence 12000000 --requests 3000000 --repeat 5 --threads 1,2 --caches null,mobius,quick_cache \
    --sample-every "$every" --no-plots -o "$OUT/harness-sample-$every" | tee "$OUT/harness-sample-$every.txt"
done
echo "wrote $OUT"

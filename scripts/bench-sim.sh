#!/usr/bin/env bash
# Simulator speed: sifter vs libCacheSim on the same trace, in the same session.
#
#   scripts/bench-sim.sh [OUT_DIR]
#
# Generates the issue's workload (10M requests, Zipf(1.0) over 1M objects, as oracleGeneral) in
# target/bench-data/ if missing, runs `sifter sim --bench` (one thread per run, median of 5),
# and, when LIBCACHESIM_CACHESIM points at libCacheSim's `cachesim` binary, runs it on the same
# file (median of 5 of its own MQPS figures). Results go to OUT_DIR (default
# benchsuite/runs/<date>-<host>/) as CSV plus the machine description.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-benchsuite/runs/$(date +%F)-$(hostname -s)}
mkdir -p "$out" target/bench-data
trace=target/bench-data/zipf1.0-1M-10M.oracleGeneral.bin
policies=(fifo sieve lru s3fifo clock)
repeat=5

cargo build --release -q -p sifter-cli
sifter=target/release/sifter
[ -f "$trace" ] || "$sifter" trace gen zipf:alpha=1.0,n=1000000,requests=10000000,seed=1 -o "$trace"

{
  echo "date: $(date -Is)"
  echo "host: $(hostname -s)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) x $(nproc)"
  echo "kernel: $(uname -r)"
  echo "rustc: $(rustc --version)"
  echo "command: $0 $*"
} > "$out/machine.txt"

IFS=,; "$sifter" sim --bench "$trace" -p "${policies[*]}" -s 0.1 --repeat $repeat -q \
  --csv "$out/sim-speed-sifter.csv"; unset IFS

if [ -n "${LIBCACHESIM_CACHESIM:-}" ]; then
  echo "policy,mqps_median,runs" > "$out/sim-speed-libcachesim.csv"
  for p in "${policies[@]}"; do
    runs=()
    for _ in $(seq $repeat); do
      runs+=("$("$LIBCACHESIM_CACHESIM" "$trace" oracleGeneral "$p" 0.1 --ignore-obj-size 1 2>&1 \
        | grep -oE 'throughput [0-9.]+ MQPS' | awk '{print $2}')")
    done
    med=$(printf '%s\n' "${runs[@]}" | sort -g | sed -n "$(( (repeat + 1) / 2 ))p")
    echo "$p,$med,${runs[*]}" >> "$out/sim-speed-libcachesim.csv"
  done
  column -s, -t "$out/sim-speed-libcachesim.csv"
else
  echo "(set LIBCACHESIM_CACHESIM=/path/to/cachesim to measure libCacheSim in the same session)"
fi
echo "results in $out"

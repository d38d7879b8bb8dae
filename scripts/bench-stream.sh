#!/usr/bin/env bash
# The simulator at trace scale (issue 16): loader speed, end-to-end time against libCacheSim,
# and peak memory of streamed sweeps — all in one session on this machine.
#
#   scripts/bench-stream.sh [OUT_DIR] [--big]
#
# Installs libCacheSim's Python bindings (libcachesim 0.3.5) into target/pyenv-lcs when
# missing. Generates in target/bench-data/: the 10M-request Zipf(1.0) oracleGeneral file over
# 1M objects, its zstd copy, and a Twitter-style CSV (zstd) of 10M requests (the shared
# twitter_cluster52 trace, ten times). With --big it also measures peak memory on a
# 200M-request oracleGeneral file (4.8 GB, generated once) and a 2-billion-request synthetic
# Zipf trace streamed from the generator (about an hour on 2 cores).
#
# Results: OUT_DIR (default benchsuite/runs/<date>-<host>/stream/) as CSV files.
set -euo pipefail
cd "$(dirname "$0")/.."
out=benchsuite/runs/$(date +%F)-$(hostname -s)/stream
big=0
for a in "$@"; do
  case "$a" in
    --big) big=1 ;;
    *) out=$a ;;
  esac
done
mkdir -p "$out" target/bench-data
cargo build --release -q -p sifter-cli
sifter=target/release/sifter
data=target/bench-data
z10=$data/zipf1.0-1M-10M.oracleGeneral.bin
[ -f "$z10" ] || "$sifter" trace gen zipf:alpha=1.0,n=1000000,requests=10000000,seed=1 -o "$z10"
[ -f "$z10.zst" ] || zstd -q -3 -T0 "$z10" -o "$z10.zst"
tw=$data/twitter52x10.csv.zst
if [ ! -f "$tw" ]; then
  tw_src=../shared/traces/twitter_cluster52.csv.zst
  [ -f "$tw_src" ] || { echo "missing $tw_src (../shared beside the checkout)" >&2; exit 1; }
  { zstd -dc "$tw_src"; for _ in $(seq 9); do zstd -dc "$tw_src" | tail -n +2; done; } \
    | zstd -q -3 -T0 -o "$tw"
fi

py=target/pyenv-lcs/bin/python
if ! "$py" -c 'import libcachesim' 2>/dev/null; then
  python3 -m venv target/pyenv-lcs
  target/pyenv-lcs/bin/pip install -q libcachesim==0.3.5
fi

{
  echo "date: $(date -Is)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) x $(nproc)"
  echo "rustc: $(rustc --version)"
  echo "libcachesim: $("$py" -c 'import libcachesim; print(libcachesim.__version__)')"
} > "$out/machine.txt"

# Wall seconds and peak RSS (KiB) of a command: prints "SECONDS KIB", the command's stderr
# goes to $out/last.err.
timed() {
  /usr/bin/time -f "%e %M" -o "$out/time.txt" "$@" > "$out/last.out" 2> "$out/last.err"
  cat "$out/time.txt"
}

# 1. Loader: decode + id mapping (the first pass of a streamed sweep, timed by sifter).
echo "trace,requests,scan_seconds,mreq_per_s" > "$out/loader.csv"
for t in "$z10" "$z10.zst" "$tw"; do
  for _ in 1 2 3; do
    timed "$sifter" sim "$t" -p fifo -s 0.1 --mode stream -q > /dev/null
    line=$(grep -m1 'scanned in' "$out/last.err")
    n=$(echo "$line" | sed -E 's/.*: ([0-9]+) requests.*/\1/')
    s=$(echo "$line" | sed -E 's/.*scanned in ([0-9.]+) s.*/\1/')
    echo "$(basename "$t"),$n,$s,$(echo "$n / $s / 1000000" | bc -l | xargs printf %.1f)" >> "$out/loader.csv"
  done
done
column -s, -t "$out/loader.csv"

# 2. End to end, one policy at one size (10 % of the objects), against libCacheSim given the
# same absolute capacity (so it needs no working-set pass). sifter also runs its FIFO baseline.
cap=$("$sifter" sim "$z10" -p fifo -s 0.1 -q --csv - 2>/dev/null | awk -F, 'NR==2{print $5}')
echo "policy,sifter_s,libcachesim_s,speedup,sifter_miss_ratio,libcachesim_miss_ratio" > "$out/end-to-end.csv"
for p in fifo lru sieve s3fifo; do
  read -r s_sec _ < <(timed "$sifter" sim "$z10" -p "$p" -s "$cap" -q --csv -)
  s_mr=$(awk -F, 'NR==2 {print $(NF-2)}' "$out/last.out")
  read -r l_sec _ < <(timed "$py" benchsuite/tools/libcachesim_run.py "$z10" "$p" "$cap")
  l_mr=$(awk -F, 'NR==1{print $3}' "$out/last.out")
  echo "$p,$s_sec,$l_sec,$(echo "$l_sec / $s_sec" | bc -l | xargs printf %.2f),$s_mr,$l_mr" >> "$out/end-to-end.csv"
done
column -s, -t "$out/end-to-end.csv"

# 3. A sweep of 6 policies x 4 sizes; libCacheSim runs it on all cores (one process per core).
caps=$("$sifter" sim "$z10" -p fifo -s 0.001,0.01,0.1,0.5 -q --csv - 2>/dev/null | awk -F, 'NR>1{printf "%s%s", sep, $5; sep=","}')
echo "tool,seconds,peak_rss_kib" > "$out/sweep.csv"
read -r s_sec s_kb < <(timed "$sifter" sim "$z10" -p fifo,lru,sieve,s3fifo,clock,arc -s "$caps" -q)
echo "sifter (auto: in memory),$s_sec,$s_kb" >> "$out/sweep.csv"
read -r s2_sec s2_kb < <(timed "$sifter" sim "$z10" -p fifo,lru,sieve,s3fifo,clock,arc -s "$caps" -q --mode stream)
echo "sifter --mode stream,$s2_sec,$s2_kb" >> "$out/sweep.csv"
read -r l_sec l_kb < <(timed "$py" benchsuite/tools/libcachesim_run.py "$z10" fifo,lru,sieve,s3fifo,clock,arc "$caps" --jobs "$(nproc)")
echo "libcachesim ($(nproc) processes),$l_sec,$l_kb (largest process)" >> "$out/sweep.csv"
column -s, -t "$out/sweep.csv"

# 4. Peak memory at scale.
if [ "$big" = 1 ]; then
  echo "trace,policies,sizes,seconds,peak_rss_kib" > "$out/memory.csv"
  z200=$data/zipf1.0-10M-200M.oracleGeneral.bin
  [ -f "$z200" ] || "$sifter" trace gen zipf:alpha=1.0,n=10000000,requests=200000000,seed=1 -o "$z200"
  read -r sec kb < <(timed "$sifter" sim "$z200" -p fifo,lru,sieve,s3fifo -s 0.001,0.01,0.1 -q)
  echo "$(basename "$z200"),4,3,$sec,$kb" >> "$out/memory.csv"
  read -r sec kb < <(timed "$sifter" sim zipf:alpha=1.0,n=1000000,requests=2000000000,seed=1 \
    -p fifo,lru,sieve,s3fifo -s 0.001,0.01,0.1 -q)
  echo "zipf 2e9 requests (generator),4,3,$sec,$kb" >> "$out/memory.csv"
  column -s, -t "$out/memory.csv"
fi
rm -f "$out/last.out" "$out/last.err" "$out/time.txt"
echo "results in $out"

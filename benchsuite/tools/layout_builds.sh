#!/usr/bin/env bash
# Builds N copies of the release `sifter` binary, each with its functions in another random
# order: rustc puts every function in a section of its own, and the linker (lld, rustc's
# default on x86_64 Linux) shuffles them with a seed (`--shuffle-sections`). A throughput
# ratio measured on one binary includes that binary's code layout — which functions share
# cache lines and pages, how hot loops are aligned — and on this path the layout alone moves
# a cache's one-thread figure by up to ~14 % (docs/BENCHMARKS.md, stop 89). Comparing over
# several layouts averages that out (the method of Curtsinger and Berger's Stabilizer, at
# link time).
#
# Usage: benchsuite/tools/layout_builds.sh OUTDIR N [FIRST_SEED]   (seeds FIRST_SEED.. , default 1)
# Leaves OUTDIR/sifter-L<seed>; a later `cargo build --release` relinks the usual binary.
# Time several builds over their layouts with layout_rounds.sh, then paired_ratios.py --layouts.
# (The usual binary, target/release/sifter, is left as the last layout's: rebuild it before
# using it as the head's.)
set -euo pipefail
out=$(realpath -m "${1:?OUTDIR}"); n=${2:?N}; first=${3:-1}
mkdir -p "$out"
cd "$(dirname "$0")/../.."
for seed in $(seq "$first" $((first + n - 1))); do
  echo "layout $seed" >&2
  cargo rustc --release --locked -q -p sifter-cli --bin sifter -- \
    -C "link-arg=-Wl,--shuffle-sections=.text*=$seed"
  cp target/release/sifter "$out/sifter-L$seed"
done

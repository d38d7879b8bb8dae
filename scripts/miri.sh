#!/usr/bin/env bash
# Runs the small tests of the concurrent cache under Miri (nightly), which detects undefined
# behaviour in the unsafe core: use-after-free, data races, invalid pointers, leaks.
# Installs the nightly `miri` and `rust-src` components when missing. Called by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! rustup +nightly component list --installed 2>/dev/null | grep -q '^miri'; then
  rustup toolchain install nightly --profile minimal
  rustup +nightly component add miri rust-src
fi
MIRIFLAGS="${MIRIFLAGS:-}" \
  cargo +nightly miri test -p sifter --test miri_small --test capacity --test chaos --test multistep "$@"
# The tables allocated zeroed (`raw/table.rs`, "Large tables"), at a size Miri can run.
MIRIFLAGS="${MIRIFLAGS:-}" \
  cargo +nightly miri test -p sifter --lib -- raw::table::tests::lazy

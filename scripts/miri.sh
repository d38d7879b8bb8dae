#!/usr/bin/env bash
# Runs the small tests of the concurrent cache under Miri (nightly), which detects undefined
# behaviour in the unsafe core (permissive provenance: crossbeam-epoch tags pointers through
# integers). Leaks are ignored because the epoch collector may still hold deferred frees when
# the test process ends. Tree Borrows instead of Stacked Borrows: crossbeam-epoch's intrusive
# list violates the (experimental) Stacked Borrows rules, as crossbeam's own Miri CI notes. Needs `rustup +nightly component add miri rust-src`.
set -euo pipefail
cd "$(dirname "$0")/.."
MIRIFLAGS="${MIRIFLAGS:--Zmiri-ignore-leaks -Zmiri-permissive-provenance -Zmiri-tree-borrows}" \
  cargo +nightly miri test -p sifter --test miri_small --test basic "$@"

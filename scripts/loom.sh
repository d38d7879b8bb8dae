#!/usr/bin/env bash
# Model-checks the lock-free queue policies with loom (see crates/sifter/tests/loom.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}" \
  CARGO_TARGET_DIR=target/loom cargo test -p sifter --release --test loom "$@"

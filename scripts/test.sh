#!/usr/bin/env bash
# The project's test command (README, CI): formatting, lints, every test.
# Needs only Rust stable (rustfmt and clippy components, installed here if missing); the
# scripts it calls install the rest (nightly Miri, libmemcached-tools, Chromium, Python venvs
# with maturin, numpy, pandas, matplotlib, dask).
# Tests that read ../shared (real traces, libCacheSim's figures) skip with a message when it is
# absent; set SIFTER_SHARED=/path/to/shared to point elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."

for c in rustfmt clippy; do
  if ! rustup component list --installed 2>/dev/null | grep -q "^$c"; then
    rustup component add "$c"
  fi
done

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== the outside harness (benchsuite/outside, its own workspace): fmt, clippy -D warnings"
cargo fmt --manifest-path benchsuite/outside/Cargo.toml -- --check
cargo clippy --manifest-path benchsuite/outside/Cargo.toml --locked -- -D warnings
echo "== cargo test"
cargo test --workspace --locked
echo "== cargo doc -D warnings (broken or private intra-doc links)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
echo "== cargo doc -D warnings, private items too (the internals' docs and their links)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --document-private-items
echo "== loom model checks (crates/sifter/tests/loom.rs)"
scripts/loom.sh --locked
echo "== Miri on the small tests of the unsafe core (crates/sifter/tests/{miri_small,capacity,chaos,multistep}.rs, and the zeroed tables)"
scripts/miri.sh
echo "== memcached conformance of sifter serve (memccapable -a and -b)"
cargo build --release --locked -p sifter-cli
scripts/memcached-conformance.sh target/release/sifter
echo "== two sifter serve processes behind a consistent-hashing client, one stopped"
scripts/server-failover.sh target/release/sifter
echo "== pymemcache's own integration suite against sifter serve"
scripts/pymemcache-suite.sh target/release/sifter
echo "== the Python package: pip install ./crates/sifter-py, pytest, the notebook, the Dask example"
scripts/python-tests.sh target/release/sifter
echo "== the lab report in headless Chromium (console errors, missing images, external requests)"
scripts/browser-check.sh
echo "== all checks passed"

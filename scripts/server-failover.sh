#!/usr/bin/env bash
# Two `sifter serve` processes behind pymemcache's consistent-hashing HashClient, one stopped
# mid-run (scripts/server/failover.py). Installs pymemcache into a virtualenv under target/ when
# missing; skips with a message only if that is impossible. Called by scripts/test.sh.
# Usage: scripts/server-failover.sh [path/to/sifter]
set -euo pipefail
cd "$(dirname "$0")/.."
SIFTER="${1:-target/release/sifter}"
[ -x "$SIFTER" ] || cargo build --release --locked -p sifter-cli
VENV=target/pyenv
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import pymemcache' 2>/dev/null; then
  if ! { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q 'pymemcache>=4,<5'; }; then
    echo "SKIP: could not install pymemcache (python3 venv + pip) here"
    exit 0
  fi
fi
timeout 300 "$VENV/bin/python" scripts/server/failover.py "$SIFTER"

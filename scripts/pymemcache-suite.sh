#!/usr/bin/env bash
# pymemcache's own integration suite (pymemcache/test/test_integration.py from its source
# release, ~100 tests over its client classes) against `sifter serve` on a free 127.0.0.1 port,
# stopped afterwards. Installs pymemcache 4.0.0 and pytest into the virtualenv under target/
# shared with scripts/server-failover.sh, and fetches the source release (the wheel has no
# tests) into target/; skips with a message only if that is impossible. Called by
# scripts/test.sh. Usage: scripts/pymemcache-suite.sh [path/to/sifter]
set -euo pipefail
cd "$(dirname "$0")/.."
SIFTER="${1:-target/release/sifter}"
[ -x "$SIFTER" ] || cargo build --release --locked -p sifter-cli
VENV=target/pyenv
SRC=target/pymemcache-src
VERSION=4.0.0
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import pymemcache, pytest' 2>/dev/null; then
  if ! { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q "pymemcache==$VERSION" pytest; }; then
    echo "SKIP: could not install pymemcache and pytest (python3 venv + pip) here"
    exit 0
  fi
fi
if [ ! -f "$SRC/pymemcache-$VERSION/pymemcache/test/test_integration.py" ]; then
  mkdir -p "$SRC"
  if ! "$VENV/bin/pip" download -q --no-deps --no-binary :all: "pymemcache==$VERSION" -d "$SRC"; then
    echo "SKIP: could not download pymemcache's source release (its integration tests)"
    exit 0
  fi
  tar xzf "$SRC/pymemcache-$VERSION.tar.gz" -C "$SRC"
fi
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$SIFTER" serve -l 127.0.0.1 -p "$PORT" -m 64 -t 2 2>/dev/null &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  sleep 0.1
done
echo "pymemcache $VERSION integration suite against sifter serve (port $PORT)"
# Run from the source tree so its conftest (the --server/--port options) is used; the
# installed package is what is tested (same version).
cd "$SRC/pymemcache-$VERSION"
timeout 300 "../../../$VENV/bin/python" -m pytest -q -p no:cacheprovider -o addopts= -m integration \
  pymemcache/test/test_integration.py --server 127.0.0.1 --port "$PORT" 2>&1 | tail -5
exit "${PIPESTATUS[0]}"

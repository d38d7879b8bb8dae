#!/usr/bin/env bash
# memcached conformance of `sifter serve`: memccapable's ASCII and binary suites (27 tests
# each) against a server started here on a free 127.0.0.1 port per policy, stopped afterwards. Installs Debian's
# libmemcached-tools (memccapable) when missing; skips with a message only if that is impossible.
# Then `sifter kvtg` against a stock memcached (text and binary).
# Called by scripts/test.sh. Usage: scripts/memcached-conformance.sh [path/to/sifter]
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v memccapable >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq >/dev/null && \
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libmemcached-tools >/dev/null || true
  fi
fi
if ! command -v memccapable >/dev/null 2>&1; then
  echo "SKIP: memccapable (Debian package libmemcached-tools) could not be installed here"
  exit 0
fi

SIFTER="${1:-target/release/sifter}"
[ -x "$SIFTER" ] || cargo build --release --locked -p sifter-cli
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((21000 + RANDOM % 1000))
}
PID=""
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; wait 2>/dev/null || true' EXIT
for policy in mobius s3fifo sieve; do
  PORT=$(free_port)
  "$SIFTER" serve -l 127.0.0.1 -p "$PORT" -m 64 -t 2 --policy "$policy" 2>/dev/null &
  PID=$!
  for _ in $(seq 1 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.1
  done
  echo "memccapable (ASCII and binary) against sifter serve --policy $policy (port $PORT)"
  timeout 120 memccapable -h 127.0.0.1 -p "$PORT" -a | tail -1
  timeout 120 memccapable -h 127.0.0.1 -p "$PORT" -b | tail -1
  kill $PID
  wait $PID 2>/dev/null || true
  PID=""
done

# sifter kvtg against stock memcached (Debian's memcached package, installed when missing):
# both protocols, a filled key space read back, every GET a hit.
if ! command -v memcached >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  { $SUDO apt-get update -qq >/dev/null 2>&1 && \
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq memcached >/dev/null 2>&1; } || true
fi
if ! command -v memcached >/dev/null 2>&1; then
  echo "SKIP: kvtg against stock memcached (Debian package memcached could not be installed here)"
  exit 0
fi
PORT=$(free_port)
memcached -u "$(id -un)" -l 127.0.0.1 -p "$PORT" -U 0 -t 2 -m 64 &
PID=$!
for _ in $(seq 1 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  sleep 0.1
done
OUT=$(mktemp -d)
for proto in "" --binary; do
  timeout 120 "$SIFTER" kvtg -s "127.0.0.1:$PORT" $proto -k uniform:n=2000 --fill 2000 -m get=1 \
    -c 4 --pipeline 4 -r 20000 -q --no-plots --json -o "$OUT" > "$OUT/r.json"
  python3 - "$OUT/r.json" "${proto:-text}" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
m = next(p for p in j["phases"] if p["measured"])
assert m["requests"] == 20000 and m["errors"] == 0 and m["get_hit_ratio"] == 1.0, m
print(f"kvtg against memcached ({sys.argv[2]}): {m['requests']} requests, hit ratio 1.0, "
      f"{m['throughput']:.0f} req/s")
PY
done
rm -rf "$OUT"
kill $PID
wait $PID 2>/dev/null || true
PID=""

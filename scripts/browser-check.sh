#!/usr/bin/env bash
# Opens the lab report in headless Chromium and fails on any console error, failed load,
# missing image or request leaving the machine; saves a full-page screenshot.
#
#   scripts/browser-check.sh [--update-screenshot]
#
# Installs Chromium from the distribution's packages (apt) and the Python package
# websocket-client (into target/pyenv-browser) when missing. Output: target/browser-check/
# (the report, screenshot.png and screenshot-first-screen.png). --update-screenshot also
# copies them to docs/lab-report.png and docs/lab-report-first-screen.png, which the README
# shows.
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/browser-check
mkdir -p "$out"

chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$chromium" ] && command -v apt-get > /dev/null; then
  echo "browser check: installing Chromium (apt)"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  if $sudo apt-get update -qq > "$out/apt.log" 2>&1 &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >> "$out/apt.log" 2>&1; then
    chromium=$(command -v chromium || true)
  fi
fi
if [ -z "$chromium" ]; then
  echo "browser check SKIPPED: no Chromium and it could not be installed (see $out/apt.log)"
  exit 0
fi

py=target/pyenv-browser/bin/python
if ! "$py" -c 'import websocket' 2> /dev/null; then
  python3 -m venv target/pyenv-browser
  target/pyenv-browser/bin/pip install -q websocket-client
fi

cargo build --release -q -p sifter-cli
rm -rf "$out/lab-report"
target/release/sifter lab --quick -q -o "$out/lab-report" > "$out/lab.txt"
"$py" scripts/browser_check.py "$chromium" "$out/lab-report/index.html" "$out/screenshot.png"
if [ "${1:-}" = "--update-screenshot" ]; then
  cp "$out/screenshot.png" docs/lab-report.png
  cp "$out/screenshot-first-screen.png" docs/lab-report-first-screen.png
  echo "updated docs/lab-report.png and docs/lab-report-first-screen.png"
fi

#!/usr/bin/env bash
# Browser tests of the widget: Debian's Chromium driven by playwright-core, against a real
# `svc serve` (SVC_RATE_LIMIT=off, temporary data folder) with the test pages on a second origin.
#
#   e2e/widget/run.sh            installs what is missing (npm ci in widget/, apt chromium), builds
#                                target/debug/svc, runs the tests
# Exit status 0 on success; 2 when the tests cannot run here (no Chromium and no way to install it),
# after saying why.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v node >/dev/null 2>&1; then
  echo "SKIP: node is not installed (the browser tests run on Node 20+)"; exit 2
fi
if [ ! -d widget/node_modules/playwright-core ]; then
  echo "==> npm ci (widget/)"
  (cd widget && npm ci --no-audit --no-fund) || { echo "SKIP: npm ci failed in widget/ (no registry?)"; exit 2; }
fi
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> apt-get install chromium"
    { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; } >target/apt-chromium.log 2>&1 ||
      { echo "SKIP: could not install chromium with apt-get (see target/apt-chromium.log)"; exit 2; }
  else
    echo "SKIP: $CHROMIUM is missing and apt-get install needs root (install Debian's chromium package)"; exit 2
  fi
fi
export CHROMIUM
if [ -z "${SVC_BIN:-}" ]; then
  echo "==> cargo build -p svc"
  cargo build -p svc --locked --quiet
  export SVC_BIN=target/debug/svc
fi
echo "==> browser tests (e2e/widget)"
exec node --test --test-concurrency=1 e2e/widget/

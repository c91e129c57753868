# Sourced by the browser test runners (e2e/widget/run.sh, e2e/dashboard/run.sh), from the repository
# root: makes sure Node, playwright-core (npm ci in widget/), Debian's Chromium and the svc binary are
# there, installing what is missing when it can. When the tests cannot run here it prints
# "SKIP: <why>" and exits 2. Afterwards CHROMIUM and SVC_BIN are exported.

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
    mkdir -p target
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

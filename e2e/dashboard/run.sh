#!/usr/bin/env bash
# Browser tests of the dashboard: Debian's Chromium driven by playwright-core like a person, against
# a real `svc serve` (SVC_RATE_LIMIT=off, RUST_LOG=warn, temporary data folder; one per test file).
#
#   e2e/dashboard/run.sh                 installs what is missing (npm ci in widget/, apt chromium),
#                                        builds target/debug/svc, runs the tests
#   e2e/dashboard/run.sh --docs-images   also writes the screenshots of docs/dashboard.md
#                                        (docs/images/dashboard-*.png); they always go to
#                                        target/dashboard-screenshots/
# Exit status 0 on success; 2 when the tests cannot run here (no Node, no Chromium and no way to
# install them), after saying why.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" = "--docs-images" ]; then
  export SVC_DOCS_IMAGES=1
fi
source e2e/lib/browser-deps.sh
echo "==> browser tests (e2e/dashboard)"
exec node --test --test-concurrency=1 e2e/dashboard/

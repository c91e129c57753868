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
source e2e/lib/browser-deps.sh
echo "==> browser tests (e2e/widget)"
exec node --test --test-concurrency=1 e2e/widget/

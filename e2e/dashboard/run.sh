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
# The reporter sign-in tests (reporter.test.mjs) run a real OpenID Connect provider (oidc-provider,
# npm ci in e2e/oidc) and a real SMTP server (aiosmtpd in target/mail-venv, as scripts/test installs
# it); when either cannot be installed, those tests say they skipped and why.
if [ ! -d e2e/oidc/node_modules/oidc-provider ]; then
  echo "==> npm ci (e2e/oidc)"
  (cd e2e/oidc && npm ci --no-audit --no-fund) || echo "npm ci failed in e2e/oidc: the reporter sign-in tests will skip"
fi
source e2e/lib/venv.sh
if [ -z "${SVC_TEST_SMTP_PYTHON:-}" ] && ! ensure_venv mail-venv crates/svc-server/tests/smtp/requirements.txt; then
  echo "$VENV_PROBLEM: the reporter sign-in tests will skip"
fi
echo "==> browser tests (e2e/dashboard)"
exec node --test --test-concurrency=1 e2e/dashboard/

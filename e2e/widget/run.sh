#!/usr/bin/env bash
# Browser tests of the widget: Debian's Chromium driven by playwright-core, against a real
# `svc serve` (SVC_RATE_LIMIT=off, temporary data folder) with the test pages on a second origin.
#
#   e2e/widget/run.sh            installs what is missing (npm ci in widget/, apt chromium, the
#                                Python MCP SDK in target/mcp-venv), builds target/debug/svc, runs
#                                the tests
# Exit status 0 on success; 2 when the tests cannot run here (no Chromium and no way to install it),
# after saying why.
set -euo pipefail
cd "$(dirname "$0")/../.."
source e2e/lib/browser-deps.sh
# agent.test.mjs reads what the widget filed with the official Python MCP SDK (target/mcp-venv, as
# e2e/mcp/run.sh installs it); without it that test says it is skipped and why.
source e2e/lib/venv.sh
if ensure_venv mcp-venv e2e/mcp/requirements.txt; then
  export SVC_MCP_PYTHON=$PWD/target/mcp-venv/bin/python
else
  echo "note: the Python MCP SDK is missing ($VENV_PROBLEM): agent.test.mjs will be skipped"
fi
echo "==> browser tests (e2e/widget)"
exec node --test --test-concurrency=1 e2e/widget/

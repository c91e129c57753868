#!/usr/bin/env bash
# Drives Svc's tool endpoint (POST /mcp) with the official MCP SDK clients over a real socket:
# the Python `mcp` package (test_sdk.py) and the TypeScript `@modelcontextprotocol/sdk` (sdk.test.mjs).
#
# Builds the debug binary, starts `svc serve` on a fresh data folder on a loopback port, reads the
# bootstrap block it prints, mints keys through the REST API (read+write, read-only), seeds reports
# through the ingest API (one with a screenshot, one in a second project), mints an org-wide key
# with the CLI, creates a dashboard user (an owner) with the CLI, runs both SDK tests with keys
# (test_sdk.py, sdk.test.mjs) and with OAuth, the user consenting headlessly (test_oauth.py,
# oauth.test.mjs), and stops the server on exit.
#
# Usage: e2e/mcp/run.sh [python|node]...   (default: both)
# Exit status: 0 when every selected test ran and passed, 1 when a test failed or the server did
# not start. A suite that cannot run here (no python3 or node, or its packages cannot be
# installed) is skipped, not failed: its reason is printed as "SKIPPED: ..." and, when
# SVC_MCP_SKIP_FILE is set, appended to that file (scripts/test reports it).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
E2E=$ROOT/e2e/mcp

suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(python node)

note_skip() {
  echo "SKIPPED: $*"
  if [ -n "${SVC_MCP_SKIP_FILE:-}" ]; then echo "$*" >>"$SVC_MCP_SKIP_FILE"; fi
}

# --- Toolchains and packages (before the server, so a skip costs nothing) ---------------------
run_python=false
run_node=false
for suite in "${suites[@]}"; do
  case "$suite" in
    python)
      # shellcheck source=../lib/venv.sh
      source "$ROOT/e2e/lib/venv.sh"
      if ensure_venv mcp-venv "$ROOT/e2e/mcp/requirements.txt"; then
        run_python=true
      else
        note_skip "MCP SDK test (Python): $VENV_PROBLEM"
      fi
      ;;
    node)
      if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        note_skip "MCP SDK test (Node): node or npm is not installed"
      elif ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
        note_skip "MCP SDK test (Node): Node $(node --version) is older than 20"
      elif (cd "$E2E" && npm ci --no-audit --no-fund --loglevel=error) >"$ROOT/target/mcp-npm-ci.log" 2>&1; then
        run_node=true
      else
        note_skip "MCP SDK test (Node): npm ci failed in e2e/mcp (no network? see target/mcp-npm-ci.log)"
      fi
      ;;
    *)
      echo "unknown suite $suite (python or node)" >&2
      exit 2
      ;;
  esac
done
if ! $run_python && ! $run_node; then
  echo "No MCP SDK test can run here."
  exit 0
fi
if ! command -v curl >/dev/null 2>&1; then
  note_skip "MCP SDK tests: curl is not installed (run.sh uses it to set the server up)"
  exit 0
fi

# --- The server --------------------------------------------------------------------------------
# shellcheck source=../lib/serve.sh
source "$ROOT/e2e/lib/serve.sh"
start_svc || exit 1
work=$WORK

# --- Keys and reports --------------------------------------------------------------------------
json_field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
post_json() { # path, bearer token, body
  curl -fsS --max-time 10 -X POST "$BASE$1" -H "Authorization: Bearer $2" -H 'Content-Type: application/json' -d "$3"
}
mint() { # name, scopes JSON array
  post_json "/api/v1/projects/$PROJECT_ID/keys" "$SETUP_TOKEN" "{\"name\":\"$1\",\"scopes\":$2}" | json_field key
}
KEY_RW=$(mint "SDK e2e (read+write)" '["feedback:read","feedback:write"]')
KEY_RO=$(mint "SDK e2e (read-only)" '["feedback:read"]')
[ -n "$KEY_RW" ] && [ -n "$KEY_RO" ] || { echo "could not mint keys"; exit 1; }

ingest_report() { # public key, body
  curl -fsS --max-time 10 -X POST "$BASE/ingest/report" -H "x-svc-project-key: $1" \
    -H 'Content-Type: application/json' -d "$2" | json_field reportId
}
# A real 1×1 PNG, uploaded like the widget does.
echo 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==' |
  base64 -d >"$work/shot.png"
BLOB_ID=$(curl -fsS --max-time 10 -X POST "$BASE/ingest/blob" -H "x-svc-project-key: $PUBLIC_KEY" \
  -F kind=screenshot -F "file=@$work/shot.png;type=image/png" | json_field blobId)
REPORT_ID=$(ingest_report "$PUBLIC_KEY" "{\"channelKey\":\"bug\",\"blocks\":[
  {\"type\":\"text\",\"text\":\"Checkout button does nothing\\nClicking Pay shows a spinner forever.\"},
  {\"type\":\"screenshot\",\"blobId\":\"$BLOB_ID\"}],
  \"context\":{\"url\":\"https://shop.example.com/cart\",\"artifactId\":\"preview-1\"}}")
[ -n "$BLOB_ID" ] && [ -n "$REPORT_ID" ] || { echo "could not seed the report"; exit 1; }

# A second project (the CLI shares the database with the running server) with a report of its
# own: out of reach for the project keys, in reach for the org-wide key.
OTHER=$("$SVC" project create --name "Other shop" --json --data-dir "$SVC_DATA_DIR")
OTHER_PROJECT_ID=$(echo "$OTHER" | json_field projectId)
OTHER_PUBLIC_KEY=$(echo "$OTHER" | json_field projectKey)
FOREIGN_REPORT_ID=$(ingest_report "$OTHER_PUBLIC_KEY" '{"blocks":[{"type":"text","text":"A report of another project"}]}')
KEY_ORG=$("$SVC" token org --org Default --scopes feedback:read,feedback:write --name "SDK e2e (org)" --json \
  --data-dir "$SVC_DATA_DIR" | json_field key)
[ -n "$FOREIGN_REPORT_ID" ] && [ -n "$KEY_ORG" ] || { echo "could not set up the second project or the org key"; exit 1; }

# A dashboard user who owns the organization: the person who consents in the OAuth tests.
USER_EMAIL=oauth-e2e@example.com
USER_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
ORG_ID=$(echo "$USER_PASSWORD" | "$SVC" user create --email "$USER_EMAIL" --password-stdin --role owner --json \
  --data-dir "$SVC_DATA_DIR" | json_field orgId)
[ -n "$ORG_ID" ] || { echo "could not create the test user"; exit 1; }

export SVC_BASE_URL=$BASE SVC_MCP_URL=$BASE/mcp SVC_PROJECT_ID=$PROJECT_ID SVC_KEY_RW=$KEY_RW SVC_KEY_RO=$KEY_RO \
  SVC_KEY_ORG=$KEY_ORG SVC_REPORT_ID=$REPORT_ID SVC_FOREIGN_REPORT_ID=$FOREIGN_REPORT_ID \
  SVC_OTHER_PROJECT_ID=$OTHER_PROJECT_ID SVC_ORG_ID=$ORG_ID SVC_SETUP_TOKEN=$SETUP_TOKEN \
  SVC_USER_EMAIL=$USER_EMAIL SVC_USER_PASSWORD=$USER_PASSWORD

# --- The SDK tests -----------------------------------------------------------------------------
failed=0
if $run_python; then
  echo
  echo "== MCP SDK test (Python mcp $("$ROOT/target/mcp-venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))'))"
  "$ROOT/target/mcp-venv/bin/python" "$E2E/test_sdk.py" || failed=1
  echo
  echo "== MCP OAuth test (Python mcp OAuthClientProvider, and the protocol's refusals over raw HTTP)"
  "$ROOT/target/mcp-venv/bin/python" "$E2E/test_oauth.py" || failed=1
fi
if $run_node; then
  echo
  echo "== MCP SDK test (TypeScript @modelcontextprotocol/sdk $(cd "$E2E" && node -p 'require("./node_modules/@modelcontextprotocol/sdk/package.json").version'))"
  (cd "$E2E" && node --test --test-reporter=spec sdk.test.mjs) || failed=1
  echo
  echo "== MCP OAuth test (TypeScript SDK authProvider)"
  (cd "$E2E" && node --test --test-reporter=spec oauth.test.mjs) || failed=1
fi
if [ "$failed" != 0 ]; then
  echo "MCP SDK tests failed; the server's log:"
  tail -n 50 "$work/stderr"
fi
exit "$failed"

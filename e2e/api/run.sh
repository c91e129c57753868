#!/usr/bin/env bash
# Schemathesis against the REST API's own OpenAPI document: every operation, with requests generated
# from the schemas (the examples, coverage and fuzzing phases), judged by every Schemathesis check:
# no 5xx, only documented statuses and content types, responses matching their schemas, schema-valid
# requests accepted and schema-violating ones refused. See schemathesis.toml beside this file.
#
# Installs schemathesis (requirements.txt) into target/schemathesis-venv, starts `svc serve` on a fresh
# data folder on a loopback port, runs with the setup token of its bootstrap block and stops it.
# Bounded: at most SVC_SCHEMATHESIS_EXAMPLES examples per operation and phase (default 40), and the
# run is cut off after 300 s. A fixed seed keeps CI repeatable; set SVC_SCHEMATHESIS_SEED to explore.
#
# Exit status: 0 when every operation passed, 1 on a failure, 2 when it cannot run here (no python3,
# or schemathesis cannot be installed): then "SKIP: <reason>" is printed.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
HERE=$ROOT/e2e/api

venv=$ROOT/target/schemathesis-venv
if ! command -v curl >/dev/null 2>&1; then
  echo "SKIP: curl is not installed (used to wait for the server)"; exit 2
fi
# shellcheck source=../lib/venv.sh
source "$ROOT/e2e/lib/venv.sh"
ensure_venv schemathesis-venv "$HERE/requirements.txt" || { echo "SKIP: $VENV_PROBLEM (it runs Schemathesis)"; exit 2; }

# shellcheck source=../lib/serve.sh
source "$ROOT/e2e/lib/serve.sh"
start_svc || exit 1
export SVC_PROJECT_ID=$PROJECT_ID

# One report with a screenshot, so the routes that take a report or blob id reach their real work.
json_field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
echo 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==' |
  base64 -d >"$WORK/shot.png"
SVC_BLOB_ID=$(curl -fsS --max-time 10 -X POST "$BASE/ingest/blob" -H "x-svc-project-key: $PUBLIC_KEY" \
  -F kind=screenshot -F "file=@$WORK/shot.png;type=image/png" | json_field blobId)
SVC_REPORT_ID=$(curl -fsS --max-time 10 -X POST "$BASE/ingest/report" -H "x-svc-project-key: $PUBLIC_KEY" \
  -H 'Content-Type: application/json' \
  -d "{\"blocks\":[{\"type\":\"text\",\"text\":\"Pay button does nothing\"},{\"type\":\"screenshot\",\"blobId\":\"$SVC_BLOB_ID\"}]}" |
  json_field reportId)
[ -n "$SVC_BLOB_ID" ] && [ -n "$SVC_REPORT_ID" ] || { echo "could not seed a report"; exit 1; }
export SVC_BLOB_ID SVC_REPORT_ID

# One worker: the coverage phase of this Schemathesis version is not safe with several.
cd "$HERE"
status=0
timeout 300 "$venv/bin/schemathesis" run "$BASE/api/v1/openapi.json" --url "$BASE" \
  -H "Authorization: Bearer $SETUP_TOKEN" \
  --checks all --phases examples,coverage,fuzzing --workers 1 \
  --max-examples "${SVC_SCHEMATHESIS_EXAMPLES:-40}" --seed "${SVC_SCHEMATHESIS_SEED:-20261124}" \
  --no-color || status=$?
if [ "$status" != 0 ]; then
  echo "Schemathesis found failures (exit $status); the server's log:"
  tail -n 30 "$WORK/stderr"
  exit 1
fi

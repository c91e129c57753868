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
stamp=$venv/.requirements.sha256
want=$(sha256sum "$HERE/requirements.txt" | cut -d' ' -f1)
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIP: python3 is not installed (it runs Schemathesis)"; exit 2
fi
if ! command -v curl >/dev/null 2>&1; then
  echo "SKIP: curl is not installed (used to wait for the server)"; exit 2
fi
if [ ! -x "$venv/bin/schemathesis" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "Installing e2e/api/requirements.txt into target/schemathesis-venv"
  mkdir -p "$ROOT/target"
  if { { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } &&
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$HERE/requirements.txt"; } \
    >"$ROOT/target/schemathesis-install.log" 2>&1; then
    echo "$want" >"$stamp"
  else
    echo "SKIP: could not install schemathesis (no network? see target/schemathesis-install.log)"; exit 2
  fi
fi

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

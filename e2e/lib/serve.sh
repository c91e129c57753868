# Sourced by the end-to-end runners: starts `svc serve` on a fresh data folder on a loopback port and
# reads its bootstrap block. After `start_svc`: SVC (the binary), WORK (a scratch folder removed on
# exit), SERVER_PID, BASE (http://127.0.0.1:<port>), PROJECT_ID, PUBLIC_KEY, SETUP_TOKEN. Extra
# arguments are passed to `svc serve`. The server is stopped when the calling script exits.

# scripts/test passes the binary its `cargo test` run built (SVC_BIN); alone, build it.
resolve_svc_binary() {
  if [ -n "${SVC_BIN:-}" ]; then
    SVC=$(cd "$(dirname "$SVC_BIN")" && pwd)/$(basename "$SVC_BIN")
  else
    echo "Building the svc binary (debug)"
    cargo build --quiet -p svc
    SVC=$ROOT/target/debug/svc
  fi
}

stop_svc() {
  if [ -n "${SERVER_PID:-}" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  [ -z "${WORK:-}" ] || rm -rf "$WORK"
}

start_svc() {
  resolve_svc_binary
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/svc-e2e.XXXXXX")
  SERVER_PID=""
  trap stop_svc EXIT

  # A fresh SQLite database and blob folder, whatever the caller's environment says.
  unset SVC_DATABASE_URL SVC_BLOB_STORE SVC_PUBLIC_URL SVC_BIND
  export SVC_DATA_DIR=$WORK/data SVC_RATE_LIMIT=off
  mkdir -p "$SVC_DATA_DIR"

  # Port 0: the OS picks a free loopback port; the bootstrap block's embed snippet names it.
  "$SVC" serve --data-dir "$SVC_DATA_DIR" --bind 127.0.0.1:0 "$@" >"$WORK/stdout" 2>"$WORK/stderr" &
  SERVER_PID=$!

  local field _
  field() { sed -n "s/^$1:[[:space:]]*//p" "$WORK/stdout" | head -n1; }
  for _ in $(seq 1 200); do
    if grep -q '^Setup token:' "$WORK/stdout" 2>/dev/null; then break; fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
    sleep 0.1
  done
  PROJECT_ID=$(field 'Project id')
  PUBLIC_KEY=$(field 'Public key')
  SETUP_TOKEN=$(field 'Setup token')
  BASE=$(grep -o 'src="http://127\.0\.0\.1:[0-9]*' "$WORK/stdout" | head -n1 | sed 's/^src="//')
  if [ -z "$PROJECT_ID" ] || [ -z "$PUBLIC_KEY" ] || [ -z "$SETUP_TOKEN" ] || [ -z "$BASE" ]; then
    echo "svc serve did not print its bootstrap block:"
    cat "$WORK/stdout" "$WORK/stderr"
    return 1
  fi
  local ready=false
  for _ in $(seq 1 100); do
    if curl -fsS --max-time 2 "$BASE/healthz" >/dev/null 2>&1; then ready=true; break; fi
    sleep 0.1
  done
  $ready || { echo "svc did not answer on $BASE/healthz"; cat "$WORK/stderr"; return 1; }
  echo "svc is serving on $BASE (project $PROJECT_ID)"
}

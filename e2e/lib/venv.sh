# Sourced by the test runners (scripts/test, e2e/*/run.sh), from the repository root or with ROOT
# set: Python tools the tests run (the MCP SDK, Schemathesis, aiosmtpd), each in a virtualenv of its
# own under target/, installed from a requirements file when it is missing or the file changed (a
# stamp in the virtualenv keeps the file's checksum).
#
# ensure_venv NAME REQUIREMENTS: 0 when target/NAME holds REQUIREMENTS (installed now if needed);
# else 1, with the reason in VENV_PROBLEM (no python3, or an install that failed: no network). The
# install's output goes to target/NAME-install.log.
ensure_venv() {
  local root=${ROOT:-$PWD} name=$1 requirements=$2
  local venv=$root/target/$name want
  VENV_PROBLEM=""
  if ! command -v python3 >/dev/null 2>&1; then
    VENV_PROBLEM="python3 is not installed"
    return 1
  fi
  want=$(sha256sum "$requirements" | cut -d' ' -f1)
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  echo "Installing ${requirements#"$root"/} into target/$name"
  mkdir -p "$root/target"
  if { { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } &&
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"; } \
    >"$root/target/$name-install.log" 2>&1; then
    echo "$want" >"$venv/.requirements.sha256"
    return 0
  fi
  VENV_PROBLEM="could not install ${requirements#"$root"/} into target/$name (no network? see target/$name-install.log)"
  return 1
}

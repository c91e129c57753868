# Sourced by the end-to-end runners that read the tool endpoint with the official Python MCP SDK
# (e2e/mcp/run.sh, e2e/widget/run.sh), from the repository root or with ROOT set: makes
# target/mcp-venv hold e2e/mcp/requirements.txt, installing it when it is missing or the file
# changed (a stamp keeps its checksum).
#
# ensure_mcp_venv: 0 when target/mcp-venv/bin/python can import the SDK; else 1, with the reason in
# MCP_VENV_PROBLEM (no python3, or an install that failed: no network).
ensure_mcp_venv() {
  local root=${ROOT:-$PWD}
  local venv=$root/target/mcp-venv requirements=$root/e2e/mcp/requirements.txt
  local stamp=$venv/.requirements.sha256 want
  MCP_VENV_PROBLEM=""
  want=$(sha256sum "$requirements" | cut -d' ' -f1)
  if ! command -v python3 >/dev/null 2>&1; then
    MCP_VENV_PROBLEM="python3 is not installed"
    return 1
  fi
  if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  echo "Installing e2e/mcp/requirements.txt into target/mcp-venv"
  mkdir -p "$root/target"
  if { { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } &&
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"; } \
    >"$root/target/mcp-pip-install.log" 2>&1; then
    echo "$want" >"$stamp"
    return 0
  fi
  MCP_VENV_PROBLEM="could not install e2e/mcp/requirements.txt (no network? see target/mcp-pip-install.log)"
  return 1
}

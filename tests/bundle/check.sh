#!/usr/bin/env bash
# The Claude Desktop bundle, end to end.
#
# Usage: tests/bundle/check.sh TOOLCELL_BIN
#
# Writes a bundle with `TOOLCELL_BIN bundle`, checks it with the official
# MCPB tools (`@anthropic-ai/mcpb` 2.1.2, installed with npm under
# target/bundle-check/mcpb, never globally): unpack, validate, pack again,
# info; then starts the unpacked server exactly as Claude Desktop would for
# several choices of folders, with the official MCP Python SDK (mcp 2.3.0,
# installed in a venv under target/bundle-check/venv): tests/bundle/desktop.py.
# Prints each check by name, and last `N passed, N failed`; exits 1 if any
# check failed.
set -uo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 TOOLCELL_BIN" >&2
  exit 2
fi
bin=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$root/target/bundle-check
mkdir -p "$work"

echo "installing @anthropic-ai/mcpb@2.1.2 under $work/mcpb"
npm install --prefix "$work/mcpb" --no-audit --no-fund --loglevel=error @anthropic-ai/mcpb@2.1.2 >&2 || exit 1
mcpb=$work/mcpb/node_modules/.bin/mcpb
mcpb_config=$work/mcpb/node_modules/@anthropic-ai/mcpb/dist/shared/config.js
echo "installing mcp==2.3.0 in $work/venv"
if [ ! -x "$work/venv/bin/python" ]; then
  python3 -m venv "$work/venv" || exit 1
fi
"$work/venv/bin/pip" install --quiet --disable-pip-version-check mcp==2.3.0 >&2 || exit 1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
log=$tmp/log

# check NAME COMMAND...: runs COMMAND (its output in $log), counts and
# prints the result; on failure shows the end of the output.
check() {
  local name=$1
  shift
  if "$@" > "$log" 2>&1; then
    passed=$((passed + 1))
    echo "ok - $name"
  else
    failed=$((failed + 1))
    echo "FAIL - $name"
    tail -n 30 "$log" | sed 's/^/    /'
  fi
}
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}

version=$("$bin" --version | awk '{print $2}')
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=linux-x64 ;;
  Linux-aarch64) platform=linux-arm64 ;;
  Darwin-arm64) platform=darwin-arm64 ;;
  Darwin-x86_64) platform=darwin-x64 ;;
  *) echo "this check knows no MCPB platform for $(uname -sm)" >&2; exit 1 ;;
esac
bundle=$tmp/out/toolcell-$version-$platform.mcpb
unpacked=$tmp/unpacked

written() {
  local printed
  printed=$("$bin" bundle -o "$tmp/out") || return 1
  echo "printed: $printed"
  [ "$printed" = "$bundle" ] && [ -f "$bundle" ] && [ "$(ls -A "$tmp/out")" = "$(basename "$bundle")" ]
}
check "toolcell bundle writes and prints toolcell-$version-$platform.mcpb, and nothing else" written
[ -f "$bundle" ] || finish

contents() {
  python3 - "$bundle" "$version" "$platform" <<'EOF'
import json, sys, zipfile
bundle, version, platform = sys.argv[1:]
with zipfile.ZipFile(bundle) as z:
    names = sorted(z.namelist())
    assert names == ["icon.png", "manifest.json", "server/toolcell"], names
    assert z.testzip() is None
    binary = z.getinfo("server/toolcell")
    assert binary.create_system == 3 and (binary.external_attr >> 16) & 0o777 == 0o755, oct(binary.external_attr >> 16)
    manifest = json.loads(z.read("manifest.json"))
    assert manifest["version"] == version, manifest["version"]
    assert manifest["compatibility"]["platforms"] == [platform.split("-")[0]], manifest["compatibility"]
    assert z.read("icon.png").startswith(b"\x89PNG\r\n\x1a\n")
print("ok")
EOF
}
check "the bundle holds manifest.json, icon.png and server/toolcell (mode 755), nothing else" contents

check "mcpb unpack" "$mcpb" unpack "$bundle" "$unpacked"
[ -f "$unpacked/manifest.json" ] || finish

validated() {
  local out
  out=$("$mcpb" validate "$unpacked/manifest.json") || { echo "$out"; return 1; }
  echo "$out"
  grep -q "Manifest schema validation passes" <<< "$out"
}
check "mcpb validate the unpacked manifest.json" validated
check "mcpb pack the unpacked folder" "$mcpb" pack "$unpacked" "$tmp/repacked/toolcell.mcpb"
info() {
  local out
  out=$("$mcpb" info "$bundle") || { echo "$out"; return 1; }
  echo "$out"
  grep -q "File: $(basename "$bundle")" <<< "$out"
}
check "mcpb info on the bundle" info
same_binary() {
  [ -x "$unpacked/server/toolcell" ] && [ "$("$unpacked/server/toolcell" --version)" = "$("$bin" --version)" ]
}
check "the unpacked server/toolcell runs and is the same version" same_binary

# desktop.py prints its own checks; count them here.
"$work/venv/bin/python" "$root/tests/bundle/desktop.py" "$unpacked" "$mcpb_config" | tee "$tmp/desktop.out"
status=${PIPESTATUS[0]}
desktop_passed=$(grep -c '^ok - ' "$tmp/desktop.out")
desktop_failed=$(grep -c '^FAIL - ' "$tmp/desktop.out")
passed=$((passed + desktop_passed))
failed=$((failed + desktop_failed))
if [ "$status" -ne 0 ] && [ "$desktop_failed" -eq 0 ]; then
  failed=$((failed + 1))
  echo "FAIL - tests/bundle/desktop.py exited $status"
fi
finish

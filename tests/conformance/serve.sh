#!/usr/bin/env bash
# Serves the official MCP conformance suite's fixtures over Streamable HTTP.
#
# Usage: tests/conformance/serve.sh TOOLCELL_BINARY HOST:PORT
#
# Builds the fixtures plugin (tests/plugins/conformance, written against the
# Rust SDK like any third-party plugin) for wasm32-wasip2 if needed, writes a
# plugins.toml that serves it alone, and runs `TOOLCELL_BINARY serve --http
# HOST:PORT` in the foreground with it. The caller stops it (SIGTERM ends it
# cleanly). Every fixture lives in the plugin; none in the host.
set -euo pipefail

binary=$(realpath "$1")
listen=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
target="$root/target/test-plugins"
wasm="$target/wasm32-wasip2/release/toolcell_test_conformance.wasm"

# cargo decides whether anything changed; quiet, and on stderr.
(cd "$root" && cargo build --quiet --locked --release --target wasm32-wasip2 \
    --target-dir "$target" -p toolcell-test-conformance) >&2

work=$(mktemp -d "${TMPDIR:-/tmp}/toolcell-conformance.XXXXXX")
cat > "$work/plugins.toml" <<TOML
# The conformance fixtures, and nothing else.
[server]
categories = ["read", "conformance"]

[[plugin]]
name = "conformance"
path = "$wasm"
TOML
cd "$work"
exec "$binary" serve --http "$listen" --config "$work/plugins.toml"

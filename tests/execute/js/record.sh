#!/bin/sh
# Records each snippet's expected stdout by running it with Node 20:
# NN_name.js -> NN_name.out (NN_name.stdin, if present, is its standard input).
# Run from anywhere; the snippets run with this folder as their working
# directory, as run_js runs them with the mount holding data/ as its first one.
set -eu
cd "$(dirname "$0")"
node --version
for js in [0-9][0-9]_*.js; do
  name="${js%.js}"
  if [ -f "$name.stdin" ]; then
    TZ=UTC node "$js" < "$name.stdin" > "$name.out"
  else
    TZ=UTC node "$js" < /dev/null > "$name.out"
  fi
done

#!/usr/bin/env bash
# Stages what the crates `toolcell` and `toolcell-sdk` need from outside
# their own folders, so that `cargo package` ships it (both folders are
# git-ignored, so `cargo package` needs `--allow-dirty` afterwards):
#
#   host/packaged/plugins/   the first-party plugins' components, as the
#                            release build embeds them, and SHA256SUMS, the
#                            manifest host/build.rs checks them against
#   host/packaged/wit/, host/packaged/sdk/...
#                            the files of the repository host/src embeds
#                            (the WIT, the SDKs' templates and sources), under
#                            their paths in the repository
#   sdk/packaged/wit/        the WIT, for the SDK's bindings
#
# Usage: tests/package/stage.sh [--debug]
# Builds the host in release (`cargo build --release --locked -p toolcell`;
# with --debug, `cargo build --locked`: the dev profile and the default
# members, the build the README's run command and a plain `cargo build`
# make, so that CI builds nothing again; the components are the same, since
# the build script always builds them in release), which builds the
# components from source, and copies them from its build script's output
# folder. Replaces whatever an earlier run staged.
set -euo pipefail
build=(--release -p toolcell)
case "${1:-}" in
  --debug) build=() ;;
  "") ;;
  *) echo "usage: $0 [--debug]" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

# The folders of the repository whose files host/src embeds (with
# `source!`/`embed!` in host/src/authoring.rs, `bindgen!` in
# host/src/runtime/contract.rs). A file missing here fails the packaged
# build, so tests/package/check.sh catches it.
embedded=(wit sdk/template sdk/python/template sdk/python/toolcell sdk/js/template sdk/js/toolcell.js
  sdk/js/tools/package.json sdk/js/tools/package-lock.json)

echo "building the host${build:+ in release} (and the first-party plugins from source)" >&2
messages=$(mktemp)
trap 'rm -f "$messages"' EXIT
cargo build "${build[@]}" --locked --message-format=json-render-diagnostics > "$messages"
# The output folder of toolcell's own build script: the one cargo reports
# for the package at host/ (not a stale one of an earlier build).
out_dir=$(python3 - "$messages" "$root/host" <<'PY'
import json, os, sys
host = os.path.realpath(sys.argv[2])
found = None
for line in open(sys.argv[1]):
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if msg.get("reason") != "build-script-executed":
        continue
    pkg = msg.get("package_id", "")
    # "path+file:///…/host#toolcell@0.1.0", or the older "toolcell 0.1.0 (path+file:///…/host)".
    if "path+file://" in pkg and ("#toolcell@" in pkg or pkg.startswith("toolcell ")):
        path = pkg.split("path+file://", 1)[1].split("#", 1)[0].rstrip(")")
        if os.path.realpath(path) == host:
            found = msg["out_dir"]
if not found:
    sys.exit("cargo reported no build script output for the toolcell package at " + host)
print(found)
PY
)

rm -rf host/packaged sdk/packaged
mkdir -p host/packaged/plugins
cp "$out_dir/SHA256SUMS" host/packaged/plugins/
while read -r _ file; do
  cp "$out_dir/$file" host/packaged/plugins/
done < host/packaged/plugins/SHA256SUMS
(cd host/packaged/plugins && sha256sum --check --quiet SHA256SUMS)

# The repository's files, tracked or new, never ignored ones (no
# node_modules or __pycache__).
git ls-files -z --cached --others --exclude-standard -- "${embedded[@]}" |
  while IFS= read -r -d '' file; do
    [ -f "$file" ] || continue # tracked, but deleted in the work tree
    mkdir -p "host/packaged/$(dirname "$file")"
    # cargo package leaves out a folder holding a Cargo.toml (another
    # package, it assumes): host/build.rs gives the name back.
    dest=host/packaged/$file
    [ "$(basename "$file")" = Cargo.toml ] && dest=$dest.staged
    cp "$file" "$dest"
  done
mkdir -p sdk/packaged
cp -R host/packaged/wit sdk/packaged/wit

echo "staged:" >&2
(cd host && du -sh packaged/plugins packaged/wit packaged/sdk) >&2
(cd sdk && du -sh packaged/wit) >&2

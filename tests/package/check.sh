#!/usr/bin/env bash
# The crates as crates.io would ship them: `toolcell` and `toolcell-sdk`
# packaged by `cargo package`, and the host installed from its unpacked
# .crate in an empty directory, with no other folder of this repository.
#
# Usage: tests/package/check.sh [--debug]
#   --debug: install (and try the tampered build) with the dev profile, as
#   `cargo install --debug` does: the packaging is checked just the same,
#   without the 10+ minutes of an optimised build of the toolcell crate on
#   two cores (CI passes it; its debug dependencies are built already).
#
# 1. tests/package/stage.sh: a release build of the host, whose components
#    and embedded files are staged into host/packaged and sdk/packaged.
# 2. `cargo package --locked --allow-dirty` for both crates (`--allow-dirty`
#    because the staged folders are git-ignored on purpose). The SDK is
#    verified by cargo (it builds the unpacked crate); the host with
#    `--no-verify`, since step 4 builds it, in release, from a folder
#    further from the repository than cargo's own check.
# 3. Both .crate files within crates.io's limit of 10 MiB (sizes printed),
#    and holding what they must.
# 4. The host's .crate unpacked into an empty temporary directory, and
#    `cargo install --locked --path` from there. The build reuses the
#    repository's artifacts (its target directory as cargo's build-dir, the
#    workspace's profiles passed with `--config`), so with them warm only
#    the toolcell crate itself compiles;
#    the installed binary goes to a temporary target directory, never over
#    target/release/toolcell. The time it took is printed.
# 5. The installed binary: `--version` is the crate's version; an MCP
#    session over stdio (tests/package/session.py, plain python3) reads a
#    file of the served folder with the embedded fs plugin, and finds it with
#    grep; a file outside is refused.
# 6. A copy of the unpacked crate with one staged component changed: its
#    build fails, naming the SHA-256 that does not match.
# Prints each check by name, and last `N passed, N failed`; exits 1 if any
# check failed.
set -uo pipefail
profile_flag=()
case "${1:-}" in
  --debug) profile_flag=(--debug) ;;
  "") ;;
  *) echo "usage: $0 [--debug]" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
limit=$((10 * 1024 * 1024))

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

version=$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["workspace"]["package"]["version"])')
host_crate=$target/package/toolcell-$version.crate
sdk_crate=$target/package/toolcell-sdk-$version.crate

check "stage.sh stages the components and the files the crates embed" bash tests/package/stage.sh "${profile_flag[@]}"
[ -f host/packaged/plugins/SHA256SUMS ] || finish

rm -f "$host_crate" "$sdk_crate"
check "cargo package -p toolcell" cargo package --locked --allow-dirty --no-verify -p toolcell
check "cargo package -p toolcell-sdk, verified by building the unpacked crate" \
  cargo package --locked --allow-dirty -p toolcell-sdk
[ -f "$host_crate" ] || finish

for crate in "$host_crate" "$sdk_crate"; do
  [ -f "$crate" ] || continue
  size=$(stat -c %s "$crate")
  echo "$(basename "$crate"): $size bytes ($((size * 100 / limit))% of crates.io's $limit)"
  check "$(basename "$crate") is within crates.io's limit" test "$size" -le "$limit"
done

# lists CRATE PATH...: the .crate holds every PATH (relative to its folder).
lists() {
  local crate=$1 prefix
  prefix=$(basename "$crate" .crate)
  shift
  tar -tzf "$crate" > "$tmp/listing" || return 1
  for path in "$@"; do
    grep -qxF "$prefix/$path" "$tmp/listing" || { echo "missing: $path"; return 1; }
  done
}
components=()
while read -r _ file; do components+=("packaged/plugins/$file"); done < host/packaged/plugins/SHA256SUMS
check "the host's .crate holds the staged components, their SHA256SUMS and the WIT" \
  lists "$host_crate" build.rs packaged/plugins/SHA256SUMS "${components[@]}" \
  packaged/wit/plugin.wit packaged/sdk/template/Cargo.toml.staged
check "the SDK's .crate holds build.rs and the WIT" lists "$sdk_crate" build.rs packaged/wit/plugin.wit

empty=$tmp/empty
mkdir "$empty"
# -m: the files get the time of extraction, not the fixed time cargo
# package gives every file. Their toolcell unit has the same hash in every
# temporary directory (cargo hashes a path package's path relative to its
# workspace, itself here), so with the old time an earlier run's build
# script and crate in the shared build-dir would look fresh and be reused.
tar -xzmf "$host_crate" -C "$empty"
unpacked=$empty/toolcell-$version
check "the .crate unpacks into one folder, toolcell-$version" test "$(ls -A "$empty")" = "toolcell-$version"

# The workspace's profiles (cargo package does not carry a workspace's
# profiles into a member's manifest): without them, every dependency would
# compile again. They are the end of the root Cargo.toml, from its first
# [profile.*] table on, given to cargo as configuration.
python3 - "$tmp/profiles.toml" <<'PY' || { echo "cannot read the workspace's profiles" >&2; exit 2; }
import sys
text = open("Cargo.toml").read()
start = text.index("\n[profile.") + 1
rest = text[start:]
assert all(not line.startswith("[") or line.startswith("[profile.") for line in rest.splitlines()), \
    "Cargo.toml has tables after its profiles"
open(sys.argv[1], "w").write(rest)
PY
export CARGO_BUILD_BUILD_DIR=$target
install() {
  (cd "$tmp" && CARGO_TARGET_DIR=$tmp/target cargo --config "$tmp/profiles.toml" install --locked \
    "${profile_flag[@]}" --path "$unpacked" --root "$tmp/root")
}
start=$(date +%s)
check "cargo install --locked --path <the unpacked crate> from an empty directory" install
echo "cargo install took $(($(date +%s) - start)) s"
bin=$tmp/root/bin/toolcell
[ -x "$bin" ] || finish

check "toolcell --version is 'toolcell $version'" test "$("$bin" --version)" = "toolcell $version"

mkdir "$tmp/files"
printf 'hello from the package\nsecond line\n' > "$tmp/files/hello.txt"
python3 "$root/tests/package/session.py" "$bin" "$tmp/files" > "$log" 2>&1
sed 's/^/  /' "$log"
passed=$((passed + $(grep -c '^ok - ' "$log")))
failed=$((failed + $(grep -c '^FAIL - ' "$log")))
grep -q '^ok - ' "$log" || { failed=$((failed + 1)); echo "FAIL - the MCP session ran no check"; }

# A staged component that is not the one SHA256SUMS names: the build stops.
tampered=$tmp/tampered/toolcell-$version
mkdir -p "$tmp/tampered"
cp -R "$unpacked" "$tampered"
first=$(awk '{print $2; exit}' "$tampered/packaged/plugins/SHA256SUMS")
printf '\0' >> "$tampered/packaged/plugins/$first"
refused() {
  local release=(--release)
  [ ${#profile_flag[@]} -eq 0 ] || release=()
  if (cd "$tampered" && CARGO_TARGET_DIR=$tmp/target cargo --config "$tmp/profiles.toml" build --locked "${release[@]}") > "$tmp/refused" 2>&1; then
    echo "the build succeeded"
    return 1
  fi
  cat "$tmp/refused"
  grep -q "has SHA-256 .* but .*SHA256SUMS says" "$tmp/refused"
}
check "a build with a changed $first fails, naming the SHA-256 that does not match" refused

finish

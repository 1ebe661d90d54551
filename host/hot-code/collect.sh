#!/usr/bin/env bash
# Makes host/hot-code/symbols.txt anew: the functions of the release binary
# that a server runs, which host/hot-code/link.rs places together at link
# time. Run it after a change of toolchain or of Cargo.lock, or when the
# benchmark's peak RSS grows (docs/performance.md says what it buys).
#
# It runs the server under valgrind's callgrind, which records every
# function that executes: for the benchmark's calls (toolcell-perf --quick
# --skip-start: start-up, `tools/list`, `read_file` one at a time and from 8
# clients at once) and for one call of each default tool in a small git
# repository. It keeps the names that are the binary's own functions.
# Under valgrind the instance pool cannot reserve its address space, so the
# pool's own functions are missed: a few windows of code, no more.
#
# Needs valgrind and git; about a minute after the release build.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Every way of building the host must resolve the same features (see
# host/Cargo.toml, above aho-corasick), or the names below fit one only.
features() {
  cargo tree --locked "$@" -e normal,build -f '{p} {f}' --prefix none \
    --target x86_64-unknown-linux-gnu | sed 's/ (\*)$//' | LC_ALL=C sort -u
}
features -p toolcell > "$work/alone"
features > "$work/members"
differ=$(LC_ALL=C comm -23 "$work/alone" "$work/members" | grep -v '^toolcell ' || true)
if [ -n "$differ" ]; then
  echo "built alone, the host gets other features than with the default members:" >&2
  echo "$differ" >&2
  echo "give the host these features too (host/Cargo.toml, above aho-corasick)" >&2
  exit 1
fi

# The binary as toolcell-perf, `cargo install --path host` and `cargo run
# --release -p toolcell` build it: alone, so that its dependencies are
# built for LTO only (`cargo run --release` at the root also builds the
# default members' libraries, which changes the hash in every symbol name;
# see docs/performance.md, Hot code first).
cargo build --locked --release --bin toolcell
cargo build --locked --release -p toolcell-perf
bin=$root/target/release/toolcell

cat > "$work/toolcell" <<WRAPPER
#!/bin/sh
exec valgrind -q --tool=callgrind --callgrind-out-file=$work/cg.%p --dump-instr=no \
  --compress-strings=no --compress-pos=no --demangle=no --smc-check=all "$bin" "\$@"
WRAPPER
chmod +x "$work/toolcell"

target/release/toolcell-perf --quick --skip-start --toolcell "$work/toolcell" > /dev/null

mkdir "$work/repo"
(
  cd "$work/repo"
  printf 'fn main() {}\n' > main.rs
  git init -q
  git add main.rs
  git -c user.name=toolcell -c user.email=toolcell@localhost commit -qm first
  printf 'fn main() {\n    println!("hi");\n}\n' > main.rs
  while read -r tool arguments; do
    "$work/toolcell" call "$tool" "$arguments" > /dev/null
  done <<'CALLS'
read_file {"path":"main.rs"}
tail {"path":"main.rs"}
file_info {"path":"main.rs"}
list_directory {"path":"."}
glob {"pattern":"*.rs"}
grep {"pattern":"main"}
concat_files {"paths":["main.rs"],"dry_run":false}
git_status {}
git_log {}
git_diff {}
git_branches {}
git_show {"rev":"HEAD"}
git_blame {"path":"main.rs"}
CALLS
)

# A function that ran, by its symbol name. A Rust name ends in a hash
# (`17h<16 hex digits>E`) that changes with the features of any crate
# below it: where the binary has one function of that path, the hash is
# left open (`17h*`) so that another build's features still find it; where
# it has several (a generic function's instances), the exact name picks the
# one that ran. A ThinLTO suffix (`.llvm.<digits>`) is always left open.
nm --defined-only "$bin" | awk '$2 ~ /^[tTwW]$/ { print $3 }' | LC_ALL=C sort -u > "$work/defined"
grep -h '^fn=' "$work"/cg.* | sed 's/^fn=//' | LC_ALL=C sort -u |
  LC_ALL=C comm -12 - "$work/defined" > "$work/ran"
awk '
  function path(name) {
    sub(/\.llvm\.[0-9]+$/, "", name)
    if (match(name, /17h[0-9a-f]+E$/) && RLENGTH == 20) return substr(name, 1, RSTART + 2)
    return ""
  }
  FNR == NR { p = path($0); if (p != "") count[p]++; next }
  {
    p = path($0)
    if (p != "" && count[p] == 1) { print p "*"; next }
    name = $0
    sub(/\.llvm\.[0-9]+$/, ".llvm.*", name)
    print name
  }
' "$work/defined" "$work/ran" | LC_ALL=C sort -u > host/hot-code/symbols.txt
echo "host/hot-code/symbols.txt: $(wc -l < host/hot-code/symbols.txt) functions"

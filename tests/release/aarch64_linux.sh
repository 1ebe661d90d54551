#!/usr/bin/env bash
# The aarch64-unknown-linux-gnu release archive, built here as the release
# workflow's dist builds it, and checked under qemu's user-mode emulation.
#
# Usage: tests/release/aarch64_linux.sh WORK_DIR
#
# Needs: dist 0.34 on PATH (`cargo install cargo-dist --locked`), Debian's
# qemu-user and libc6-arm64-cross (the aarch64 loader and libc that qemu
# is pointed at), python3 with venv. Installs cargo-zigbuild and ziglang
# from PyPI into WORK_DIR/venv (dist cross-builds Linux targets with
# cargo-zigbuild) and builds in WORK_DIR/target, so it never waits on the
# repository's own target directory. Not run by CI: a cross release build
# takes 15-35 minutes on the 2-core machine (see docs/install.md).
#
# Checks: the archive's .sha256, that the binary is an aarch64 ELF, and a
# real MCP session with the archive's binary under qemu
# (tests/package/session.py: the embedded plugins list, read inside the
# served folder, refuse outside it, grep, exit on end of input).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 WORK_DIR" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$1"
work=$(realpath "$1")
triple=aarch64-unknown-linux-gnu
sysroot=/usr/aarch64-linux-gnu
command -v dist >/dev/null || { echo "dist is not on PATH (cargo install cargo-dist --locked)" >&2; exit 2; }
command -v qemu-aarch64 >/dev/null || { echo "qemu-aarch64 missing (apt-get install qemu-user)" >&2; exit 2; }
[ -e "$sysroot/lib/ld-linux-aarch64.so.1" ] || { echo "$sysroot missing (apt-get install libc6-arm64-cross)" >&2; exit 2; }

[ -x "$work/venv/bin/cargo-zigbuild" ] || {
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install -q cargo-zigbuild ziglang
}
rustup target add "$triple" >/dev/null

start=$(date +%s)
(cd "$root" && PATH="$work/venv/bin:$PATH" CARGO_TARGET_DIR="$work/target" \
  dist build --artifacts=local --target "$triple")
echo "dist build: $(( $(date +%s) - start )) s"

distrib=$root/target/distrib
archive=$distrib/toolcell-$triple.tar.xz
(cd "$distrib" && sha256sum -c "toolcell-$triple.tar.xz.sha256")
rm -rf "$work/unpacked" && mkdir -p "$work/unpacked"
tar -xJf "$archive" -C "$work/unpacked"
bin=$(find "$work/unpacked" -type f -name toolcell | head -1)
file "$bin" | grep -q 'ARM aarch64' || { echo "$bin is not an aarch64 binary" >&2; exit 1; }
echo "archive: $(stat -c %s "$archive") bytes; binary: $(stat -c %s "$bin") bytes"

# The binary under qemu, with an empty cache of its own.
cat > "$work/toolcell" <<WRAP
#!/bin/sh
exec qemu-aarch64 -L $sysroot "$bin" "\$@"
WRAP
chmod +x "$work/toolcell"
rm -rf "$work/files" "$work/cache" && mkdir -p "$work/files"
echo "hello from the package" > "$work/files/hello.txt"
XDG_CACHE_HOME=$work/cache python3 "$root/tests/package/session.py" "$work/toolcell" "$work/files"

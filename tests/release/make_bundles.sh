#!/usr/bin/env bash
# The Claude Desktop bundles of a release, from cargo-dist's archives.
#
# Usage: tests/release/make_bundles.sh ARCHIVES_DIR OUT_DIR [TOOLCELL]
#
# For each `toolcell-TRIPLE.tar.xz` / `toolcell-TRIPLE.zip` in ARCHIVES_DIR
# (what `dist build` writes to target/distrib), takes the binary out and runs
# `TOOLCELL bundle --target TRIPLE --binary BIN -o OUT_DIR`, which writes
# OUT_DIR/toolcell-VERSION-PLATFORM.mcpb, and writes its checksum beside it
# (`.mcpb.sha256`, sha256sum's format, like dist's own). TOOLCELL is the
# binary that writes the bundles (it must run here); by default the one in
# the x86_64-unknown-linux-gnu archive. The release workflow runs this
# (.github/workflows/mcpb-bundles.yml), then tests/release/server_json.py.
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 ARCHIVES_DIR OUT_DIR [TOOLCELL]" >&2
  exit 2
fi
archives=$(realpath "$1")
mkdir -p "$2"
out=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# extract ARCHIVE: unpacks it under $work and prints the path of the binary.
extract() {
  local archive=$1 triple=$2 dir=$work/$2
  mkdir -p "$dir"
  case $archive in
    *.tar.xz) tar -xJf "$archive" -C "$dir" ;;
    *.tar.gz) tar -xzf "$archive" -C "$dir" ;;
    *.zip) python3 -m zipfile -e "$archive" "$dir" ;;
  esac
  local name=toolcell
  case $triple in *windows*) name=toolcell.exe ;; esac
  local found
  found=$(find "$dir" -type f -name "$name" | head -1)
  [ -n "$found" ] || { echo "$archive holds no $name" >&2; exit 1; }
  chmod +x "$found"
  printf '%s' "$found"
}

shopt -s nullglob
declare -A binaries=()
for archive in "$archives"/toolcell-*.tar.xz "$archives"/toolcell-*.tar.gz "$archives"/toolcell-*.zip; do
  base=$(basename "$archive")
  triple=${base#toolcell-}
  triple=${triple%.tar.xz}
  triple=${triple%.tar.gz}
  triple=${triple%.zip}
  binaries[$triple]=$(extract "$archive" "$triple")
done
if [ ${#binaries[@]} -eq 0 ]; then
  echo "$archives holds no toolcell-TRIPLE archive" >&2
  exit 1
fi

toolcell=${3:-${binaries[x86_64-unknown-linux-gnu]:-}}
if [ -z "$toolcell" ]; then
  echo "no x86_64-unknown-linux-gnu archive to write the bundles with: pass TOOLCELL" >&2
  exit 1
fi
echo "writing bundles with $toolcell ($("$toolcell" --version))"
for triple in $(printf '%s\n' "${!binaries[@]}" | sort); do
  bundle=$("$toolcell" bundle --target "$triple" --binary "${binaries[$triple]}" -o "$out" | tail -1)
  (cd "$(dirname "$bundle")" && sha256sum "$(basename "$bundle")" > "$(basename "$bundle").sha256")
  echo "$triple: $bundle ($(stat -c %s "$bundle") bytes)"
done

#!/usr/bin/env bash
# Smoke test of the Windows build of Toolcell under wine, with the official
# Python MCP SDK as the client. See tests/windows/README.md.
#
# Usage: tests/windows/smoke.sh PATH/TO/toolcell.exe
#   The exe is built beforehand (this script never builds it):
#     rustup target add x86_64-pc-windows-gnu
#     cargo build --release -p toolcell --target x86_64-pc-windows-gnu
#     tests/windows/smoke.sh target/x86_64-pc-windows-gnu/release/toolcell.exe
#
# Needs (a fresh Debian/Ubuntu machine):
#   apt packages:   wine wine64 gcc-mingw-w64-x86-64 python3 python3-venv
#                   (wine 8; wine32 is NOT needed: ignore wine's hint about it)
#   rustup targets: x86_64-pc-windows-gnu (to build the exe, not used here)
#   pip packages:   mcp==2.3.0, installed by this script into a venv:
#                   $TOOLCELL_SMOKE_VENV, default
#                   ${CARGO_TARGET_DIR:-target}/windows-smoke-venv
#                   (reused when it already has mcp 2.3.0)
# Network: pip only (PyPI); the servers under test touch nothing but files.
#
# Everything else lives in a temporary folder under /tmp, removed at the end
# (kept when TOOLCELL_SMOKE_KEEP=1): a fresh WINEPREFIX, a copy of the exe
# with the test-only bcryptprimitives.dll beside it, the mounts, the logs.
# Prints one line per check and then `N passed, N failed`; exits 1 if any
# check failed, 2 if something it needs is missing.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

die() { echo "windows smoke: $*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: $0 PATH/TO/toolcell.exe"
exe=$(realpath -- "$1" 2>/dev/null) || die "no such file: $1"
[ -f "$exe" ] || die "no such file: $1 (build it first: cargo build --release -p toolcell --target x86_64-pc-windows-gnu)"

missing=()
command -v wine >/dev/null || missing+=("wine (apt: wine wine64)")
command -v wineserver >/dev/null || missing+=("wineserver (apt: wine wine64)")
command -v wineboot >/dev/null || missing+=("wineboot (apt: wine wine64)")
command -v x86_64-w64-mingw32-gcc >/dev/null || missing+=("x86_64-w64-mingw32-gcc (apt: gcc-mingw-w64-x86-64)")
command -v python3 >/dev/null || missing+=("python3 (apt: python3 python3-venv)")
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=("python3's venv with ensurepip (apt: python3-venv)")
[ ${#missing[@]} -eq 0 ] || die "missing: ${missing[*]}"
version=$(wine --version 2>/dev/null) || die "'wine --version' fails: is wine64 installed? (apt: wine64)"
case "$version" in
  wine-[89].*|wine-[1-9][0-9].*) ;;
  *) die "wine 8 or later needed, found '$version'" ;;
esac

# --- the MCP SDK ------------------------------------------------------------
venv=${TOOLCELL_SMOKE_VENV:-${CARGO_TARGET_DIR:-$repo/target}/windows-smoke-venv}
if ! "$venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp") != "2.3.0")' 2>/dev/null; then
  echo "windows smoke: installing mcp==2.3.0 into $venv" >&2
  python3 -m venv "$venv" || die "cannot create a venv at $venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check mcp==2.3.0 || die "pip install mcp==2.3.0 failed"
fi

# --- the temporary folder -----------------------------------------------------
# A fresh wine 8 prefix takes about 0.7 GB. When the disk fills while
# wineboot copies its DLLs, wine says only "could not load kernel32.dll"
# (c0000135): say what is wrong before that happens.
avail_kb=$(df -Pk /tmp | awk 'NR == 2 { print $4 }')
[ "${avail_kb:-0}" -ge $((1536 * 1024)) ] \
  || die "only $((${avail_kb:-0} / 1024)) MB free under /tmp; the wine prefix needs about 700 MB and the logs more (1.5 GB wanted)"
work=$(mktemp -d /tmp/toolcell-winsmoke.XXXXXX) || die "mktemp failed"
export WINEPREFIX=$work/prefix
# No wine debug output at all (it goes to stderr anyway, never stdout), and
# no Mono or Gecko install prompt during wineboot.
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY WAYLAND_DISPLAY

cleanup() {
  # Only our own prefix's wineserver (and the processes it runs) is stopped.
  WINEPREFIX=$work/prefix wineserver -k 2>/dev/null
  if [ "${TOOLCELL_SMOKE_KEEP:-}" = 1 ]; then
    echo "windows smoke: kept $work" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

mkdir -p "$work/bin" "$work/t/mount/sub" "$work/t/mount-evil" "$work/t/rw"

# The test-only stand-in for bcryptprimitives.dll (see bcryptprimitives.c),
# beside a copy of the exe: the original is left alone.
x86_64-w64-mingw32-gcc -shared -O2 -o "$work/bin/bcryptprimitives.dll" \
  "$here/bcryptprimitives.c" "$here/bcryptprimitives.def" -ladvapi32 \
  || die "cannot build the stand-in bcryptprimitives.dll"
cp "$exe" "$work/bin/toolcell.exe"

# The client starts this; it records wine's exit code, so the client can
# tell a clean exit (0 after stdin closed) from the SDK's kill.
cat > "$work/bin/run-server.sh" <<EOF
#!/usr/bin/env bash
wine "$work/bin/toolcell.exe" "\$@"
code=\$?
echo "\$code" > "\$TOOLCELL_EXIT_FILE"
exit "\$code"
EOF

printf 'inside the mount: a.txt\n' > "$work/t/mount/a.txt"
printf 'inside the mount: sub/b.txt\n' > "$work/t/mount/sub/b.txt"
printf 'TOP SECRET beside the mount\n' > "$work/t/secret.txt"
printf 'EVIL sibling folder\n' > "$work/t/mount-evil/x.txt"

# --- the wine prefix ------------------------------------------------------------
ms() { echo $(( $(date +%s%N) / 1000000 )); }
seconds_since() { local d=$(( $(ms) - $1 )); printf '%d.%d' $((d / 1000)) $((d % 1000 / 100)); }

start=$(ms)
timeout 300 wineboot -i > "$work/wineboot.log" 2>&1 || {
  cat "$work/wineboot.log" >&2
  df -h /tmp >&2
  die "wineboot failed (a full disk shows as 'could not load kernel32.dll')"
}
timeout 120 wineserver -w
# Keep one wineserver for the whole run, so each server starts fast.
wineserver -p
echo "windows smoke: wine prefix ready in $(seconds_since "$start") s ($version)"

# Wine's 8.3 short name of mount-evil (wine makes them up on request, e.g.
# MOUN~O2W, and resolves them in paths); empty if it shows none.
short_name=$(wine cmd /c 'dir /x Z:'"$(printf '%s' "$work/t" | tr / '\\')" 2>/dev/null \
  | tr -d '\r' | awk '$NF == "mount-evil" && $(NF-1) ~ /~/ { print $(NF-1) }')
printf '%s\n' "$short_name" > "$work/short-name"
echo "windows smoke: wine's 8.3 short name of mount-evil: ${short_name:-none}"

# The exe starts at all (this is where a missing DLL shows, as exit code 53).
wine "$work/bin/toolcell.exe" --version > "$work/version.out" 2> "$work/version.err" < /dev/null
code=$?
if [ "$code" -ne 0 ]; then
  cat "$work/version.err" >&2
  die "toolcell.exe --version exits $code under wine (53: a DLL it imports is missing)"
fi
echo "windows smoke: $(tr -d '\r' < "$work/version.out")"

# --- the checks -----------------------------------------------------------------
start=$(ms)
# (Each call has its own 30 s limit; this bounds the whole client.)
timeout 600 "$venv/bin/python" "$here/smoke_client.py" "$work" | tee "$work/client.out"
status=${PIPESTATUS[0]}
echo "windows smoke: the client ran for $(seconds_since "$start") s"
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$work/client.out" | tail -1)
if [ "$status" -ne 0 ]; then
  for log in "$work"/server-*.log; do
    [ -f "$log" ] || continue
    echo "---- ${log##*/} (last 40 lines) ----" >&2
    tail -n 40 "$log" >&2
  done
  echo "${summary:-0 passed, 1 failed}"
  exit 1
fi
echo "$summary"

#!/bin/bash
# One command from a fresh Debian 12 machine to a working uroce device:
# installs what is missing, builds, adds device uroce0 on lo and runs
# unmodified libibverbs programs over it.  Run as root (sudo ./setup.sh).
set -euo pipefail
cd "$(dirname "$0")"
[ "$(id -u)" = 0 ] || { echo "uroce: setup.sh needs root (apt-get, /dev/infiniband): sudo $0" >&2; exit 1; }
scripts/deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build
U=build/cli/uroce
"$U" link show uroce0 >/dev/null 2>&1 || "$U" link add uroce0 netdev lo
"$U" link show uroce0
echo "== ibv_devices"
"$U" run ibv_devices
echo "== ibv_devinfo -d uroce0"
"$U" run ibv_devinfo -d uroce0
echo
echo "uroce0 is ready: run any verbs program with '$U run PROGRAM' (no root needed)."

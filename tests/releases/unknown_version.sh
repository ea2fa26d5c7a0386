#!/bin/bash
# An rdma-core release outside provider_abi.h's table stops `meson setup`
# with a message naming the supported releases.  A copy of the installed
# libibverbs.pc that claims rdma-core 60.0 (PABI 59, not declared) stands
# in for such a release.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/uroce-unknown.XXXXXX)
trap 'rm -rf "$work"' EXIT
pc=$(pkg-config --variable=pcfiledir libibverbs)/libibverbs.pc
mkdir "$work/pc"
sed 's/^Version:.*/Version: 1.15.60.0/' "$pc" >"$work/pc/libibverbs.pc"
rc=0
PKG_CONFIG_PATH=$work/pc timeout 120 meson setup "$work/build" "$src" >"$work/log" 2>&1 || rc=$?
grep -E 'ERROR|error' "$work/log" | tail -2
[ $rc -ne 0 ] || { echo "FAIL: meson setup accepted rdma-core 60.0"; exit 1; }
grep -q 'rdma-core 60.0 (libibverbs 1.15.60.0) has a provider ABI layout uroce does not declare; supported rdma-core releases: 44, 45-56, 65' "$work/log" ||
	{ cat "$work/log"; echo "FAIL: not the message naming the supported releases"; exit 1; }
echo "ok: meson setup refuses rdma-core 60.0 and names the supported releases"

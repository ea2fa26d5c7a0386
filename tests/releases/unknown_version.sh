#!/bin/bash
# An rdma-core release outside provider_abi.h's table stops `meson setup`
# in one line that says why and names the releases uroce knows.  Copies of
# the installed libibverbs.pc that claim rdma-core 66.0 (newer than any
# measured) and 35.0 (older than the table) stand in for such releases.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/uroce-unknown.XXXXXX)
trap 'rm -rf "$work"' EXIT
pc=$(pkg-config --variable=pcfiledir libibverbs)/libibverbs.pc
# refused VERSION MESSAGE: meson setup against rdma-core VERSION fails with
# exactly one ERROR line, which is MESSAGE.
refused() {
	local ver=$1 want=$2 rc=0
	rm -rf "$work/pc" "$work/build"
	mkdir "$work/pc"
	sed "s/^Version:.*/Version: $ver/" "$pc" >"$work/pc/libibverbs.pc"
	PKG_CONFIG_PATH=$work/pc timeout 120 meson setup "$work/build" "$src" >"$work/log" 2>&1 || rc=$?
	[ $rc -ne 0 ] || { echo "FAIL: meson setup accepted libibverbs $ver"; exit 1; }
	[ "$(grep -c 'ERROR:' "$work/log")" = 1 ] && grep -qF "ERROR: Problem encountered: $want" "$work/log" ||
		{ tail -5 "$work/log"; echo "FAIL: libibverbs $ver: not the one line '$want'"; exit 1; }
	echo "ok: $(grep -o 'ERROR: .*' "$work/log")"
}
refused 1.19.66.0 'the installed rdma-core 66.0 (libibverbs 1.19.66.0) is newer than uroce knows: its provider ABI layout has not been measured (uroce knows rdma-core 36-65; see docs/rdma-core-versions.md, "Newer releases")'
refused 1.13.35.0 'the installed rdma-core 35.0 (libibverbs 1.13.35.0) is older than uroce supports (uroce knows rdma-core 36-65; see docs/rdma-core-versions.md)'

#!/bin/bash
# uroce built against one rdma-core release built from its source
# (rdma_core.sh), in a build directory of its own beside the main one.
#
#   uroce_for.sh VERSION HOST_BUILD     prints "PREFIX BUILD"
#
# BUILD is HOST_BUILD/rdma-core-VERSION (tests off: only the provider, the
# preload and the CLI), set up once and then brought up to date by ninja;
# a lock keeps two tests from building it at once.  Exit 77 as rdma_core.sh.
set -euo pipefail
ver=$1 host_build=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
rc=0
prefix=$("$here/rdma_core.sh" "$ver") || rc=$?
[ $rc -eq 0 ] || exit $rc
build=$host_build/rdma-core-$ver
# Never the host's libibverbs by mistake (a prefix without libibverbs.pc).
found=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion libibverbs) &&
	[ "${found#*.*.}" = "$ver" ] ||
	{ echo "uroce_for.sh: pkg-config finds libibverbs ${found:-none}, not $prefix's $ver" >&2; exit 1; }
exec 8>"$host_build/.rdma-core-$ver.lock"
flock -w 900 8 || { echo "uroce_for.sh: $build busy" >&2; exit 1; }
if [ ! -f "$build/build.ninja" ]; then
	rm -rf "$build"
	PKG_CONFIG_PATH=$prefix/lib/pkgconfig meson setup "$build" "$src" -Dtests=false \
		>"$build.setup.log" 2>&1 ||
		{ grep -E 'ERROR|error' "$build.setup.log" >&2; echo "uroce_for.sh: meson setup against rdma-core $ver failed" >&2; exit 1; }
fi
ninja -C "$build" >"$build.ninja.log" 2>&1 ||
	{ grep -E 'error|FAILED' "$build.ninja.log" | head -20 >&2; echo "uroce_for.sh: building uroce for rdma-core $ver failed" >&2; exit 1; }
echo "$prefix $build"

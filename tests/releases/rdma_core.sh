#!/bin/bash
# Build one rdma-core release from its source (a `git archive` of the tag)
# into a cache, once, and print the prefix it is installed in.
#
#   rdma_core.sh VERSION      e.g. 61.0
#
# Source: $UROCE_RDMA_CORE_SRC/rdma-core-VERSION.tar.gz (default: the
# checkout's ../shared/rdma-core-src).  Prefix: $UROCE_CACHE/rdma-core/VERSION
# (default /var/cache/uroce), holding lib/, bin/, include/ and a stamp
# with the tarball's sha256: a different tarball is built again.  The build
# runs in a scratch directory and is moved into place whole, under a lock,
# so a killed or parallel run never leaves a half-installed prefix.
# Exit 77 (with the reason) when the source or a build tool is missing.
set -euo pipefail
ver=$1
here=$(cd "$(dirname "$0")" && pwd)
src_dir=${UROCE_RDMA_CORE_SRC:-$here/../../../shared/rdma-core-src}
cache=${UROCE_CACHE:-/var/cache/uroce}/rdma-core
tarball=$src_dir/rdma-core-$ver.tar.gz
[ -f "$tarball" ] || { echo "SKIP: no rdma-core $ver source ($tarball)" >&2; exit 77; }
for tool in cmake ninja gcc pkg-config; do
	command -v $tool >/dev/null || { echo "SKIP: rdma-core $ver needs $tool (scripts/deps.sh)" >&2; exit 77; }
done
for pc in libnl-3.0 libnl-route-3.0 libudev; do
	pkg-config --exists $pc || { echo "SKIP: rdma-core $ver needs $pc (scripts/deps.sh)" >&2; exit 77; }
done
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
prefix=$cache/$ver
mkdir -p "$cache"
exec 8>"$cache/.lock-$ver"
flock -w 900 8 || { echo "rdma_core.sh: $cache/.lock-$ver busy" >&2; exit 1; }
if [ "$(cat "$prefix/.uroce-stamp" 2>/dev/null)" = "$sum" ]; then
	echo "$prefix"
	exit 0
fi
scratch=$(mktemp -d "$cache/.build-$ver.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
tar -xzf "$tarball" -C "$scratch"
top=$(ls -d "$scratch"/rdma-core-*/)
# Installed where it will live (its .pc files and RPATHs name the prefix),
# through DESTDIR, then moved.
mkdir "$scratch/b"
(cd "$scratch/b" &&
 cmake -GNinja -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_BUILD_TYPE=Release \
	-DNO_MAN_PAGES=1 -DNO_PYVERBS=1 -DENABLE_STATIC=0 "$top" &&
 ninja && DESTDIR="$scratch/dest" ninja install) >"$scratch/log" 2>&1 ||
	{ tail -30 "$scratch/log" >&2; echo "rdma_core.sh: building rdma-core $ver failed" >&2; exit 1; }
rm -rf "$prefix"
mv "$scratch/dest$prefix" "$prefix"
echo "$sum" >"$prefix/.uroce-stamp"
echo "$prefix"

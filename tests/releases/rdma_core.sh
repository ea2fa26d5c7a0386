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
# (the recipe's name too: a prefix of an older recipe is built again)
sum="$(sha256sum "$tarball" | cut -d' ' -f1) libs-and-examples"
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
# Only what the tests run is built and installed: libibverbs and librdmacm
# with their headers (and the kernel headers verbs.h includes), and their
# example programs (ibv_rc_pingpong ... ibv_devices, rping, udaddy).  No
# provider (uroce is loaded through RDMAV_DRIVERS), no pyverbs, no man
# pages, no daemons or diagnostics: a third of the work of a full build.
# Each directory's own install script installs it where it will live (its
# .pc files and RPATHs name the prefix), through DESTDIR, then it is moved;
# libibverbs.pc is written by the top directory (ibverbs_finalize), whose
# script would install everything, so it is copied from the build tree;
# the providers' etc/libibverbs.d is made empty (libibverbs warns without).
dirs="kernel-headers libibverbs librdmacm libibverbs/examples librdmacm/examples"
mkdir "$scratch/b"
(cd "$scratch/b" &&
 cmake -GNinja -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_BUILD_TYPE=Release \
	-DNO_MAN_PAGES=1 -DNO_PYVERBS=1 -DENABLE_STATIC=0 "$top" &&
 ninja $(printf '%s/all ' $dirs) &&
 for d in $dirs; do DESTDIR="$scratch/dest" cmake -P $d/cmake_install.cmake || exit 1; done &&
 install -Dm644 lib/pkgconfig/libibverbs.pc "$scratch/dest$prefix/lib/pkgconfig/libibverbs.pc" &&
 mkdir -p "$scratch/dest$prefix/etc/libibverbs.d") \
	>"$scratch/log" 2>&1 ||
	{ tail -30 "$scratch/log" >&2; echo "rdma_core.sh: building rdma-core $ver failed" >&2; exit 1; }
rm -rf "$prefix"
mv "$scratch/dest$prefix" "$prefix"
echo "$sum" >"$prefix/.uroce-stamp"
echo "$prefix"

#!/bin/bash
# The `releases` suite: uroce built and run on one Debian release.
#
#   release.sh RELEASE HOST_BUILD
#
# RELEASE: bookworm (the host itself, HOST_BUILD is meson's build tree) or
# trixie / sid (a cached chroot, tests/releases/chroot.sh; uroce is built
# inside with that release's libibverbs-dev).  Then that release's own
# binaries run against it (inside.sh).  For a chroot, the provider of the
# other side (host build in the chroot, chroot build on the host) must be
# refused loudly: by our ABI guard where the PABI is the same (trixie),
# by libibverbs/ld.so where it is not (sid).  Private mount and network
# namespaces: nothing is left behind, even when killed.  Root; 77 without.
set -euo pipefail
release=$1 host_build=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (chroot, namespaces)"; exit 77; }
host_so=$host_build/providers/uroce/liburoce-rdmav34.so
[ -f "$host_so" ] || { echo "FAIL: no host provider $host_so"; exit 1; }
fail() { echo "FAIL [$release]: $*"; exit 1; }
pass() { echo "ok [$release]: $*"; }

if [ "$release" = bookworm ]; then
	exec "$here/enter.sh" / "$src" -- bash "$here/inside.sh" "$src" "$host_build" --no-build
fi

rc=0
root=$(UROCE_CHROOT_TIMEOUT=${UROCE_CHROOT_TIMEOUT:-600} "$here/chroot.sh" "$release") || rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || fail "cannot make the $release chroot"
# One run per release at a time (the build directory lives in the chroot).
exec 9>"$root/var/tmp/.uroce-release.lock"
flock -w 600 9 || fail "chroot busy"
build=/var/tmp/uroce-build-$(printf '%s' "$src" | md5sum | cut -c1-8)
"$here/enter.sh" "$root" "$src" -- bash /src/tests/releases/inside.sh /src "$build"

# The other side's provider, copied in, must be refused.
work=$(mktemp -d /var/tmp/uroce-guard.XXXXXX)   # not /tmp: enter.sh hides it
gdir=$(mktemp -d "$root/var/tmp/uroce-guard.XXXXXX")
trap 'rm -rf "$work" "$gdir"' EXIT
chroot_so=$(ls "$root$build"/providers/uroce/liburoce-rdmav*.so)
pabi=${chroot_so##*-rdmav}; pabi=${pabi%.so}
cp "$host_so" "$gdir/liburoce-rdmav$pabi.so"      # as the chroot's libibverbs names it
cp "$chroot_so" "$work/liburoce-rdmav34.so"        # as the host's libibverbs names it
. "$here/refused.sh"
if [ "$pabi" = 34 ]; then
	check_refused "Debian 12 build under $release" \
		"$(devices "$root" "$build/cli/uroce" "/var/tmp/${gdir##*/}/liburoce")" \
		"^uroce: not registering: built for rdma-core 44"
	check_refused "$release build under Debian 12" \
		"$(devices / "$host_build/cli/uroce" "$work/liburoce")" \
		"^uroce: not registering: built for rdma-core $(sed -n 's/^Version: 1\.[0-9]*\.//p' "$root/usr/lib/x86_64-linux-gnu/pkgconfig/libibverbs.pc")"
else
	check_refused "Debian 12 build under $release" \
		"$(devices "$root" "$build/cli/uroce" "/var/tmp/${gdir##*/}/liburoce")" \
		"IBVERBS_PRIVATE_34' not found"
	check_refused "$release build under Debian 12" \
		"$(devices / "$host_build/cli/uroce" "$work/liburoce")" \
		"IBVERBS_PRIVATE_$pabi' not found"
fi

#!/bin/bash
# The Debian package on one release: `dpkg-buildpackage -b -us -uc` (on the
# host for bookworm, in the release's cached chroot otherwise), then
# `apt install ./uroce_*.deb` on a fresh chroot of that release (an overlay
# over the cached bare RELEASE-base chroot, thrown away afterwards) and
# installed.sh there.  apt needs the network (the machine's own mirror).
#
#   deb.sh RELEASE          (root; 77 without)
set -euo pipefail
release=$1
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (chroot, namespaces)"; exit 77; }
command -v dpkg-buildpackage >/dev/null || { echo "SKIP: dpkg-dev is not installed"; exit 77; }
fail() { echo "FAIL [deb $release]: $*"; exit 1; }
chroot_of() {
	local rc=0 dir
	dir=$(UROCE_CHROOT_TIMEOUT=${UROCE_CHROOT_TIMEOUT:-600} "$here/chroot.sh" "$1") || rc=$?
	[ $rc -eq 77 ] && exit 77
	[ $rc -eq 0 ] || fail "cannot make the $1 chroot"
	echo "$dir"
}
base=$(chroot_of "$release-base")
if [ "$release" = bookworm ]; then
	root=/ work=$(mktemp -d /var/tmp/uroce-deb.XXXXXX)
else
	root=$(chroot_of "$release")
	exec 9>"$root/var/tmp/.uroce-release.lock"
	flock -w 600 9 || fail "chroot busy"
	work=$(mktemp -d "$root/var/tmp/uroce-deb.XXXXXX")
fi
ov=$(mktemp -d /var/tmp/uroce-fresh.XXXXXX)
trap 'umount -l "$ov" 2>/dev/null || true; rm -rf --one-file-system "$work" "$ov"' EXIT

# A clean copy of the source: no build trees, no VCS.
mkdir "$work/uroce"
tar -C "$src" --exclude='./build*' --exclude=./.git --exclude='./obj-*' -cf - . | tar -C "$work/uroce" -xf -
build_cmd="cd ${work#"${root%/}"}/uroce && timeout 900 dpkg-buildpackage -b -us -uc >../build.log 2>&1"
if [ "$root" = / ]; then
	bash -c "$build_cmd" || { tail -30 "$work/build.log"; fail "dpkg-buildpackage"; }
else
	"$here/enter.sh" "$root" "$src" -- bash -c "$build_cmd" || { tail -30 "$work/build.log"; fail "dpkg-buildpackage"; }
fi
deb=$(ls "$work"/uroce_*.deb | grep -v dbgsym)
echo "ok [deb $release]: dpkg-buildpackage -b -us -uc: ${deb##*/}: $(dpkg-deb -f "$deb" Depends | grep -o 'libibverbs1 ([^)]*)' | tr '\n' ' ')"

# A fresh machine of the release: an overlay on the bare chroot, in a
# private mount namespace (the overlay vanishes with it).
unshare --mount --propagation private -- /bin/bash -euo pipefail -c '
ov=$1 base=$2 deb=$3 here=$4 src=$5
mount -t tmpfs tmpfs "$ov"
mkdir "$ov/up" "$ov/work" "$ov/root"
mount -t overlay overlay -o "lowerdir=$base,upperdir=$ov/up,workdir=$ov/work" "$ov/root"
cp "$deb" "$ov/root/var/tmp/"
UROCE_ENTER_NET=host "$here/enter.sh" "$ov/root" "$src" -- bash -c "
	cd /var/tmp && apt-get update -qq >/dev/null &&
	DEBIAN_FRONTEND=noninteractive timeout 600 apt install -y -qq ./${deb##*/} ibverbs-utils rdmacm-utils iproute2 >/var/tmp/apt.log 2>&1 ||
	{ tail -20 /var/tmp/apt.log; exit 1; }"
echo "ok: apt install ./${deb##*/} on a fresh chroot"
"$here/enter.sh" "$ov/root" "$src" -- bash /src/tests/releases/installed.sh
' fresh "$ov" "$base" "$deb" "$here" "$src" || fail "install and run on a fresh $release"

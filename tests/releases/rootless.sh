#!/bin/bash
# Rootless containers: as an unprivileged user inside
# `unshare --user --map-root-user --net --mount` with private tmpfs on /run,
# /dev/shm and /dev/infiniband (what rootless podman/docker give; /tmp stays,
# since this checkout may live there),
# `uroce link add r0 netdev lo` works (mknod is refused there: it falls back
# to a symbolic link to /dev/null and says so), and ibv_rc_pingpong --chk
# and ib_write_bw pass over the device.
#
#   rootless.sh BUILD        (run as root: drops to nobody; or as a user)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(realpath "$1")
if [ "${UROCE_ROOTLESS_INNER:-}" = 1 ]; then
	mount -t tmpfs -o mode=755 tmpfs /run
	mount -t tmpfs -o mode=1777 tmpfs /dev/shm
	mount -t tmpfs -o mode=755 tmpfs /dev/infiniband
	ip link set lo up
	U=$build/cli/uroce
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	fail() { echo "FAIL [rootless]: $*"; exit 1; }
	pass() { echo "ok [rootless]: $*"; }
	"$U" link add r0 netdev lo 2>"$work/add" || { cat "$work/add"; fail "uroce link add r0 netdev lo"; }
	cat "$work/add"
	grep -q 'is a symbolic link to /dev/null instead' "$work/add" || fail "no word on the /dev/null link"
	[ "$(readlink /dev/infiniband/uverbs1024)" = /dev/null ] || fail "uverbs1024 is not a link to /dev/null"
	pass "uroce link add (uid $(id -u) in the namespace, $(cat /proc/self/uid_map | awk '{print "host uid " $2}'))"
	. "$here/pair.sh"
	gid=$(lo_gid)
	[ -n "$gid" ] || fail "no GID for 127.0.0.1 on r0"
	pair ibv_rc_pingpong --chk -n 500 -s 4096
	pair ib_write_bw -n 2000 -s 65536 -u 20
	"$U" link del r0 || fail "uroce link del"
	[ ! -e /dev/infiniband/uverbs1024 ] || fail "uverbs1024 left behind"
	pass "uroce link del"
	exit 0
fi
as=()
if [ "$(id -u)" = 0 ]; then
	as=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
fi
"${as[@]}" test -x "$build/cli/uroce" || { echo "SKIP: $build is not readable by uid 65534"; exit 77; }
"${as[@]}" unshare --user --map-root-user true 2>/dev/null ||
	{ echo "SKIP: unprivileged user namespaces are disabled here"; exit 77; }
exec "${as[@]}" env UROCE_ROOTLESS_INNER=1 \
	unshare --user --map-root-user --net --mount -- "$0" "$build"

#!/bin/bash
# Run a command inside a release chroot, in a private mount and network
# namespace, so that every mount below vanishes with the command even when
# it is killed, and the chroot's uroce devices are seen by nobody else.
#
#   tests/releases/enter.sh ROOT SRC -- CMD [ARGS...]
#
# ROOT "/" means the host itself: only the private tmpfs mounts (not /tmp,
# where the checkout itself may live), no chroot, and SRC keeps its path.
# Mounted inside ROOT: /proc, the host's /dev (for /dev/null, /dev/urandom),
# private tmpfs on /run (hence /run/uroce), /tmp, /dev/shm and /dev/infiniband,
# and SRC (the uroce source tree) at /src.  lo is up in the new network
# namespace (UROCE_ENTER_NET=host keeps the host's network instead, for apt).
# Must be run as root.
set -euo pipefail
root=$1 src=$2
shift 2
[ "${1:-}" = -- ] && shift
[ -d "$root/usr" ] || { echo "enter.sh: $root is not a chroot" >&2; exit 1; }
net=--net
[ "${UROCE_ENTER_NET:-}" = host ] && net=
exec unshare --mount $net --propagation private -- /bin/bash -euo pipefail -c '
root=$1 src=$2; shift 2
if [ "$root" = / ]; then
	for d in /run /dev/shm /dev/infiniband; do
		mkdir -p $d
		mount -t tmpfs -o mode=$([ $d = /dev/shm ] && echo 1777 || echo 755) tmpfs $d
	done
	ip link set lo up
	exec /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb "$@"
fi
mount --rbind /dev "$root/dev"
mount --make-rslave "$root/dev"
mount -t proc proc "$root/proc"
[ -e "$root/etc/resolv.conf" ] || cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mount -t sysfs sysfs "$root/sys" 2>/dev/null || true
mount -t tmpfs -o mode=755 tmpfs "$root/run"
mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
mkdir -p "$root/dev/infiniband"
mount -t tmpfs -o mode=755 tmpfs "$root/dev/infiniband"
mkdir -p "$root/src"
mount --bind "$src" "$root/src"
mount -o remount,bind,ro "$root/src"
ip link set lo up 2>/dev/null || true
exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb "$@"
' enter "$root" "$src" "$@"

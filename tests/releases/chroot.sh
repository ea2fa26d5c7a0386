#!/bin/bash
# Create (or reuse) a cached Debian chroot for one release, with what is
# needed to build uroce and to run that release's own verbs binaries.
#
#   tests/releases/chroot.sh RELEASE [CACHE_DIR]
#
# RELEASE is trixie or sid (bookworm is the host), or RELEASE-base (also
# bookworm-base): a bare apt chroot, the "fresh machine" a .deb is installed
# on (tests/releases/deb.sh, through an overlay).  The chroot lives at
# CACHE_DIR/RELEASE (default /var/cache/uroce/chroots), outside the repo.
# A chroot is "good" when CACHE_DIR/RELEASE/.uroce-ok exists and names
# the package list it was made with; otherwise it is removed and rebuilt.
# The mirror is read from this machine's apt sources, never hard-coded.
# Bounded: mmdebstrap gets UROCE_CHROOT_TIMEOUT seconds (default 900).
# Exit 77 (skip) when not root or when mmdebstrap is missing.
set -euo pipefail
release=${1:?usage: chroot.sh RELEASE [CACHE_DIR]}
cache=${2:-${UROCE_CHROOT_CACHE:-/var/cache/uroce/chroots}}
limit=${UROCE_CHROOT_TIMEOUT:-900}
[ "$(id -u)" = 0 ] || { echo "chroot.sh: needs root" >&2; exit 77; }
command -v mmdebstrap >/dev/null || { echo "chroot.sh: mmdebstrap missing (apt-get install mmdebstrap)" >&2; exit 77; }

suite=${release%-base}
packages=(
	meson ninja-build pkg-config gcc libc6-dev
	libibverbs-dev libnl-3-dev libnl-route-3-dev liburing-dev
	libxdp-dev libbpf-dev libisal-dev zlib1g-dev clang
	ibverbs-utils ibverbs-providers perftest python3-pyverbs python3 python3-unittest2-
	iproute2 procps util-linux
	build-essential debhelper dpkg-dev fakeroot man-db
)
# python3-unittest2 does not exist: drop the marker, it only documents
# that the test runner is the stdlib unittest.
packages=("${packages[@]/python3-unittest2-/}")
[ "$suite" = "$release" ] || packages=(ca-certificates)

# The mirror of the machine's own apt sources (deb822 or one-line form).
mirror() {
	local m=""
	if [ -r /etc/apt/sources.list.d/debian.sources ]; then
		m=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' \
			/etc/apt/sources.list.d/debian.sources)
	fi
	if [ -z "$m" ] && [ -r /etc/apt/sources.list ]; then
		m=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' \
			/etc/apt/sources.list)
	fi
	[ -n "$m" ] || { echo "chroot.sh: no Debian mirror in /etc/apt/sources*" >&2; exit 1; }
	echo "$m"
}

dir=$cache/$release
stamp="$release ${packages[*]}"
if [ -f "$dir/.uroce-ok" ] && [ "$(cat "$dir/.uroce-ok")" = "$stamp" ] && [ -x "$dir/usr/bin/apt-get" ] &&
   { [ "$suite" != "$release" ] || [ -x "$dir/usr/bin/ibv_rc_pingpong" ]; }; then
	echo "$dir"
	exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.$release.lock"
flock -w "$limit" 9 || { echo "chroot.sh: $release: lock busy" >&2; exit 1; }
# Someone else may have finished it while we waited.
if [ -f "$dir/.uroce-ok" ] && [ "$(cat "$dir/.uroce-ok")" = "$stamp" ]; then
	echo "$dir"; exit 0
fi
# A broken or stale chroot: make sure nothing is mounted under it, then remove.
if [ -e "$dir" ]; then
	awk -v d="$dir" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/mounts | sort -r |
		while read -r m; do umount -l "$m" || true; done
	rm -rf --one-file-system "$dir"
fi
tmp=$dir.tmp.$$
rm -rf --one-file-system "$tmp"
trap 'rm -rf --one-file-system "$tmp"' EXIT
opts=()
[ "$suite" = sid ] && opts+=(--aptopt='Acquire::Check-Valid-Until "false"')
m=$(mirror)
echo "chroot.sh: creating $release ($suite) from $m (bounded to ${limit}s)" >&2
list=$(IFS=,; echo "${packages[*]}" | sed 's/,,*/,/g; s/^,//; s/,$//')
timeout "$limit" mmdebstrap --quiet --variant=apt --mode=root \
	--include="$list" "${opts[@]}" \
	"$suite" "$tmp" "deb $m $suite main" >&2
mv "$tmp" "$dir"
trap - EXIT
echo "$stamp" >"$dir/.uroce-ok"
echo "$dir"

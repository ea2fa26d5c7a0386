#!/bin/bash
# Install the Debian 12 packages uroce needs to build and test, only those
# that are missing.  Needs root (apt-get); non-interactive.
set -euo pipefail
packages=(
	# build
	meson ninja-build pkg-config gcc libc6-dev
	libibverbs-dev libnl-3-dev libnl-route-3-dev liburing-dev
	libxdp-dev libbpf-dev libisal-dev zlib1g-dev
	# run and test: stock verbs programs, pyverbs, wire judges, fuzzing, namespaces
	ibverbs-utils perftest python3-pyverbs python3-scapy tshark
	clang libclang-rt-14-dev iproute2 nftables util-linux qperf libnetfilter-queue-dev ethtool
	# bench/run.sh: its TCP peer and its plot
	iperf3 python3-matplotlib
	# the xdp transport's tests and checks: xdp-loader status, bpftool map dump
	xdp-tools bpftool iputils-ping
	# librdmacm programs over the in-process rdma CM (tests/cm)
	rdmacm-utils librdmacm-dev linux-libc-dev libfabric-bin
	# a crashed test program's backtrace (tests/cm/lib.sh)
	gdb
	# UCX and Open MPI over uroce (tests/ucx, bench/ucx.sh)
	ucx-utils openmpi-bin libopenmpi-dev
	# releases suite: trixie/sid chroots, the Debian package, man page checks
	mmdebstrap debhelper dpkg-dev man-db
	# stock_kernel suite: QEMU guests of the rxe-vm harness on Debian 12's kernel
	qemu-system-x86 cpio kmod tcpdump
	# releases suite: rdma-core built from its source (tests/releases/rdma_core.sh)
	cmake libudev-dev
)
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "uroce: missing Debian packages: ${missing[*]}" >&2
	echo "uroce: install them as root (sudo $0)" >&2
	exit 1
fi
echo "uroce: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

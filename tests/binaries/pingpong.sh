#!/bin/bash
# Unmodified ibv_{rc,uc,srq,ud}_pingpong with --chk (data verified by the
# tool), -n 1000, sizes 1 B / 4 KiB / 64 KiB (UD: 1 B up to the path MTU),
# and ibv_xsrq_pingpong (XRC: SRQs steered by the XRCETH; it checks every
# completion, it has no --chk),
# GID chosen with -g: two processes sharing one device on lo, and two
# devices in two namespaces over a veth pair.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
need_root
isolate_netns "$@"
use_private_registry
add_dev lo0 lo
veth_pair_with_devices 31
lg=$(gid_of "" lo0 127.0.0.1)
[ -n "$lg" ] || fail "no IPv4 GID on lo0"

for where in lo veth; do
	if [ $where = lo ]; then
		set -- "" lo0 $lg "" lo0 $lg 127.0.0.1
		ud_max=4096
	else
		set -- $VETH_A $DEV_A $GID_A $VETH_B $DEV_B $GID_B $ADDR_A
		ud_max=1024   # path MTU of a 1500-byte veth
	fi
	# ibv_xsrq_pingpong opens its XRC domain through /tmp/xrc_domain and
	# leaves it.
	remove_if_new /tmp/xrc_domain
	for size in 1 4096 65536; do
		pair $where "$@" -- ibv_rc_pingpong -c -n 1000 -s $size
		pair $where "$@" -- ibv_uc_pingpong -c -n 1000 -s $size
		pair $where "$@" -- ibv_srq_pingpong -c -n 1000 -s $size
		pair $where "$@" -- ibv_xsrq_pingpong -n 200 -s $size -m 1024
	done
	for size in 1 $ud_max; do
		pair $where "$@" -- ibv_ud_pingpong -c -n 1000 -s $size
	done
done

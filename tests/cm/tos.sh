#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The device's default TOS for the rdma CM (`uroce link set DEV tos TOS`,
# the kernel's configfs default_roce_tos): a connection whose program set
# no TOS gets it, one whose program set one (rdma_set_option
# RDMA_OPTION_ID_TOS: ucmatose -t) keeps its own.  Set on the active
# side's device only: the passive side takes the traffic class from the
# REQ's path, so both directions carry it.  Unmodified ucmatose between two
# namespaces; tshark on the server's end of the veth judges every RoCEv2
# frame of the connections' QPs (not QP1's MADs), requests and ACKs.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/wait.sh"
. "$(dirname "$0")/lib.sh"
need_root
command -v tshark >/dev/null || skip "tshark not installed"
command -v ucmatose >/dev/null || skip "ucmatose not installed (apt-get install rdmacm-utils)"
use_private_registry
cm_setup
cm_where veth
ts() { tshark --disable-heuristic rpcrdma_infiniband "$@" 2>/dev/null; }

# The registry and `link show` keep it; bad values are refused.
ip netns exec $CM_B_NS "$UROCE" link set cmb tos 0x6a || fail "link set cmb tos 0x6a"
ip netns exec $CM_B_NS "$UROCE" link show cmb | grep -q ' tos 0x6a' ||
	fail "link show does not say tos 0x6a: $(ip netns exec $CM_B_NS "$UROCE" link show cmb)"
for bad in 256 -1 x 0x1ff ""; do
	ip netns exec $CM_B_NS "$UROCE" link set cmb tos "$bad" 2>/dev/null &&
		fail "link set cmb tos '$bad' was taken"
done
ip netns exec $CM_B_NS "$UROCE" link show cmb | grep -q ' tos 0x6a' ||
	fail "a refused value changed the device's tos"
pass "uroce link set DEV tos: kept in the registry, shown, bad values refused"

# run NAME WANT CLIENT_ARGS...: ucmatose over the veth, captured; every
# RoCEv2 frame of a data QP must carry traffic class WANT.
run() {
	local name=$1 want=$2 all bad acks
	shift 2
	capture_start $CM_A_NS $CM_A_IF "$CM_TMP/$name.pcap" "udp port 4791 or udp port 9"
	cm_pair "ucmatose $name" $CM_A_NS $CM_B_NS -- ucmatose -b $CM_A_ADDR -c 2 -C 20 -S 3000 \
		-- ucmatose -s $CM_A_ADDR -c 2 -C 20 -S 3000 "$@"
	capture_drained $CM_B_NS $CM_A_ADDR "$CM_TMP/$name.pcap" ||
		fail "$name: the capture never showed its sentinel datagram"
	capture_stop
	local f=$CM_TMP/$name.pcap data="infiniband && infiniband.bth.destqp != 1"
	all=$(ts -r "$f" -Y "$data" | wc -l)
	bad=$(ts -r "$f" -Y "$data && ip.dsfield != $want" | wc -l)
	acks=$(ts -r "$f" -Y "$data && infiniband.bth.opcode == 17" | wc -l)
	[ $((all - acks)) -gt 0 ] || fail "$name: no request among $all frames of data QPs"
	[ "$acks" -gt 0 ] || fail "$name: no ACK among $all frames of data QPs"
	[ "$bad" -eq 0 ] || fail "$name: $bad of $all frames of data QPs without TOS $want: $(
		ts -r "$f" -Y "$data" -T fields -e ip.dsfield | sort | uniq -c | tr '\n' ';')"
	pass "$name: all $all frames of the connections' QPs ($acks ACKs, both directions) carry TOS $want"
}

run default-tos 0x6a
run program-tos 0x20 -t 0x20
ip netns exec $CM_B_NS "$UROCE" link set cmb tos 0 || fail "link set cmb tos 0"
run no-tos 0x00

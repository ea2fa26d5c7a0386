#!/bin/bash
# Unmodified programs that sleep in ibv_get_cq_event: ibv_{rc,srq,ud}_pingpong
# -e with --chk, and perftest --events (ib_send_lat also with a SEND
# longer than its ACK), on lo (two processes sharing a device)
# and between two network namespaces over a veth pair.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
need_root
isolate_netns "$@"
use_private_registry
id=$(uniq_id)
A=uroceXA$id B=uroceXB$id
make_ns $A
make_ns $B
make_veth $A xa$id 10.201.11.1/24 $B xb$id 10.201.11.2/24
add_dev lo0 lo
add_dev xa xa$id $A
add_dev xb xb$id $B
lg=$(gid_of "" lo0 127.0.0.1)
ag=$(gid_of $A xa 10.201.11.1)
bg=$(gid_of $B xb 10.201.11.2)
[ -n "$lg" ] && [ -n "$ag" ] && [ -n "$bg" ] || fail "GID indices not found"

for where in lo veth; do
	if [ $where = lo ]; then set -- "" lo0 $lg "" lo0 $lg 127.0.0.1
	else set -- $A xa $ag $B xb $bg 10.201.11.1; fi
	pair $where "$@" -- ibv_rc_pingpong -e -c -s 4096 -n 1000
	pair $where "$@" -- ibv_srq_pingpong -e -c -s 4096 -n 200
	pair $where "$@" -- ibv_ud_pingpong -e -c -s 512 -n 1000
	for t in ib_send_lat ib_send_bw ib_read_lat; do
		pair $where "$@" -- $t -e -F -n 500
	done
	# 17 B: the SEND is longer than its ACK, which then rides behind it in
	# one datagram and is dispatched first (docs/transport.md); a reply
	# that overtook the ACK made perftest -e overrun its CQ.
	pair $where "$@" -- ib_send_lat -e -F -n 500 -s 17
done

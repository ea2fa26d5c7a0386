#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# UROCE_PCAP on an xdp device records the frames themselves: the Ethernet
# addresses, IPv4 ID and DF bit, BTH and ICRC of each packet it sent or
# received are those the wire carried.  An xdp device (A) and a udp
# device (B) across a veth; unmodified ibv_rc_pingpong with data checks,
# both processes tracing; tshark on B's end of the veth (no XDP program
# there, so its tap sees both directions) is the judge: every RoCEv2
# frame it saw from or to A is in A's trace with the same fields.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
. "$(dirname "$0")/../lib/wait.sh"
need_root
command -v tshark >/dev/null || skip "tshark not installed"
use_private_registry
TRANSPORT_A=xdp TRANSPORT_B= veth_pair_with_devices 36
if_a=pa${VETH_A#uroceP36a} if_b=pb${VETH_B#uroceP36b}
dir=$(mktemp -d /tmp/uroce-xdp-pcap.XXXXXX)
[ -n "${KEEP:-}" ] || on_exit "rm -rf '$dir'"
ts() { tshark --disable-heuristic rpcrdma_infiniband "$@" 2>/dev/null; }
mac_a=$(ip netns exec $VETH_A cat /sys/class/net/$if_a/address)
[ -n "$mac_a" ] || fail "no MAC address for $if_a"

ip netns exec $VETH_B tshark -i $if_b -f "udp dst port 4791" -w "$dir/wire.pcap" >"$dir/tshark.log" 2>&1 &
cap=$!
stop_at_exit $cap
capture_live "$dir/tshark.log" || { cat "$dir/tshark.log"; fail "tshark did not start"; }
export UROCE_PCAP=$dir/t-%p.pcap
PAIR_TIMEOUT=60 pair xdp $VETH_A $DEV_A $GID_A $VETH_B $DEV_B $GID_B $ADDR_A -- ibv_rc_pingpong -c -n 100 -s 3000
unset UROCE_PCAP
kill -INT $cap
wait $cap 2>/dev/null || true

# One line per packet: the fields the trace must share with the wire.
fields() { # FILE FILTER
	ts -r "$1" -Y "$2" -T fields -e eth.src -e eth.dst -e ip.id -e ip.flags.df \
		-e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn \
		-e infiniband.invariant.crc | sort -u
}
# A's trace: the one whose records carry A's MAC (B's are made up).
trace_a=
for f in "$dir"/t-*.pcap; do
	[ -n "$(fields "$f" "eth.addr == $mac_a" | head -1)" ] && trace_a=$f
done
[ -n "$trace_a" ] || fail "no trace records $if_a's MAC $mac_a"
fields "$trace_a" infiniband >"$dir/trace"
for dir_name in "eth.src == $mac_a" "eth.dst == $mac_a"; do
	fields "$dir/wire.pcap" "infiniband && $dir_name" >"$dir/wire"
	n=$(wc -l <"$dir/wire")
	[ "$n" -ge 100 ] || fail "the capture holds only $n packets with $dir_name"
	missing=$(comm -23 "$dir/wire" "$dir/trace" | wc -l)
	[ "$missing" -eq 0 ] || {
		comm -23 "$dir/wire" "$dir/trace" | head -3
		fail "$missing of $n frames with $dir_name are not in the xdp side's trace as they were on the wire"
	}
	pass "$n frames with $dir_name: each in the xdp side's trace with the wire's MACs, IPv4 ID, DF, BTH and ICRC"
done

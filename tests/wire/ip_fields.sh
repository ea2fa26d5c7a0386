#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The GRH's traffic class and hop limit are the IP header's DSCP/ECN and
# TTL (IPv6: traffic class and hop limit), IBTA A17.4.5.1, as rxe writes
# them.  Unmodified ib_write_bw with --tclass and -L on both sides between
# two namespaces; tshark on B's end of the veth (no XDP program there, so
# its tap sees both directions) judges every RoCEv2 frame, requests and
# ACKs, IPv4 and IPv6; each side's UROCE_PCAP records the same values.
# With UROCE_TEST_TRANSPORT=xdp (tests/xdp) A's device is xdp and B's udp:
# both transports write them.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
. "$(dirname "$0")/../lib/wait.sh"
need_root
need_plain_provider
command -v tshark >/dev/null || skip "tshark not installed"
use_private_registry
TRANSPORT_B= veth_pair_with_devices 35
if_b=pb${VETH_B#uroceP35b}
dir=$(mktemp -d /tmp/uroce-ipf.XXXXXX)
[ -n "${KEEP:-}" ] || on_exit "rm -rf '$dir'"
ts() { tshark --disable-heuristic rpcrdma_infiniband "$@" 2>/dev/null; }

# DSCP 26 (AF31) with ECN ECT(0), and the hop limit perftest gives an RC
# QP (255; its -L is for raw Ethernet QPs only): neither is a socket's
# default (0, 64).
TCLASS=0x6a HOPS=255
# run NAME SRV_GID CLI_GID ADDR: ib_write_bw with the fields, captured.
run() {
	local name=$1 sgid=$2 cgid=$3 addr=$4
	capture_start $VETH_B $if_b "$dir/$name.pcap" "udp port 4791"
	UROCE_PCAP=$dir/$name-%p.pcap PAIR_TIMEOUT=60 pair $name $VETH_A $DEV_A $sgid \
		$VETH_B $DEV_B $cgid $addr -- ib_write_bw -s 8192 -n 50 --tclass=$TCLASS
	capture_stop
}

# check FILE FAMILY WHAT: every RoCEv2 frame in FILE, requests and ACKs,
# has the fields; SEEN says how many.
check() {
	local f=$1 dsf ttl all bad acks
	if [ "$2" = 4 ]; then dsf=ip.dsfield ttl=ip.ttl; else dsf=ipv6.tclass ttl=ipv6.hlim; fi
	all=$(ts -r "$f" -Y infiniband | wc -l)
	bad=$(ts -r "$f" -Y "infiniband && !($dsf == $TCLASS && $ttl == $HOPS)" | wc -l)
	acks=$(ts -r "$f" -Y "infiniband.bth.opcode == 17" | wc -l)
	# A GSO datagram that crosses the veth whole is one frame of up to 64
	# packets: the count of frames depends on how the sends fell.
	[ $((all - acks)) -gt 0 ] || fail "$3: no request among the $all RoCEv2 frames in $f"
	[ "$bad" -eq 0 ] || fail "$3: $bad of $all frames without traffic class $TCLASS and hop limit $HOPS: $(
		ts -r "$f" -Y infiniband -T fields -e $dsf -e $ttl | sort | uniq -c | head -5 | tr '\n' ';')"
	[ "$acks" -gt 0 ] || fail "$3: no ACK in $f"
	SEEN="$all frames ($acks ACKs)"
}

# check_run NAME FAMILY: the wire and both sides' UROCE_PCAP.
check_run() {
	local t n=0
	check "$dir/$1.pcap" $2 "IPv$2 wire"
	pass "IPv$2 on the wire: $SEEN with traffic class $TCLASS and hop limit $HOPS"
	for t in "$dir/$1"-*.pcap; do
		check "$t" $2 "UROCE_PCAP $(basename "$t")"
		n=$((n + 1))
	done
	[ $n -eq 2 ] || fail "IPv$2: $n UROCE_PCAP files, not one per side"
	pass "IPv$2: both sides' UROCE_PCAP record them, sent and received"
}

run v4 $GID_A $GID_B $ADDR_A
check_run v4 4

G6_A=$(gid_matching $VETH_A $DEV_A fe80:) G6_B=$(gid_matching $VETH_B $DEV_B fe80:)
[ -n "$G6_A" ] && [ -n "$G6_B" ] || fail "no link-local IPv6 GID: A '$G6_A' B '$G6_B'"
run v6 $G6_A $G6_B $ADDR_A   # perftest's own connection stays IPv4
check_run v6 6

#!/bin/bash
# RoCEv2 across a router over transport xdp.  A and B are on two subnets
# (IPv4 and IPv6) joined by namespace R, which forwards (the kernel's
# routing).  An xdp device's frames to an off-link peer go to the next hop
# of its route: the gateway's MAC address from the neighbour table
# (docs/xdp.md, "Sockets and frames").  R lowers the TTL / hop limit and
# rewrites the IPv4 checksum, fields the ICRC leaves out (IBTA A17.3.3).
#
# verbs_verify (every RC/UC/UD opcode, every byte and atomic result) xdp to
# xdp and xdp to udp, over IPv4 and IPv6; each xdp end moved packets both
# ways through its AF_XDP sockets; dumpcap on both of R's interfaces is the
# judge of the frames: A's arrive addressed to R's MAC with the hop limit
# verbs_verify set (64), leave R one lower from R's other MAC, and every
# ICRC is right on both sides (tests/wire/icrc_check.py: zlib, not uroce's
# code).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
. "$(dirname "$0")/../lib/wait.sh"
. "$(dirname "$0")/lib.sh"
need_root
: "${VERBS_VERIFY:?}"
command -v tshark >/dev/null || skip "tshark not installed"
command -v ethtool >/dev/null || skip "ethtool not installed (scripts/deps.sh)"
use_private_registry
id=$(uniq_id)
A=xdprA$id R=xdprR$id B=xdprB$id
IA=ra$id IRA=rra$id IRB=rrb$id IB=rb$id
make_ns $A
make_ns $R
make_ns $B
make_veth $A $IA 10.232.20.1/24 $R $IRA 10.232.20.254/24
make_veth $R $IRB 10.232.21.254/24 $B $IB 10.232.21.2/24
ip -n $A addr add fd00:232:20::1/64 dev $IA nodad
ip -n $R addr add fd00:232:20::fe/64 dev $IRA nodad
ip -n $R addr add fd00:232:21::fe/64 dev $IRB nodad
ip -n $B addr add fd00:232:21::2/64 dev $IB nodad
# B's udp device sends GSO datagrams: segmented by B's kernel, so that
# R's capture sees each packet as the wire carries it (tests/wire/gso_wire.sh).
ip netns exec $B ethtool -K $IB tx-udp-segmentation off >/dev/null || fail "ethtool -K $IB"
ip netns exec $R sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
ip -n $A route add default via 10.232.20.254
ip -n $B route add default via 10.232.21.254
ip -n $A -6 route add default via fd00:232:20::fe
ip -n $B -6 route add default via fd00:232:21::fe
ip netns exec $A ping -c 1 -W 5 10.232.21.2 >/dev/null || fail "no IPv4 route from A to B through R"
ip netns exec $A ping -6 -c 1 -W 5 fd00:232:21::2 >/dev/null || fail "no IPv6 route from A to B through R"

add_dev xa $IA $A transport xdp
add_dev xb $IB $B transport xdp
add_dev ub $IB $B        # a udp device on B's interface too
T=$(mktemp -d /tmp/uroce-xdp-routed.XXXXXX)
[ -n "${KEEP:-}" ] || on_exit "rm -rf '$T'"
mac_a=$(ip netns exec $A cat /sys/class/net/$IA/address)
mac_ra=$(ip netns exec $R cat /sys/class/net/$IRA/address)
mac_rb=$(ip netns exec $R cat /sys/class/net/$IRB/address)
mac_b=$(ip netns exec $B cat /sys/class/net/$IB/address)

# routed NAME SERVER-DEV (in B) SERVER-ADDR CLIENT-ADDR: verbs_verify, the
# server on B, the client on A's xdp device, with the wire captured on
# both of R's interfaces; then every check above.
routed() {
	local name=$1 sdev=$2 saddr=$3 caddr=$4 sgid cgid port=$((PAIR_PORT++)) rc=0 spid
	local a0 b0 delta ra=$T/$name.ra.pcap rb=$T/$name.rb.pcap cap_ra cap_rb f
	sgid=$(gid_matching $B $sdev "${saddr/#10./::ffff:10.},")
	cgid=$(gid_matching $A xa "${caddr/#10./::ffff:10.},")
	[ -n "$sgid" ] && [ -n "$cgid" ] || fail "$name: GIDs of $saddr / $caddr not found"
	a0=$(xdp_packets $A xa) b0=$(xdp_packets $B xb)
	capture_start $R $IRA "$ra" "udp port 4791 or udp port 9"
	cap_ra=$CAPTURE_PID
	capture_start $R $IRB "$rb" "udp port 4791 or udp port 9"
	cap_rb=$CAPTURE_PID
	ip netns exec $B timeout 120 "$UROCE" run "$VERBS_VERIFY" -d $sdev -g $sgid -p $port -n 2 \
		>"$T/$name.s" 2>&1 &
	spid=$!
	wait_listen $port $spid 60 $B || fail "$name: verbs_verify's server never listened: $(cat "$T/$name.s")"
	ip netns exec $A timeout 120 "$UROCE" run "$VERBS_VERIFY" -d xa -g $cgid -p $port -n 2 \
		"$saddr" >"$T/$name.c" 2>&1 || rc=$?
	wait $spid || rc=$((rc ? rc : $?))
	[ $rc = 0 ] || { cat "$T/$name.s" "$T/$name.c"; fail "$name: verbs_verify exit $rc"; }
	# The sentinel crosses both captures (A -> R -> B).
	capture_drained $A ${saddr%%,*} "$ra" && capture_drained $A ${saddr%%,*} "$rb" ||
		echo "note: a capture of $name did not see its sentinel: it may miss the last frames" >&2
	capture_stop $cap_ra
	capture_stop $cap_rb
	delta=$(xdp_moved_since "$a0" "$(xdp_packets $A xa)") ||
		fail "$name: A's xdp device moved $delta (in, out) packets through AF_XDP"
	[ $sdev != xb ] || delta=$(xdp_moved_since "$b0" "$(xdp_packets $B xb)") ||
		fail "$name: B's xdp device moved $delta (in, out) packets through AF_XDP"
	# Every RoCE frame's link addresses and hop limit on each side of R,
	# one line per distinct combination.
	local ttl=ip.ttl src=ip.src
	[[ $saddr != *:* ]] || ttl=ipv6.hlim src=ipv6.src
	for f in ra rb; do
		tshark -r "$T/$name.$f.pcap" -Y "udp.dstport == 4791" -T fields \
			-e eth.src -e eth.dst -e $src -e $ttl 2>/dev/null | sort | uniq -c >"$T/$name.$f.fields"
	done
	# What A sent: to R's MAC, hop limit 64 before R, 63 after it.
	grep -q " $mac_a	$mac_ra	$caddr	64$" "$T/$name.ra.fields" &&
		grep -q " $mac_rb	$mac_b	$caddr	63$" "$T/$name.rb.fields" ||
		{ cat "$T/$name.ra.fields" "$T/$name.rb.fields"; fail "$name: A's frames did not go through R as routed"; }
	# Nothing else: on each side all frames of one sender have the same
	# link addresses.  (Hop limits may differ: verbs_verify's UD replies
	# go through ibv_create_ah_from_wc, which copies the received one.)
	[ -z "$(for f in ra rb; do awk '{print $2, $3, $4}' "$T/$name.$f.fields" | sort -u |
		awk '{print $3}' | sort | uniq -d; done)" ] ||
		{ cat "$T/$name.ra.fields" "$T/$name.rb.fields"; fail "$name: one sender's frames with two pairs of link addresses"; }
	# What B sent reached A from R's MAC.
	grep -q " $mac_ra	$mac_a	$saddr	[0-9]*$" "$T/$name.ra.fields" ||
		{ cat "$T/$name.ra.fields"; fail "$name: B's frames did not reach A from R"; }
	/usr/bin/python3 "$(dirname "$0")/../wire/icrc_check.py" "$ra" "$rb" >"$T/$name.icrc" 2>&1 ||
		{ cat "$T/$name.icrc"; fail "$name: ICRC check of the routed frames"; }
	pass "$name: verbs_verify through router R; A's frames to R's MAC, hop limit 64 -> 63, every ICRC right on both sides ($(grep -o '[0-9]* RoCEv2 packets, [0-9]* with a bad ICRC' "$T/$name.icrc" | paste -sd/))"
}

routed xdp-xdp-ipv4 xb 10.232.21.2 10.232.20.1
routed xdp-udp-ipv4 ub 10.232.21.2 10.232.20.1
routed xdp-xdp-ipv6 xb fd00:232:21::2 fd00:232:20::1
routed xdp-udp-ipv6 ub fd00:232:21::2 fd00:232:20::1

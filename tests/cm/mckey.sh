#!/bin/bash
# rdma_join_multicast (docs/cm.md, "Multicast"): mcast_join (C, stock
# librdmacm) checks the MULTICAST_JOIN event field by field, the attach,
# leave and destroy, and the EINVAL cases; then rdmacm-utils' mckey,
# unmodified: a receiver joins, a sender joins and sends, and the receiver
# must complete all its receives -- on lo (one namespace), across two
# namespaces over a veth (the sender there a send-only member), and over
# a veth with IPv6 addresses and an IPv6 group; the receiving device of a
# veth must count exactly the datagrams sent.  Last, a join of a unicast
# address fails at once with EINVAL.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
: "${MCAST_JOIN:?MCAST_JOIN must name the mcast_join test program}"
use_private_registry
cm_setup
N=25 SIZE=200
# Groups only our namespaces use (239/8: administratively scoped).
grp() { echo 239.211.$((RANDOM % 250)).$((1 + RANDOM % 250)); }

cm_run $CM_A_NS "$MCAST_JOIN" $CM_A_ADDR $(grp) $(grp) $CM_B_ADDR || fail "mcast_join"
pass "mcast_join: event, attach, leave, destroy, EINVAL cases"

# rx_packets of device DEV in NS (uroce stat).
rx_packets() {
	ip netns exec "$1" "$UROCE" stat "$2" | awk '$1 == "rx_packets" { print $2; f = 1 } END { if (!f) print 0 }'
}

# mckey_pair WHERE RNS RADDR SNS SADDR RDEV MGID [SENDER OPTIONS...]: the
# group is MGID's address (::ffff:a.b.c.d for IPv4).
mckey_pair() {
	local w=$1 rns=$2 raddr=$3 sns=$4 saddr=$5 rdev=$6 mgid=$7 g rlog slog rpid rc=0 rx0 rx1
	shift 7
	g=${mgid#::ffff:}
	rlog=$(mktemp /tmp/i11cm-mck.XXXXXX) slog=$(mktemp /tmp/i11cm-mck.XXXXXX)
	on_exit "rm -f '$rlog' '$slog'"
	rx0=$(rx_packets $rns $rdev)
	# stdbuf: mckey's lines reach the log as they are printed (the event
	# we wait for), not at its exit.
	cm_run $rns stdbuf -oL mckey -m $g -b $raddr -C $N -S $SIZE >"$rlog" 2>&1 &
	rpid=$!
	stop_at_exit $rpid
	# The event: librdmacm has attached the QP when mckey prints this.
	wait_until 30 grep -q "joined dgid: $mgid " "$rlog" ||
		{ cat "$rlog"; fail "mckey $w: the receiver never joined $g"; }
	cm_run $sns mckey -m $g -b $saddr -s -C $N -S $SIZE "$@" >"$slog" 2>&1 || rc=$?
	[ $rc -eq 0 ] && grep -q "return status 0" "$slog" ||
		{ cat "$slog"; fail "mckey $w: sender exit $rc"; }
	# mckey's receiver polls its CQ until $N receives have completed.
	wait $rpid || rc=$?
	if [ $rc -ne 0 ] || ! grep -q "data transfers complete" "$rlog" ||
		! grep -q "return status 0" "$rlog"; then
		echo "--- receiver"; cat "$rlog"; echo "--- sender"; cat "$slog"
		fail "mckey $w: receiver exit $rc"
	fi
	rx1=$(rx_packets $rns $rdev)
	echo "mckey $w: group $g, $N sent, receiver done; $rdev rx_packets $rx0 -> $rx1"
	# Only the datagrams reach a device of its own (nothing else runs there).
	[ "$rdev" = lo0 ] || [ $((rx1 - rx0)) -eq $N ] ||
		fail "mckey $w: $rdev received $((rx1 - rx0)) packets, $N sent"
	pass "mckey $w: $N datagrams of $SIZE bytes to $g received"
}

mckey_pair lo $CM_LO_NS 127.0.0.1 $CM_LO_NS 127.0.0.1 lo0 ::ffff:$(grp)
mckey_pair veth $CM_A_NS $CM_A_ADDR $CM_B_NS $CM_B_ADDR cma ::ffff:$(grp) -o
# IPv6: the group's address is the MGID as is (a veth of its own, whose
# addresses exist before its devices: nodad, no wait for the GID table).
id=$(uniq_id)
make_ns mckA$id
make_ns mckB$id
A6=fd00:211:$((RANDOM % 9000 + 1000))::1
make_veth mckA$id mcka$id 10.212.$((RANDOM % 200)).1/24 mckB$id mckb$id 10.212.$((RANDOM % 200)).2/24
ip -n mckA$id addr add $A6/64 dev mcka$id nodad
ip -n mckB$id addr add ${A6%::1}::2/64 dev mckb$id nodad
add_dev mck6a mcka$id mckA$id
add_dev mck6b mckb$id mckB$id
mckey_pair "veth IPv6" mckA$id $A6 mckB$id ${A6%::1}::2 mck6a ff0e::211:$((RANDOM % 9000 + 1000))

# A unicast address as the group: EINVAL at the join, no hang.
rc=0
out=$(cm_run $CM_A_NS mckey -m $CM_B_ADDR -b $CM_A_ADDR -C 1 2>&1) || rc=$?
grep -q "failure joining: Invalid argument" <<<"$out" &&
	grep -q "not a multicast address" <<<"$out" || { echo "$out"; fail "mckey to a unicast address: no clear error"; }
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "mckey to a unicast address: exit $rc"
pass "mckey to a unicast address: refused (exit $rc): $(grep 'not a multicast' <<<"$out")"

# The impairing wire between two hosts, with a uroce device on each
# (sourced after common.sh and pairs.sh by the fault tests).

IMPAIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/impair

# impaired_pair_with_devices TAG DEV_A DEV_B: namespaces A, W (the bridge
# with the faults) and B from `impair up`, torn down at exit; sets A B W
# IF_A IF_B ADDR_A ADDR_B, ID (for `impair set/clear ID`), and GID_A/GID_B,
# the IPv4 GIDs of devices DEV_A (in A) and DEV_B (in B), and
# WIRE_TRANSPORT_A / WIRE_TRANSPORT_B, their transports: both
# $UROCE_TEST_TRANSPORT if set (tests/xdp runs the faults over xdp), else
# udp; TRANSPORT_A / TRANSPORT_B, if set even to nothing, choose one end's
# (nothing is udp), as for veth_pair_with_devices (pairs.sh).
impaired_pair_with_devices() {
	local wire ta=${TRANSPORT_A-${UROCE_TEST_TRANSPORT:-}} tb=${TRANSPORT_B-${UROCE_TEST_TRANSPORT:-}}
	ID=uro$1$(uniq_id)
	note_created netns $ID-a
	note_created netns $ID-w
	note_created netns $ID-b
	on_exit "'$IMPAIR' down $ID"
	deep_backlog   # the wire's hops share one backlog (impair sets RPS)
	# RPS on the wire's veths; off for transport xdp unless XDP_RPS=1 (the
	# xdp_rps test: docs/xdp.md, "RPS").
	wire=$(IMPAIR_KEEP_ORDER=$([ "${UROCE_TEST_TRANSPORT:-}" != xdp ] || echo "${XDP_RPS:-0}") "$IMPAIR" up $ID) || fail "impair up"
	echo "$wire"
	eval "$wire"   # A B W IF_A IF_B ADDR_A ADDR_B
	# A program started before linkwatch marks the ends up finds its
	# port DOWN ("Couldn't set the link layer": FAULTS_ONLY=rdatomic,
	# whose first case starts at once).
	wait_oper_up $A $IF_A
	wait_oper_up $B $IF_B
	WIRE_TRANSPORT_A=${ta:-udp} WIRE_TRANSPORT_B=${tb:-udp}
	echo "devices: $2 in A (transport $WIRE_TRANSPORT_A), $3 in B (transport $WIRE_TRANSPORT_B)"
	add_dev $2 $IF_A $A ${ta:+transport $ta}
	add_dev $3 $IF_B $B ${tb:+transport $tb}
	GID_A=$(gid_of $A $2 $ADDR_A)
	GID_B=$(gid_of $B $3 $ADDR_B)
	[ -n "$GID_A" ] && [ -n "$GID_B" ] || fail "GIDs of $ADDR_A / $ADDR_B not found"
}

# impair_counter NAME TEXT: the value of "NAME N" in impair's counters.
impair_counter() { sed -n "s/^$1 \([0-9]*\)$/\1/p" <<<"$2" | head -1; }

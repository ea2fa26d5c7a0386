#!/bin/bash
# UC and UD under packet loss (tests/faults/uc_loss.c), between two
# namespaces joined by tests/faults/impair's wire:
#   loss10  10% loss both ways, on every RoCE packet (not rc-only: UC and UD
#           are the point).  UC: a message that lost a packet is dropped
#           whole (IBTA 9.8.2), so some but not all of the N multi-packet
#           messages arrive, each intact, and the server's device counts
#           drop_uc_partial_message; UD: some but not all datagrams arrive,
#           each whole.  uc_loss itself checks every delivered byte, that
#           no receive WQE was consumed by a dropped message and that the
#           QPs stay in RTS.
#   clean   no faults: UC and UD deliver all N.
# UC_LOSS_N sets N (default 400).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
. "$(dirname "$0")/wire.sh"
need_root
: "${UC_LOSS:?}"
command -v nft >/dev/null || skip "needs nft (apt-get install nftables)"
use_private_registry
N=${UC_LOSS_N:-400}

impaired_pair_with_devices U ua ub

# The server's device counter NAME (uroce stat, run in its namespace).
srv_stat() {
	ip netns exec $B "$UROCE" stat -a ub | awk -v k="$1" '$1 == k {print $2; f = 1} END {if (!f) print ""}'
}

failed=()
cfail() { echo "FAIL: $*" >&2; failed+=("$*"); }

# run NAME [FAULTS...]: uc_loss server in B, client in A, with FAULTS set
# on the wire (none: a clean run).  Sets UC_GOT, UD_GOT, PARTIAL (the
# server device's drop_uc_partial_message during the run), DROPPED (wire).
run() {
	local name=$1 log=$(mktemp /tmp/uroce-ucl.XXXXXX) rc=0 port=$((PAIR_PORT++)) t0=$SECONDS
	shift
	on_exit "rm -f '$log' '$log.c'"
	local p0 p1 counters
	p0=$(srv_stat drop_uc_partial_message)
	[ -n "$p0" ] || fail "uroce stat -a ub has no drop_uc_partial_message"
	if [ $# -gt 0 ]; then
		"$IMPAIR" set $ID "$@" || fail "$name: impair set $ID $*"
	fi
	ip netns exec $B timeout 120 "$UROCE" run "$UC_LOSS" -d ub -g $GID_B -p $port -n $N \
		>"$log" 2>&1 &
	local spid=$!
	wait_listen $port $spid 60 $B || fail "$name: the server never listened on port $port"
	ip netns exec $A timeout 120 "$UROCE" run "$UC_LOSS" -d ua -g $GID_A -p $port -n $N \
		$ADDR_B >"$log.c" 2>&1 || rc=$?
	wait $spid || rc=$((rc ? rc : $?))
	counters=$("$IMPAIR" clear $ID) || fail "$name: impair clear $ID"
	p1=$(srv_stat drop_uc_partial_message)
	PARTIAL=$((p1 - p0))
	DROPPED=$(impair_counter dropped "$counters")
	echo "== $name: ${*:-no faults} ($((SECONDS - t0))s, exit $rc)"
	echo "$counters" | sed 's/^/   wire: /'
	echo "   uroce stat (server, ub): drop_uc_partial_message +$PARTIAL"
	echo "--- $name: client (in $A)"; cat "$log.c"
	echo "--- $name: server (in $B)"; cat "$log"
	UC_GOT=$(sed -n "s|^uc: delivered \([0-9]*\)/$N .*|\1|p" "$log")
	UD_GOT=$(sed -n "s|^ud: delivered \([0-9]*\)/$N .*|\1|p" "$log")
	[ $rc -eq 0 ] || cfail "$name: uc_loss failed (exit $rc)"
	[ -n "$UC_GOT" ] || { cfail "$name: no UC result from the server"; UC_GOT=-1; }
	[ -n "$UD_GOT" ] || { cfail "$name: no UD result from the server"; UD_GOT=-1; }
	echo "   $name: UC delivered $UC_GOT/$N, UD delivered $UD_GOT/$N"
}

bad=${#failed[@]}
run loss10 loss 10
[ "${DROPPED:-0}" -gt 0 ] || cfail "loss10: the wire dropped no packet"
[ "$UC_GOT" -gt 0 ] && [ "$UC_GOT" -lt $N ] ||
	cfail "loss10: UC delivered $UC_GOT/$N, expected some but not all"
[ "$PARTIAL" -gt 0 ] ||
	cfail "loss10: drop_uc_partial_message +$PARTIAL on the server, expected > 0"
[ "$UD_GOT" -gt 0 ] && [ "$UD_GOT" -lt $N ] ||
	cfail "loss10: UD delivered $UD_GOT/$N, expected some but not all"
[ ${#failed[@]} -gt $bad ] ||
	pass "loss10: UC $UC_GOT/$N and UD $UD_GOT/$N delivered intact, $PARTIAL UC packets of broken messages dropped, wire dropped $DROPPED"

bad=${#failed[@]}
run clean
[ "$UC_GOT" -eq $N ] || cfail "clean: UC delivered $UC_GOT/$N"
[ "$UD_GOT" -eq $N ] || cfail "clean: UD delivered $UD_GOT/$N"
[ ${#failed[@]} -gt $bad ] || pass "clean: UC and UD delivered $N/$N"

[ ${#failed[@]} -eq 0 ] || fail "${#failed[@]} failure(s): $(printf '%s; ' "${failed[@]}")"

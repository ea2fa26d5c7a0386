#!/bin/bash
# RC's timers against a dead peer and a receiver that is not ready
# (tests/faults/rc_faults.c), between two namespaces joined by
# tests/faults/impair's wire with no faults set:
#   dead/wire  the wire's port to the server goes down once connected
#   dead/link  the server's own link goes down once connected
#   rnr        RNR NAKs retried for ever (rnr_retry 7) and given up (2)
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
. "$(dirname "$0")/wire.sh"
need_root
: "${RC_FAULTS:?}"
use_private_registry

impaired_pair_with_devices R ra rb

# run NAME TEST [CLIENT ARGS...]: server in B, client in A; CUT_UP restores
# what the client's command cut.
run() {
	local name=$1 test=$2 log=$(mktemp /tmp/uroce-rcf.XXXXXX) rc=0 port=$((PAIR_PORT++))
	shift 2
	on_exit "rm -f '$log' '$log.c'"
	ip netns exec $B timeout 90 "$UROCE" run "$RC_FAULTS" -t $test -d rb -g $GID_B -p $port \
		>"$log" 2>&1 &
	local spid=$!
	wait_listen $port $spid 60 $B || fail "$name: the server never listened on port $port"
	ip netns exec $A timeout 90 "$UROCE" run "$RC_FAULTS" -t $test -d ra -g $GID_A -p $port \
		"$@" $ADDR_B >"$log.c" 2>&1 || rc=$?
	[ -z "${CUT_UP:-}" ] || eval "$CUT_UP"
	wait $spid || rc=$((rc ? rc : $?))
	echo "--- $name: client (in $A)"; cat "$log.c"
	echo "--- $name: server (in $B)"; cat "$log"
	[ $rc -eq 0 ] || fail "$name (exit $rc)"
	pass "$name"
}

CUT_UP="ip -n $W link set wb up" \
	run dead/wire dead -x "ip -n $W link set wb down"
# The next test needs the wire back: the bridge forwards on wb again.
wait_until 30 eval 'bridge -n $W link show dev wb | grep -q "state forwarding"' ||
	fail "the bridge port wb does not forward again"
CUT_UP="ip -n $B link set $IF_B up" \
	run dead/link dead -x "ip -n $B link set $IF_B down"
# the server's port must be ACTIVE again before the next test
wait_until 30 eval 'ip netns exec $B "$UROCE" run ibv_devinfo -d rb 2>/dev/null | grep -q PORT_ACTIVE' ||
	fail "the server's port did not become ACTIVE again"
run rnr rnr

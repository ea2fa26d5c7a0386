#!/bin/bash
# verbs_verify (our own, public verbs API only) between two processes on lo
# and between two namespaces over veth: every opcode of every QP type,
# every byte and atomic result compared, rejected accesses checked.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
need_root
: "${VERBS_VERIFY:?}"
use_private_registry
add_dev lo0 lo
veth_pair_with_devices 33
lg=$(gid_of "" lo0 127.0.0.1)
n=${VERIFY_ITERS:-150}
run() { # where srv_ns srv_dev srv_gid cli_ns cli_dev cli_gid addr
	local log=$(mktemp /tmp/uroce-verify.XXXXXX) rc=0 port=$((PAIR_PORT++)) seed=$RANDOM
	on_exit "rm -f '$log'"
	${2:+ip netns exec $2} timeout 300 "$UROCE" run "$VERBS_VERIFY" -d $3 -g $4 -p $port -n $n -s $seed >"$log" 2>&1 &
	local spid=$!
	wait_listen $port $spid 60 "$2" || fail "verbs_verify's server never listened on port $port ($1)"
	${5:+ip netns exec $5} timeout 300 "$UROCE" run "$VERBS_VERIFY" -d $6 -g $7 -p $port -n $n -s $seed $8 || rc=$?
	echo "(seed $seed)"
	wait $spid || rc=$((rc ? rc : $?))
	echo "--- server ($1)"; cat "$log"
	[ $rc -eq 0 ] || fail "verbs_verify on $1 (exit $rc)"
	pass "verbs_verify on $1"
}
run lo "" lo0 $lg "" lo0 $lg 127.0.0.1
run veth $VETH_A $DEV_A $GID_A $VETH_B $DEV_B $GID_B $ADDR_A

#!/bin/bash
# Many QPs at once (issue 14): perftest's ib_write_bw and ib_send_bw with
# -q 128 and -q 512, and 8 processes x 64 QPs on one device (8 perftest
# pairs at once), on lo and across a veth pair between two namespaces
# (MANY_QPS_WHERE, default "lo veth"; MANY_QPS_AT_ONCE=0 leaves the 8
# pairs out).  Before the congestion window (engine/cc.c) and the growing
# TX socket table, -q 128 ended in IBV_WC_RETRY_EXC_ERR; and with the
# default soft limit of 1024 open files, -q 512 did (EMFILE).  perftest checks every completion's
# status and fails the run on any other than success; a side that exits
# non-zero or prints an error fails the test.  It never judges speed.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
need_root
isolate_netns "$@"
# The soft limit on open files a login session gets by default: -q 512
# needs more (two sockets per QP) and uroce raises it itself.
ulimit -Sn 1024
use_private_registry
add_dev lo0 lo
WHERE=${MANY_QPS_WHERE:-lo veth}
[[ " $WHERE " != *" veth "* ]] || veth_pair_with_devices 34
lg=$(gid_of "" lo0 127.0.0.1)
PAIR_TIMEOUT=300

# at_once N NAME SRV_NS SRV_DEV SRV_GID CLI_NS CLI_DEV CLI_GID SERVER_ADDR -- CMD ARGS...
# N server/client pairs of CMD at the same time on the same devices.
at_once() {
	local n=$1 name=$2 sns=$3 sdev=$4 sgid=$5 cns=$6 cdev=$7 cgid=$8 saddr=$9 i rc=0
	shift 10
	local log=() spid=() cpid=() port0=$((PAIR_PORT + 1))
	PAIR_PORT=$((PAIR_PORT + n))
	for ((i = 0; i < n; i++)); do
		log[i]=$(mktemp /tmp/uroce-many.XXXXXX)
		on_exit "rm -f '${log[i]}' '${log[i]}.c'"
		${sns:+ip netns exec $sns} env UROCE_STATS=1 timeout $PAIR_TIMEOUT "$UROCE" run "$@" -d $sdev -x $sgid \
			-p $((port0 + i)) >"${log[i]}" 2>&1 &
		spid[i]=$!
		stop_at_exit ${spid[i]}
	done
	for ((i = 0; i < n; i++)); do
		wait_listen $((port0 + i)) ${spid[i]} 60 $sns || { cat "${log[i]}"; fail "$name: server $i did not start"; }
	done
	for ((i = 0; i < n; i++)); do
		${cns:+ip netns exec $cns} env UROCE_STATS=1 timeout $PAIR_TIMEOUT "$UROCE" run "$@" -d $cdev -x $cgid \
			-p $((port0 + i)) $saddr >"${log[i]}.c" 2>&1 &
		cpid[i]=$!
		stop_at_exit ${cpid[i]}
	done
	for ((i = 0; i < n; i++)); do
		wait ${cpid[i]} || rc=$?
		wait ${spid[i]} || rc=$((rc ? rc : $?))
		pair_check "$name: pair $i of $n: $*" $rc "${log[i]}" "${log[i]}.c" "$sns" "$cns"
	done
	pass "$name: $n processes at once: $*"
}

for w in $WHERE; do
	if [ $w = lo ]; then set -- "" lo0 $lg "" lo0 $lg 127.0.0.1
	else set -- $VETH_A $DEV_A $GID_A $VETH_B $DEV_B $GID_B $ADDR_A; fi
	for t in ib_write_bw ib_send_bw; do
		pair $w "$@" -- $t -F -q 128 -n 50
		pair $w "$@" -- $t -F -q 512 -n 10
	done
	[ "${MANY_QPS_AT_ONCE:-1}" = 0 ] || at_once 8 $w "$@" -- ib_write_bw -F -q 64 -n 20
done

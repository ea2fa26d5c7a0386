#!/bin/bash
# The CM under faults, with unmodified rping (on lo and over the veth):
#  - a client of a port nobody listens on is rejected (REJ 8) and exits
#    non-zero within a few seconds;
#  - a second server on a port already listened on fails (EADDRINUSE);
#  (a server killed mid-run: restart.sh)
#  - several servers, each listening on its own port, serve clients at
#    the same time.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
use_private_registry
cm_setup

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
less_than() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

for w in ${CM_WHERE:-lo veth}; do
	cm_where $w
	base=$((8000 + RANDOM % 1000))

	# A server on the peer: its process's QP1 answers for the host (with no
	# uroce process at all on a host, a REQ meets silence: docs/cm.md).
	port=$((base + 1))
	cm_server $SRV_NS 'uroce cm: listening' rping -s -a $SRV_ADDR -p $port -C 1
	first=$CM_SRV_PID first_log=$CM_SRV_LOG

	# No listener: REJECTED, exit status non-zero, quickly.
	t0=$(now) rc=0
	cm_run $CLI_NS rping -c -a $SRV_ADDR -p $base -C 1 >"$CM_TMP/nl" 2>&1 || rc=$?
	dt=$(elapsed $t0)
	grep -q REJECTED "$CM_TMP/nl" || { cat "$CM_TMP/nl"; fail "$w: no REJECTED from a port nobody listens on"; }
	[ $rc -ne 0 ] || fail "$w: rping -c to a port nobody listens on exited 0"
	less_than $dt 5 || fail "$w: rejection took ${dt}s"
	pass "$w: no listener: REJECTED, exit $rc after ${dt}s"

	# Two listeners on one port.
	rc=0
	cm_run $SRV_NS rping -s -a $SRV_ADDR -p $port -C 1 >"$CM_TMP/dup" 2>&1 || rc=$?
	grep -qi 'address already in use' "$CM_TMP/dup" || { cat "$CM_TMP/dup"; fail "$w: second listener not refused with EADDRINUSE"; }
	[ $rc -ne 0 ] || fail "$w: second listener exited 0"
	pass "$w: a second listener on port $port: EADDRINUSE"
	cm_run $CLI_NS rping -c -a $SRV_ADDR -p $port -C 1 >"$CM_TMP/first" 2>&1 ||
		{ cat "$CM_TMP/first"; fail "$w: the first listener no longer serves"; }
	wait $first || { rc=$?; echo "--- first server (exit $rc)"; cat "$first_log"
		echo "--- its client"; cat "$CM_TMP/first"; fail "$w: first server exited non-zero"; }

	# Several listeners at once, each on its own port, each with a client.
	pids=() cpids=() logs=()
	for i in 1 2 3; do
		cm_server $SRV_NS 'uroce cm: listening' rping -s -a $SRV_ADDR -p $((base + 10 + i)) -C 50 -V -S 2000
		pids+=($CM_SRV_PID)
		logs+=($CM_SRV_LOG)
	done
	for i in 1 2 3; do
		log=$(mktemp /tmp/i11cm-conc.XXXXXX)
		on_exit "rm -f '$log'"
		cm_run $CLI_NS rping -c -a $SRV_ADDR -p $((base + 10 + i)) -C 50 -V -S 2000 >"$log" 2>&1 &
		cpids+=($!)
		logs+=($log)
	done
	i=0
	for p in "${pids[@]}" "${cpids[@]}"; do
		rc=0
		wait $p || rc=$?
		if [ $rc -ne 0 ]; then
			# Every side's last lines: a server that saw a DISCONNECT
			# learns why only from its client's log.
			for l in "${logs[@]}"; do
				echo "--- $l"
				# (an empty log, a client still connecting: no
				# line, and no early exit under set -e)
				{ grep -v 'ping data' "$l" || true; } | tail -20
			done
			fail "$w: concurrent servers: process $i exited $rc"
		fi
		i=$((i + 1))
	done
	pass "$w: three servers on their own ports served three clients at once"
done

# Sourced by tests/cm/lib.sh and tests/releases/installed.sh.
# rdma-core 44's rping (Debian 12's) can exit 255 after a complete run:
# its cm_thread calls rdma_get_cm_event once more after main() destroyed
# the event channel, and gets EBADF.  That race is rping's own (the
# kernel's CM shows it too) and was fixed upstream in commit f3ae6534a,
# "rping: terminate CM event thread before exiting".  rping_teardown_race
# OUTPUT is true when OUTPUT (a regular file, or a link to one) holds
# exactly one such line and every other line is one a good run prints
# (ping data, the DISCONNECT note, our CM's debug lines); it notes so in
# OUTPUT.  The line need not be the last: rping's stdout is a buffered
# file, written in blocks, and its threads' unbuffered lines land between
# two blocks, so the tail of the last ping line can follow it (seen in a
# loaded run): a line of ping characters alone is such a tail.  A server
# ends every good run with "wait for RDMA_READ_ADV state 10" (its loop
# meets DISCONNECTED, state 10, and returns 0): a fresh-clone run of the
# suite failed cm_restart on a server whose output was that line, the
# race's, and the good run's others.
rping_teardown_race() {
	local out
	out=$(readlink -f "$1") && [ -f "$out" ] || return 1
	[ "$(grep -cx 'rdma_get_cm_event: Bad file descriptor' "$out")" = 1 ] || return 1
	! grep -vx 'rdma_get_cm_event: Bad file descriptor' "$out" |
		grep -Evq '^(uroce cm|(server )?ping data: |.* DISCONNECT EVENT\.\.\.$|wait for RDMA_READ_ADV state 10$|[][A-Za-z\\^_`]+$)' || return 1
	echo "test: rping exit 255 after its run: rdma-core 44's teardown race (upstream f3ae6534a); counted as 0" >>"$out"
}

# rping since rdma-core 61 (upstream "rping: Fix spurious failure return
# codes", 2025) ends its cm_thread through an eventfd that it polls beside
# the CM channel.  When the last event of a run (DISCONNECTED, from the
# DREP) wakes that poll and the main thread's rdma_destroy_id takes the
# event away before cm_thread reads it, cm_thread blocks in
# rdma_get_cm_event for good and main in pthread_join: the client hangs
# after a complete run.  The kernel's CM leaves the same window (its
# DESTROY_ID drops unread events too).  Seen once in ~130 looped runs of
# rping 65 on `lo` (CI, deb_sid).
#
# rping_client_wait PID OUT SPID SOUT: the exit status of the client PID
# (OUT: its output, run with UROCE_CM_DEBUG=1; SPID the server, SOUT its
# output).  If the server has exited with a complete run (its DISCONNECT
# line) and our CM says in OUT that rdma_destroy_id took an event away,
# and the client still runs 10 s later, it is that hang: the client is
# stopped, OUT notes it, RPING_CM_RACE=1 and the status is 0 (the
# client's stdout, a buffered file, is lost: count the server's pings).
rping_client_wait() {
	local pid=$1 out=$2 spid=$3 sout=$4 i=0 rc=0
	RPING_CM_RACE=
	while kill -0 "$pid" 2>/dev/null; do
		if ! kill -0 "$spid" 2>/dev/null && grep -q 'server DISCONNECT EVENT' "$sout" &&
			grep -q '^uroce cm: id [0-9]* destroyed with its event [0-9]* untaken' "$out"; then
			i=$((i + 1))
			if [ $i -ge 100 ]; then
				rping_kill_tree "$pid"
				wait "$pid" 2>/dev/null || true
				echo "test: rping's cm_thread blocked after rdma_destroy_id took its event (rping >= 61's own race); counted as 0" >>"$out"
				RPING_CM_RACE=1
				return 0
			fi
		fi
		sleep 0.1
	done
	wait "$pid" || rc=$?
	return $rc
}

# rping_kill_tree PID: SIGKILL PID's descendants (the rping under its
# timeout, `uroce run`, `ip netns exec`), then PID.  From /proc, not
# pgrep: a bare release chroot has no procps.
rping_kill_tree() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do rping_kill_tree "$c"; done
	kill -KILL "$1" 2>/dev/null || true
}

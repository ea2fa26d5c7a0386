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

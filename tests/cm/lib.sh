# Helpers of the cm suite (sourced after ../lib/common.sh): unmodified
# librdmacm programs as server and client under `uroce run`, in network
# namespaces of our own ("i11cm" in their names) so that fixed ports of
# tools like ucmatose never meet another test's.
#
#   cm_setup        a namespace whose lo carries device lo0 (CM_LO_NS),
#                   and two namespaces joined by a veth with a device on
#                   each end (CM_A_NS/CM_A_IF/CM_A_ADDR, CM_B_NS/CM_B_IF/CM_B_ADDR)
#   cm_server NS READY_RE CMD...   start a server, wait for a line of its
#                   output matching READY_RE (the event that it listens)
#   cm_client NS CMD...            run a client to its end
#   cm_wait_server                 the server's exit status
# Servers are started with UROCE_CM_DEBUG=1, which makes the CM print
# "uroce cm: listening on ADDR:PORT" once rdma_listen has completed; tests
# wait for that line, never for a fixed time.

CM_TIMEOUT=${CM_TIMEOUT:-60}
# Every file the helpers below make lives here, removed by the test's own
# exit trap: they also run in subshells (a pair run again, a server in the
# background, one killed with SIGKILL), whose on_exit would be lost.
CM_TMP=$(mktemp -d /tmp/i11cm.XXXXXX)
on_exit "rm -rf '$CM_TMP'"

cm_setup() {
	local id=$(uniq_id)
	CM_LO_NS=i11cmL$id
	CM_A_NS=i11cmA$id CM_B_NS=i11cmB$id
	CM_A_ADDR=10.211.$((RANDOM % 200)).1
	CM_B_ADDR=${CM_A_ADDR%.1}.2
	make_ns $CM_LO_NS
	add_dev lo0 lo $CM_LO_NS
	make_ns $CM_A_NS
	make_ns $CM_B_NS
	CM_A_IF=i11ca$id CM_B_IF=i11cb$id
	make_veth $CM_A_NS $CM_A_IF $CM_A_ADDR/24 $CM_B_NS $CM_B_IF $CM_B_ADDR/24
	add_dev cma $CM_A_IF $CM_A_NS
	add_dev cmb $CM_B_IF $CM_B_NS
}

# Run CMD in namespace NS under uroce run, bounded.  A program that dies
# of a signal leaves a core in a directory of its own (when the kernel's
# core_pattern is a plain file name); its threads' backtraces are printed
# after its output, so that a crash seen once in CI can be read.
cm_run() {
	local ns=$1 rc=0 dir core
	shift
	dir=$(mktemp -d "$CM_TMP/core.XXXXXX")
	(cd "$dir" && ulimit -c unlimited 2>/dev/null
	 ip netns exec "$ns" timeout "$CM_TIMEOUT" "$UROCE" run "$@") || rc=$?
	for core in "$dir"/core*; do
		[ -f "$core" ] || continue
		echo "--- $1 dumped $core (exit $rc)"
		if command -v gdb >/dev/null; then
			gdb -batch -nx -ex 'info sharedlibrary' -ex 'thread apply all bt' \
				"$(command -v "$1")" "$core" 2>&1 | grep -v '^\[New LWP'
		fi
	done
	rm -rf "$dir"
	[ $rc -ne 255 ] || [ "$1" != rping ] || ! rping_teardown_race /proc/$BASHPID/fd/1 || rc=0
	return $rc
}

. "$(dirname "${BASH_SOURCE[0]}")/rping_race.sh"   # rping_teardown_race

CM_SRV_PID= CM_SRV_LOG=
cm_server() {
	local ns=$1 ready=$2 waited=0
	shift 2
	CM_SRV_LOG=$(mktemp "$CM_TMP/srv.XXXXXX")
	UROCE_CM_DEBUG=1 cm_run "$ns" "$@" >"$CM_SRV_LOG" 2>&1 &
	CM_SRV_PID=$!
	on_exit "kill $CM_SRV_PID"
	# The event: the server's own words, our CM's listening line, or
	# (READY_RE "tcp:PORT") its out-of-band TCP socket listening.
	until if [ "${ready#tcp:}" != "$ready" ]; then
		[ -n "$(ip netns exec "$ns" ss -Hltn "sport = :${ready#tcp:}")" ]
	else
		grep -Eq "$ready" "$CM_SRV_LOG"
	fi; do
		if ! kill -0 $CM_SRV_PID 2>/dev/null; then
			cat "$CM_SRV_LOG" >&2
			fail "server $* exited before listening"
		fi
		waited=$((waited + 1))
		[ $waited -lt 3000 ] || { cat "$CM_SRV_LOG" >&2; fail "server $* never listened"; }
		sleep 0.01
	done
}

cm_wait_server() {
	local rc=0
	wait $CM_SRV_PID || rc=$?
	return $rc
}

# cm_pair NAME SRV_NS CLI_NS -- SERVER... -- CLIENT...: both must exit 0
# and print no error; the client's output goes to $CM_CLI_LOG.  The server
# is ready when $CM_READY (default: our CM's listening line) is seen.  A
# client that fails with output matching $CM_AGAIN_RE: the server is
# stopped and cm_pair returns 2 (the caller may run the pair again).
# An rping client that hung in rping >= 61's own teardown race sets
# RPING_CM_RACE (rping_race.sh): its stdout is lost, count the server's.
cm_pair() {
	local name=$1 sns=$2 cns=$3 rc=0 srv=() cli=()
	shift 4
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	cm_server "$sns" "${CM_READY:-uroce cm: listening}" "${srv[@]}"
	CM_CLI_LOG=$(mktemp "$CM_TMP/cli.XXXXXX")
	if [ "${cli[0]}" = rping ]; then
		# rping_client_wait: see rping_race.sh (rping >= 61's hang)
		UROCE_CM_DEBUG=1 cm_run "$cns" "${cli[@]}" >"$CM_CLI_LOG" 2>&1 &
		rping_client_wait $! "$CM_CLI_LOG" $CM_SRV_PID "$CM_SRV_LOG" || rc=$?
	else
		RPING_CM_RACE=
		cm_run "$cns" "${cli[@]}" >"$CM_CLI_LOG" 2>&1 || rc=$?
	fi
	if [ $rc -ne 0 ] && [ -n "${CM_AGAIN_RE:-}" ] && grep -Eq "$CM_AGAIN_RE" "$CM_CLI_LOG"; then
		# A known failure of the client program itself: its server
		# would wait for it until the timeout; stop it now (its
		# `timeout`, the child of `ip netns exec`, passes the signal on).
		kill $(pgrep -P $CM_SRV_PID) 2>/dev/null || true
		wait $CM_SRV_PID || true
		return 2
	fi
	if [ -n "${CM_SERVER_FOREVER:-}" ]; then
		# A server that never ends by itself (cmtime): its client is done.
		kill $(pgrep -P $CM_SRV_PID) 2>/dev/null || true
		wait $CM_SRV_PID || true
	else
		cm_wait_server || rc=$((rc ? rc : $?))
	fi
	if [ $rc -ne 0 ] || grep -Eiq 'error|fail|couldn|unable|mismatch|incorrect|invalid' \
		<(grep -v '^uroce cm' "$CM_SRV_LOG") "$CM_CLI_LOG"; then
		echo "--- server"; cat "$CM_SRV_LOG"; echo "--- client"; cat "$CM_CLI_LOG"
		fail "$name: ${srv[*]} / ${cli[*]} (exit $rc)"
	fi
	pass "$name: ${cli[*]}"
}

# The places a pair runs: "lo" (one namespace, its lo) and "veth".
# cm_where W sets SRV_NS CLI_NS SRV_ADDR.
# cm_wait_pings LOG PID: true once LOG (an rping -v's output) holds 20
# pings; false if PID ends first or after a minute.
cm_wait_pings() {
	local _
	for _ in $(seq 1200); do
		[ "$(grep -c 'ping data' "$1" || true)" -ge 20 ] && return 0
		kill -0 $2 2>/dev/null || break
		sleep 0.05
	done
	[ "$(grep -c 'ping data' "$1" || true)" -ge 20 ]
}

cm_where() {
	case $1 in
	lo) SRV_NS=$CM_LO_NS CLI_NS=$CM_LO_NS SRV_ADDR=127.0.0.1 ;;
	veth) SRV_NS=$CM_A_NS CLI_NS=$CM_B_NS SRV_ADDR=$CM_A_ADDR ;;
	esac
}

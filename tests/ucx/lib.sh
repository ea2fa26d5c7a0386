# Shared by the ucx suite's tests (sourced after ../lib/common.sh): where
# UCX runs (a device on lo in a namespace of the test's own, and a device
# in each of two namespaces joined by a veth pair; every device has the same
# name, so one UCX_NET_DEVICES serves all), and running ucx_perftest as
# server + client with the client's numbers and uroce's packet counters as
# the proof that the traffic took uroce.

need_ucx() {
	command -v ucx_perftest >/dev/null && command -v ucx_info >/dev/null ||
		skip "ucx-utils is not installed (scripts/deps.sh installs ucx-utils, openmpi-bin, libopenmpi-dev)"
}

UDEV=ux0          # the uroce device's name in every namespace
PERF_PORT=$((21000 + RANDOM % 4000))

# ucx_places: sets NS_LO (a namespace whose lo carries a device), NS_A/NS_B,
# ADDR_A/ADDR_B, VETH_NET (two namespaces over a veth, a device on each
# end) and VETH_IF (both ends' name, for UCX_NET_DEVICES of tcp).
ucx_places() {
	local id=$(uniq_id)
	NS_LO=uroceX${id}l NS_A=uroceX${id}a NS_B=uroceX${id}b
	ADDR_A=10.212.$((RANDOM % 200)).1
	ADDR_B=${ADDR_A%.1}.2
	make_ns $NS_LO
	ip -n $NS_LO addr add 127.0.0.1/8 dev lo 2>/dev/null || true
	add_dev $UDEV lo $NS_LO
	make_ns $NS_A
	make_ns $NS_B
	VETH_IF=uxv$id
	make_veth $NS_A $VETH_IF $ADDR_A/24 $NS_B $VETH_IF $ADDR_B/24
	add_dev $UDEV $VETH_IF $NS_A
	add_dev $UDEV $VETH_IF $NS_B
	VETH_NET=${ADDR_A%.1}.0/24
}

# in NS CMD...: CMD in namespace NS under `uroce run`.
in_ns() { local ns=$1; shift; ip netns exec "$ns" "$UROCE" run "$@"; }

# rx_packets NS: the device's received-packet counter in NS.
rx_packets() { ip netns exec "$1" "$UROCE" stat $UDEV | awk '$1 == "rx_packets" { n = $2 } END { print n + 0 }'; }

# perf_run WHERE SRV_NS CLI_NS SRV_ADDR -- ucx_perftest ARGS...
# Runs the test (bounded by PERF_TIMEOUT, default 60 s); fails unless both
# sides exit 0 with no UCX error and the client prints its final numbers,
# which it leaves in PERF_FINAL (iterations, then the figures); PERF_PACKETS
# is what the client's uroce device received meanwhile.
perf_run() {
	local where=$1 sns=$2 cns=$3 addr=$4 log rc=0 spid before after
	shift 5
	log=$(mktemp /tmp/uroce-ucx.XXXXXX)
	on_exit "rm -f '$log' '$log.c'"
	PERF_PORT=$((PERF_PORT + 1))
	before=$(rx_packets "$cns")
	ip netns exec "$sns" timeout ${PERF_TIMEOUT:-60} "$UROCE" run ucx_perftest -p $PERF_PORT >"$log" 2>&1 &
	spid=$!
	wait_listen $PERF_PORT $spid 60 "$sns" || { cat "$log"; fail "$where: ucx_perftest server did not listen"; }
	ip netns exec "$cns" timeout ${PERF_TIMEOUT:-60} "$UROCE" run ucx_perftest "$addr" -p $PERF_PORT -f "$@" >"$log.c" 2>&1 || rc=$?
	wait $spid || rc=$((rc ? rc : $?))
	after=$(rx_packets "$cns")
	# -f prints one line of final numbers: iterations, then the figures.
	PERF_FINAL=$(grep -E '^ +[0-9]+ +[0-9.]+ ' "$log.c" | tail -1 | tr -s ' ' | sed 's/^ //')
	PERF_PACKETS=$((after - before))
	if [ $rc -ne 0 ] || grep -q 'UCX  *ERROR' "$log" "$log.c" || [ -z "$PERF_FINAL" ]; then
		echo "--- server"; cat "$log"; echo "--- client"; cat "$log.c"
		fail "$where: ucx_perftest $* (exit $rc)"
	fi
}

# perf WHERE SRV_NS CLI_NS SRV_ADDR MIN_PACKETS -- ucx_perftest ARGS...
# perf_run, and the client's device received at least MIN_PACKETS packets.
perf() {
	local where=$1 sns=$2 cns=$3 addr=$4 min=$5
	shift 6
	perf_run $where $sns $cns $addr -- "$@"
	[ $PERF_PACKETS -ge "$min" ] ||
		fail "$where: ucx_perftest $*: only $PERF_PACKETS packets over uroce (want >= $min)"
	pass "$where: $* | $PERF_FINAL | [$PERF_PACKETS packets]"
}

# each_place FN: FN WHERE SRV_NS CLI_NS SRV_ADDR, on lo and over the veth.
each_place() {
	"$1" lo $NS_LO $NS_LO 127.0.0.1
	"$1" veth $NS_A $NS_B $ADDR_A
}

# perf_refused WHERE NS PATTERN -- ucx_perftest ARGS...: the client must
# fail cleanly (an exit code, not a signal) with PATTERN in its messages;
# the server, which then waits for nothing, is stopped.
perf_refused() {
	local where=$1 ns=$2 pat=$3 log rc=0 spid
	shift 4
	log=$(mktemp /tmp/uroce-ucx.XXXXXX)
	on_exit "rm -f '$log' '$log.c'"
	PERF_PORT=$((PERF_PORT + 1))
	ip netns exec "$ns" timeout 30 "$UROCE" run ucx_perftest -p $PERF_PORT >"$log" 2>&1 &
	spid=$!
	on_exit "kill $spid"
	wait_listen $PERF_PORT $spid 60 "$ns" || fail "$where: ucx_perftest server did not listen"
	ip netns exec "$ns" timeout 30 "$UROCE" run ucx_perftest 127.0.0.1 -p $PERF_PORT -f "$@" >"$log.c" 2>&1 || rc=$?
	kill $spid 2>/dev/null || true
	wait $spid 2>/dev/null || true
	# 124: timed out; 129..192: killed by a signal (a crash).
	if [ $rc -eq 0 ] || [ $rc -eq 124 ] || { [ $rc -gt 128 ] && [ $rc -le 192 ]; } ||
	   ! grep -q "$pat" "$log.c"; then
		cat "$log.c"
		fail "$where: $* should fail cleanly with \"$pat\" (exit $rc)"
	fi
	pass "$where: $*: refused cleanly: $(grep -m1 "$pat" "$log.c" | sed 's/.*UCX  ERROR //')"
}

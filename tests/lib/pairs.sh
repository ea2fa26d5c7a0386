# Running an unmodified verbs program as server + client under `uroce run`
# (sourced after common.sh).

# gid_matching NS DEV RE: the index of DEV's first GID whose text (as
# ibv_devinfo -v prints it) starts with the sed regex RE, seen from
# namespace NS ("" = here).
gid_matching() {
	local ns=$1 dev=$2 re=$3
	${ns:+ip netns exec $ns} "$UROCE" run ibv_devinfo -v -d $dev |
		sed -n "s/.*GID\[ *\([0-9]*\)\]:[[:space:]]*$re.*/\1/p" | head -1
}
# GID index of ADDR (an IPv4 address) on DEV, seen from namespace NS ("" = here).
gid_of() { gid_matching "$1" "$2" "::ffff:$3,"; }

PAIR_PORT=$(( 20000 + RANDOM % 5000 ))

# kernel_drops NS...: what the kernel dropped of UDP in each namespace
# ("" = here) and in the CPUs' backlogs, for a failed run's report.
kernel_drops() {
	local ns a b rest seen
	for ns in "$@"; do
		[ "${seen-unset}" = "$ns" ] && continue
		seen=$ns
		echo "--- kernel UDP errors${ns:+ in $ns}:" \
			$(${ns:+ip netns exec $ns} nstat -az 2>/dev/null | awk '$1 ~ /^Udp6?(InErrors|RcvbufErrors|SndbufErrors)$/ {printf "%s=%s ", $1, $2}')
	done
	while read -r a b rest; do echo "--- backlog: processed $((16#$a)) dropped $((16#$b))"; done </proc/net/softnet_stat
}

# pair_check WHAT RC SRV_LOG CLI_LOG SRV_NS CLI_NS: fails the test with
# both logs and the kernel's drops if the pair exited RC (non-zero) or
# printed an error.
pair_check() {
	local what=$1 rc=$2 slog=$3 clog=$4
	# perftest and the pingpongs report failed completions and setup
	# errors in words like these; none appears in a good run.  (The
	# counters' names are left out: "uroce[PID] ..." to the line's end.)
	if [ $rc -ne 0 ] || sed 's/uroce\[[0-9]*\].*//' "$slog" "$clog" |
		grep -Eiq 'error|fail|couldn|unable|mismatch|incorrect'; then
		echo "--- server"; cat "$slog"; echo "--- client"; cat "$clog"
		kernel_drops "$5" "$6"
		fail "$what (exit $rc)"
	fi
}

# pair NAME SRV_NS SRV_DEV SRV_GID CLI_NS CLI_DEV CLI_GID SERVER_ADDR -- CMD ARGS...
# Runs CMD as server in SRV_NS and as client in CLI_NS (bounded by
# PAIR_TIMEOUT seconds, default 120); fails the test if either exits non-zero
# or prints an error.  perftest tools get -x/-p, ibv_*_pingpong -g/-p.
pair() {
	local name=$1 sns=$2 sdev=$3 sgid=$4 cns=$5 cdev=$6 cgid=$7 saddr=$8
	shift 9
	local log rc=0 spid gidopt=-g
	log=$(mktemp /tmp/uroce-pair.XXXXXX)
	on_exit "rm -f '$log' '$log.c'"
	PAIR_PORT=$((PAIR_PORT + 1))
	case $1 in ib_*) gidopt=-x ;; esac
	# UROCE_STATS=1: a failed pair shows each side's counters (drops,
	# retransmissions) at its exit.
	${sns:+ip netns exec $sns} env UROCE_STATS=1 timeout ${PAIR_TIMEOUT:-120} "$UROCE" run "$@" -d $sdev $gidopt $sgid -p $PAIR_PORT >"$log" 2>&1 &
	spid=$!
	stop_at_exit $spid
	wait_listen $PAIR_PORT $spid 60 $sns || { cat "$log"; fail "$name: the server did not start"; }
	${cns:+ip netns exec $cns} env UROCE_STATS=1 timeout ${PAIR_TIMEOUT:-120} "$UROCE" run "$@" -d $cdev $gidopt $cgid -p $PAIR_PORT $saddr >"$log.c" 2>&1 || rc=$?
	wait $spid || rc=$((rc ? rc : $?))
	pair_check "$name: $*" $rc "$log" "$log.c" "$sns" "$cns"
	# (UROCE_STATS=1's counters may follow perftest's last line unbroken.)
	pass "$name: $*: $(grep -E 'iters in|^ *[0-9]+ +[0-9]+ ' "$log.c" | tail -1 | sed 's/uroce\[.*//' | tr -s ' \t' ' ')"
}

# Two namespaces joined by a veth pair, a device in each (of transport
# $UROCE_TEST_TRANSPORT if set; TRANSPORT_A / TRANSPORT_B, if set even to
# nothing, choose one end's: nothing is udp); sets VETH_A/VETH_B
# (namespaces), DEV_A/DEV_B, GID_A/GID_B, ADDR_A/ADDR_B.
veth_pair_with_devices() {
	local id=$(uniq_id) net=$1
	VETH_A=uroceP${net}a$id VETH_B=uroceP${net}b$id
	ADDR_A=10.201.$net.1 ADDR_B=10.201.$net.2
	make_ns $VETH_A
	make_ns $VETH_B
	make_veth $VETH_A pa$id $ADDR_A/24 $VETH_B pb$id $ADDR_B/24
	DEV_A=pa DEV_B=pb
	local ta=${TRANSPORT_A-${UROCE_TEST_TRANSPORT:-}} tb=${TRANSPORT_B-${UROCE_TEST_TRANSPORT:-}}
	add_dev $DEV_A pa$id $VETH_A ${ta:+transport $ta}
	add_dev $DEV_B pb$id $VETH_B ${tb:+transport $tb}
	GID_A=$(gid_of $VETH_A $DEV_A $ADDR_A)
	GID_B=$(gid_of $VETH_B $DEV_B $ADDR_B)
	[ -n "$GID_A" ] && [ -n "$GID_B" ] || fail "veth GIDs not found"
}

# xdp_packets NS DEV: "IN OUT", the packets device DEV (transport xdp) took
# from and put on its AF_XDP sockets so far, over every process (uroce
# stat: xdp_rx_packets, xdp_tx_packets).
xdp_packets() {
	ip netns exec $1 "$UROCE" stat -a $2 2>/dev/null |
		awk '$1 == "xdp_rx_packets" {r = $2} $1 == "xdp_tx_packets" {t = $2} END {print r + 0, t + 0}'
}
# xdp_moved_since BEFORE AFTER: "IN OUT" moved between two xdp_packets
# readings; true if packets moved both ways.
xdp_moved_since() {
	set -- $1 $2
	echo $(($3 - $1)) $(($4 - $2))
	[ $(($3 - $1)) -gt 0 ] && [ $(($4 - $2)) -gt 0 ]
}

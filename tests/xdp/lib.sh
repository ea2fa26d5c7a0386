# Helpers of the xdp suite's scripts (sourced after tests/lib/common.sh).

# No RPS on these veths (tests/lib/common.sh keep_order; docs/xdp.md, "RPS").
KEEP_ORDER=0

# prog_on NS IFACE: an XDP program is attached to IFACE, by `ip link` or
# by xdp-loader status (xdp-tools, scripts/deps.sh), which also sees
# programs behind libxdp's dispatcher.  Either one seeing a program is
# enough; where they disagree it says so on stderr.
prog_on() {
	local by_ip=no by_loader=no status
	ip -n "$1" link show "$2" | grep -q 'prog/xdp' && by_ip=yes
	if command -v xdp-loader >/dev/null &&
	   status=$(ip netns exec "$1" xdp-loader status "$2" 2>&1); then
		grep -q "^$2 .*No XDP program loaded" <<<"$status" || by_loader=yes
	else
		by_loader=$by_ip
	fi
	[ $by_ip = $by_loader ] ||
		echo "prog_on $2: ip link says $by_ip, xdp-loader status says $by_loader: $status" >&2
	[ $by_ip = yes ] || [ $by_loader = yes ]
}

# wait_for FILE TEXT SECONDS: until FILE has a line matching TEXT.
wait_for() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# xdp_stat NS IFACE KEY: counter KEY (enum uroce_xdp_stat in
# providers/uroce/transport/xdp/xdp_maps.h: 0 redirected to an AF_XDP
# socket, 4 passed as longer than the owner's socket takes, 5 passed as
# its queue has no socket) of the program
# on IFACE, summed over the CPUs.  Maps are found through the interface's
# program, as their names are the same for every interface.  Every caller
# has the program held by a user, so a read that finds no program or no
# counter is tried again (one in a loaded full run once read 0 while the
# counter stood at 57 968); after 2 s it says what it saw and gives 0.
xdp_stat() { # NS IFACE KEY
	local prog map n links tries
	for ((tries = 0; tries < 20; tries++)); do
		links=$(ip -n "$1" link show "$2" 2>&1)
		prog=$(grep -o 'prog/xdp id [0-9]*' <<<"$links" | awk '{print $3}')
		n=
		for map in $(bpftool prog show id "${prog:-0}" 2>/dev/null | grep -o 'map_ids [0-9,]*' |
				cut -d' ' -f2 | tr , ' '); do
			# Not `| grep -q`: under pipefail, grep leaving early can
			# fail the pipeline through bpftool's SIGPIPE.
			[[ $(bpftool map show id "$map" 2>/dev/null) == *"name uroce_xdp_stats"* ]] || continue
			n=$(bpftool -j map dump id "$map" 2>/dev/null | grep -o "\"key\":$3,\"values\":\\[[^]]*\\]" |
				grep -o '"value":[0-9]*' | awk -F: '{s += $2; k++} END {if (k) print s}')
			break
		done
		[ -n "$n" ] && { echo "$n"; return; }
		sleep 0.1
	done
	echo "xdp_stat $1 $2 $3: no counter found in 2 s; the link: $links" >&2
	echo 0
}

# redirected NS IFACE: frames the program on IFACE sent to AF_XDP sockets.
redirected() { xdp_stat "$1" "$2" 0; }
# passed_big NS IFACE: frames it passed to the kernel as too long for them.
passed_big() { xdp_stat "$1" "$2" 4; }
# passed_no_socket NS IFACE: frames it passed as their queue had no socket.
passed_no_socket() { xdp_stat "$1" "$2" 5; }

# hold_program NS IFACE: a user of IFACE's program that takes no queue
# (xdp_probe attach, $PROBE), so that the program and its counters live
# through the test; its output in $T/attach.IFACE, its pid in attach_IFACE.
hold_program() {
	ip netns exec "$1" timeout 550 "$PROBE" attach "$2" >"$T/attach.$2" 2>&1 &
	eval "attach_$2=$!"
	stop_at_exit $!
	wait_for "$T/attach.$2" ready 10 || fail "attach $2: $(cat "$T/attach.$2")"
}

# pair_counted NS IFACE PAIR-ARGS...: `pair PAIR-ARGS...` (tests/lib/pairs.sh),
# and how the counters of IFACE's program moved meanwhile: D_REDIR, D_BIG,
# D_NOSOCK.
pair_counted() {
	local ns=$1 ifc=$2 r0 b0 n0
	shift 2
	r0=$(redirected $ns $ifc) b0=$(passed_big $ns $ifc) n0=$(passed_no_socket $ns $ifc)
	pair "$@"
	D_REDIR=$(($(redirected $ns $ifc) - r0)) D_BIG=$(($(passed_big $ns $ifc) - b0))
	D_NOSOCK=$(($(passed_no_socket $ns $ifc) - n0))
}

# Helpers of the xdp suite's scripts (sourced after tests/lib/common.sh).

# No RPS on these veths (tests/lib/common.sh keep_order; docs/xdp.md, "RPS").
KEEP_ORDER=0

# prog_on NS IFACE: an XDP program is attached to IFACE.
prog_on() { ip -n "$1" link show "$2" | grep -q 'prog/xdp'; }

# wait_for FILE TEXT SECONDS: until FILE has a line matching TEXT.
wait_for() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# redirected NS IFACE: frames the program on IFACE sent to AF_XDP sockets
# (its redirect counter; maps are found through the interface's program,
# as their names are the same for every interface).
redirected() { # NS IFACE
	local prog map
	prog=$(ip -n "$1" link show "$2" | grep -o 'prog/xdp id [0-9]*' | awk '{print $3}')
	[ -n "$prog" ] || { echo 0; return; }
	for map in $(bpftool prog show id "$prog" | grep -o 'map_ids [0-9,]*' | cut -d' ' -f2 | tr , ' '); do
		bpftool map show id "$map" | grep -q 'name uroce_xdp_stats' || continue
		bpftool -j map dump id "$map" | grep -o '"key":0,"values":\[[^]]*\]' |
			grep -o '"value":[0-9]*' | awk -F: '{s += $2} END {print s + 0}'
		return
	done
	echo 0
}

# Waiting for an event instead of sleeping a fixed time (sourced, not run;
# no side effects, so setup.sh and bench/ use it as well as the tests).
# Every wait is bounded: it returns 1 when the time is up.

# wait_until SECONDS CMD [ARGS...]: run CMD every 50 ms until it succeeds.
wait_until() {
	local secs=$1 end
	shift
	end=$(( $(date +%s%N) + secs * 1000000000 ))
	until "$@"; do
		[ "$(date +%s%N)" -lt $end ] || return 1
		sleep 0.05
	done
}

# _is_descendant PID ANCESTOR: PID is ANCESTOR or one of its descendants.
_is_descendant() {
	local p=$1 stat
	while [ "$p" -gt 1 ]; do
		[ "$p" = "$2" ] && return 0
		stat=$(cat /proc/$p/stat 2>/dev/null) || return 1
		stat=${stat##*) }           # the command name may hold spaces
		set -- "$1" "$2" $stat
		p=$4                        # field 4: the parent's pid
	done
	return 1
}

# _alive PID: PID runs (a zombie, exited but not yet reaped, does not).
_alive() {
	local stat
	stat=$(cat /proc/$1/stat 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}

# _listening PORT PID [NETNS]: a process of PID's tree (PID itself, or what
# it runs under timeout / ip netns exec / uroce run) listens on TCP PORT.
_listening() {
	local p
	for p in $(${3:+ip netns exec $3} ss -Hltnp "sport = :$1" 2>/dev/null |
			grep -o 'pid=[0-9]*' | cut -d= -f2); do
		_is_descendant "$p" "$2" && return 0
	done
	return 1
}

# wait_listen PORT PID SECONDS [NETNS]: wait until the server started as
# PID (e.g. $! of a perftest or ibv_*_pingpong server) listens on TCP PORT
# in NETNS (default: here).  Returns 1 at once if PID has exited, and when
# SECONDS are up.
wait_listen() {
	local port=$1 pid=$2 secs=$3 ns=${4:-} end
	end=$(( $(date +%s%N) + secs * 1000000000 ))
	until _listening "$port" "$pid" "$ns"; do
		_alive "$pid" || { echo "wait_listen: process $pid exited before it listened on port $port" >&2; return 1; }
		[ "$(date +%s%N)" -lt $end ] || { echo "wait_listen: nothing of process $pid listens on port $port after ${secs}s" >&2; return 1; }
		sleep 0.05
	done
}

# capture_live LOG [SECONDS]: dumpcap or tshark, with its stderr in LOG,
# captures: it names its output file ("File: ...") once its interface is
# open with the filter set.  Its earlier "Capturing on ..." comes before
# the interface is opened, and packets sent then are not captured (an
# xdp_transport run captured nothing after waiting for it).
capture_live() {
	wait_until "${2:-30}" grep -q "File: " "$1"
}

# capture_start NS IFACE FILE FILTER: dumpcap on IFACE in namespace NS
# writes what FILTER passes to FILE (pcap; its stderr in FILE.log), live
# when this returns; its pid in CAPTURE_PID, stopped at exit whatever
# happens.  capture_stop [PID] ends it (PID: one of several captures).
capture_start() {
	ip netns exec "$1" dumpcap -q -P -i "$2" -f "$4" -w "$3" 2>"$3.log" &
	CAPTURE_PID=$!
	stop_at_exit $CAPTURE_PID
	capture_live "$3.log" || { cat "$3.log"; fail "dumpcap did not start on $2"; }
}
capture_stop() {
	local pid=${1:-$CAPTURE_PID}
	kill -INT $pid
	wait $pid 2>/dev/null || true
}

# capture_drained NS ADDR FILE [SECONDS]: a capture of the path from NS to
# ADDR has written all that came before now to FILE.  dumpcap stopped
# right after a transfer loses the frames it had not read from its ring
# yet (a short ucmatose run lost all of them in half the runs): a datagram
# to ADDR's discard port (9) is sent last, and FILE is read until it is
# there.  The capture's filter must let it through ("... or udp port 9").
capture_drained() {
	local ns=$1 addr=$2 file=$3
	ip netns exec "$ns" bash -c "echo uroce-capture-sentinel >/dev/udp/$addr/9" 2>/dev/null ||
		return 1
	wait_until "${4:-30}" _capture_has_sentinel "$file"
}
_capture_has_sentinel() {
	tshark -r "$1" -Y "udp.dstport == 9" 2>/dev/null | grep -q .
}

#!/bin/bash
# bench/trace_cost.sh: what UROCE_TRACE's hooks cost when tracing is off.
# The same perftest runs on the same device with two builds, interleaved
# (A B A B ...), so that the load of a shared machine falls on both alike:
# a build without the hooks (BASE_BUILD) and one with them (BUILD).  It
# prints each round and the medians; it never judges.
#
#   sudo bench/trace_cost.sh BASE_BUILD [BUILD] [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/lib/wait.sh"
base=${1:?usage: trace_cost.sh BASE_BUILD [BUILD] [ROUNDS]}
build=${2:-$here/../build}
rounds=${3:-5}
U=$build/cli/uroce
unset UROCE_TRACE
export UROCE_RUNDIR=$(mktemp -d /tmp/uroce-bench.XXXXXX)
chmod 755 "$UROCE_RUNDIR"
trap '"$U" link del trcost0 2>/dev/null || true; rm -rf "$UROCE_RUNDIR"' EXIT
"$U" link add trcost0 netdev lo
gid=$("$U" run ibv_devinfo -v -d trcost0 | sed -n 's/.*GID\[ *\([0-9]*\)\]:.*::ffff:127.0.0.1,.*/\1/p' | head -1)
port=19900

# run BUILD TOOL ARGS...: the client's result line
run() {
	local u=$1/cli/uroce spid out
	shift
	port=$((port + 1))
	timeout 300 "$u" run "$@" -d trcost0 -x "$gid" -F -p $port >/dev/null 2>&1 &
	spid=$!
	wait_listen $port $spid 60 || exit 1
	out=$(timeout 300 "$u" run "$@" -d trcost0 -x "$gid" -F -p $port 127.0.0.1 2>&1)
	wait $spid
	echo "$out" | grep -E '^ *[0-9]+ +[0-9]+ ' | tail -1
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for t in "ib_send_lat -s 64 -n 20000:6" "ib_write_bw -s 64 -n 100000:5"; do
	args=${t%:*} col=${t##*:}
	: >/tmp/trcost.a.$$
	: >/tmp/trcost.b.$$
	for ((i = 1; i <= rounds; i++)); do
		# shellcheck disable=SC2086
		a=$(run "$base" $args | awk -v c=$col '{ print $c }')
		# shellcheck disable=SC2086
		b=$(run "$build" $args | awk -v c=$col '{ print $c }')
		echo "$a" >>/tmp/trcost.a.$$
		echo "$b" >>/tmp/trcost.b.$$
		printf '%-30s round %d: without hooks %10s   with hooks (off) %10s\n' "$args" $i "$a" "$b"
	done
	printf '%-30s median:  without hooks %10s   with hooks (off) %10s   (%s)\n' "$args" \
		"$(median </tmp/trcost.a.$$)" "$(median </tmp/trcost.b.$$)" \
		"$([ $col = 6 ] && echo 'typical latency, us' || echo 'Mpps')"
	rm -f /tmp/trcost.a.$$ /tmp/trcost.b.$$
done

#!/bin/bash
# bench/perftest.sh: perftest over uroce on lo next to raw UDP on the same
# path, measured in the same run, with ratios.  A first baseline: it never
# judges speed; it fails only if a tool fails.
#
#   sudo bench/perftest.sh [BUILD_DIR]     (root adds the device; needs qperf)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tests/lib/wait.sh"
build=${1:-$here/../build}
U=$build/cli/uroce
[ -x "$U" ] || { echo "bench: build first (no $U)" >&2; exit 1; }
command -v qperf >/dev/null || { echo "bench: needs qperf (apt-get install qperf)" >&2; exit 1; }
export UROCE_RUNDIR=$(mktemp -d /tmp/uroce-bench.XXXXXX)
chmod 755 "$UROCE_RUNDIR"
cleanup() {
	"$U" link del bench0 2>/dev/null || true
	rm -rf "$UROCE_RUNDIR"
	[ -z "${qperf_pid:-}" ] || kill "$qperf_pid" 2>/dev/null || true
}
trap cleanup EXIT
"$U" link add bench0 netdev lo
gid=$("$U" run ibv_devinfo -v -d bench0 | sed -n 's/.*GID\[ *\([0-9]*\)\]:.*::ffff:127.0.0.1,.*/\1/p' | head -1)
port=19800

# perftest TOOL ARGS...: prints the client's result line
perftest() {
	port=$((port + 1))
	timeout 300 "$U" run "$@" -d bench0 -x "$gid" -F -p $port >/dev/null 2>&1 &
	local spid=$!
	wait_listen $port $spid 60 || exit 1
	local out
	out=$(timeout 300 "$U" run "$@" -d bench0 -x "$gid" -F -p $port 127.0.0.1 2>&1)
	wait $spid
	echo "$out" | grep -E '^ *[0-9]+ +[0-9]+ ' | tail -1
}

qperf --listen_port 19765 >/dev/null 2>&1 &
qperf_pid=$!
wait_listen 19765 $qperf_pid 30 || exit 1
udp_lat=$(qperf -lp 19765 -t 3 -m 64 127.0.0.1 udp_lat | awk '/latency/ {print $3, $4}')
udp_bw=$(qperf -lp 19765 -t 3 -m 4096 127.0.0.1 udp_bw | awk '/recv_bw/ {print $3, $4}')
udp_rate=$(qperf -lp 19765 -t 3 -m 64 127.0.0.1 udp_bw | awk '/recv_bw/ {print $3, $4}')

to_mbps() { # "N unit" -> MB/s
	awk -v v="$1" -v u="$2" 'BEGIN { m = (u ~ /^GB/) ? 1000 : (u ~ /^MB/) ? 1 : (u ~ /^KB/) ? 0.001 : 0.000001; printf "%.1f", v * m }'
}
to_us() { awk -v v="$1" -v u="$2" 'BEGIN { printf "%.2f", (u == "ms") ? v * 1000 : (u == "ns") ? v / 1000 : v }'; }
udp_bw_mb=$(to_mbps $udp_bw)
udp_lat_us=$(to_us $udp_lat)
udp_mpps=$(awk -v b="$(to_mbps $udp_rate)" 'BEGIN { printf "%.3f", b / 64 }')

printf '%-34s %12s %12s %12s\n' "test (lo, 2 processes)" "MB/s" "Mpps" "lat us"
printf '%-34s %12s %12s %12s\n' "raw UDP 4096 B stream (qperf)" "$udp_bw_mb" "-" "-"
printf '%-34s %12s %12s %12s\n' "raw UDP 64 B stream (qperf)" "-" "$udp_mpps" "-"
printf '%-34s %12s %12s %12s\n' "raw UDP 64 B ping-pong (qperf)" "-" "-" "$udp_lat_us"
for t in ib_send_bw ib_write_bw ib_read_bw; do
	r=$(perftest $t -s 65536 -n 5000)
	bw=$(echo "$r" | awk '{print $4}')
	printf '%-34s %12s %12s %12s   (x%.2f of raw UDP)\n' "$t 64 KiB" "$bw" "$(echo "$r" | awk '{print $5}')" "-" \
		"$(awk -v a="$bw" -v b="$udp_bw_mb" 'BEGIN { print a / b }')"
done
for t in ib_write_bw ib_send_bw; do
	r=$(perftest $t -s 64 -n 20000)
	rate=$(echo "$r" | awk '{print $5}')
	printf '%-34s %12s %12s %12s   (x%.2f of raw UDP)\n' "$t 64 B" "$(echo "$r" | awk '{print $4}')" "$rate" "-" \
		"$(awk -v a="$rate" -v b="$udp_mpps" 'BEGIN { print a / b }')"
done
r=$(perftest ib_atomic_bw -n 20000)
printf '%-34s %12s %12s %12s\n' "ib_atomic_bw" "-" "$(echo "$r" | awk '{print $5}')" "-"
for t in ib_send_lat ib_write_lat ib_read_lat; do
	r=$(perftest $t -s 64 -n 2000)
	lat=$(echo "$r" | awk '{print $5}')   # t_typical
	printf '%-34s %12s %12s %12s   (x%.2f of raw UDP)\n' "$t 64 B (typical)" "-" "-" "$lat" \
		"$(awk -v a="$lat" -v b="$udp_lat_us" 'BEGIN { print a / b }')"
done

#!/bin/bash
# sudo bench/xdp_rate.sh [BUILD_DIR] [PACKETS] [SIZE]
# Transport-level message rate on one veth between two namespaces, in one
# run: the xdp transport (tests/xdp/xdp_probe send/recv, AF_XDP copy mode)
# next to kernel UDP sockets (udpsend/udprecv, one sendto per datagram),
# same RoCEv2 UD packets, ICRC built on the sender and checked on the
# receiver.  Prints packets/s, packets received and the sender's CPU per
# packet.  Never judges speed; fails only if a tool fails.  docs/xdp.md.
set -euo pipefail
build=${1:-build} count=${2:-200000} size=${3:-64}
probe=$build/tests/xdp/xdp_probe
[ -x "$probe" ] || { echo "no $probe: build with -Dtests=true" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root (namespaces, XDP)" >&2; exit 1; }
id=$(printf '%x' $(( ($$ ^ RANDOM) & 0xffff )))
A=xdpbA$id B=xdpbB$id
cleanup() { ip netns del $A 2>/dev/null || true; ip netns del $B 2>/dev/null || true; }
trap cleanup EXIT
ip netns add $A
ip netns add $B
ip link add vba$id netns $A type veth peer name vbb$id netns $B
ip -n $A addr add 10.233.7.1/24 dev vba$id
ip -n $B addr add 10.233.7.2/24 dev vbb$id
ip -n $A link set vba$id up
ip -n $B link set vbb$id up
log=$(mktemp -d)
trap 'cleanup; rm -rf "$log"' EXIT

# run NAME RECEIVER... -- SENDER...: start the receiver, wait for "ready",
# time the sender, then wait for the receiver's report.
run() {
	local name=$1 rx=() tx=() rpid t0 t1 cpu
	shift
	while [ "$1" != -- ]; do rx+=("$1"); shift; done
	shift
	tx=("$@")
	ip netns exec $B timeout 60 "${rx[@]}" >"$log/rx" 2>&1 &
	rpid=$!
	for ((i = 0; i < 200; i++)); do grep -q ready "$log/rx" && break; sleep 0.05; done
	t0=$(date +%s%N)
	/usr/bin/time -f '%U %S' -o "$log/time" ip netns exec $A "${tx[@]}" >/dev/null
	t1=$(date +%s%N)
	wait $rpid || true
	cpu=$(awk '{print $1 + $2}' "$log/time")
	awk -v n="$count" -v ns=$((t1 - t0)) -v cpu="$cpu" -v name="$name" -v rx="$(grep -o 'received [0-9]*' "$log/rx")" \
		'BEGIN {printf "%-4s %8.0f pkt/s sent, %s of %d, sender CPU %.2f us/pkt\n", name, n / (ns / 1e9), rx, n, cpu * 1e6 / n}'
}
run xdp "$probe" recv vbb$id 0x21 $count 20 -- "$probe" send vba$id 10.233.7.1 10.233.7.2 0x21 $count $size
run udp "$probe" udprecv 10.233.7.2 $count 20 -- "$probe" udpsend 10.233.7.1 10.233.7.2 0x21 $count $size

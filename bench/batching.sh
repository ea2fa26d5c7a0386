#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Transport batching, before and after (docs/performance.md, "transport
# batching"): perftest on lo in a private namespace, for each uroce build
# given (and for the last one again with UROCE_GSO=0 UROCE_GRO=0):
#   ib_write_bw 1 MiB bandwidth, ib_send_bw 64 B message rate, and system
#   calls per message of the client (strace -c -f).
# usage: sudo bench/batching.sh NAME=/path/to/build/cli/uroce ...
set -u
[ "$(id -u)" = 0 ] || { echo "needs root (a network namespace)"; exit 77; }
ns=uroceBatch$$
export UROCE_RUNDIR=$(mktemp -d /tmp/uroce-batch.XXXXXX)
chmod 755 "$UROCE_RUNDIR"
ip netns add $ns
cleanup() { ip netns del $ns; rm -rf "$UROCE_RUNDIR"; }
trap cleanup EXIT
ip -n $ns link set lo up
port=$(( 21000 + $$ % 4000 ))
WBW_N=${WBW_N:-300} SBW_N=${SBW_N:-200000} TRACE_N=${TRACE_N:-20000}

# run U CLIENT-PREFIX... -- CMD ARGS: server and client of CMD in the namespace.
run() {
	local u=$1 pre=() spid out
	shift
	while [ "$1" != -- ]; do pre+=("$1"); shift; done
	shift
	port=$((port + 1))
	ip netns exec $ns timeout 120 "$u" run "$@" -d bt0 -x 0 -p $port >/dev/null 2>&1 &
	spid=$!
	for _ in $(seq 600); do
		ip netns exec $ns ss -ltn | grep -q ":$port " && break
		sleep 0.05
	done
	out=$(ip netns exec $ns timeout 300 "${pre[@]}" "$u" run "$@" -d bt0 -x 0 -p $port 127.0.0.1 2>&1)
	wait $spid
	echo "$out"
}
# The numbers of perftest's result line.
result() { grep -E '^[[:space:]]*[0-9]+[[:space:]]+[0-9]+[[:space:]]+[0-9.]+[[:space:]]+[0-9.]+[[:space:]]+[0-9.]+' | tail -1; }
# System calls of an strace -c summary.
syscalls() { awk '$NF == "total" { print $(NF-2) }'; }

printf '%-10s %-8s %12s %14s %16s %16s\n' build offload 'write MB/s' 'send64 Mpps' 'sc/msg send64' 'sc/MiB write'
for spec in "$@"; do
	name=${spec%%=*} u=${spec#*=}
	ip netns exec $ns "$u" link add bt0 netdev lo >/dev/null
	modes=(on)
	[ "$spec" = "${!#}" ] && modes=(on off)
	for m in "${modes[@]}"; do
		if [ $m = off ]; then export UROCE_GSO=0 UROCE_GRO=0; else unset UROCE_GSO UROCE_GRO; fi
		wbw=$(run "$u" -- ib_write_bw -s 1048576 -n $WBW_N | result | awk '{print $4}')
		sbw=$(run "$u" -- ib_send_bw -s 64 -n $SBW_N | result | awk '{print $5}')
		t=$(mktemp)
		run "$u" strace -c -f -o "$t" -- ib_send_bw -s 64 -n $TRACE_N >/dev/null
		s1=$(syscalls <"$t")
		run "$u" strace -c -f -o "$t" -- ib_write_bw -s 1048576 -n 100 >/dev/null
		s2=$(syscalls <"$t")
		rm -f "$t"
		printf '%-10s %-8s %12s %14s %16s %16s\n' "$name" $m "$wbw" "$sbw" \
			"$(awk -v s="$s1" -v n=$TRACE_N 'BEGIN { printf "%.2f", s / n }')" \
			"$(awk -v s="$s2" 'BEGIN { printf "%.0f", s / 100 }')"
	done
	ip netns exec $ns "$u" link del bt0
done

#!/bin/bash
# rdma-core's rsockets preload (librspreload.so: unmodified TCP programs
# over RDMA) beside uroce's, in both LD_PRELOAD orders, on lo and over a
# veth: a ping-pong and an 8 MiB stream of sockpp, whose first socket is
# fd 3, checked byte for byte and by hash, and uroce's counters show the
# stream went over the device.  Issue 48, fault 1: a forked reaper used to
# run rsockets' dup2 wrapper on fd 3 and stall the first connection for
# good; the reaper is now a program of its own (docs/fork.md).
# sockpp's first socket is fd 3 only if nothing else is open above 2
for fd in 3 4 5 6 7 8 9; do eval "exec $fd>&-"; done
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../cm/lib.sh"
need_root
RS=$(ls /usr/lib/*/rsocket/librspreload.so 2>/dev/null | head -1)
[ -n "$RS" ] || skip "rsockets' preload is not installed (apt-get install rdmacm-utils librdmacm1)"
[ -x "$SOCKPP" ] || fail "SOCKPP is not set to the sockpp program"
use_private_registry
cm_setup
UP=$(dirname "$UROCE")/../providers/uroce/preload/liburoce-preload.so

dev_of() { case $1 in "$CM_LO_NS") echo lo0 ;; "$CM_A_NS") echo cma ;; *) echo cmb ;; esac; }
tx_bytes() { ip netns exec "$1" "$UROCE" stat "$(dev_of "$1")" | awk '$1 == "tx_bytes" { n = $2 } END { print n + 0 }'; }

for w in lo veth; do
	cm_where $w
	for order in rsockets-last rsockets-first; do
		port=$((46000 + RANDOM % 1000))
		# `uroce run` puts its preload before LD_PRELOAD's; the other
		# order is set inside it
		if [ $order = rsockets-last ]; then
			outer=$RS pre=()
		else
			outer= pre=(env LD_PRELOAD="$RS $UP")
		fi
		before=$(tx_bytes "$CLI_NS")
		LD_PRELOAD=$outer cm_server "$SRV_NS" 'sockpp server: listening' "${pre[@]}" "$SOCKPP" -s -p $port
		clog=$CM_TMP/cli.$w.$order
		rc=0
		LD_PRELOAD=$outer cm_run "$CLI_NS" "${pre[@]}" "$SOCKPP" -c "$SRV_ADDR" -p $port -n 500 -m 8 >"$clog" 2>&1 || rc=$?
		src=0
		cm_wait_server || src=$?
		if [ $rc -ne 0 ] || [ $src -ne 0 ] || ! grep -q 'stream hash .* matches' "$clog" ||
		   ! grep -q 'sockpp server: done' "$CM_SRV_LOG"; then
			echo "--- server (exit $src)"; cat "$CM_SRV_LOG"; echo "--- client (exit $rc)"; cat "$clog"
			fail "$w, $order: sockpp over rsockets (client exit $rc, server exit $src)"
		fi
		for log in "$clog" "$CM_SRV_LOG"; do
			grep -q 'first socket is fd 3$' "$log" || { cat "$log"; fail "$w, $order: the first socket was not fd 3"; }
		done
		after=$(tx_bytes "$CLI_NS"); sent=$((after - before))
		[ $sent -ge $((8 << 20)) ] || fail "$w, $order: the client's device sent $sent bytes, less than the 8 MiB stream"
		pass "$w, $order: $(sed -n 's/^sockpp: //p' "$clog" | tail -1); fd 3 first on both sides; the device sent $sent bytes"
	done
done

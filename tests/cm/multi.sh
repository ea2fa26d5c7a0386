#!/bin/bash
# Several processes on one device, each listening on its own port, serve
# clients at the same time: three rping servers on one device and three
# clients at once, on lo and across two namespaces over a veth.  The
# servers share QP1 (and IP:4791 through SO_REUSEPORT), so most REQs land
# in a process that does not listen on their port and must be passed on
# by service ID, and every later MAD by comm ID (docs/cm.md, "QP1").
# Then a second listener on a taken port fails with EADDRINUSE.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
use_private_registry
cm_setup
N=3 COUNT=50
for w in ${CM_WHERE:-lo veth}; do
	cm_where $w
	base=$((43000 + RANDOM % 1000))
	spids=() slogs=() cpids=() clogs=()
	for i in $(seq 0 $((N - 1))); do
		slogs[$i]=$(mktemp /tmp/i11cm-msrv.XXXXXX)
		on_exit "rm -f '${slogs[$i]}'"
		UROCE_CM_DEBUG=1 cm_run $SRV_NS rping -s -a $SRV_ADDR -p $((base + i)) -C $COUNT -V -S 1000 \
			>"${slogs[$i]}" 2>&1 &
		spids[$i]=$!
		on_exit "kill ${spids[$i]}"
	done
	# the event: each server says it listens
	for i in $(seq 0 $((N - 1))); do
		for _ in $(seq 1200); do
			grep -q 'uroce cm: listening' "${slogs[$i]}" && break
			kill -0 ${spids[$i]} 2>/dev/null || break
			sleep 0.05
		done
		grep -q 'uroce cm: listening' "${slogs[$i]}" || { cat "${slogs[$i]}"; fail "server $i never listened"; }
	done
	# a second listener on a taken port: EADDRINUSE, as the kernel
	if out=$(cm_run $SRV_NS rping -s -a $SRV_ADDR -p $base -C 1 2>&1); then
		fail "a second rping -s on port $base ran: $out"
	fi
	echo "$out" | grep -qi 'in use' || fail "a second listener on port $base: not EADDRINUSE: $out"
	pass "$w: a second listener on a taken port: EADDRINUSE"
	for i in $(seq 0 $((N - 1))); do
		clogs[$i]=$(mktemp /tmp/i11cm-mcli.XXXXXX)
		on_exit "rm -f '${clogs[$i]}'"
		cm_run $CLI_NS rping -c -a $SRV_ADDR -p $((base + i)) -C $COUNT -V -S 1000 -v \
			>"${clogs[$i]}" 2>&1 &
		cpids[$i]=$!
	done
	rc=0
	for i in $(seq 0 $((N - 1))); do
		wait ${cpids[$i]} || { rc=1; echo "--- client $i"; cat "${clogs[$i]}"; }
		wait ${spids[$i]} || { rc=1; echo "--- server $i"; cat "${slogs[$i]}"; }
		n=$(grep -c 'ping data' "${clogs[$i]}" || true)
		[ "$n" -eq $COUNT ] || { rc=1; echo "client $i: $n pings of $COUNT"; }
	done
	[ $rc -eq 0 ] || fail "$w: $N servers and $N clients at once"
	dev=$([ $w = lo ] && echo lo0 || echo cma)
	echo "$w: $(ip netns exec $SRV_NS "$UROCE" stat $dev | grep -E 'cm_|forwarded' | tr -s ' \n' ' ')"
	pass "$w: $N rping servers on one device, $N clients at once, $COUNT verified pings each"
done

#!/bin/bash
# A server killed with SIGKILL in the middle of an rping: the client learns
# it in bounded time, and a new server on the same port (the dead one's
# binding is taken back from the port table: docs/cm.md, "QP1") accepts
# the next client at once.  On lo and across a veth.
# The kernel sends a DREQ for the dead server (ucma_close); uroce's reaper
# does the same (cm/gsi_reaper.c).  rping -c then stops with "wait for
# RDMA_..._ADV state 10" (DISCONNECTED) and, as with the kernel, exits 0
# (rping_test_client returns 0 once DISCONNECTED): the test wants the
# client to stop early on that DISCONNECTED, or to fail, never to hang.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
use_private_registry
cm_setup

# PID and its descendants, deepest first
tree_of() {
	local c
	for c in $(ps -o pid= --ppid $1 || true); do tree_of $c; done
	echo $1
}

for w in ${CM_WHERE:-lo veth}; do
	cm_where $w
	port=$((44000 + RANDOM % 1000))
	cm_server $SRV_NS 'uroce cm: listening' rping -s -a $SRV_ADDR -p $port -C 1000000 -S 1000
	srv=$CM_SRV_PID
	clog=$(mktemp /tmp/i11cm-rcli.XXXXXX)
	on_exit "rm -f '$clog'"
	cm_run $CLI_NS rping -c -a $SRV_ADDR -p $port -C 1000000 -S 1000 -v >"$clog" 2>&1 &
	cli=$!
	on_exit "kill $cli"
	# the event: pings flow
	cm_wait_pings "$clog" $cli || { cat "$clog"; fail "$w: no pings"; }
	# SIGKILL the rping itself: the server's process tree (subshell, ip
	# netns exec -> timeout, uroce run -> rping) from the leaves up
	kids=$(tree_of $srv)
	kill -9 $kids 2>/dev/null || true
	t0=$(date +%s)
	rc=0
	wait $cli || rc=$?
	t=$(( $(date +%s) - t0 ))
	[ $rc -ne 124 ] || fail "$w: the client hung until the test's timeout"
	[ $rc -ne 0 ] || grep -q 'state 10' "$clog" ||
		{ grep -v 'ping data' "$clog" | tail; fail "$w: the client exited 0 without a DISCONNECTED"; }
	pass "$w: server killed mid-rping: the client stops (exit $rc, $(grep -o 'wait for [A-Z_]* state [0-9]*' "$clog" | head -1)) after ${t}s"
	for k in $kids; do
		while kill -0 $k 2>/dev/null; do sleep 0.05; done
	done
	# a new server on the same port, at once
	cm_pair "restart $w" $SRV_NS $CLI_NS -- rping -s -a $SRV_ADDR -p $port -C 10 -V \
		-- rping -c -a $SRV_ADDR -p $port -C 10 -V -v
	pass "$w: a new server on port $port accepts the next client at once"
done

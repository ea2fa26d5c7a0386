#!/bin/bash
# Stock rdmacm programs started with descriptors 3-9 inherited (a shell's
# redirections, a pipe, a listening socket's number space taken): rping,
# ucmatose and a perftest -R pair complete, and afterwards nothing of
# theirs is left in their namespaces (the reaper included) within a
# bounded time; then a connected rping server killed with SIGKILL: the
# client sees DISCONNECTED (the reaper's DREQ) in bounded time.  On lo and
# over a veth.  Issue 48, fault 2: a forked reaper closed an inherited fd
# through uroce's own close() wrapper and hung on a lock held across the
# fork, one leaked process per run (docs/fork.md).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../cm/lib.sh"
. "$(dirname "$0")/lib.sh"
need_root
command -v rping >/dev/null || skip "rdmacm-utils is not installed"
use_private_registry
cm_setup

# 3-9: files, a pipe's two ends, /dev/null
inherit=$(mktemp "$CM_TMP/inherit.XXXXXX")
exec 3<"$inherit" 4>>"$inherit" 5</dev/null 6>/dev/null 7<>"$inherit"
exec {pw}> >(cat >/dev/null)
exec 8>&$pw 9</dev/null
exec {pw}>&-
for fd in 3 4 5 6 7 8 9; do [ -e /proc/$$/fd/$fd ] || fail "fd $fd is not open"; done

# The rping below PID (a subshell, ip netns exec, timeout, uroce run)
rping_of() {
	local c
	for c in $(ps -o pid= --ppid $1 || true); do
		[ "$(ps -o comm= -p $c)" = rping ] && echo $c || rping_of $c
	done
}

# perftest's own listen race (tests/cm/perftest.sh): run again
CM_AGAIN_RE='RDMA_CM_EVENT_(REJECTED; error: 8|UNREACHABLE; error: 1)\.'
for w in ${CM_WHERE:-lo veth}; do
	cm_where $w
	if [ $w = lo ]; then sdev=lo0 cdev=lo0; else sdev=cma cdev=cmb; fi
	port=$((45000 + RANDOM % 1000))
	cm_pair "rping $w" $SRV_NS $CLI_NS -- rping -s -a $SRV_ADDR -p $port -C 20 -V \
		-- rping -c -a $SRV_ADDR -p $port -C 20 -V -v
	cm_pair "ucmatose $w" $SRV_NS $CLI_NS -- ucmatose -b $SRV_ADDR -c 4 -C 20 \
		-- ucmatose -s $SRV_ADDR -c 4 -C 20
	for try in 1 2 3 4 5 6 7 8 9 10; do
		rc=0
		(cm_pair "ib_send_bw -R $w" $SRV_NS $CLI_NS -- ib_send_bw -R -n 200 -d $sdev -p $((port + 1)) \
			-- ib_send_bw -R -n 200 -d $cdev -p $((port + 1)) $SRV_ADDR) || rc=$?
		[ $rc -eq 2 ] || break
	done
	[ $rc -eq 0 ] || fail "ib_send_bw -R $w"
	for ns in $SRV_NS $CLI_NS; do
		no_process_left $ns || fail "$w: processes left in $ns after rping, ucmatose and ib_send_bw"
	done
	pass "$w: with fds 3-9 inherited, nothing is left in the namespaces within 10 s"

	# SIGKILL of a connected server: the client stops on DISCONNECTED
	cm_server $SRV_NS 'uroce cm: listening' rping -s -a $SRV_ADDR -p $((port + 2)) -C 1000000 -S 1000
	srv=$CM_SRV_PID
	clog=$CM_TMP/kill.$w
	: >"$clog"
	cm_run $CLI_NS rping -c -a $SRV_ADDR -p $((port + 2)) -C 1000000 -S 1000 -v >"$clog" 2>&1 &
	cli=$!
	cm_wait_pings "$clog" $cli || { cat "$clog"; fail "$w: no pings"; }
	victim=$(rping_of $srv)
	[ -n "$victim" ] || fail "$w: the server's rping is not found"
	kill -9 $victim
	t0=$SECONDS
	rc=0
	wait $cli || rc=$?
	[ $rc -ne 124 ] || fail "$w: the client hung until the test's timeout"
	grep -q 'state 10' "$clog" || [ $rc -ne 0 ] ||
		{ grep -v 'ping data' "$clog" | tail; fail "$w: the client exited 0 without a DISCONNECTED"; }
	grep -q 'DISCONNECT EVENT' "$clog" || { grep -v 'ping data' "$clog" | tail; fail "$w: the client saw no DISCONNECTED"; }
	wait $srv || true
	for ns in $SRV_NS $CLI_NS; do
		no_process_left $ns || fail "$w: processes left in $ns after the killed server"
	done
	pass "$w: server killed with SIGKILL: the client saw DISCONNECTED after $((SECONDS - t0)) s (exit $rc); nothing left"
done

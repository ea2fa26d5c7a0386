# Shared helpers for uroce's shell tests (sourced, not run).
# Every test: bounded in time by meson, cleans up through the EXIT trap
# even when it fails, uses private addresses only, and its own registry
# (UROCE_RUNDIR) so that it never touches the user's devices.
set -euo pipefail

: "${UROCE:?UROCE must name the uroce binary}"
. "$(dirname "${BASH_SOURCE[0]}")/wait.sh"
PY=/usr/bin/python3   # Debian's python3: the one with pyverbs and scapy

SKIP=77
_cleanups=()
on_exit() { _cleanups+=("$*"); }
_run_cleanups() {
	local rc=$?
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_cleanups[$i]}" >/dev/null 2>&1 || true
	done
	exit $rc
}
trap _run_cleanups EXIT
trap 'exit 130' INT TERM

# Stop background process PID (TERM: `timeout` passes it on to what it
# runs) at exit, if it is still our child by then (never a reused pid).
_stop_child() {
	local stat
	stat=$(cat /proc/$1/stat 2>/dev/null) || return 0
	stat=${stat##*) }
	set -- "$1" $stat
	[ "$3" = $$ ] && kill "$1"
}
stop_at_exit() { on_exit "_stop_child $1"; }

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit $SKIP; }
pass() { echo "ok: $*"; }

need_root() { [ "$(id -u)" = 0 ] || skip "needs root (network namespaces, /dev/infiniband nodes)"; }
# Stock Debian programs (perftest, ibv_devinfo) cannot load a provider
# built with ASan (its runtime must come first): a test that runs them
# skips in the ASan build (test.sh runs it in the normal build).
need_plain_provider() {
	# (ldd's whole output first: grep -q leaves at the first match, and
	# under pipefail a SIGPIPE to ldd made the pipeline false, about one
	# run in ten, so the test ran and failed instead of skipping.)
	case $(ldd "$UROCE" 2>/dev/null) in
	*libasan*) skip "runs stock verbs programs, which cannot load the ASan-built provider" ;;
	esac
	return 0
}

# What a test creates in shared places is noted in the build tree's ledger,
# which tests/lib/leaks.sh checks at the end of the suite.
LEDGER=$(dirname "$(dirname "$UROCE")")/tests/created.ledger
note_created() { [ ! -d "$(dirname "$LEDGER")" ] || echo "$*" >>"$LEDGER"; }

# remove_if_new FILE...: each FILE that does not exist now is removed at
# exit (what an unmodified program creates in a shared place and leaves:
# the XRC examples' /tmp/xrc_domain*; one that was there is not ours).
remove_if_new() {
	local f
	for f in "$@"; do
		[ -e "$f" ] || on_exit "rm -f '$f'"
	done
}

# A private registry for this test.
use_private_registry() {
	UROCE_RUNDIR=$(mktemp -d /tmp/uroce-test.XXXXXX)
	export UROCE_RUNDIR
	note_created dir "$UROCE_RUNDIR"
	chmod 755 "$UROCE_RUNDIR"
	on_exit "rm -rf '$UROCE_RUNDIR'"
}

# Add a device and delete it at exit: add_dev NAME IFACE [NETNS [OPTION VALUE...]]
# (options of `uroce link add`, e.g. mode 0660)
add_dev() {
	local name=$1 ifc=$2 ns=${3:-}
	shift $(( $# < 3 ? $# : 3 ))
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$UROCE" link add "$name" netdev "$ifc" "$@"
		on_exit "ip netns exec '$ns' '$UROCE' link del '$name'"
	else
		"$UROCE" link add "$name" netdev "$ifc"
		on_exit "'$UROCE' link del '$name'"
	fi
}

# A network namespace that is removed at exit: make_ns NAME
make_ns() {
	note_created netns "$1"
	ip netns add "$1"
	on_exit "ip netns del '$1'"
	ip -n "$1" link set lo up
	keep_order "$1" lo
}

# keep_order NS DEV: packets DEV receives keep the order they were sent in.
# lo and veth hand a packet to the backlog of the CPU that sent it; a
# sender that moves to another CPU while that backlog waits for ksoftirqd
# (a loaded machine) has later packets delivered first.  RC recovers; a
# UC message is lost and a test that checks UC data fails.  RPS with one
# CPU makes one backlog of them all (docs/impair.md, "How it works").
# Where RPS cannot be set (a kernel without it), the test goes on as before.
# KEEP_ORDER=0 leaves it out (the AF_XDP tests: docs/xdp.md, "RPS").
keep_order() {
	[ "${KEEP_ORDER:-1}" != 0 ] || return 0
	deep_backlog
	ip netns exec "$1" sh -c "echo 1 > /sys/class/net/$2/queues/rx-0/rps_cpus" 2>/dev/null ||
		echo "note: cannot set rps_cpus of $2 in $1: a loaded machine may reorder its packets" >&2
}

# deep_backlog: the one backlog that keep_order makes holds a whole burst.
# Its length is net.core.netdev_max_backlog (1000 by default, one value for
# the whole machine); a packet that finds it full is dropped (the
# 'dropped' column of /proc/net/softnet_stat) and no one is told.  One UC
# message of 1 MiB at a path MTU of 1024 is 1024 packets, sent as one
# burst; when the CPU of that backlog runs late (a loaded machine), the
# burst overflows it and the message is lost (UC has no retry, IBTA 9.8).
# CI failed on it once (faults, dup5); a loop of that case here lost a UC
# SEND in 1 run of 30, the one run with backlog drops.  A test raises the limit to
# UROCE_TEST_BACKLOG (8192, eight such bursts) for its run and sets the
# old value back at exit.  The file exists in the machine's first network
# namespace only; elsewhere (or unprivileged) the test goes on as before.
deep_backlog() {
	[ -z "${_UROCE_BACKLOG_DEEP:-}" ] || return 0
	export _UROCE_BACKLOG_DEEP=1
	local f=/proc/sys/net/core/netdev_max_backlog old want=${UROCE_TEST_BACKLOG:-8192}
	if ! old=$(cat $f 2>/dev/null); then
		echo "note: no $f in this network namespace: a burst above the kernel's backlog may be dropped" >&2
		return 0
	fi
	[ "$old" -lt "$want" ] || return 0
	if echo "$want" 2>/dev/null >$f; then
		on_exit "echo $old > $f"
	else
		echo "note: cannot raise $f to $want: a burst above $old packets may be dropped" >&2
	fi
}

# backlog_drops: packets the kernel's per-CPU backlogs dropped so far, all
# CPUs summed (the second column of /proc/net/softnet_stat, hexadecimal).
backlog_drops() {
	local n=0 d
	while read -r _ d _; do n=$((n + 16#$d)); done </proc/net/softnet_stat
	echo $n
}

# isolate_netns "$@": run the rest of this test (the script again, from the
# top) in a network namespace of its own, removed when it ends.  Its devices
# on lo then share 127.0.0.1:4791 with no one else's processes: on a shared
# machine, other builds of uroce on the host's lo would be in the same
# SO_REUSEPORT group, and a build whose QPN table differs cannot forward
# our packets (docs/engine.md).
isolate_netns() {
	[ -z "${UROCE_TEST_NETNS:-}" ] || return 0
	local ns rc=0
	ns=uroceL$(uniq_id)
	make_ns "$ns"
	UROCE_TEST_NETNS=$ns ip netns exec "$ns" "$BASH" "$0" "$@" || rc=$?
	exit $rc
}

# A veth pair between two namespaces: make_veth NS_A IF_A ADDR_A NS_B IF_B ADDR_B
# (VETH_QUEUES=N: N transmit and receive queues on each end).
make_veth() {
	local q=${VETH_QUEUES:+numtxqueues $VETH_QUEUES numrxqueues $VETH_QUEUES}
	ip link add "$2" netns "$1" $q type veth peer name "$5" netns "$4" $q
	ip -n "$1" addr add "$3" dev "$2"
	ip -n "$4" addr add "$6" dev "$5"
	ip -n "$1" link set "$2" up
	ip -n "$4" link set "$5" up
	keep_order "$1" "$2"
	keep_order "$4" "$5"
	veth_backpressure "$1" "$2"
	veth_backpressure "$4" "$5"
	wait_oper_up "$1" "$2"
	wait_oper_up "$4" "$5"
}

# veth_backpressure NS IF: a burst towards an XDP peer waits instead of
# being dropped.  A veth whose peer runs an XDP program (an xdp device)
# hands each frame to a ring of 256 that the peer's NAPI empties; with no
# qdisc (a veth's default) a frame that finds it full is dropped, counted
# only as the veth's TX dropped.  When that NAPI runs late (ksoftirqd
# preempted on a loaded machine), one UC message of 1 MiB (1024 packets)
# overflows it and is lost: xdp_hostile lost a UC WRITE that way in about
# one loaded run of 20, 121 frames dropped at the client's veth.  Linux
# 6.16 and later stop the veth's queue instead when it has a qdisc; a
# pfifo holding UROCE_TEST_VETH_QUEUE frames (8192, eight such bursts)
# keeps them until the ring has room, the way deep_backlog does for the
# kernel's backlog.  An older kernel drops as before.  The qdisc's
# requeue may send a GSO datagram's segment after later ones, so UC
# towards an xdp end still fails now and then on a loaded machine
# (docs/xdp.md, "A veth peer drops ...").
veth_backpressure() {
	ip netns exec "$1" tc qdisc replace dev "$2" root pfifo limit "${UROCE_TEST_VETH_QUEUE:-8192}" 2>/dev/null ||
		echo "note: no qdisc on $2 in $1: a burst towards an XDP peer may be dropped" >&2
}

# Wait (at most 10 s) until link DEV in namespace NS is operationally up:
# the kernel's linkwatch sets that (and so IFF_RUNNING, a port's ACTIVE
# state) some time after the carrier came on, up to a second later.
wait_oper_up() {
	local i
	for i in $(seq 1000); do
		grep -q 'state UP' <<<"$(ip -n "$1" link show dev "$2")" && return 0
		sleep 0.01
	done
	fail "link $2 in $1 never came up"
}

# A short unique suffix for names that live in global namespaces.
uniq_id() { printf '%x' $(( ($$ ^ RANDOM) & 0xffff )); }

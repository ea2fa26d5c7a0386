# Shared helpers for uroce's shell tests (sourced, not run).
# Every test: bounded in time by meson, cleans up through the EXIT trap
# even when it fails, uses private addresses only, and its own registry
# (UROCE_RUNDIR) so that it never touches the user's devices.
set -euo pipefail

: "${UROCE:?UROCE must name the uroce binary}"
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

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit $SKIP; }
pass() { echo "ok: $*"; }

need_root() { [ "$(id -u)" = 0 ] || skip "needs root (network namespaces, /dev/infiniband nodes)"; }

# A private registry for this test.
use_private_registry() {
	UROCE_RUNDIR=$(mktemp -d /tmp/uroce-test.XXXXXX)
	export UROCE_RUNDIR
	chmod 755 "$UROCE_RUNDIR"
	on_exit "rm -rf '$UROCE_RUNDIR'"
}

# Add a device and delete it at exit: add_dev NAME IFACE [NETNS]
add_dev() {
	local name=$1 ifc=$2 ns=${3:-}
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$UROCE" link add "$name" netdev "$ifc"
		on_exit "ip netns exec '$ns' '$UROCE' link del '$name'"
	else
		"$UROCE" link add "$name" netdev "$ifc"
		on_exit "'$UROCE' link del '$name'"
	fi
}

# A network namespace that is removed at exit: make_ns NAME
make_ns() {
	ip netns add "$1"
	on_exit "ip netns del '$1'"
	ip -n "$1" link set lo up
}

# A veth pair between two namespaces: make_veth NS_A IF_A ADDR_A NS_B IF_B ADDR_B
make_veth() {
	ip link add "$2" netns "$1" type veth peer name "$5" netns "$4"
	ip -n "$1" addr add "$3" dev "$2"
	ip -n "$4" addr add "$6" dev "$5"
	ip -n "$1" link set "$2" up
	ip -n "$4" link set "$5" up
}

# A short unique suffix for names that live in global namespaces.
uniq_id() { printf '%x' $(( ($$ ^ RANDOM) & 0xffff )); }

# wait_until SECS CMD ARGS...: run CMD every 50 ms until it succeeds, at
# most SECS seconds; 1 if it never did.  For "the other side is ready":
# wait for the event itself, bounded, never a fixed sleep.
wait_until() {
	local secs=$1 t
	shift
	for ((t = 0; t < secs * 20; t++)); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

# Is a TCP port listening in namespace NS ("" = here)?  listening NS PORT
listening() { ${1:+ip netns exec $1} ss -Hltn "sport = :$2" | grep -q .; }

# Wait until a TCP port listens in namespace NS ("" = here), at most SECS
# seconds (default 30): the event "the server is ready".
wait_listen() { wait_until "${3:-30}" listening "$1" "$2"; }

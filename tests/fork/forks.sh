#!/bin/bash
# Applications that fork, on lo and over a veth (docs/fork.md):
#   - forkxfer: an RC ping-pong with completion events during which both
#     sides fork (exit, exec, sleep, close-all, a child using the parent's
#     QP, CQ and CM id, which must get EPERM and not hang, system()):
#     every message checked, the client's disconnect reaches the server;
#   - forksrv: a server forking a child per client, each child listening
#     on a port of its own (issue 48, fault 3), 200 clients in a row with
#     no REJECTED; with -P the parent used the CM itself before forking;
#   - forkxfer -D: the same, with each side's CM channel moved through
#     dup, fcntl F_DUPFD_CLOEXEC, dup2 onto another rdma_cm fd and dup3,
#     the fds it was on closed (the preload's dups, docs/preload.md);
#     also beside rsockets' preload (which wraps dup2), both orders.
# Afterwards nothing of theirs is left in the namespaces.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../cm/lib.sh"
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$FORKXFER" ] && [ -x "$FORKSRV" ] || fail "FORKXFER and FORKSRV must name the programs"
use_private_registry
cm_setup
RS=$(ls /usr/lib/*/rsocket/librspreload.so 2>/dev/null | head -1)
UP=$(dirname "$UROCE")/../providers/uroce/preload/liburoce-preload.so

# run_pair NAME READY_RE OK_RE_SERVER OK_RE_CLIENT -- SERVER... -- CLIENT...
run_pair() {
	local name=$1 ready=$2 sok=$3 cok=$4 rc=0 src=0 srv=() cli=()
	shift 5
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	cm_server "$SRV_NS" "$ready" "${srv[@]}"
	clog=$(mktemp "$CM_TMP/cli.XXXXXX")
	cm_run "$CLI_NS" "${cli[@]}" >"$clog" 2>&1 || rc=$?
	cm_wait_server || src=$?
	if [ $rc -ne 0 ] || [ $src -ne 0 ] || ! grep -Eq "$sok" "$CM_SRV_LOG" || ! grep -Eq "$cok" "$clog"; then
		echo "--- server (exit $src)"; grep -v '^uroce cm' "$CM_SRV_LOG"; echo "--- client (exit $rc)"; cat "$clog"
		fail "$name (client exit $rc, server exit $src)"
	fi
	pass "$name: $(grep -E "$cok" "$clog" | head -1)"
}

for w in lo veth; do
	cm_where $w
	port=$((43000 + RANDOM % 1000))
	run_pair "forkxfer $w" 'forkxfer server: listening' \
		'forkxfer server: .* fine' 'forkxfer client: .* fine' \
		-- "$FORKXFER" -s -p $port -- "$FORKXFER" -c $SRV_ADDR -p $port
	grep -q 'forkxfer server: DISCONNECTED' "$CM_SRV_LOG" || fail "forkxfer $w: the server saw no DISCONNECTED"
	port=$((port + 1))
	run_pair "forkxfer -D $w" 'forkxfer server: listening' \
		'forkxfer server: .* fine' 'forkxfer client: -D: CM channel moved' \
		-- "$FORKXFER" -s -p $port -D -- "$FORKXFER" -c $SRV_ADDR -p $port -D
	grep -q 'forkxfer server: DISCONNECTED' "$CM_SRV_LOG" || fail "forkxfer -D $w: the server saw no DISCONNECTED"
	grep -q 'forkxfer client: .* fine' "$clog" || fail "forkxfer -D $w: the client did not finish"
	# the same beside rsockets' preload, which wraps dup2 too, in both
	# orders (`uroce run` puts its preload first; the other order is set
	# inside it)
	if [ -n "$RS" ]; then
		for order in rsockets-last rsockets-first; do
			port=$((port + 1))
			if [ $order = rsockets-last ]; then
				outer=$RS pre=()
			else
				outer= pre=(env LD_PRELOAD="$RS $UP")
			fi
			LD_PRELOAD=$outer run_pair "forkxfer -D $w, $order" 'forkxfer server: listening' \
				'forkxfer server: DISCONNECTED' 'forkxfer client: .* fine' \
				-- "${pre[@]}" "$FORKXFER" -s -p $port -D -- "${pre[@]}" "$FORKXFER" -c $SRV_ADDR -p $port -D
		done
	fi
	modes="-P"
	[ $w = lo ] && modes="none -P"
	for m in $modes; do
		port=$((port + 1))
		opt=()
		[ $m = none ] || opt=($m)
		run_pair "forksrv $w ${opt[*]:-(the parent uses no CM)}" 'forksrv: listening' \
			'forksrv: served 200 clients, 0 children failed' 'forksrv: 200 clients connected' \
			-- "$FORKSRV" -s -p $port -n 200 "${opt[@]}" -- "$FORKSRV" -c $SRV_ADDR -p $port -n 200
	done
	for ns in $SRV_NS $CLI_NS; do
		no_process_left $ns || fail "$w: processes left in $ns"
	done
	pass "$w: nothing is left in the namespaces"
done

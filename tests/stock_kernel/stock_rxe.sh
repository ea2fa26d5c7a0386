#!/bin/bash
# uroce next to the kernel's own RoCE: a guest on Debian 12's kernel with
# rdma_rxe and rxe0 on eth0 (the rxe-vm harness), uroce installed in it,
# and uroce on the host side of the harness bridge (docs/stock-kernel.md).
#   - in the guest, rxe holds *:4791: `uroce link add` refuses with the one
#     line naming the kernel (rdma_rxe), and creates nothing;
#   - rxe pins MRs: under ulimit -l 64 without CAP_IPC_LOCK it cannot
#     register 1 MiB (what tests/foundation/memlock.sh does with 1 GiB);
#   - in a second netns of the guest, a uroce device on lo: there, under
#     uroce run, ibv_devices and rdma link show list it and rxe0,
#     ibv_devinfo -d rxe0 works, ibv_rc_pingpong --chk runs over each;
#   - live runs between uroce on the host and the guest's rxe, both ways,
#     data checked: ibv_rc_pingpong --chk, ibv_ud_pingpong --chk, and
#     rping -V through uroce's CM against the kernel's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../lib/pairs.sh"
sk_setup
use_private_registry
SK_G=skrxe
GIP=$SK_NET.2
sk_guest $SK_G $GIP

sk_check "guest: uroce link add on eth0 and lo refused, one line naming rdma_rxe" '
for nd in eth0 lo; do
	if out=$(uroce link add u0 netdev $nd 2>&1); then uroce link del u0; echo "link add on $nd succeeded"; exit 1; fi
	echo "$out"
	[ "$(echo "$out" | grep -c .)" = 1 ] || exit 1
	echo "$out" | grep -q "^uroce: u0: [0-9a-f.:]* port 4791 is held by the kernel (rdma_rxe) on all addresses;" || exit 1
done
[ -z "$(uroce link show)" ]'

sk_check "guest: rxe under ulimit -l 64 without CAP_IPC_LOCK cannot register 1 MiB" '
python3 -c "
import ctypes, os
ctypes.CDLL(None).prctl(24, 14)   # PR_CAPBSET_DROP, CAP_IPC_LOCK
os.execvp(\"sh\", [\"sh\", \"-c\", \"ulimit -l 64; exec ibv_rc_pingpong -d rxe0 -g $RXE_GID -s 1048576 -p 18601\"])
" > /tmp/m.out 2>&1 && { cat /tmp/m.out; exit 1; }
cat /tmp/m.out; grep -q "Couldn.t register MR" /tmp/m.out'

# uroce beside rxe0 in the guest: in a second network namespace (rxe's
# socket is the initial one's), whose processes see rxe0 too (the
# kernel's netns mode "shared").
N="ip netns exec un"
sk_check "guest: uroce link add on lo of a second netns" \
	"ip netns add un && ip -n un link set lo up && $N uroce link add su0 netdev lo"
sk_check "guest (netns): uroce run ibv_devices and rdma link show list rxe0 and su0" "
$N uroce run ibv_devices | tee d.out; $N uroce run rdma link show | tee l.out
grep -qw rxe0 d.out && grep -qw su0 d.out && grep -q '^link rxe0/1 ' l.out && grep -q '^link su0/1 ' l.out"
sk_check "guest (netns): uroce run ibv_devinfo -d rxe0" \
	"$N uroce run ibv_devinfo -d rxe0 | tee i.out; grep -q PORT_ACTIVE i.out"
SK_IN=$N
P="uroce run ibv_rc_pingpong -d rxe0 -g \$RXE_GID -c -n 50 -s 4096 -p 18632"
sk_pair "guest (netns): ibv_rc_pingpong --chk over rxe0 under uroce run" "" "$P" "$P 127.0.0.1"
P="uroce run ibv_rc_pingpong -d su0 -g \$g -c -n 50 -s 4096 -p 18633"
sk_pair "guest (netns): ibv_rc_pingpong --chk over su0 beside rxe0" "$(sk_lo_gid su0 "$N")" \
	"$P" "$P 127.0.0.1"
SK_IN=

# Live runs: uroce on the host side of the bridge, rxe0 in the guest.
ip netns exec $SK_NS "$UROCE" link add h0 netdev $RXEVM_BRIDGE
on_exit "ip netns exec $SK_NS '$UROCE' link del h0"
hgid=$(gid_of $SK_NS h0 $SK_HOST)
[ -n "$hgid" ] || fail "no IPv4 GID on h0"

# live NAME SERVER_SIDE PROG ARGS...: PROG between host and guest, the
# server on SERVER_SIDE (host or guest), data checked: a pingpong with
# --chk over rxe0 and h0 by GID; rping -V through each side's rdma CM (the
# kernel's in the guest, uroce's on the host), which names the server's
# address on both sides and must print its 20 pings on the client.
# udp_bound PID: a process of PID's tree holds UDP 4791 in the test's netns.
udp_bound() {
	local p
	for p in $(ip netns exec $SK_NS ss -Hlunp "sport = :4791" | grep -o 'pid=[0-9]*' | cut -d= -f2); do
		_is_descendant "$p" "$1" && return 0
	done
	return 1
}
live() {
	local name=$1 side=$2 port=$((18610 + ${#SK_FAILED[@]} + RANDOM % 50)) job rc=0
	shift 2
	local srv=$GIP cli_on=host again="Couldn't connect" gs gc hs hc
	[ $side = guest ] || { srv=$SK_HOST cli_on=guest; }
	if [ "$1" = rping ]; then
		gs="-s -a $srv -p $port" gc="-c -v -a $srv -p $port" hs=$gs hc=$gc
		again="REJECTED|rdma_connect|connect error"
	else
		gs="-d rxe0 -g \$RXE_GID -p $port" gc="$gs $srv"
		hs="-d h0 -g $hgid -p $port" hc="$hs $srv"
	fi
	if [ $side = guest ]; then
		job=$("$SK_HARNESS/run-guest.sh" --exec-bg $SK_G "$* $gs")
		for _ in $(seq 60); do
			ip netns exec $SK_NS timeout 60 "$UROCE" run "$@" $hc >"$SK_TMP/live.out" 2>&1 && break
			grep -Eq "$again" "$SK_TMP/live.out" || { rc=1; break; }
			sleep 0.5
		done
		wait_until 60 test -f "$job.rc" || rc=1
		[ "$(cat "$job.rc" 2>/dev/null)" = 0 ] || rc=1
	else
		ip netns exec $SK_NS timeout 120 "$UROCE" run "$@" $hs >"$SK_TMP/live.out" 2>&1 &
		local spid=$!
		stop_at_exit $spid
		# A pingpong's server listens on its TCP port; rping's, through
		# uroce's CM, on none: wait for its device's UDP 4791 socket (a
		# REQ before its listen is rejected, and the client tries again).
		if [ "$1" = rping ]; then wait_until 60 udp_bound $spid || rc=1
		else wait_listen $port $spid 60 $SK_NS || rc=1; fi
		job=$(mktemp "$SK_TMP/job.XXXXXX")
		# The client's tries until the server answers; only the last
		# one's output is judged.
		sk_exec $SK_G "ok=1; for i in \$(seq 30); do if $* $gc >l.out 2>&1; then ok=0; break; fi
			grep -Eq \"$again\" l.out || break; sleep 1; done; cat l.out; [ \$ok = 0 ]" \
			>"$job.out" 2>&1 || rc=1
		wait $spid || rc=1
	fi
	local out=$SK_TMP/live.out
	[ $cli_on = host ] || out=$job.out
	if [ "$1" = rping ] && [ "$(grep -c '^ping data: ' "$out")" != 20 ]; then rc=1; fi
	if [ $rc != 0 ] || grep -Eiq 'error|fail|couldn|mismatch' "$SK_TMP/live.out" "$job.out"; then
		echo "--- host"; cat "$SK_TMP/live.out"; echo "--- guest"; cat "$job.out"
		SK_FAILED+=("$name"); echo "FAIL: $name"
		return 0
	fi
	if [ "$1" = rping ]; then pass "$name: 20 pings of 1000 B, verified (-V)"
	else pass "$name: $(grep -h 'iters in' "$SK_TMP/live.out" "$job.out" | head -1)"; fi
}
live "live: host uroce client -> guest rxe server, RC --chk" guest ibv_rc_pingpong -c -n 100 -s 4096
live "live: guest rxe client -> host uroce server, RC --chk" host ibv_rc_pingpong -c -n 100 -s 4096
live "live: host uroce client -> guest rxe server, UD --chk" guest ibv_ud_pingpong -c -n 100 -s 512
live "live: guest rxe client -> host uroce server, UD --chk" host ibv_ud_pingpong -c -n 100 -s 512
live "live: host uroce rping -> guest rxe rping server, CM on the wire" guest rping -V -C 20 -S 1000
live "live: guest rxe rping -> host uroce rping server, CM on the wire" host rping -V -C 20 -S 1000
sk_done

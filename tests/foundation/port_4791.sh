#!/bin/bash
# RoCEv2's UDP port 4791 on a device's address held by another owner (a
# program's socket; the kernel's, as rdma_rxe's *:4791): uroce cannot
# share it, so `uroce link add` refuses, and a device made before the
# owner came fails its first QP, each with one line that names the
# address, the port and the holder (device/port_owner.c;
# docs/transport.md, "Port 4791").  No program waits on a device that
# carries nothing.  When the holder is gone the device works again, data
# checked.  (port_taken.sh is about a QP's UDP source port.)
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
need_root
isolate_netns "$@"
use_private_registry
add_dev p0 lo
gid=$(gid_of "" p0 127.0.0.1)
[ -n "$gid" ] || fail "no IPv4 GID on p0"
tmp=$(mktemp -d /tmp/uroce-port4791.XXXXXX)
on_exit "rm -rf '$tmp'"

# hold ADDR: a Python process binds ADDR:4791 (no SO_REUSEPORT) until
# killed; sets HOLDER to its pid.  The file is emptied here, not only by
# the background job's redirection, which a loaded machine ran after the
# wait below had read the last holder's "ready" (link add then ran before
# the bind).
hold() {
	: >"$tmp/holder"
	$PY - "$1" >"$tmp/holder" 2>&1 <<'EOF' &
import socket, sys, time
a = sys.argv[1]
s = socket.socket(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_DGRAM)
s.bind((a, 4791))
print("ready", flush=True)
time.sleep(600)
EOF
	HOLDER=$!
	stop_at_exit $HOLDER
	wait_until 30 grep -q '^ready' "$tmp/holder" || { cat "$tmp/holder"; fail "the holder of $1:4791 did not start"; }
}
unhold() { kill $HOLDER; wait $HOLDER 2>/dev/null || true; }

# one_line FILE TEXT: FILE is one line and holds TEXT.
one_line() {
	[ "$(grep -c . "$1")" = 1 ] && grep -qF -- "$2" "$1" ||
		{ echo "--- $1:"; cat "$1"; fail "not the one line \"$2\""; }
}

# refused NAME TEXT: `uroce link add NAME netdev lo` fails with TEXT.
refused() {
	local rc=0
	"$UROCE" link add "$1" netdev lo 2>"$tmp/add.err" || rc=$?
	if [ $rc = 0 ]; then
		"$UROCE" link del "$1"
		fail "link add $1 succeeded while 4791 was held"
	fi
	one_line "$tmp/add.err" "uroce: $1: $2"
	"$UROCE" link show | grep -qw "$1" && fail "link add $1 failed but left $1 behind"
	pass "link add $1: $(cat "$tmp/add.err")"
}

# first_qp_fails TEXT: stock programs on p0 (made before the holder came)
# stop at their first QP with TEXT, at once, instead of waiting for a peer.
first_qp_fails() {
	local prog rc
	for prog in ibv_rc_pingpong ibv_ud_pingpong; do
		rc=0
		timeout 60 "$UROCE" run $prog -d p0 -g $gid -p $((20000 + RANDOM % 5000)) -c \
			>"$tmp/pp.out" 2>"$tmp/pp.err" || rc=$?
		[ $rc != 124 ] || fail "$prog waited on a device that cannot carry traffic"
		[ $rc != 0 ] || fail "$prog succeeded on a device that cannot carry traffic"
		grep -q "Couldn't create QP" "$tmp/pp.out" "$tmp/pp.err" ||
			{ cat "$tmp/pp.out" "$tmp/pp.err"; fail "$prog did not fail at its QP"; }
		grep -v "Couldn't create QP" "$tmp/pp.err" >"$tmp/pp.uroce" || true
		one_line "$tmp/pp.uroce" "uroce: p0: $1"
	done
	pass "ibv_rc_pingpong, ibv_ud_pingpong on p0: $(cat "$tmp/pp.uroce")"
}

# A program on *:4791.
hold 0.0.0.0
want="127.0.0.1 port 4791 is held by python3 (pid $HOLDER, uid 0) on all addresses"
refused p1 "$want"
first_qp_fails "$want"
unhold

# A program on the address itself, and on lo's IPv6 address.
hold 127.0.0.1
refused p1 "127.0.0.1 port 4791 is held by python3 (pid $HOLDER, uid 0);"
unhold
if ip -6 -o addr show dev lo | grep -q ' ::1/'; then
	hold ::1
	refused p1 "::1 port 4791 is held by python3 (pid $HOLDER, uid 0);"
	unhold
fi

# A socket of the kernel's own, as rdma_rxe's: a vxlan device on port 4791
# opens one on *:4791 that no process has open.
if ip link add urvx0 type vxlan id 7 dstport 4791 local 127.0.0.1 2>/dev/null; then
	on_exit "ip link del urvx0 2>/dev/null || true"
	ip link set urvx0 up
	want="127.0.0.1 port 4791 is held by the kernel (a socket no process has open) on all addresses"
	refused p1 "$want"
	first_qp_fails "$want"
	ip link del urvx0
else
	echo "note: no vxlan here: the kernel's own socket is not tried"
fi

# The port free again: the device works, data checked, and link add takes it.
pair lo "" p0 $gid "" p0 $gid 127.0.0.1 -- ibv_rc_pingpong -c -n 100 -s 4096
pair lo "" p0 $gid "" p0 $gid 127.0.0.1 -- ibv_ud_pingpong -c -n 100 -s 1024
add_dev p1 lo
pass "with 4791 free again, p0 carries data and link add p1 succeeds"

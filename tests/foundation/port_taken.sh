#!/bin/bash
# A QP's UDP source port (0xC000 plus the low 14 bits of its QPN) held by
# another program on the device's address: the QP sends from a port of its
# own instead and the connection works (transport/udp/udp_sport.c,
# udp_claim_port; docs/stats.md, sport_taken).  Before, every send of such
# a QP failed with EADDRINUSE: RC ran out of retries, UD lost every packet.
#
# Two namespaces joined by a veth, a device in each.  Another program in
# the first: a Python process that holds every port of 0xC000-0xFFFF it
# can bind on that side's address, without SO_REUSEPORT.  Then an RC and a
# UD pingpong with data checks across the veth, the counter of that side
# and the peer's move of its RC connection to the new port,
# and a capture of that side's interface (tshark as the judge) showing
# that none of its packets left from a held port.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
. "$(dirname "$0")/../lib/wait.sh"
need_root
command -v tshark >/dev/null || skip "needs tshark"
use_private_registry
veth_pair_with_devices 27

tmp=$(mktemp -d /tmp/uroce-port-taken.XXXXXX)
on_exit "rm -rf '$tmp'"

# The holder: one socket per port (16384 descriptors), until killed.
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
ip netns exec $VETH_A /usr/bin/python3 - "$ADDR_A" >"$tmp/holder" 2>&1 <<'EOF' &
import socket, sys, time
held = []
for port in range(0xC000, 0x10000):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind((sys.argv[1], port))
        held.append(s)
    except OSError:
        s.close()
print("ready", len(held), flush=True)
time.sleep(600)
EOF
holder=$!
stop_at_exit $holder
wait_until 60 grep -q '^ready' "$tmp/holder" || { cat "$tmp/holder"; fail "the holder did not start"; }
held=$(awk '/^ready/ { print $2 }' "$tmp/holder")
[ "$held" -ge 16000 ] || fail "the holder holds only $held ports"

# The wire, as tshark sees it on the held side.
ip netns exec $VETH_A tshark -i pa${VETH_A#uroceP27a} -f "udp dst port 4791 and src host $ADDR_A" \
	-w "$tmp/cap.pcapng" >"$tmp/tshark.log" 2>&1 &
cap=$!
stop_at_exit $cap
capture_live "$tmp/tshark.log" || { cat "$tmp/tshark.log"; fail "tshark did not start"; }

PAIR_TIMEOUT=60 pair rc $VETH_A $DEV_A $GID_A $VETH_B $DEV_B $GID_B $ADDR_A -- ibv_rc_pingpong -n 200 -c
PAIR_TIMEOUT=60 pair ud $VETH_A $DEV_A $GID_A $VETH_B $DEV_B $GID_B $ADDR_A -- ibv_ud_pingpong -n 200 -c
kill -INT $cap
wait $cap 2>/dev/null

taken=$(ip netns exec $VETH_A timeout 10 "$UROCE" stat $DEV_A | awk '$1 == "sport_taken" { print $2 }')
[ "${taken:-0}" -ge 2 ] || {
	ip netns exec $VETH_A timeout 10 "$UROCE" stat $DEV_A
	fail "sport_taken ${taken:-0}, want 2 (the RC and the UD QP of the held side)"
}
ports=$(tshark -r "$tmp/cap.pcapng" -T fields -e udp.srcport 2>/dev/null | sort -un)
[ -n "$ports" ] || fail "nothing captured"
for p in $ports; do
	[ "$p" -lt $((0xC000)) ] || fail "a packet left $ADDR_A from port $p, held by the holder"
done
kill -0 $holder 2>/dev/null || fail "the holder died"
# The other side's RC QP took packets from that unpredicted port: it moved
# its connection there once (docs/engine.md).
moved=$(ip netns exec $VETH_B timeout 10 "$UROCE" stat -a $DEV_B | awk '$1 == "conn_resteers" { print $2 }')
[ "${moved:-0}" -ge 1 ] || fail "the peer never moved its RC QP's connection to the new port (conn_resteers ${moved:-0})"
pass "$held ports held: the QPs sent from $(echo $ports | tr '\n' ' ')(sport_taken $taken, peer's conn_resteers $moved)"

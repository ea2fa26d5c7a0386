#!/bin/bash
# `uroce stat`: the device's counters summed over every process that used
# it -- those that exited, those running, and those that crashed.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
need_root
isolate_netns "$@"
use_private_registry
add_dev lo0 lo

STATDIR=$(echo "$UROCE_RUNDIR"/ns-*/stats/lo0)
[ -d "$STATDIR" ] || fail "uroce link add made no stats directory"

# stat_of NAME: counter NAME of lo0 (0 when not shown).
stat_of() {
	timeout 10 "$UROCE" stat lo0 | awk -v n="$1" '$1 == n { v = $2 } END { print v + 0 }'
}
records() { find "$STATDIR" -name '[0-9]*' | wc -l; }

# Errors: an unknown device fails with a message.
if out=$(timeout 10 "$UROCE" stat nosuchdev 2>&1); then
	fail "uroce stat nosuchdev succeeded"
fi
grep -q 'no device "nosuchdev"' <<<"$out" || fail "unclear error: $out"
[ "$(timeout 10 "$UROCE" stat lo0 | grep -c .)" = 1 ] || fail "a fresh device has counters"
pass "unknown device refused; a fresh device counts nothing"

GID=$(gid_of "" lo0 127.0.0.1)
[ -n "$GID" ] || fail "no GID for 127.0.0.1 on lo0"

# 1. Two processes that have exited: everything one sent, the other
# received (a packet passed on to its owner by another process counts as
# received by both: forwarded_in says how many).
PAIR_TIMEOUT=60 pair rc "" lo0 $GID "" lo0 $GID 127.0.0.1 -- ibv_rc_pingpong -n 200
tx=$(stat_of tx_packets) rx=$(stat_of rx_packets) fin=$(stat_of forwarded_in)
txb=$(stat_of tx_bytes) rxb=$(stat_of rx_bytes)
timeout 10 "$UROCE" stat lo0
[ "$tx" -gt 0 ] && [ "$rx" -gt 0 ] || fail "tx_packets $tx, rx_packets $rx after a pingpong"
[ "$tx" -eq $((rx - fin)) ] || fail "tx_packets $tx != rx_packets $rx - forwarded_in $fin"
[ "$fin" -gt 0 ] || [ "$txb" -eq "$rxb" ] || fail "tx_bytes $txb != rx_bytes $rxb"
[ "$(records)" = 0 ] || fail "records left after the processes exited: $(ls "$STATDIR")"
pass "exited processes: tx_packets $tx = rx_packets $rx - forwarded_in $fin"

# 2. A running process: malformed datagrams to 127.0.0.1:4791 reach its
# engine (bound there with SO_REUSEPORT) and are counted by reason.
PORT=$((PAIR_PORT + 1))
srvlog=$(mktemp /tmp/uroce-stat.XXXXXX)
on_exit "rm -f '$srvlog'"
timeout 60 "$UROCE" run ibv_rc_pingpong -d lo0 -g $GID -p $PORT >"$srvlog" 2>&1 &
srv=$!
stop_at_exit $srv
one_record() { [ "$(records)" = 1 ]; }
wait_until 10 one_record || { cat "$srvlog"; fail "the server published no record"; }
spid=$(ls "$STATDIR" | grep '^[0-9]')
[ "$(cat /proc/$spid/comm)" = ibv_rc_pingpong ] || fail "record $spid is not the server's"
timeout 10 "$UROCE" stat -p lo0 | grep -Eq "^  process $spid ibv_rc_pingpong\$" ||
	fail "uroce stat -p does not list the server (pid $spid)"

names="rx_packets drop_truncated drop_bad_opcode drop_bad_icrc"
declare -A before want
for n in $names; do before[$n]=$(stat_of $n); done
N_TRUNC=3 N_OPC=2 N_ICRC=4
want[drop_truncated]=$N_TRUNC want[drop_bad_opcode]=$N_OPC want[drop_bad_icrc]=$N_ICRC
want[rx_packets]=$((N_TRUNC + N_OPC + N_ICRC))
timeout 10 $PY - $N_TRUNC $N_OPC $N_ICRC <<'EOF'
import socket, struct, sys
ntrunc, nopc, nicrc = map(int, sys.argv[1:])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
dst = ("127.0.0.1", 4791)
for _ in range(ntrunc):
    s.sendto(b"\x04\x00\xff\xff\x00", dst)                  # 5 bytes: no whole BTH
for _ in range(nopc):
    s.sendto(bytes([0x18]) + bytes(31), dst)                # reserved RC opcode
for i in range(nicrc):
    # RC SEND_ONLY: BTH (opcode 4, pkey 0xffff, QP 0xfffffe, PSN i), 8 bytes
    # of payload, then an ICRC that is wrong.
    bth = struct.pack("!BBHII", 0x04, 0, 0xFFFF, 0xFFFFFE, i)
    s.sendto(bth + b"payload!" + b"\xde\xad\xbe\xef", dst)
EOF
all_counted() {
	local n
	for n in $names; do
		[ $(( $(stat_of $n) - ${before[$n]} )) -eq ${want[$n]} ] || return 1
	done
}
wait_until 5 all_counted || true   # the checks below say which one is off
timeout 10 "$UROCE" stat -p lo0
for n in $names; do
	got=$(( $(stat_of $n) - ${before[$n]} ))
	[ $got -eq ${want[$n]} ] || fail "$n went up by $got, not ${want[$n]}"
done
pass "malformed datagrams counted: $N_TRUNC drop_truncated, $N_OPC drop_bad_opcode, $N_ICRC drop_bad_icrc"

# 3. The server crashes: its counts stay in the sum, its record is folded
# into the device's retired record by the next reader.
sum_before=$(timeout 10 "$UROCE" stat -a lo0)
kill -9 $spid
wait $srv 2>/dev/null || true   # timeout reaps it
sum_after=$(timeout 10 "$UROCE" stat -a lo0)
[ "$sum_before" = "$sum_after" ] || {
	diff <(echo "$sum_before") <(echo "$sum_after") || true
	fail "the counters changed when the server was killed"
}
[ "$(records)" = 0 ] || fail "the crashed server's record was not folded: $(ls "$STATDIR")"
pass "a crashed process's counters are kept (folded into $STATDIR/retired)"

# 4. JSON, and link del takes the counters with it.
timeout 10 "$UROCE" stat -j lo0 | $PY -c '
import json, sys
d = json.load(sys.stdin)
assert d[0]["ifname"] == "lo0" and d[0]["counters"]["drop_bad_icrc"] > 0, d'
"$UROCE" link del lo0
[ ! -e "$STATDIR" ] || fail "uroce link del left $STATDIR"
"$UROCE" link add lo0 netdev lo
[ "$(timeout 10 "$UROCE" stat lo0 | grep -c .)" = 1 ] || fail "a re-added device has old counters"
pass "stat -j parses; link del removes the counters"

#!/bin/bash
# QP1 of a device shared by its processes (docs/cm.md, "QP1"): forged CM
# MADs from a plain UDP socket at 127.0.0.2:4791 to the device on lo
# (127.0.0.1), whose only user at first is a verbs program that runs no CM:
#  1. a REQ for a port nobody listens on is answered REJ reason 8 (invalid
#     service ID) to our comm ID and TID, from QP 1 with the GSI Q_Key;
#     a SIDR_REQ is answered SIDR_REP status 1 (unsupported) -- as Linux;
#  2. malformed MADs (other class, short, wrong Q_Key, RC opcode to QP 1)
#     get no answer and are counted by reason in `uroce stat`;
#  3. with rping -s listening in another process, REQs from four source
#     addresses (SO_REUSEPORT spreads them over both processes) all reach
#     the listener, which answers each with a REP to our comm ID;
#  4. that listener killed with SIGKILL: its port is taken back and the
#     next REQ is answered REJ 8;
#  5. an rping traced with UROCE_PCAP: every CM MAD on the wire is a UD
#     SEND from QP 1 (port 55410) to QP 1 with the GSI Q_Key, decodes and
#     rebuilds byte for byte, and tshark decodes it as CM without warnings.
# usage: qp1.sh CM_VECTORS
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
. "$(dirname "$0")/lib.sh"
need_root
VEC=$1
use_private_registry
NS=i11cmQ$(uniq_id)
make_ns $NS
add_dev lo0 lo $NS
STATDIR=$(echo "$UROCE_RUNDIR"/ns-*/stats/lo0)
GID=$(gid_of $NS lo0 127.0.0.1)
[ -n "$GID" ] || fail "no GID for 127.0.0.1 on lo0"

stat_of() {
	ip netns exec $NS timeout 10 "$UROCE" stat lo0 | awk -v n="$1" '$1 == n { v = $2 } END { print v + 0 }'
}
# wait_stat NAME MIN: until counter NAME reaches MIN (bounded).
wait_stat() {
	for _ in $(seq 300); do
		[ "$(stat_of "$1")" -ge "$2" ] && return 0
		sleep 0.05
	done
	fail "counter $1 stayed at $(stat_of "$1"), expected >= $2"
}

# A verbs program with an engine on lo0 and no CM: it waits for a TCP peer.
log=$(mktemp /tmp/i11cm-qp1.XXXXXX)
on_exit "rm -f '$log'"
ip netns exec $NS timeout 120 "$UROCE" run ibv_rc_pingpong -d lo0 -g $GID -p 18515 >"$log" 2>&1 &
vpid=$!
stop_at_exit $vpid   # SIGTERM to timeout, which passes it on (SIGKILL would orphan the program)
for _ in $(seq 200); do
	[ -n "$(ls "$STATDIR" 2>/dev/null | grep '^[0-9]')" ] && break
	sleep 0.05
done
[ -n "$(ls "$STATDIR" | grep '^[0-9]')" ] || { cat "$log"; fail "the verbs program has no engine"; }

# mad.py KIND SERVICE_PORT [SRC]: send one forged MAD from SRC:4791, print
# the decoded answer (or "none" after 3 s).
mad() {
	ip netns exec $NS $PY - "$VEC" "$@" <<'EOF'
import select, socket, subprocess, sys
vec, kind, svc = sys.argv[1:4]
src = sys.argv[4] if len(sys.argv) > 4 else "127.0.0.2"
hexpkt, cid = subprocess.check_output([vec, "packet", kind, src, "127.0.0.1", "4791", svc],
                                      text=True).split()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((src, 4791))
s.sendto(bytes.fromhex(hexpkt), ("127.0.0.1", 4791))
# the answer to this MAD: to our comm ID / request ID (a listener may
# still resend its answers to an earlier one)
while select.select([s], [], [], 3)[0]:
    data, frm = s.recvfrom(4096)
    out = subprocess.run([vec, "decode", data.hex()], text=True, capture_output=True).stdout.strip()
    if ("remote_comm_id=%s " % cid) in out or ("request_id=%s " % cid) in out:
        print("%s from=%s:%d cid=%s" % (out, frm[0], frm[1], cid))
        sys.exit(0)
print("none cid=%s" % cid)
EOF
}
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# 1. nobody listens
SVC=$((40000 + RANDOM % 1000))
a=$(mad req $SVC)
echo "REQ to port $SVC: $a"
[ "$(field "$a" attr)" = REJ ] || fail "no REJ for a REQ nobody listens to: $a"
[ "$(field "$a" reason)" = 8 ] || fail "REJ reason is not 8 (invalid service ID): $a"
[ "$(field "$a" msg_rejected)" = 0 ] || fail "REJ does not reject a REQ: $a"
[ "$(field "$a" remote_comm_id)" = "$(field "$a" cid)" ] || fail "REJ not to our comm ID: $a"
[ "$(field "$a" sqpn)" = 1 ] && [ "$(field "$a" dqpn)" = 1 ] && [ "$(field "$a" qkey)" = 0x80010000 ] ||
	fail "REJ not QP1 to QP1 with the GSI Q_Key: $a"
pass "REQ nobody listens to: REJ 8 to our comm ID from QP 1"
a=$(mad sidr_req $SVC)
echo "SIDR_REQ to port $SVC: $a"
[ "$(field "$a" attr)" = SIDR_REP ] && [ "$(field "$a" sidr_status)" = 1 ] &&
	[ "$(field "$a" request_id)" = "$(field "$a" cid)" ] || fail "no SIDR_REP unsupported: $a"
pass "SIDR_REQ nobody listens to: SIDR_REP status 1"
wait_stat cm_rej_no_listener_sent 2

# 2. malformed: no answer, counted
for k in bad_class:drop_cm_not_cm_class short:drop_cm_bad_length bad_qkey:drop_bad_qkey \
	 rc_send:drop_cm_not_ud_send; do
	before=$(stat_of ${k#*:})
	a=$(mad ${k%%:*} $SVC)
	[ "${a%% *}" = none ] || fail "${k%%:*}: answered: $a"
	wait_stat ${k#*:} $((before + 1))
	pass "${k%%:*}: no answer, counted as ${k#*:}"
done

# 3. a listener in another process
PORT=$((41000 + RANDOM % 1000))
srvlog=$(mktemp /tmp/i11cm-qp1s.XXXXXX)
on_exit "rm -f '$srvlog'"
UROCE_CM_DEBUG=1 ip netns exec $NS timeout 120 "$UROCE" run rping -s -a 127.0.0.1 -p $PORT -C 1 \
	>"$srvlog" 2>&1 &
spid=$!
stop_at_exit $spid
for _ in $(seq 600); do
	grep -q 'uroce cm: listening' "$srvlog" && break
	kill -0 $spid 2>/dev/null || { cat "$srvlog"; fail "rping -s exited"; }
	sleep 0.05
done
grep -q 'uroce cm: listening' "$srvlog" || { cat "$srvlog"; fail "rping -s never listened"; }
fwd0=$(stat_of forwarded_out)
reps=0 rejs=0
for ip in 127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5; do
	a=$(mad req $PORT $ip)
	echo "REQ from $ip to the listener: $a"
	case $(field "$a" attr) in
	REP) reps=$((reps + 1)) ;;
	REJ) rejs=$((rejs + 1)) ;;
	esac
done
# rping serves one connection at a time: the first REQ gets its REP, the
# others wait in its backlog (no answer), none is refused.
echo "REPs: $reps of 4, REJs: $rejs; forwarded_out: $fwd0 -> $(stat_of forwarded_out)"
[ $reps -ge 1 ] || { cat "$srvlog"; fail "the listener in another process never answered"; }
[ $rejs -eq 0 ] || fail "REQs for a listening port were refused"
pass "REQs reach the listening process: $reps REPs, none refused"

# 4. the listener dies: its port is free again
# (ip netns exec execs timeout, whose child is rping)
kids=$(ps -o pid= --ppid $spid || true)
kill -9 $kids $spid 2>/dev/null || true
wait $spid 2>/dev/null || true
for k in $kids; do
	while kill -0 $k 2>/dev/null; do sleep 0.05; done
done
a=$(mad req $PORT)
echo "REQ after the listener died: $a"
[ "$(field "$a" attr)" = REJ ] && [ "$(field "$a" reason)" = 8 ] ||
	fail "a dead listener's port is not answered REJ 8: $a"
pass "a killed listener's port: REJ 8"

# 5. the CM packets of a real connection, traced
trdir=$(mktemp -d /tmp/i11cm-trace.XXXXXX)
on_exit "rm -rf '$trdir'"
PORT=$((42000 + RANDOM % 1000))
srvlog=$trdir/srv.log
UROCE_PCAP=$trdir/srv.pcap UROCE_CM_DEBUG=1 cm_run $NS \
	rping -s -a 127.0.0.1 -p $PORT -C 3 -V >"$srvlog" 2>&1 &
spid=$!
for _ in $(seq 600); do
	grep -q 'uroce cm: listening' "$srvlog" && break
	kill -0 $spid 2>/dev/null || break
	sleep 0.05
done
UROCE_PCAP=$trdir/cli.pcap cm_run $NS rping -c -a 127.0.0.1 -p $PORT -C 3 -V >"$trdir/cli.log" 2>&1 ||
	{ cat "$srvlog" "$trdir/cli.log"; fail "rping -c failed"; }
wait $spid || { cat "$srvlog"; fail "rping -s failed"; }
seen=
for side in srv cli; do
	out=$("$VEC" trace "$trdir/$side.pcap") || { echo "$out"; fail "$side trace: CM MADs do not rebuild"; }
	echo "$side: ${out##*$'\n'}"
	seen+=" ${out##*$'\n'}"
	if command -v tshark >/dev/null; then
		cm=$(tshark -r "$trdir/$side.pcap" -Y "infiniband.mad.mgmtclass == 0x07" 2>/dev/null | wc -l)
		bad=$(tshark -r "$trdir/$side.pcap" -Y "infiniband.mad.mgmtclass == 0x07 && (_ws.malformed || _ws.expert)" 2>/dev/null | wc -l)
		# REQ, REP, RTU and one of DREQ/DREP at least: rping -c exits
		# right after its DREQ, often before the DREP comes
		[ "$cm" -ge 4 ] && [ "$bad" -eq 0 ] || fail "$side trace: tshark: $cm CM packets, $bad with warnings"
	fi
done
# Every message of a connection's life is in the two traces together (a
# side that exits right after its DREQ may be gone before the DREP comes).
for a in REQ REP RTU DREQ DREP; do
	grep -q " $a=" <<<"$seen" || fail "neither trace has a $a"
done
pass "a traced rping: every CM MAD rebuilds byte for byte; tshark decodes them without warnings"

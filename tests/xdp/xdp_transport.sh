#!/bin/bash
# The xdp transport through its ops (tests/xdp/xdp_probe) across a veth
# between two namespaces: RoCEv2 frames xdp -> xdp (IPv4, IPv6; one UMEM
# frame and multi-buffer) with every byte and ICRC checked, xdp <-> kernel
# UDP both ways (wire compatibility),
# ping and TCP over the same veth while the program and sockets are there,
# SIGKILL of a user mid-transfer, and no program left after `uroce link del`.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
PROBE=${XDP_PROBE:?}
use_private_registry
for t in ping iperf3 ss tshark bpftool; do
	command -v $t >/dev/null || skip "needs $t (scripts/deps.sh)"
done
id=$(uniq_id)
A=xdpA$id B=xdpB$id IA=vxa$id IB=vxb$id
make_ns $A
make_ns $B
make_veth $A $IA 10.231.7.1/24 $B $IB 10.231.7.2/24
# A jumbo MTU: a 4 KiB packet is longer than one UMEM frame and travels as
# a multi-buffer frame (two descriptors each way).
ip -n $A link set $IA mtu 9000
ip -n $B link set $IB mtu 9000
ip -n $A addr add fd00:231::1/64 dev $IA nodad
ip -n $B addr add fd00:231::2/64 dev $IB nodad
# Devices on both ends: their `link del` at exit removes what a crashed
# user leaves (program, users' file) even when the test fails.
add_dev xdpa$id $IA $A
add_dev xdpb$id $IB $B
QPN=0x4d2
T=$(mktemp -d)
on_exit "rm -rf '$T'"

# bg NAME NS CMD...: run in the background, output in $T/NAME, stopped at exit.
bg() {
	local name=$1 ns=$2
	shift 2
	ip netns exec "$ns" timeout 60 "$@" >"$T/$name" 2>&1 &
	eval "pid_$name=$!"
	stop_at_exit $!
}

# Transfers are datagrams with no flow control: each fits the receiver's
# RX ring and fill ring (8192 frames; 1024 in the RLIMIT_MEMLOCK case) so
# that none is lost however late the receiver is scheduled.  A 4 KiB
# packet takes two frames.
N=1500 NBIG=750

# 1. xdp -> xdp, IPv4 and IPv6: every byte and ICRC (with the real IPv4 ID).
#    The receiver has no udp transport beneath: what it gets came through
#    its AF_XDP socket, 4 KiB packets as multi-buffer frames (Linux 6.6).
for fam in 4 6; do
	if [ $fam = 4 ]; then src=10.231.7.1 dst=10.231.7.2; else src=fd00:231::1 dst=fd00:231::2; fi
	for size in 1024 4096; do
		n=$N name=recv${fam}_$size
		[ $size -le 1024 ] || n=$NBIG
		bg $name $B "$PROBE" recv $IB $QPN $n 30
		wait_for "$T/$name" ready 10 || fail "receiver not ready: $(cat "$T/$name")"
		ip -n $B link show $IB | grep -q 'prog/xdp id' || fail "no native XDP program on $IB"
		ip netns exec $A timeout 30 "$PROBE" send $IA $src $dst $QPN $n $size >"$T/send$fam" 2>&1 ||
			fail "IPv$fam send: $(cat "$T/send$fam")"
		wait "$(eval echo \$pid_$name)" || fail "IPv$fam receive: $(cat "$T/$name")"
		grep -q "received $n bad 0" "$T/$name" || fail "IPv$fam $size B: $(cat "$T/$name")"
		pass "IPv$fam xdp -> xdp: $n x $size B, every byte and ICRC right ($(tail -1 "$T/$name"))"
	done
done
# The last user left: no program on either side.
prog_on $A $IA && fail "a program stayed on $IA after its last user left"
prog_on $B $IB && fail "a program stayed on $IB after its last user left"
pass "the last user to leave takes the program away"

# A sender that outlives its neighbour cache (1 s) looks the path up again.
bg recvc $B "$PROBE" recv $IB $QPN $((2 * N)) 30
wait_for "$T/recvc" ready 10 || fail "receiver not ready"
ip netns exec $A timeout 30 "$PROBE" send $IA 10.231.7.1 10.231.7.2 $QPN $N 256 2 >"$T/sendc" 2>&1 ||
	fail "send across a neighbour cache refresh: $(cat "$T/sendc")"
wait $pid_recvc || fail "receive across a refresh: $(cat "$T/recvc")"
pass "a path looked up again after the cache's second: $(tail -1 "$T/recvc")"

# Generic (SKB) mode where the driver has no native XDP: lo.
bg holdlo $B "$PROBE" hold lo
wait_for "$T/holdlo" ready 10 || fail "no program on lo: $(cat "$T/holdlo")"
ip -n $B link show lo | grep -q 'prog/xdp\|xdpgeneric' || fail "lo: $(ip -n $B link show lo)"
ip -n $B link show lo | grep -q xdpgeneric || fail "lo is not in generic mode: $(ip -n $B link show lo)"
kill $pid_holdlo
wait $pid_holdlo || fail "lo holder: $(cat "$T/holdlo")"
prog_on $B lo && fail "program left on lo"
pass "lo: generic (SKB) mode, removed when its user leaves"

# Without the capabilities the error names them.
if command -v setpriv >/dev/null; then
	ip netns exec $B setpriv --bounding-set -all --inh-caps -all "$PROBE" hold $IB >"$T/nocap" 2>&1 &&
		fail "opened without capabilities"
	grep -q 'CAP_BPF and CAP_NET_ADMIN\|CAP_NET_RAW\|CAP_SYS_ADMIN' "$T/nocap" || fail "no capability named: $(cat "$T/nocap")"
	prog_on $B $IB && fail "a program stayed after a refused open"
	pass "without capabilities: $(grep -o 'needs.*' "$T/nocap" | head -1)"
fi
# Without CAP_IPC_LOCK the UMEM counts against RLIMIT_MEMLOCK (8 MiB by
# default): the socket takes fewer frames, not an error.
memlock=$(ulimit -l)
if command -v setpriv >/dev/null && { [ "$memlock" = unlimited ] || [ "$memlock" -ge 8192 ]; }; then
	bg memlock $B sh -c "ulimit -l 8192 && UROCE_DEBUG=1 exec setpriv --bounding-set -ipc_lock \
		--inh-caps -ipc_lock '$PROBE' recv $IB $QPN 600 30"
	wait_for "$T/memlock" ready 10 || fail "no socket under an 8 MiB RLIMIT_MEMLOCK: $(cat "$T/memlock")"
	ip netns exec $A timeout 30 "$PROBE" send $IA 10.231.7.1 10.231.7.2 $QPN 600 1024 >"$T/sendml" 2>&1 ||
		fail "send to the 8 MiB receiver: $(cat "$T/sendml")"
	wait $pid_memlock || fail "8 MiB receiver: $(cat "$T/memlock")"
	grep -q "received 600 bad 0" "$T/memlock" || fail "8 MiB receiver: $(cat "$T/memlock")"
	grep -q "RLIMIT_MEMLOCK.*trying" "$T/memlock" || fail "no fallback said: $(cat "$T/memlock")"
	pass "RLIMIT_MEMLOCK 8 MiB without CAP_IPC_LOCK: $(grep -o 'trying.*' "$T/memlock" | tail -1); $(tail -1 "$T/memlock")"
fi
# A receiver that does not run for a while (stopped here; on a loaded
# machine, not scheduled) loses nothing that fits its receive frames:
# 6000 packets, more than the 2048 a socket had before (docs/xdp.md,
# "Receive frames").
bg stopped $B "$PROBE" recv $IB $QPN 6000 60
wait_for "$T/stopped" ready 10 || fail "receiver not ready: $(cat "$T/stopped")"
rpid=$(awk '/^ready/ { print $2 }' "$T/stopped")
kill -STOP "$rpid"
on_exit "kill -CONT $rpid 2>/dev/null"
ip netns exec $A timeout 30 "$PROBE" send $IA 10.231.7.1 10.231.7.2 $QPN 6000 1024 >"$T/sendst" 2>&1 ||
	fail "send to a stopped receiver: $(cat "$T/sendst")"
kill -CONT "$rpid"
wait $pid_stopped || fail "stopped receiver: $(cat "$T/stopped")"
grep -q "received 6000 bad 0" "$T/stopped" || fail "stopped receiver: $(cat "$T/stopped")"
pass "6000 packets sent while their receiver was stopped: $(tail -1 "$T/stopped")"

# 2. Wire compatibility with the kernel's UDP path, both ways.
# With no program on $IB the frames reach its capture point: tshark decodes
# them with no warning, and tests/wire/icrc_check.py (zlib, not uroce's
# code) checks every ICRC over the real IPv4 header.
# Half of them one UMEM frame, half multi-buffer (4093 B: padded too,
# two TX descriptors).
ALL=$((N + NBIG))
bg urecv $B "$PROBE" udprecv 10.231.7.2 $ALL 30
wait_for "$T/urecv" ready 10 || fail "UDP receiver not ready"
bg cap $B tshark -i $IB -F pcap -w "$T/xdp.pcap" -c $ALL -f "udp dst port 4791"
capture_live "$T/cap" 10 || fail "tshark did not start: $(cat "$T/cap")"
for sz in "$N 700" "$NBIG 4093"; do
	ip netns exec $A timeout 30 "$PROBE" send $IA 10.231.7.1 10.231.7.2 $QPN $sz >/dev/null ||
		fail "xdp send to a UDP socket ($sz)"
done
wait $pid_urecv || fail "kernel UDP receive of xdp frames: $(cat "$T/urecv")"
pass "xdp -> kernel UDP socket: $(cat "$T/urecv" | tail -1), ICRC checked"
# The capture may drop frames on a loaded machine: it stops with -c or here.
for ((i = 0; i < 100; i++)); do kill -0 $pid_cap 2>/dev/null || break; sleep 0.05; done
kill $pid_cap 2>/dev/null || true
wait $pid_cap || true
ts() { tshark --disable-heuristic rpcrdma_infiniband -r "$T/xdp.pcap" "$@" 2>/dev/null; }
got=$(ts | wc -l)
[ "$got" -gt 0 ] || fail "nothing captured: $(cat "$T/cap")"
[ "$(ts -Y infiniband | wc -l)" -eq "$got" ] || fail "tshark decodes $(ts -Y infiniband | wc -l) of $got as RoCEv2"
[ "$(ts -Y 'frame.len > 4096' | wc -l)" -gt 0 ] || fail "no multi-buffer frame among the $got captured"
ts -Y '_ws.malformed || _ws.expert.severity >= 6291456' >"$T/warn" || fail "tshark could not filter the capture"
[ ! -s "$T/warn" ] || fail "tshark warns: $(head -3 "$T/warn")"
/usr/bin/python3 "$(dirname "$0")/../wire/icrc_check.py" "$T/xdp.pcap" >"$T/icrc" 2>&1 ||
	fail "ICRC of captured xdp frames: $(cat "$T/icrc")"
pass "captured xdp frames ($(ts -Y 'frame.len > 4096' | wc -l) multi-buffer): tshark decodes all $got with no warning; $(cat "$T/icrc")"
bg xrecv $A "$PROBE" recv $IA $QPN $ALL 30
wait_for "$T/xrecv" ready 10 || fail "xdp receiver not ready"
for sz in "$N 700" "$NBIG 4093"; do
	ip netns exec $B timeout 30 "$PROBE" udpsend 10.231.7.2 10.231.7.1 $QPN $sz >/dev/null ||
		fail "UDP send ($sz)"
done
wait $pid_xrecv || fail "xdp receive of kernel UDP datagrams: $(cat "$T/xrecv")"
pass "kernel UDP socket -> xdp: $(tail -1 "$T/xrecv")"

# 3. Ping and TCP over the same veth while both ends hold program and socket.
bg holdA $A "$PROBE" hold $IA
bg holdB $B "$PROBE" hold $IB
wait_for "$T/holdA" ready 10 && wait_for "$T/holdB" ready 10 || fail "holders not ready"
prog_on $A $IA && prog_on $B $IB || fail "programs not attached"
ip netns exec $A ping -c 3 -i 0.2 -W 2 10.231.7.2 >"$T/ping" || fail "ping: $(cat "$T/ping")"
ip netns exec $A ping -6 -c 3 -i 0.2 -W 2 fd00:231::2 >"$T/ping6" || fail "ping -6: $(cat "$T/ping6")"
port=$((20000 + 0x$id % 20000))
bg iperf $B iperf3 -s -1 -p $port
for ((i = 0; i < 200; i++)); do
	ip netns exec $B ss -ltnH "sport = :$port" | grep -q LISTEN && break
	sleep 0.05
done
ip netns exec $A timeout 30 iperf3 -c 10.231.7.2 -p $port -n 50M >"$T/tcp" 2>&1 ||
	fail "TCP transfer: $(cat "$T/tcp")"
pass "ping (IPv4, IPv6) and a 50 MB TCP transfer pass through while uroce's XDP program runs"
# A queue whose socket a live user holds is refused at once (the claim),
# not after the wait for a departed owner's socket (QUEUE_FREE_WAIT_MS, 5 s).
ip netns exec $B timeout 4 "$PROBE" reopen $IB >"$T/busy" 2>&1 &&
	fail "a second socket on a held queue: $(cat "$T/busy")"
grep -q "another uroce process's AF_XDP socket has it" "$T/busy" ||
	fail "a held queue: $(cat "$T/busy")"
kill $pid_holdA $pid_holdB
wait $pid_holdA $pid_holdB || fail "holders did not close cleanly: $(cat "$T/holdA" "$T/holdB")"
# The kernel frees a closed socket's queue some milliseconds late; a user
# that comes at once waits for it (it used to get EBUSY and, in a verbs
# process, the slow udp path).
for i in 1 2 3; do
	ip netns exec $B timeout 20 "$PROBE" reopen $IB >"$T/reopen" 2>&1 ||
		fail "open right after a close: $(cat "$T/reopen")"
done
pass "a queue held by a live user is refused at once; one closed a moment ago is waited for ($(cat "$T/reopen"))"

# 4. SIGKILL mid-transfer: the interface stays usable, a new user attaches
#    at once, and `uroce link del` leaves no program.
bg victim $B "$PROBE" recv $IB $QPN 100000000 50
wait_for "$T/victim" ready 10 || fail "victim not ready"
bg flood $A "$PROBE" send $IA 10.231.7.1 10.231.7.2 $QPN 100000000 256
# Wait for frames to reach the victim's socket: the redirect counter of
# the program on $IB moves.
for ((i = 0; i < 200; i++)); do
	n=$(redirected $B $IB)
	[ "${n:-0}" -gt 0 ] && break
	sleep 0.05
done
[ "${n:-0}" -gt 0 ] || fail "no frames reached the victim"
kill -KILL "$(awk '/^ready/ {print $2}' "$T/victim")"   # the probe, not its timeout
wait $pid_victim 2>/dev/null || true
kill $pid_flood
wait $pid_flood 2>/dev/null || true
ip netns exec $A ping -c 2 -i 0.2 -W 2 10.231.7.2 >"$T/ping2" || fail "ping after SIGKILL: $(cat "$T/ping2")"
bg heir $B "$PROBE" recv $IB $QPN $N 30
wait_for "$T/heir" ready 5 || fail "a new process could not attach after SIGKILL: $(cat "$T/heir")"
ip netns exec $A timeout 30 "$PROBE" send $IA 10.231.7.1 10.231.7.2 $QPN $N 512 >/dev/null
wait $pid_heir || fail "after SIGKILL: $(cat "$T/heir")"
pass "SIGKILL mid-transfer: ping works, a new process attaches at once ($(tail -1 "$T/heir"))"
# A crashed last user: without a bpffs the program runs through a bpf_link
# its users hold, so the kernel takes it away with the last of them; behind
# libxdp's dispatcher (a bpffs) it stays, passing everything, until
# `uroce link del` (docs/xdp.md, "Lifecycle").
bg victim2 $B "$PROBE" hold $IB
wait_for "$T/victim2" ready 10 || fail "holder not ready"
kill -KILL "$(awk '/^ready/ {print $2}' "$T/victim2")"
wait $pid_victim2 2>/dev/null || true
if [ "$(ip netns exec $B stat -f -c %T /sys/fs/bpf 2>/dev/null)" != bpf_fs ]; then
	for ((i = 0; i < 100; i++)); do
		prog_on $B $IB || break
		sleep 0.05
	done
	prog_on $B $IB && fail "the program stayed after its last user was killed"
	pass "SIGKILL of the last user: the kernel took the program away"
else
	ip netns exec $A ping -c 2 -i 0.2 -W 2 10.231.7.2 >/dev/null || fail "ping with a crashed user's program"
fi
bg last $B "$PROBE" hold $IB
wait_for "$T/last" ready 10 || fail "holder not ready"
ip netns exec $B "$UROCE" link del xdpb$id || fail "link del"
kill $pid_last; wait $pid_last || true
prog_on $B $IB && fail "a program stayed after uroce link del: $(ip -n $B link show $IB)"
pass "after uroce link del no XDP program is on $IB"

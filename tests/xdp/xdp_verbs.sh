#!/bin/bash
# Unmodified verbs programs over transport xdp across a veth between two
# namespaces: xdp on both ends, and xdp on one end with udp on the other
# (wire compatibility), ibv_{rc,uc,srq,ud}_pingpong with --chk, perftest
# write/read/send/atomic bw and lat (both too), frames
# through the AF_XDP sockets (the program's redirect counter); ping and a
# TCP transfer over the same veth during a run; SIGKILL mid-transfer leaves
# the interface usable and a new pair runs at once; after `uroce link del`
# of the last devices no XDP program remains.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
. "$(dirname "$0")/lib.sh"
need_root
use_private_registry
id=$(uniq_id)
A=xdpvA$id B=xdpvB$id IA=vva$id IB=vvb$id
make_ns $A
make_ns $B
make_veth $A $IA 10.232.7.1/24 $B $IB 10.232.7.2/24
add_dev xa $IA $A transport xdp
add_dev xb $IB $B transport xdp
add_dev ua $IA $A        # udp devices on the same interfaces
add_dev ub $IB $B
GA=$(gid_of $A xa 10.232.7.1) GB=$(gid_of $B xb 10.232.7.2)
UGA=$(gid_of $A ua 10.232.7.1) UGB=$(gid_of $B ub 10.232.7.2)
PROBE=${XDP_PROBE:?}
T=$(mktemp -d)
on_exit "rm -rf '$T'"
# The programs and their redirect counters live through the whole test.
hold_program $A $IA
hold_program $B $IB

# server end (namespace, device, GID), then client end
for ends in "xdp-xdp $B xb $GB $A xa $GA" "xdp-udp $B xb $GB $A ua $UGA" "udp-xdp $B ub $UGB $A xa $GA"; do
	set -- $ends
	name=$1 sns=$2 sdev=$3 sgid=$4 cns=$5 cdev=$6 cgid=$7
	for size in 1 4096; do
		for t in rc uc srq; do
			pair $name $sns $sdev $sgid $cns $cdev $cgid 10.232.7.2 -- ibv_${t}_pingpong -c -n 500 -s $size
		done
	done
	pair $name $sns $sdev $sgid $cns $cdev $cgid 10.232.7.2 -- ibv_ud_pingpong -c -n 500 -s 1024
done
# Two processes on one xdp device: the second cannot have the queue's
# socket (EBUSY) and runs on the udp path beneath; their packets to this
# host's own address go through the kernel.
pair same-device $B xb $GB $B xb $GB 10.232.7.2 -- ibv_rc_pingpong -c -n 200 -s 4096

# perftest over xdp on both ends, and xdp on one end with udp on the other
# each way round (write, read, send, atomics: the responder's one-sided
# work and the ACK/READ/atomic response paths).
for ends in "xdp-xdp $B xb $GB $A xa $GA" "xdp-udp $B xb $GB $A ua $UGA" "udp-xdp $B ub $UGB $A xa $GA"; do
	set -- $ends
	name=perftest-$1 sns=$2 sdev=$3 sgid=$4 cns=$5 cdev=$6 cgid=$7
	for t in ib_write_bw ib_read_bw ib_send_bw; do
		pair $name $sns $sdev $sgid $cns $cdev $cgid 10.232.7.2 -- $t -F -s 65536 -n 200
	done
	for t in ib_write_lat ib_read_lat ib_send_lat; do
		pair $name $sns $sdev $sgid $cns $cdev $cgid 10.232.7.2 -- $t -F -s 64 -n 500
	done
	for t in ib_atomic_bw ib_atomic_lat; do
		pair $name $sns $sdev $sgid $cns $cdev $cgid 10.232.7.2 -- $t -F -n 500
	done
done

# Ping and TCP over the same veth while an xdp pair runs.
PAIR_PORT=$((PAIR_PORT + 1))
ip netns exec $B timeout 120 "$UROCE" run ibv_rc_pingpong -c -n 4000 -s 4096 -d xb -g $GB \
	-p $PAIR_PORT >"$T/srv" 2>&1 &
srv=$!
stop_at_exit $srv
wait_listen $PAIR_PORT $srv 60 $B || fail "server did not start: $(cat "$T/srv")"
ip netns exec $A timeout 120 "$UROCE" run ibv_rc_pingpong -c -n 4000 -s 4096 -d xa -g $GA \
	-p $PAIR_PORT 10.232.7.2 >"$T/cli" 2>&1 &
cli=$!
stop_at_exit $cli
ip netns exec $A ping -c 5 -i 0.2 -W 2 10.232.7.2 >"$T/ping" || fail "ping during a run: $(cat "$T/ping")"
tport=$((PAIR_PORT + 1000))
ip netns exec $B timeout 60 iperf3 -s -1 -p $tport >"$T/iperf" 2>&1 &
iperf=$!
stop_at_exit $iperf
wait_listen $tport $iperf 30 $B || fail "iperf3 server did not start: $(cat "$T/iperf")"
ip netns exec $A timeout 60 iperf3 -c 10.232.7.2 -p $tport -n 20M >"$T/tcp" 2>&1 || fail "TCP during a run: $(cat "$T/tcp")"
_alive $cli && running="still running" || running="finished before"
wait $cli || fail "pingpong client: $(cat "$T/cli")"
wait $srv || fail "pingpong server: $(cat "$T/srv")"
pass "ping and a 20 MB TCP transfer over the veth during an xdp RC pingpong ($running when they ended): $(tail -1 "$T/cli")"

# SIGKILL of the client mid-transfer: ping works, a new pair runs at once.
PAIR_PORT=$((PAIR_PORT + 1))
ip netns exec $B timeout 120 "$UROCE" run ibv_rc_pingpong -c -n 1000000 -s 4096 -d xb -g $GB \
	-p $PAIR_PORT >"$T/srv2" 2>&1 &
srv=$!
stop_at_exit $srv
wait_listen $PAIR_PORT $srv 60 $B || fail "server did not start: $(cat "$T/srv2")"
ip netns exec $A timeout 120 "$UROCE" run ibv_rc_pingpong -c -n 1000000 -s 4096 -d xa -g $GA \
	-p $PAIR_PORT 10.232.7.2 >"$T/cli2" 2>&1 &
cli=$!
stop_at_exit $cli
# Mid-transfer: its connection's frames are moving (B's redirect counter).
before=$(redirected $B $IB)
for ((i = 0; i < 400; i++)); do
	[ "$(redirected $B $IB)" -gt $((before + 100)) ] && break
	sleep 0.05
done
if [ "$(redirected $B $IB)" -le $((before + 100)) ]; then
	# What a rare failure here (once in CI-like runs) needs to be read.
	echo "redirect counter: $before before, $(redirected $B $IB) now"
	ip -n $B link show $IB
	echo "--- server"; cat "$T/srv2"; echo "--- client"; cat "$T/cli2"
	fail "the transfer did not start"
fi
victim=$(pgrep -P $cli | head -1)
[ -n "$victim" ] || fail "no client process under $cli"
kill -KILL $victim
wait $cli 2>/dev/null || true
kill $srv 2>/dev/null || true
wait $srv 2>/dev/null || true
ip netns exec $A ping -c 2 -i 0.2 -W 2 10.232.7.2 >/dev/null || fail "ping after SIGKILL"
# The new pair has the queues' sockets again, on both ends: its frames
# move both redirect counters (a socket whose owner has just gone is
# waited for, not given up on for the udp path).
beforeA=$(redirected $A $IA) beforeB=$(redirected $B $IB)
pair after-kill $B xb $GB $A xa $GA 10.232.7.2 -- ibv_rc_pingpong -c -n 200 -s 4096
afterA=$(redirected $A $IA) afterB=$(redirected $B $IB)
[ "$afterA" -ge $((beforeA + 200)) ] && [ "$afterB" -ge $((beforeB + 200)) ] ||
	fail "after SIGKILL the new pair did not run over AF_XDP: redirected $IA $beforeA -> $afterA, $IB $beforeB -> $afterB"

# The frames went through the AF_XDP sockets, on both ends.
for s in "$A $IA" "$B $IB"; do
	set -- $s
	pid=$(eval echo \$attach_$2)
	kill $pid
	wait $pid || fail "attach $2: $(cat "$T/attach.$2")"
	n=$(awk '/^redirected/ {print $2}' "$T/attach.$2")
	[ "${n:-0}" -gt 1000 ] || fail "$2: only ${n:-0} frames reached an AF_XDP socket"
	pass "$2: $n frames reached the AF_XDP sockets"
done

# A 9000-byte MTU and IB MTU 4096: a packet (4096 bytes of payload and its
# headers) is longer than one UMEM frame.  Where the kernel has
# multi-buffer AF_XDP (6.6) and XDP programs (5.18), veth runs the program
# natively and the frames travel through the AF_XDP sockets in two
# buffers; with UROCE_XDP_SG=0 (or an older kernel) the program passes
# them to the kernel and the udp transport.
J=xdpjA$id K=xdpjB$id IJ=vja$id IK=vjb$id
make_ns $J
make_ns $K
make_veth $J $IJ 10.232.8.1/24 $K $IK 10.232.8.2/24
ip -n $J link set $IJ mtu 9000
ip -n $K link set $IK mtu 9000
add_dev ja $IJ $J transport xdp
add_dev jb $IK $K transport xdp
add_dev uj $IK $K
ip netns exec $K "$UROCE" run ibv_devinfo -d jb | grep -Eq 'active_mtu:\s+4096' || fail "jb: active_mtu is not 4096"
JGA=$(gid_of $J ja 10.232.8.1) JGB=$(gid_of $K jb 10.232.8.2) UJG=$(gid_of $K uj 10.232.8.2)
hold_program $J $IJ
hold_program $K $IK
ip -n $K link show $IK | grep -q ' xdp ' || fail "$IK: no native XDP at MTU 9000: $(ip -n $K link show $IK)"
PKTS=$((200 * 65536 / 4096))
# jumbo NAME SERVER-DEV SERVER-GID: 200 x 64 KiB RC messages at IB MTU 4096
# from ja to the server, --chk, counted on $IK.
jumbo() {
	pair_counted $K $IK "$1" $K $2 $3 $J ja $JGA 10.232.8.2 -- \
		ibv_rc_pingpong -m 4096 -c -n 200 -s 65536
}
jumbo jumbo-multibuffer jb $JGB
[ $D_REDIR -ge $PKTS ] && [ $D_BIG -eq 0 ] ||
	fail "4 KiB packets did not come through the AF_XDP socket: $D_REDIR redirected, $D_BIG passed as too long (want >= $PKTS and 0)"
pass "IB MTU 4096 over xdp: $D_REDIR frames through the AF_XDP socket ($PKTS data packets in two buffers each), none passed as too long"
UROCE_XDP_SG=0 jumbo jumbo-one-frame jb $JGB
[ $D_BIG -ge $PKTS ] || fail "UROCE_XDP_SG=0: $D_BIG frames passed to the kernel as too long (want >= $PKTS)"
pass "UROCE_XDP_SG=0: the $D_BIG 4 KiB frames took the kernel and the udp transport"
jumbo jumbo-xdp-udp uj $UJG
pass "IB MTU 4096, xdp client to a udp server: wire-compatible"

# A veth with twelve queues: the udp end's kernel spreads its flows (a
# UDP source port per QP) over the queues, and the xdp end has an AF_XDP
# socket on each of them, more than the 8 it had sockets for before.
# With UROCE_XDP_QUEUES=8 (the old limit) the frames of queues 8-11 take
# the kernel: the spread reaches them (24 flows over 12 queues miss all
# four with a chance of (8/12)^24, 6e-5).
M=xdpmA$id N=xdpmB$id IM=vma$id IN=vmb$id
make_ns $M
make_ns $N
VETH_QUEUES=12 make_veth $M $IM 10.232.9.1/24 $N $IN 10.232.9.2/24
add_dev mx $IN $N transport xdp
add_dev mu $IM $M
MXG=$(gid_of $N mx 10.232.9.2) MUG=$(gid_of $M mu 10.232.9.1)
hold_program $N $IN
PKTS=$((24 * 34 * 65536 / 1024))
# queues NAME: 24 QPs of 34 x 64 KiB WRITEs from mu to mx, counted on $IN.
queues() {
	pair_counted $N $IN "$1" $N mx $MXG $M mu $MUG 10.232.9.2 -- ib_write_bw -F -q 24 -s 65536 -n 34
}
queues twelve-queues
[ $D_REDIR -ge $PKTS ] && [ $D_NOSOCK -eq 0 ] ||
	fail "twelve queues: $D_REDIR frames redirected (want >= $PKTS), $D_NOSOCK passed for want of a socket (want 0)"
pass "twelve queues: all $D_REDIR frames reached an AF_XDP socket"
UROCE_XDP_QUEUES=8 queues queues-0-7
[ $D_NOSOCK -gt 0 ] || fail "UROCE_XDP_QUEUES=8: no frame came in on queues 8-11"
pass "queues 0-7 only: $D_NOSOCK of the frames came in on queues 8-11 and took the kernel"

for d in "$A xa" "$A ua" "$B xb" "$B ub"; do
	set -- $d
	ip netns exec $1 "$UROCE" link del $2 || fail "link del $2"
done
prog_on $A $IA && fail "a program stayed on $IA after link del"
prog_on $B $IB && fail "a program stayed on $IB after link del"
pass "after uroce link del no XDP program remains (ip link, xdp-loader status)"

#!/bin/bash
# bench/run.sh: the data path of uroce next to the kernel's, measured in one
# run on the same paths (issue 14).  One command, about five minutes, root:
#
#   sudo bench/run.sh [BUILD_DIR]
#
# Where: lo in a namespace of its own, and a veth pair between two
# namespaces (both created here and removed at exit).  What:
#   uroce   perftest: ib_send_lat/ib_write_lat/ib_read_lat 2 B, ib_write_bw/
#           ib_send_bw 64 KiB and 1 MiB, 64 B message rate, -q 4, -q 128;
#           ib_send_lat with QPs through the rdma CM (-R) and sleeping on a
#           completion channel (-e); an idle process with open QPs
#           (build/bench/idle_qps); a socket ping-pong and stream over
#           rsockets (build/bench/tcp_peer under librspreload.so); UCX
#           tag_lat and tag_bw over rc_verbs
#   peers   UDP busy-poll, blocking, thread-and-pipe and sleeping-pong
#           ping-pongs, UDP sendmmsg stream, UDP
#           GSO+GRO stream (build/bench/udp_peer), the same socket program
#           over kernel TCP, iperf3 TCP, qperf tcp_lat/tcp_bw, ucx_perftest
#           over TCP (put_lat, put_bw, tag_lat, tag_bw)
# and the CPU seconds of each side.  Latencies keep typical (median), mean,
# p99 and p99.9, and every sample (BENCH_OUT/samples/WHERE.NAME.txt) for
# the plot of their distributions.  bench/report.py then prints every goal
# of the issue with its ratio and writes results.json and results.png into
# BENCH_OUT (default BUILD_DIR/bench-results).  It never judges speed: a
# failing tool is reported as such and the run goes on.
#
# BENCH_WHERE="lo veth xdp" (default) chooses the paths ("xdp": uroce's
# perftest over transport xdp on the same veth, added after the veth path
# is measured so that its XDP program does not slow the udp figures; its
# peers are the veth's); BENCH_ONLY=REGEX runs only the measurements whose
# name matches (e.g. 'write_lat|udp_ping').
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
export UROCE=$build/cli/uroce
[ -x "$UROCE" ] || { echo "bench: build first (no $UROCE)" >&2; exit 1; }
. "$here/../tests/lib/common.sh"
. "$here/../tests/lib/pairs.sh"
set +e
LEDGER=/dev/null   # not a test: what it creates is not the test suite's to check
need_root
for t in iperf3 qperf ucx_perftest ib_write_bw; do
	command -v $t >/dev/null || { echo "bench: needs $t (sudo scripts/deps.sh)" >&2; exit 1; }
done
PEER=$build/bench/udp_peer
TCPP=$build/bench/tcp_peer
RSPRELOAD=${RSPRELOAD:-$(ls /usr/lib/*/rsocket/librspreload.so /usr/lib*/rsocket/librspreload.so 2>/dev/null | head -1)}
IDLE=$build/bench/idle_qps
out=${BENCH_OUT:-$build/bench-results}
mkdir -p "$out/samples"
rm -f "$out"/samples/*.txt
res=$out/results.tsv
: >"$res"
tmp=$(mktemp -d /tmp/uroce-bench.XXXXXX)
on_exit "rm -rf '$tmp'"
use_private_registry

# Places: a namespace whose lo carries a device, and two namespaces over a veth.
# They keep the kernel's defaults: no RPS.  The tests steer every packet
# of lo and their veths to one CPU's backlog (keep_order, for order on a
# loaded machine); on this VM that costs an IPI per batch, and a UDP
# ping-pong took 10.5 us one way with it against 1.9 us without
# (docs/performance.md).  The bench measures the path users have.
KEEP_ORDER=0
id=$(uniq_id)
NS_LO=uroceB${id}l NS_A=uroceB${id}a NS_B=uroceB${id}b
make_ns $NS_LO
add_dev bl lo $NS_LO
make_ns $NS_A
make_ns $NS_B
ADDR_A=10.214.$((RANDOM % 200)).1 ADDR_B=
ADDR_B=${ADDR_A%.1}.2
make_veth $NS_A bva$id $ADDR_A/24 $NS_B bvb$id $ADDR_B/24
add_dev bv bva$id $NS_A
add_dev bv bvb$id $NS_B
# where -> server namespace, client namespace, server address, device, GIDs
place() {
	case $1 in
	lo) SNS=$NS_LO CNS=$NS_LO SADDR=127.0.0.1 DEV=bl IFACE=lo CIFACE=lo
	    SGID=$(gid_of $NS_LO bl 127.0.0.1) CGID=$SGID ;;
	veth) SNS=$NS_A CNS=$NS_B SADDR=$ADDR_A DEV=bv IFACE=bva$id CIFACE=bvb$id
	      SGID=$(gid_of $NS_A bv $ADDR_A) CGID=$(gid_of $NS_B bv $ADDR_B) ;;
	xdp) if [ -z "${XDP_ADDED:-}" ]; then
		add_dev bx bva$id $NS_A transport xdp
		add_dev bx bvb$id $NS_B transport xdp
		XDP_ADDED=1
	     fi
	     SNS=$NS_A CNS=$NS_B SADDR=$ADDR_A DEV=bx IFACE=bva$id CIFACE=bvb$id
	     SGID=$(gid_of $NS_A bx $ADDR_A) CGID=$(gid_of $NS_B bx $ADDR_B) ;;
	esac
}
port=$((22000 + RANDOM % 3000))

# record WHERE NAME KEY VALUE: one figure into the results.
record() { printf '%s\t%s\t%s\t%s\n' "$@" >>"$res"; }
wanted() { [ -z "${BENCH_ONLY:-}" ] || [[ $1 =~ $BENCH_ONLY ]]; }
# cpu FILE: the user + system seconds bash's `time` wrote into FILE.
cpu() { awk '{ s = $1 + $2 } END { printf "%.3f", s + 0 }' "$1" 2>/dev/null; }

# pair_run WHERE NAME TIMEOUT SERVER_READY -- SERVER... -- CLIENT...
# Runs SERVER in SNS (in the background) and CLIENT in CNS, each timed (CPU
# seconds of the process tree into $tmp/NAME.{s,c}.cpu, output into
# $tmp/NAME.{s,c}.out).  SERVER_READY is "tcp" (wait until it listens on
# $port), "line" (wait until it prints "ready") or "cm" (until uroce's CM
# says it listens: UROCE_CM_DEBUG=1).  Returns non-zero if a side failed.
pair_run() {
	local where=$1 name=$2 to=$3 ready=$4 spid rc=0 TIMEFORMAT='%U %S'
	shift 5
	local srv=() cli=()
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	local f=$tmp/$where.$name
	( { time ip netns exec $SNS timeout $to "${srv[@]}" >"$f.s.out" 2>&1; } 2>"$f.s.cpu" ) &
	spid=$!
	if [ $ready = tcp ]; then
		wait_listen $port $spid 60 $SNS >/dev/null 2>&1 || { wait $spid; return 1; }
	else
		local re=ready
		[ $ready = cm ] && re='uroce cm: listening'
		wait_until 30 grep -q "$re" "$f.s.out" || { kill $spid; wait $spid; return 1; }
	fi
	{ time ip netns exec $CNS timeout $to "${cli[@]}" >"$f.c.out" 2>&1; } 2>"$f.c.cpu" || rc=$?
	# A CM client that failed leaves its server waiting for it: stop it.
	[ $rc != 0 ] && [ $ready = cm ] && kill_tree $spid
	wait $spid || rc=$((rc ? rc : $?))
	return $rc
}

# kill_tree PID: PID and every process below it (pair_run's own children).
kill_tree() {
	local c
	for c in $(pgrep -P $1); do kill_tree $c; done
	kill $1 2>/dev/null
}

# Debian 12's perftest -R races itself (tests/cm/perftest.sh): its client
# may connect before the server listens on its second id, and is refused.
CM_AGAIN_RE='RDMA_CM_EVENT_(REJECTED; error: 8|UNREACHABLE; error: 1)\.'

# ---- uroce: perftest ----------------------------------------------------------

# pt WHERE NAME KIND MSGS BYTES -- TOOL ARGS...: perftest pair; KIND lat
# (t_typical, t_avg, p99 in µs) or bw (Gbit/s, Mpps).  A bandwidth is
# measured RUNS (1) times, the median Gbit/s kept; the CPU seconds
# recorded are the kept run's.  pt_run and pt_keep do the two halves, for
# runs of measurements taken in turn (uroce_all's scale pair, and lat_all:
# every latency, in rounds with its UDP peers, since in one run of three
# the first second of a ping-pong often ran at 5x its typical, before the
# scheduler had spread the spinning threads).
declare -A PT_LINES PT_FAILED
pt() {
	local runs=${RUNS:-1} r
	wanted "$2" || return 0
	for ((r = 0; r < runs; r++)); do
		pt_run "$@" || return 0
	done
	pt_keep "$@"
}

# pt_run WHERE NAME KIND MSGS BYTES -- TOOL ARGS...: one run, kept for
# pt_keep; non-zero (and the error recorded) if it failed.
pt_run() {
	local where=$1 name=$2 kind=$3 f=$tmp/$1.$2 r
	shift 6
	wanted "$name" && [ -z "${PT_FAILED[$where.$name]:-}" ] || return 1
	r=$(printf '%s' "${PT_LINES[$where.$name]:-}" | grep -c .)
	port=$((port + 1))
	local common=(-d $DEV -F -p $port) ready=tcp cmdbg=()
	# -R: no out-of-band TCP socket; the rdma CM's listen is the sign.
	# perftest's own listen race (CM_AGAIN_RE) was lost 5 times in a row
	# on a quiet machine, twice (docs/performance-log.md, "A nineteenth
	# run"): CM_TRIES (20) tries, about a second each.
	local tries=1 ok
	[[ " $* " = *" -R "* ]] && ready=cm cmdbg=(env UROCE_CM_DEBUG=1) tries=${CM_TRIES:-20}
	while :; do
		ok=1
		pair_run $where $name 300 $ready -- "${cmdbg[@]}" "$UROCE" run "$@" "${common[@]}" -x $SGID \
			-- "$UROCE" run "$@" "${common[@]}" -x $CGID $SADDR || ok=
		((--tries > 0)) && [ -z "$ok" ] && grep -Eq "$CM_AGAIN_RE" "$f.c.out" || break
		port=$((port + 1))
		common=(-d $DEV -F -p $port)
	done
	if [ -z "$ok" ] || grep -Eiq 'error|fail|couldn|unable' "$f.s.out" "$f.c.out"; then
		record $where $name error "$(grep -Eih -m1 'error|fail|couldn|unable' "$f.c.out" "$f.s.out" | head -1 | tr '\t' ' ')"
		echo "  $where $name: FAILED (see $f.c.out)"
		cp "$f.s.out" "$f.c.out" "$out/" 2>/dev/null
		PT_FAILED[$where.$name]=1
		return 1
	fi
	cp "$f.s.cpu" "$f.s.cpu.$r"
	cp "$f.c.cpu" "$f.c.cpu.$r"
	# -H: every sample (sorted, one-way µs), "N, value" lines after "#, usec".
	[ $kind = lat ] && sed -n 's/^[0-9]*, *\([0-9.]*\)$/\1/p' "$f.c.out" >"$f.samples.$r"
	# The run's index first, then perftest's figures.
	PT_LINES[$where.$name]+="$r $(grep -E '^ *[0-9]+ +[0-9]+ ' "$f.c.out" | tail -1)"$'\n'
}

# pt_keep WHERE NAME KIND MSGS BYTES -- TOOL ARGS...: record the run with
# the median figure, or round KEEP_ROUND (0, 1, ...) where lat_all set it.
pt_keep() {
	local where=$1 name=$2 kind=$3 msgs=$4 bytes=$5 f=$tmp/$1.$2 col=4 line all runs r
	local tool=("${@:7}")
	local lines=${PT_LINES[$where.$name]:-}
	PT_LINES[$where.$name]=
	[ -n "$lines" ] && [ -z "${PT_FAILED[$where.$name]:-}" ] || return 0
	[ $kind = lat ] && col=5
	runs=$(printf '%s' "$lines" | grep -c .)
	line=$(printf '%s' "$lines" | sort -g -k$((col + 1)),$((col + 1)) | sed -n "$(( (runs + 1) / 2 ))p")
	all="(median of: $(printf '%s' "$lines" | awk -v c=$((col + 1)) '{ printf "%s ", $c }'))"
	if [ -n "${KEEP_ROUND:-}" ]; then
		line=$(printf '%s' "$lines" | sed -n "$((KEEP_ROUND + 1))p")
		all="(round $((KEEP_ROUND + 1)) of: $(printf '%s' "$lines" | awk -v c=$((col + 1)) '{ printf "%s ", $c }'))"
	fi
	set -- $line
	r=$1
	shift
	if [ $kind = lat ]; then
		record $where $name lat_typical_us $5
		record $where $name lat_avg_us $6
		record $where $name lat_p99_us $8
		record $where $name lat_p999_us $9
		cp "$f.samples.$r" "$out/samples/$where.$name.txt" 2>/dev/null
		echo "  $where $name: typical $5 us, mean $6 us, p99 $8 us, p99.9 $9 us $all"
	else
		record $where $name gbit_s $4
		record $where $name mpps $5
		echo "  $where $name: $4 Gbit/s, $5 Mpps$( ((runs > 1)) && echo " $all")"
	fi
	record $where $name cpu_s_server "$(cpu $f.s.cpu.$r)"
	record $where $name cpu_s_client "$(cpu $f.c.cpu.$r)"
	record $where $name bytes $bytes
	record $where $name msgs $msgs
	# A ping-pong spins on both sides: its CPU is its wall time.
	[ $kind = bw ] && pt_setup $where $name "${tool[@]}"
}

# pt_setup WHERE NAME TOOL ARGS...: the CPU seconds of the same pair with 5
# messages (-n 5), recorded as cpu_s_{server,client}_setup: what perftest
# spends before and after its messages (it measures the CPU's speed by
# spinning for about a quarter of a second, then opens the device, creates
# the QPs and registers the buffers).  report.py takes them off before it
# divides by the bytes and messages moved.
pt_setup() {
	local where=$1 name=$2 f=$tmp/$1.$2.setup args=() a
	shift 2
	while [ $# -gt 0 ]; do
		a=$1
		shift
		if [ "$a" = -n ]; then
			args+=(-n 5)
			shift
		else
			args+=("$a")
		fi
	done
	port=$((port + 1))
	local common=(-d $DEV -F -p $port)
	if pair_run $where $name.setup 120 tcp -- "$UROCE" run "${args[@]}" "${common[@]}" -x $SGID \
			-- "$UROCE" run "${args[@]}" "${common[@]}" -x $CGID $SADDR; then
		record $where $name cpu_s_server_setup "$(cpu $f.s.cpu)"
		record $where $name cpu_s_client_setup "$(cpu $f.c.cpu)"
	fi
}

# lat_all WHERE: the latencies, uroce's and (except on xdp, whose peers
# are the veth's) the UDP ping-pongs', LAT_RUNS (3) rounds of each in turn.
# This VM's kernel paths change speed by x1.3 from one minute, even one
# round, to the next: a peer measured once, a minute before uroce, could
# fall in the other mode, and so could medians taken apart (one run: the
# ping-pong's median from a fast round, ib_send_lat's from a slow one,
# 1.90 where the rounds' own ratios were 1.61, 1.97 and 1.56).  So every
# figure is kept from one round: the one whose ib_send_lat / ping-pong
# ratio is the median.  Where a run failed, or on xdp, each figure keeps
# its own median.
lat_all() {
	local w=$1 r n=${LAT_RUNS:-3} KEEP_ROUND=
	for ((r = 0; r < n; r++)); do
		lat_step $w run
	done
	if [ $w != xdp ] && [ "$(printf '%s' "${UDP_LINES[$w.ping]:-}" | grep -c .)" = $n ] &&
	   [ "$(printf '%s' "${PT_LINES[$w.ib_send_lat]:-}" | grep -c .)" = $n ]; then
		# Ping-pong lines: median p99 mean p99.9; perftest's: round, then
		# its row (bytes, iterations, t_min, t_max, t_typical, ...).
		KEEP_ROUND=$(paste -d' ' <(printf '%s' "${UDP_LINES[$w.ping]}") \
				<(printf '%s' "${PT_LINES[$w.ib_send_lat]}") |
			     awk '$1 > 0 { print $10 / $1, $5 }' | sort -g |
			     sed -n "$(( (n + 1) / 2 ))p" | cut -d' ' -f2)
		echo "  $w latencies: round $((KEEP_ROUND + 1)) of $n kept (its ib_send_lat / udp_ping is the median)"
	fi
	lat_step $w keep
}

# lat_step WHERE run|keep: one round of every latency, or record the kept ones.
lat_step() {
	local w=$1 step=$2 m t
	if [ $w != xdp ]; then
		for m in ping hop two block chan sleeper; do
			udp_lat_$step $w $m
		done
	fi
	for t in send write read; do
		pt_$step $w ib_${t}_lat lat 40000 0 -- ib_${t}_lat -s 2 -n 20000 -H
	done
	# QPs through the rdma CM, and a program asleep on a completion
	# channel (the peer of the latter: udp_block).
	pt_$step $w ib_send_lat_cm lat 40000 0 -- ib_send_lat -s 2 -n 20000 -H -R
	pt_$step $w ib_send_lat_ev lat 40000 0 -- ib_send_lat -s 2 -n 20000 -H -e
	# The size of UCX's eager SEND for tag_lat 8 B (17 B: its header and
	# the tag): a SEND larger than an ACK does not share one GSO datagram
	# with the ACK before it, as the 2 B one does, so each way is two
	# datagrams (docs/performance.md, "UCX tag_bw ... tag_lat").
	pt_$step $w ib_send_lat_17 lat 40000 0 -- ib_send_lat -s 17 -n 20000 -H
}

uroce_all() {
	local w=$1 n r
	# 64 KiB runs move one volume, 128 x 100 messages (840 MB, about half a
	# second here), at every -q: the scale goal compares -q 128 with -q 1,
	# and a run of 4000 (0.1 s) was mostly perftest's ramp, its figure
	# 0.6-0.9 of the -q 128 one's in one run and above it in the next.
	n=12800
	# 1 MiB: 1600 messages (1.7 GB, about half a second on lo); 400 made
	# 0.15 s runs whose figures moved by a third from one run to the next.
	# The scale goal's pair (ib_write_bw 64 KiB -q 1 and -q 128): this
	# machine's speed flipped between two modes (x2) every few seconds
	# (docs/performance.md, "An eighth run"), so the two are run in turn,
	# BW_RUNS (3) times, and each keeps its median.
	local q1=(ib_write_bw_64k bw $n $((n * 65536)) -- ib_write_bw -s 65536 -n $n --report_gbits)
	local q128=(ib_write_bw_64k_q128 bw $((128 * 100)) $((128 * 100 * 65536)) -- ib_write_bw -s 65536 -n 100 -q 128 --report_gbits)
	for ((r = 0; r < ${BW_RUNS:-3}; r++)); do
		pt_run $w "${q1[@]}"
		pt_run $w "${q128[@]}"
	done
	pt_keep $w "${q1[@]}"
	pt_keep $w "${q128[@]}"
	pt $w ib_send_bw_64k bw $n $((n * 65536)) -- ib_send_bw -s 65536 -n $n --report_gbits
	# The 1 MiB goals' runs too, in turn and each its median: eight runs
	# in a row of each on quiet lo moved from 24 to 45 Gbit/s (WRITE)
	# and 27 to 41 (SEND), and the nineteenth run's one WRITE, 13.2,
	# was such a run (docs/performance-log.md, "1 MiB bandwidth: one
	# run is not a figure").
	local w1m=(ib_write_bw_1m bw 1600 $((1600 * 1048576)) -- ib_write_bw -s 1048576 -n 1600 --report_gbits)
	local s1m=(ib_send_bw_1m bw 1600 $((1600 * 1048576)) -- ib_send_bw -s 1048576 -n 1600 --report_gbits)
	for ((r = 0; r < ${BW_RUNS:-3}; r++)); do
		pt_run $w "${w1m[@]}"
		pt_run $w "${s1m[@]}"
	done
	pt_keep $w "${w1m[@]}"
	pt_keep $w "${s1m[@]}"
	for t in write send; do
		pt $w ib_${t}_bw_64b bw 200000 $((200000 * 64)) -- ib_${t}_bw -s 64 -n 200000 --report_gbits
	done
	pt $w ib_write_bw_64k_q4 bw $n $((n * 65536)) -- ib_write_bw -s 65536 -n $((n / 4)) -q 4 --report_gbits
	if wanted idle_qps; then
		local o
		o=$(ip netns exec $SNS "$UROCE" run "$IDLE" $DEV $SGID 8 3 2>&1)
		echo "  $w idle_qps: $o"
		record $w idle_qps cpu_pct "$(echo "$o" | sed -n 's/.*cpu_pct=\([0-9.]*\).*/\1/p')"
	fi
}

# ---- peers ------------------------------------------------------------------------

# kv FILE KEY: the value of KEY=VALUE in FILE.
kv() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" "$1" | tail -1; }

# udp_ping: both sides busy-poll; udp_hop: each side's datagrams reach a
# thread asleep in recv() while the main thread spins on memory
# (bench/udp_peer.c): the least one thread hop costs here; udp_two:
# busy-polled, two datagrams a way in one GSO send (a message and an ACK,
# as uroce sends them): the least that shape costs here.
# udp_lat_run WHERE MODE: one run of ping-pong MODE (ping, hop, two, block,
# chan, sleeper), kept for udp_lat_keep.  udp_block: both sides sleep in
# recv(), the peer of a program asleep on a completion channel; udp_chan:
# each side's datagrams reach a thread asleep in recv(), which wakes the
# main thread asleep in read() of a pipe, the least a completion channel
# costs when libibverbs reads it and the kernel does not fill it;
# udp_sleeper: ping busy-polls, pong sleeps in recv(), the shape of
# ib_read_lat (its responder's process makes no call).
declare -A UDP_LINES UDP_FAILED
udp_lat_run() {
	local w=$1 m=$2 f=$tmp/$1.udp_$2 mode= r
	wanted udp_$m && [ -z "${UDP_FAILED[$w.$m]:-}" ] || return 0
	port=$((port + 1))
	[ $m = ping ] || mode=$m
	r=$(printf '%s' "${UDP_LINES[$w.$m]:-}" | grep -c .)
	if BENCH_SAMPLES=$f.samples.$r pair_run $w udp_$m 60 line -- "$PEER" pong $port $mode \
			-- "$PEER" ping $SADDR $port 64 20000 $mode; then
		UDP_LINES[$w.$m]+="$(kv $f.c.out oneway_us_median) $(kv $f.c.out oneway_us_p99) $(kv $f.c.out oneway_us_mean) $(kv $f.c.out oneway_us_p999) $r"$'\n'
	else
		record $w udp_$m error "udp_peer failed"
		UDP_FAILED[$w.$m]=1
	fi
}

# udp_lat_keep WHERE MODE: record the run with the median one-way time, or
# round KEEP_ROUND where lat_all set it.
udp_lat_keep() {
	local w=$1 m=$2 lines runs
	lines=${UDP_LINES[$w.$m]:-}
	[ -n "$lines" ] && [ -z "${UDP_FAILED[$w.$m]:-}" ] || return 0
	runs=$(printf '%s' "$lines" | grep -c .)
	if [ -n "${KEEP_ROUND:-}" ]; then
		set -- $(printf '%s' "$lines" | sed -n "$((KEEP_ROUND + 1))p")
	else
		set -- $(printf '%s' "$lines" | sort -g -k1,1 | sed -n "$(( (runs + 1) / 2 ))p")
	fi
	record $w udp_$m oneway_us $1
	record $w udp_$m oneway_us_p99 $2
	record $w udp_$m oneway_us_mean $3
	record $w udp_$m oneway_us_p999 $4
	cp "$tmp/$w.udp_$m.samples.$5" "$out/samples/$w.udp_$m.txt" 2>/dev/null
	echo "  $w udp_$m 64 B: one way $1 us, mean $3, p99 $2, p99.9 $4 us ($([ -n "${KEEP_ROUND:-}" ] && echo "round $((KEEP_ROUND + 1))" || echo median) of: $(printf '%s' "$lines" | awk '{ printf "%s ", $1 }'))"
}

udp_all() {
	local w=$1 f
	for m in mmsg gso; do
		local name=udp_$m size=64 mode=""
		# GSO segments must each fit the path's MTU (a larger one fails
		# the send with EMSGSIZE): lo's 4160 B carry a 4096 B RoCE
		# payload; the veth's 1500 B MTU takes 1472 B of UDP payload.
		[ $m = gso ] && mode=gro size=$([ $w = lo ] && echo 4160 || echo 1472)
		wanted $name || continue
		port=$((port + 1))
		f=$tmp/$w.$name
		if pair_run $w $name 60 line -- "$PEER" sink $port $mode -- "$PEER" stream $SADDR $port $size 3 $m; then
			record $w $name gbit_s "$(kv $f.s.out gbit_s)"
			record $w $name mpps "$(kv $f.s.out mpps)"
			record $w $name cpu_s_server "$(kv $f.s.out cpu_s)"
			record $w $name cpu_s_client "$(kv $f.c.out cpu_s)"
			record $w $name bytes "$(kv $f.s.out bytes)"
			record $w $name msgs "$(kv $f.s.out dgrams)"
			echo "  $w $name $size B: $(kv $f.s.out gbit_s) Gbit/s, $(kv $f.s.out mpps) Mpps received"
		else record $w $name error "udp_peer failed"; fi
	done
}

# iperf_all WHERE [NAME]: iperf3 TCP, 1 MiB writes, 3 s, as NAME
# (iperf3_tcp).
iperf_all() {
	local w=$1 name=${2:-iperf3_tcp} f=$tmp/$1.iperf3
	wanted iperf3 || return 0
	port=$((port + 1))
	if pair_run $w iperf3 60 tcp -- iperf3 -s -1 -p $port -- iperf3 -c $SADDR -p $port -t 3 -l 1M -J; then
		/usr/bin/python3 - "$f.c.out" "$w" "$name" >>"$res" <<-'EOF'
		import json, sys
		j = json.load(open(sys.argv[1])); e = j["end"]; w, name = sys.argv[2:4]
		bps = e["sum_received"]["bits_per_second"]; secs = e["sum_received"]["seconds"]
		cpu = e["cpu_utilization_percent"]
		for k, v in (("gbit_s", bps / 1e9), ("bytes", e["sum_received"]["bytes"]),
		             ("cpu_s_client", cpu["host_total"] / 100 * secs),
		             ("cpu_s_server", cpu["remote_total"] / 100 * secs)):
		    print(f"{w}\t{name}\t{k}\t{v:.4f}")
		EOF
		echo "  $w $name 1 MiB writes: $(awk -F'\t' -v w=$w -v n=$name '$1 == w && $2 == n && $3 == "gbit_s" { print $4 }' "$res") Gbit/s"
	else record $w $name error "iperf3 failed"; fi
}

qperf_all() {
	local w=$1 f=$tmp/$w.qperf v
	wanted qperf || return 0
	port=$((port + 1))
	ip netns exec $SNS timeout 60 qperf --listen_port $port >/dev/null 2>&1 &
	local qpid=$!
	stop_at_exit $qpid
	if wait_listen $port $qpid 30 $SNS >/dev/null 2>&1 &&
	   ip netns exec $CNS timeout 60 qperf -lp $port -t 3 -v $SADDR tcp_lat tcp_bw >"$f" 2>&1; then
		v=$(awk '/^tcp_lat/ { s = 1 } s && /latency/ { print $3, $4; exit }' "$f")
		record $w qperf_tcp_lat lat_us "$(awk -v v="${v% *}" -v u="${v#* }" 'BEGIN { printf "%.3f", u == "ms" ? v * 1000 : u == "ns" ? v / 1000 : v }')"
		v=$(awk '/^tcp_bw/ { s = 1 } s && / bw / { print $3, $4; exit }' "$f")
		record $w qperf_tcp_bw gbit_s "$(awk -v v="${v% *}" -v u="${v#* }" 'BEGIN { m = u ~ /^GB/ ? 8 : u ~ /^MB/ ? 0.008 : u ~ /^KB/ ? 8e-6 : 8e-9; printf "%.3f", v * m }')"
		echo "  $w qperf tcp_lat $(awk -F'\t' -v w=$w '$1 == w && $2 == "qperf_tcp_lat" { print $4 }' "$res") us, tcp_bw $(awk -F'\t' -v w=$w '$1 == w && $2 == "qperf_tcp_bw" { print $4 }' "$res") Gbit/s"
	else
		record $w qperf error "qperf failed"
	fi
	kill $qpid 2>/dev/null
	wait $qpid 2>/dev/null
}

# xdp_alone: the 64 B rate beneath uroce's engine on the veth the xdp path
# uses, the peers of issue 15's message rate ("at least the raw AF_XDP
# figure"), measured in the same run.  tests/xdp/xdp_probe receives in the
# server's namespace through the xdp transport and checks every packet;
# the sender is either a bare AF_XDP loop (xdp_raw_64b: frames built once,
# then only descriptors, kicks and completions) or the xdp transport's
# send op (xdp_transport_64b: each packet built with its ICRC, framed and
# copied, as uroce sends).  200 000 RoCEv2 UD packets of 64 B, bursts of
# 64; packets/s at the sender (no flow control: the receiver may drop, and
# how many arrived is recorded), CPU of each side.
xdp_alone() {
	local probe=$build/tests/xdp/xdp_probe count=200000 name mode f ms got spid
	local TIMEFORMAT='%U %S' dmac
	dmac=$(ip netns exec $NS_A cat /sys/class/net/bva$id/address)
	for mode in rawsend send; do
		name=$([ $mode = rawsend ] && echo xdp_raw_64b || echo xdp_transport_64b)
		wanted $name || continue
		f=$tmp/xdp.$name
		[ -x "$probe" ] || { record xdp $name error "no $probe (build with -Dtests=true)"; continue; }
		( { time ip netns exec $NS_A timeout 60 "$probe" recv bva$id 0x21 $count 10 >"$f.s.out" 2>&1; } 2>"$f.s.cpu" ) &
		spid=$!
		if ! wait_until 30 grep -q ready "$f.s.out"; then
			kill $spid; wait $spid
			record xdp $name error "xdp_probe recv did not start"
			continue
		fi
		# rawsend takes the receiver's MAC; send resolves it itself.
		local to=($ADDR_A $([ $mode = rawsend ] && echo $dmac))
		{ time ip netns exec $NS_B timeout 60 "$probe" $mode bvb$id $ADDR_B "${to[@]}" 0x21 $count 64 >"$f.c.out" 2>&1; } 2>"$f.c.cpu"
		wait $spid
		ms=$(sed -n 's/^sent [0-9]* in \([0-9]*\) ms/\1/p' "$f.c.out")
		got=$(sed -n 's/^received \([0-9]*\) bad 0.*/\1/p' "$f.s.out")
		if [ -z "$ms" ] || [ -z "$got" ] || [ "$ms" = 0 ]; then
			record xdp $name error "xdp_probe failed: $(head -c 200 "$f.c.out" "$f.s.out" | tr '\t\n' '  ')"
			continue
		fi
		record xdp $name mpps "$(awk -v n=$count -v ms=$ms 'BEGIN { printf "%.4f", n / ms / 1000 }')"
		record xdp $name received $got
		record xdp $name cpu_s_server "$(cpu $f.s.cpu)"
		record xdp $name cpu_s_client "$(cpu $f.c.cpu)"
		record xdp $name msgs $count
		echo "  xdp $name: $(awk -v n=$count -v ms=$ms 'BEGIN { printf "%.3f", n / ms / 1000 }') Mpps sent, $got of $count received"
	done
}

# sock_all WHERE: one blocking socket program (build/bench/tcp_peer) over
# kernel TCP (tcp_*) and, unchanged, over RDMA through rdma-core's rsockets
# (rs_*: librspreload.so preloaded under uroce run, so its rdma CM and
# verbs calls reach uroce): a 64 B ping-pong and a 16 KiB stream.
sock_all() {
	local w=$1 via name f pre
	for via in tcp rs; do
		pre=()
		if [ $via = rs ]; then
			[ -n "$RSPRELOAD" ] || { record $w rs_ping error "no librspreload.so (librdmacm1)"; continue; }
			pre=("$UROCE" run sh -c 'LD_PRELOAD="$LD_PRELOAD:$0" exec "$@"' "$RSPRELOAD")
		fi
		name=${via}_ping f=$tmp/$w.${via}_ping
		port=$((port + 1))
		if ! wanted $name; then :
		elif BENCH_SAMPLES=$f.samples pair_run $w $name 120 line -- "${pre[@]}" "$TCPP" pong $port 64 \
				-- "${pre[@]}" "$TCPP" ping $SADDR $port 64 20000; then
			record $w $name oneway_us "$(kv $f.c.out oneway_us_median)"
			record $w $name oneway_us_mean "$(kv $f.c.out oneway_us_mean)"
			record $w $name oneway_us_p99 "$(kv $f.c.out oneway_us_p99)"
			record $w $name oneway_us_p999 "$(kv $f.c.out oneway_us_p999)"
			cp "$f.samples" "$out/samples/$w.$name.txt"
			echo "  $w $name 64 B: one way $(kv $f.c.out oneway_us_median) us, mean $(kv $f.c.out oneway_us_mean), p99 $(kv $f.c.out oneway_us_p99), p99.9 $(kv $f.c.out oneway_us_p999)"
		else
			record $w $name error "tcp_peer ping-pong failed"
		fi
		wanted ${via}_stream && sock_stream $w ${via}_stream "" "${pre[@]}"
	done
	rs_tuned_stream $w
}

# sock_stream WHERE NAME NOTE PREFIX...: tcp_peer's 16 KiB stream for 3 s,
# each side started under PREFIX (nothing: kernel TCP), recorded as NAME;
# NOTE says how it was run, on its printed line.
sock_stream() {
	local w=$1 name=$2 note=$3 f=$tmp/$1.$2
	shift 3
	port=$((port + 1))
	if pair_run $w $name 120 line -- "$@" "$TCPP" sink $port \
			-- "$@" "$TCPP" stream $SADDR $port 16384 3; then
		record $w $name gbit_s "$(kv $f.s.out gbit_s)"
		record $w $name bytes "$(kv $f.s.out bytes)"
		record $w $name cpu_s_server "$(cpu $f.s.cpu)"
		record $w $name cpu_s_client "$(cpu $f.c.cpu)"
		echo "  $w $name 16 KiB writes$note: $(kv $f.s.out gbit_s) Gbit/s"
	else
		record $w $name error "tcp_peer stream${note:+ ($note)} failed"
	fi
}

# rs_tuned_stream WHERE: the rsockets stream again with rsockets' own
# settings raised (rs_stream_tuned): 1 MiB buffers (mem_default,
# wmem_default) and 1 ms of polling before a sleep (polling_time).
# librdmacm reads them from /etc/rdma/rsocket; each side gets a private
# copy through a mount namespace of its own, so the machine's /etc is not
# touched.  What they move: docs/performance-log.md, "The rsockets stream
# is bound by CPU".
rs_tuned_stream() {
	local w=$1 name=rs_stream_tuned conf=$tmp/rdma-etc
	wanted $name || return 0
	[ -n "$RSPRELOAD" ] || { record $w $name error "no librspreload.so (librdmacm1)"; return 0; }
	mkdir -p "$conf/rsocket"
	echo 1048576 >"$conf/rsocket/mem_default"
	echo 1048576 >"$conf/rsocket/wmem_default"
	echo 1000 >"$conf/rsocket/polling_time"
	local pre=(unshare -m sh -c 'mount --bind "$0" /etc/rdma && exec "$@"' "$conf"
		"$UROCE" run sh -c 'LD_PRELOAD="$LD_PRELOAD:$0" exec "$@"' "$RSPRELOAD")
	sock_stream $w $name ", rsockets 1 MiB buffers, 1 ms polling" "${pre[@]}"
}

# ucx_all WHERE: ucx_perftest over TCP (ucx_tcp_*) and over uroce's
# rc_verbs (ucx_rc_*: UCX's rendezvous for 1 MiB tagged messages).
# tag_bw moves 1600 x 1 MiB, as perftest's 1 MiB runs do, over TCP and
# rc_verbs in turn, BW_RUNS (3) times, each keeping its median: with 100
# messages (25-120 ms) one run moved from 845 to 5 381 MB/s over TCP and
# from 2 739 to 3 935 over rc_verbs within a minute on quiet lo
# (docs/performance-log.md, "1 MiB bandwidth: one run is not a figure").
ucx_all() {
	local w=$1 t r
	for t in tcp:ucp_put_lat:8:2000:2 tcp:ucp_put_bw:1048576:100:6 tcp:tag_lat:8:20000:2 \
		 rc:tag_lat:8:20000:2; do
		ucx_run $w $t && ucx_keep $w $t
	done
	local bw=(tcp:tag_bw:1048576:1600:6 rc:tag_bw:1048576:1600:6)
	for ((r = 0; r < ${BW_RUNS:-3}; r++)); do
		for t in "${bw[@]}"; do
			ucx_run $w $t
		done
	done
	for t in "${bw[@]}"; do
		ucx_keep $w $t
	done
}

# ucx_run WHERE TLS:TEST:SIZE:N:COLUMN: one ucx_perftest pair; its figure
# (COLUMN of the final line) and CPU seconds kept for ucx_keep.
declare -A UCX_RUNS
ucx_run() {
	local w=$1 tls t size n col name
	IFS=: read -r tls t size n col <<<"$2"
	name=ucx_${tls}_${t#ucp_}
	wanted $name || return 1
	port=$((port + 1))
	local f=$tmp/$w.$name line ucx_tls=tcp,self sdev=$IFACE cdev=$CIFACE run=() to=60
	# Over TCP each end names its own interface: the client's end of the
	# veth has another name, and with the server's UCX found no transport
	# ("network device 'bva...' is not available"): every veth row of
	# UCX over TCP failed so, the nineteenth run's too.
	[ $tls = rc ] && ucx_tls=rc_verbs,ud_verbs,self sdev=$DEV:1 cdev=$DEV:1 run=("$UROCE" run)
	# 1600 MiB at the 38 MB/s of a loaded veth: 42 s.
	((n > 1000)) && to=120
	if UCX_TLS=$ucx_tls pair_run $w $name $to tcp \
			-- env UCX_NET_DEVICES=$sdev "${run[@]}" ucx_perftest -p $port \
			-- env UCX_NET_DEVICES=$cdev "${run[@]}" ucx_perftest $SADDR -p $port -t $t -s $size -n $n -w $((n / 10)) -f &&
	   line=$(grep -E '^ +[0-9]+ +[0-9.]+ ' "$f.c.out" | tail -1) && [ -n "$line" ]; then
		set -- $line
		if [ $col = 2 ]; then
			# -f's final line: iterations, median, mean, ...
			UCX_RUNS[$w.$name]+="$2 $3"$'\n'
		else
			UCX_RUNS[$w.$name]+="${!col} $(cpu $f.s.cpu) $(cpu $f.c.cpu)"$'\n'
		fi
	else
		UCX_RUNS[$w.$name]+="error"$'\n'
		cp "$f.s.out" "$out/$w.$name.s.out" 2>/dev/null
		cp "$f.c.out" "$out/$w.$name.c.out" 2>/dev/null
	fi
}

# ucx_keep WHERE TLS:TEST:SIZE:N:COLUMN: record the run with the median
# figure (an error if any run failed).
ucx_keep() {
	local w=$1 tls t size n col name runs all line
	IFS=: read -r tls t size n col <<<"$2"
	name=ucx_${tls}_${t#ucp_}
	runs=${UCX_RUNS[$w.$name]:-}
	UCX_RUNS[$w.$name]=
	[ -n "$runs" ] || return 0
	if printf '%s' "$runs" | grep -q '^error'; then
		record $w $name error "ucx_perftest failed"
		echo "  $w $name: FAILED"
		return 0
	fi
	all=$(printf '%s' "$runs" | awk '{ printf "%s ", $1 }')
	line=$(printf '%s' "$runs" | sort -g -k1,1 | sed -n "$((($(printf '%s' "$runs" | grep -c .) + 1) / 2))p")
	set -- $line
	if [ $col = 2 ]; then
		record $w $name lat_us $1
		record $w $name lat_avg_us $2
		echo "  $w $name 8 B: median $1 us, mean $2 us"
	else
		record $w $name gbit_s "$(awk -v v=$1 'BEGIN { printf "%.3f", v * 1048576 * 8 / 1e9 }')"
		record $w $name cpu_s_server $2
		record $w $name cpu_s_client $3
		record $w $name bytes $((size * n))
		echo "  $w $name 1 MiB: $1 MB/s$([ "$all" != "$1 " ] && echo " (median of: $all)")"
	fi
}

echo "bench: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r), results in $out"
# How an idle CPU waits decides what waking a thread on it costs: in a VM
# whose idle CPUs halt at once (cpuidle haltpoll, guest_halt_poll_ns 0) a
# wake-up across CPUs took ~25 us more here (docs/performance.md).
idle_drv=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)
halt_poll=$(cat /sys/module/haltpoll/parameters/guest_halt_poll_ns 2>/dev/null || echo -)
echo "bench: cpuidle driver $idle_drv, guest_halt_poll_ns $halt_poll"
for w in ${BENCH_WHERE:-lo veth xdp}; do
	place $w
	echo "== $w"
	if [ $w != xdp ]; then
		udp_all $w
		iperf_all $w
		qperf_all $w
		ucx_all $w
		sock_all $w
	else
		xdp_alone
	fi
	lat_all $w
	uroce_all $w
	# This VM's speed at what the kernel does swung by x3 within minutes
	# (iperf3 on lo: 42 Gbit/s before uroce's runs, 14 after): iperf3 is
	# measured again after them, and the bandwidth goals take the mean of
	# the two (report.py prints both).
	[ $w != xdp ] && iperf_all $w iperf3_tcp_after
done
/usr/bin/python3 "$here/report.py" "$res" "$out"

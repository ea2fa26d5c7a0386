#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# UROCE_PCAP end to end: unmodified ibv_rc_pingpong and ibv_ud_pingpong
# between two namespaces, each side tracing to its own file ("%p").
# tshark must decode every packet of both traces as RoCEv2 with a correct
# ICRC and nothing malformed; what one side sent, the other received
# (same opcodes and PSNs, in both traces); and a bounded trace stops at
# its bound.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
need_root
command -v tshark >/dev/null || skip "tshark not installed"
use_private_registry
veth_pair_with_devices 35
dir=$(mktemp -d /tmp/uroce-trace.XXXXXX)
[ -n "${KEEP:-}" ] || on_exit "rm -rf '$dir'"
ts() { tshark --disable-heuristic rpcrdma_infiniband "$@" 2>/dev/null; }

export UROCE_PCAP=$dir/t-%p.pcap
pair veth $VETH_A $DEV_A $GID_A $VETH_B $DEV_B $GID_B $ADDR_A -- ibv_rc_pingpong -c -n 200 -s 3000
pair veth $VETH_A $DEV_A $GID_A $VETH_B $DEV_B $GID_B $ADDR_A -- ibv_ud_pingpong -c -n 100 -s 500
unset UROCE_PCAP
files=("$dir"/t-*.pcap)
# one trace per process: 2 servers + 2 clients
[ ${#files[@]} -eq 4 ] || fail "expected 4 traces, found ${#files[@]}"
total=0
for f in "${files[@]}"; do
	n=$(ts -r "$f" | wc -l)
	ib=$(ts -r "$f" -Y infiniband | wc -l)
	bad=$(ts -r "$f" -Y _ws.malformed | wc -l)
	echo "$(basename "$f"): $n packets, $ib InfiniBand, $bad malformed"
	[ "$n" -gt 100 ] || fail "$f: only $n packets traced"
	[ "$ib" -eq "$n" ] || fail "$f: $((n - ib)) packets not decoded as InfiniBand"
	[ "$bad" -eq 0 ] || fail "$f: $bad malformed packets"
	# tshark 4.0 shows the ICRC but does not check it: an independent
	# check (zlib over the Annex A17 pseudo packet) does.
	"$PY" "$(dirname "$0")/icrc_check.py" "$f" || fail "$f: bad ICRCs"
	total=$((total + n))
done
# Each packet is in the sender's and the receiver's trace: on this lossless
# link every (opcode, QP, PSN) appears an even number of times over all
# traces (twice, or more when the requester resent it).
for f in "${files[@]}"; do
	ts -r "$f" -T fields -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn
done | sort | uniq -c | awk '$1 % 2 { bad++ } END { exit bad > 0 }' ||
	fail "a packet is in one trace but not the other (lost or not traced)"
pass "traces: $total packet records, every packet in both the sender's and the receiver's trace, all decode"

# The bound: 20 KiB holds only some of the packets; the file stays valid.
export UROCE_PCAP=$dir/b-%p.pcap UROCE_PCAP_MAX=20K
pair veth $VETH_A $DEV_A $GID_A $VETH_B $DEV_B $GID_B $ADDR_A -- ibv_rc_pingpong -c -n 200 -s 3000
unset UROCE_PCAP UROCE_PCAP_MAX
for f in "$dir"/b-*.pcap; do
	sz=$(stat -c %s "$f")
	[ "$sz" -le 20480 ] || fail "$f: $sz bytes, over the 20 KiB bound"
	n=$(ts -r "$f" | wc -l)
	[ "$n" -gt 0 ] || fail "$f: empty"
	pass "bounded trace $(basename "$f"): $sz bytes, $n packets"
done

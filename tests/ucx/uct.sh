#!/bin/bash
# UCX's UCT transports over uroce with the stock ucx_perftest: rc_verbs
# (active messages, RDMA put/get, atomics) and ud_verbs (active messages),
# on lo and across two namespaces over a veth.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
need_ucx
use_private_registry
ucx_places

uct() {
	local where=$1 s=$2 c=$3 a=$4 d=(-d $UDEV:1)
	local lat=(-n ${LAT_ITERS:-1000} -w 100) bw=(-n ${BW_ITERS:-2000} -w 100)
	perf $where $s $c $a 1000 -- -t am_lat -x rc_verbs "${d[@]}" "${lat[@]}"
	perf $where $s $c $a 1000 -- -t put_lat -x rc_verbs "${d[@]}" "${lat[@]}"
	perf $where $s $c $a 1000 -- -t add_lat -x rc_verbs "${d[@]}" "${lat[@]}"
	perf $where $s $c $a 1000 -- -t fadd -x rc_verbs "${d[@]}" "${lat[@]}"
	perf $where $s $c $a 1000 -- -t cswap -x rc_verbs "${d[@]}" "${lat[@]}"
	perf $where $s $c $a 100 -- -t am_bw -x rc_verbs -D short "${d[@]}" "${bw[@]}"
	perf $where $s $c $a 100 -- -t am_bw -x rc_verbs -D bcopy -s 4000 "${d[@]}" "${bw[@]}"
	perf $where $s $c $a 100 -- -t put_bw -x rc_verbs -D zcopy -s 65536 "${d[@]}" -n 200 -w 10
	perf $where $s $c $a 3000 -- -t get -x rc_verbs -D zcopy -s 65536 "${d[@]}" -n 200 -w 10
	perf $where $s $c $a 1000 -- -t am_lat -x ud_verbs "${d[@]}" "${lat[@]}"
	perf $where $s $c $a 100 -- -t am_bw -x ud_verbs -D short "${d[@]}" "${bw[@]}"
	perf $where $s $c $a 100 -- -t am_bw -x ud_verbs -D bcopy -s 1000 "${d[@]}" "${bw[@]}"
}
each_place uct

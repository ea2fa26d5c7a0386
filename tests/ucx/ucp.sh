#!/bin/bash
# UCX's UCP layer over uroce with the stock ucx_perftest, restricted to
# uroce (UCX_NET_DEVICES=dev:1, UCX_TLS=rc_verbs,ud_verbs,self): wire-up
# over UD then RC lanes, eager and rendezvous (zero-copy GET/PUT) tag
# matching, one-sided put/get, device atomics, streams and active messages;
# on lo and across two namespaces over a veth.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
need_ucx
use_private_registry
ucx_places
export UCX_NET_DEVICES=$UDEV:1 UCX_TLS=rc_verbs,ud_verbs,self
# Packet counts are the proof nothing else carried the bytes: 1 MiB is at
# least 256 packets at a 4096-byte MTU (1024 over the veth: more).
ucp() {
	local where=$1 s=$2 c=$3 a=$4 lat=(-n ${LAT_ITERS:-1000} -w 100)
	perf $where $s $c $a 1000 -- -t tag_lat "${lat[@]}"
	perf $where $s $c $a 1000 -- -t tag_sync_lat "${lat[@]}"
	perf $where $s $c $a 1000 -- -t ucp_put_lat "${lat[@]}"
	perf $where $s $c $a 1000 -- -t ucp_fadd "${lat[@]}"
	perf $where $s $c $a 30 -- -t tag_bw -s 1048576 -n 30 -w 3
	perf $where $s $c $a 30 -- -t ucp_put_bw -s 1048576 -n 30 -w 3
	perf $where $s $c $a 3000 -- -t ucp_get -s 65536 -n 200 -w 10
	perf $where $s $c $a 30 -- -t stream_bw -s 65536 -n 200 -w 10
	perf $where $s $c $a 30 -- -t ucp_am_bw -s 65536 -n 200 -w 10
}
each_place ucp

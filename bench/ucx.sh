#!/bin/bash
# bench/ucx.sh: UCX over uroce next to UCX over TCP on the same path (two
# network namespaces joined by a veth), measured in the same run with the
# stock ucx_perftest: tag_lat, ucp_put_lat (median µs), tag_bw, ucp_put_bw
# (MB/s), and the ratio uroce/TCP of each.  It never judges speed; it fails
# only if a tool fails.
#
#   sudo bench/ucx.sh [BUILD_DIR]          (needs ucx-utils)
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
export UROCE=$build/cli/uroce
[ -x "$UROCE" ] || { echo "bench: build first (no $UROCE)" >&2; exit 1; }
. "$here/../tests/lib/common.sh"
. "$here/../tests/ucx/lib.sh"
need_root
need_ucx
use_private_registry
ucx_places
pass() { :; }   # perf_run's helpers report nothing here; the table does

# measure TRANSPORT TEST SIZE ITERS COLUMN: the figure of ucx_perftest's
# final line (3: median latency, 6: overall bandwidth).
measure() {
	local tls=$1 devs
	case $tls in
	uroce) devs=$UDEV:1 tls=rc_verbs,ud_verbs,self ;;
	tcp) devs=$VETH_IF tls=tcp,self ;;
	esac
	UCX_NET_DEVICES=$devs UCX_TLS=$tls perf_run veth $NS_A $NS_B $ADDR_A -- \
		-t $2 -s $3 -n $4 -w $(($4 / 10)) >&2
	echo "$PERF_FINAL" | awk -v c=$5 '{ print $c }'
}

printf '%-26s %12s %12s %8s\n' "test (veth, 2 namespaces)" "uroce" "tcp" "ratio"
row() { # LABEL UNIT TEST SIZE ITERS COLUMN
	local u t
	u=$(measure uroce $3 $4 $5 $6)
	t=$(measure tcp $3 $4 $5 $6)
	printf '%-26s %12s %12s %8s\n' "$1" "$u $2" "$t $2" \
		"$(awk -v a="$u" -v b="$t" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')"
}
row "tag_lat 8 B (median)" us tag_lat 8 ${LAT_ITERS:-5000} 2
row "ucp_put_lat 8 B (median)" us ucp_put_lat 8 ${LAT_ITERS:-5000} 2
row "tag_bw 1 MiB" MB/s tag_bw 1048576 ${BW_ITERS:-100} 6
row "ucp_put_bw 1 MiB" MB/s ucp_put_bw 1048576 ${BW_ITERS:-100} 6
echo "(ratio = uroce / tcp: below 1 is better for latency, above 1 for bandwidth)"

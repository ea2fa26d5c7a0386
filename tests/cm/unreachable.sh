#!/bin/bash
# A host with a uroce address but no uroce process (so nothing answers QP1,
# not even REJ 8): the client's CM resends its REQ / SIDR_REQ as the
# kernel's does (CM response timeout and max_cm_retries of the request,
# docs/cm.md) and then reports RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT:
#   REQ:      16 sends, 2 * 2^(18-8) + 2^(20-8) ms apart: ~98 s
#   SIDR_REQ: 16 sends, 2^(20-8) ms apart:                 ~66 s
# rping -c and udaddy -s must then exit non-zero, within those bounds.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
use_private_registry
cm_setup
CM_TIMEOUT=200
port=$((45000 + RANDOM % 1000))
rlog=$(mktemp /tmp/i11cm-unr.XXXXXX) ulog=$(mktemp /tmp/i11cm-unr.XXXXXX)
on_exit "rm -f '$rlog' '$ulog'"
# Both clients at once, in namespace B; nobody runs in namespace A.
start=$(date +%s)
(rc=0; UROCE_CM_DEBUG=2 cm_run $CM_B_NS rping -c -a $CM_A_ADDR -p $port -C 1 >"$rlog" 2>&1 || rc=$?
 echo "rc=$rc after $(( $(date +%s) - start )) s" >>"$rlog") &
rpid=$!
(rc=0; UROCE_CM_DEBUG=2 cm_run $CM_B_NS udaddy -s $CM_A_ADDR -C 1 >"$ulog" 2>&1 || rc=$?
 echo "rc=$rc after $(( $(date +%s) - start )) s" >>"$ulog") &
upid=$!
on_exit "kill $rpid $upid"
wait $rpid $upid || true

# check NAME LOG EVENT-RE ATTR MIN_S MAX_S
check() {
	local name=$1 log=$2 ev=$3 attr=$4 min=$5 max=$6 rc secs sends
	rc=$(sed -n 's/^rc=\([0-9]*\) after .*/\1/p' "$log")
	secs=$(sed -n 's/^rc=[0-9]* after \([0-9]*\) s/\1/p' "$log")
	sends=$(grep -c "sends $attr -> 0\|resends $attr " "$log" || true)
	if [ -z "$rc" ] || [ "$rc" = 0 ] || [ "$rc" = 124 ] || ! grep -Eq "$ev" "$log" ||
	   [ "$secs" -lt $min ] || [ "$secs" -gt $max ] || [ "$sends" -ne 16 ]; then
		grep -v '^uroce cm' "$log" | tail -20
		fail "$name: exit $rc after ${secs}s, $sends ${attr}s sent, wanted UNREACHABLE ($ev) in $min-$max s after 16"
	fi
	pass "$name to a host with no uroce process: exit $rc after ${secs}s, $sends ${attr}s sent, $(grep -Eo "$ev" "$log" | head -1)"
}
check "rping -c" "$rlog" 'RDMA_CM_EVENT_UNREACHABLE, error -110' REQ 90 125
check "udaddy -s" "$ulog" 'RDMA_CM_EVENT_UNREACHABLE.*-110' SIDR_REQ 60 95

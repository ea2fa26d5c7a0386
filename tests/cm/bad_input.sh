#!/bin/bash
# Bad input through stock librdmacm: private data over a REQ's room
# (EINVAL, bad_input.py) and a multicast join with mckey (refused with one line on
# stderr: the CM emulation has no rdma_join_multicast; verbs multicast works).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
use_private_registry
cm_setup
port=$((7500 + RANDOM % 100))
cm_server $CM_LO_NS 'uroce cm: listening' rping -s -a 127.0.0.1 -p $port -C 1
cm_run $CM_LO_NS $PY "$(dirname "$0")/bad_input.py" $port || fail "bad input checks"
# (the server's peer sent no pings: its exit status says nothing here)
kill $(pgrep -P $CM_SRV_PID) 2>/dev/null || true
wait $CM_SRV_PID || true
rc=0
out=$(cm_run $CM_LO_NS mckey -b 127.0.0.1 -m 224.0.0.251 -C 1 2>&1) || rc=$?
echo "$out" | grep -q 'not implemented by uroce.s rdma CM' || { echo "$out"; fail "mckey: no clear reason"; }
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "mckey: exit $rc"
pass "mckey: refused (exit $rc): $(echo "$out" | grep 'not implemented by uroce.s rdma CM')"

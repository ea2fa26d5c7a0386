#!/bin/bash
# Bad input through stock librdmacm: private data over a REQ's room
# (EINVAL, bad_input.py).  (Bad multicast joins are in mckey.sh.)
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

#!/bin/bash
# Without `uroce run` (no liburoce-preload.so), creating a completion
# channel on a uroce device fails cleanly: EINVAL and a message saying
# why, never a garbage fd.
. "$(dirname "$0")/../lib/common.sh"
need_root
isolate_netns "$@"
use_private_registry
add_dev uroce0 lo
# The environment `uroce run` would set, minus the preload.
eval "$("$UROCE" run env | grep -E '^(SYSFS_PATH|RDMAV_DRIVERS)=' | sed 's/^/export /')"
out=$(env -u LD_PRELOAD timeout 30 "$PY" - <<'PYEOF' 2>&1
import errno
import pyverbs.device as d
from pyverbs.cq import CompChannel
from pyverbs.pyverbs_error import PyverbsRDMAError
ctx = d.Context(name='uroce0')
try:
    ch = CompChannel(ctx)
    print("UNEXPECTED: channel fd", ch.fd)
except PyverbsRDMAError as ex:
    print("errno", ex.error_code)
PYEOF
)
echo "$out"
grep -q '^errno 22$' <<<"$out" || fail "ibv_create_comp_channel without the preload did not fail with EINVAL"
grep -q 'liburoce-preload.so is not loaded' <<<"$out" || fail "no message saying why"
pass "no preload: EINVAL and a message"

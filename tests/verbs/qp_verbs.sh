#!/bin/bash
# The verbs layer of the data path (QP, SRQ, AH, post, ibv_wr_*) through
# pyverbs, then what pyverbs cannot show (EBUSY on objects in use,
# ibv_create_ah_from_wc) in C; a device on lo, no traffic needed.
. "$(dirname "$0")/../lib/common.sh"
need_root
isolate_netns "$@"
use_private_registry
dev=vq$(uniq_id)
add_dev "$dev" lo
here=$(cd "$(dirname "$0")" && pwd)
timeout 120 "$UROCE" run "$PY" "$here/qp_verbs.py" "$dev" || fail "pyverbs QP/SRQ/AH/post checks"
pass "verbs layer (pyverbs)"
: "${VERBS_OBJECTS:?VERBS_OBJECTS must name the verbs_objects binary}"
timeout 60 "$UROCE" run "$VERBS_OBJECTS" "$dev" || fail "PD/CQ/SRQ in use, create_ah_from_wc, resize_cq"
pass "verbs objects (C)"

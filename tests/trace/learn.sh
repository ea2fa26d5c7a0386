#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# docs/learn/generate.sh regenerates a walkthrough from a real run: the
# rc_pingpong page, into a scratch directory, must hold the explanation,
# one message's timeline (post, packets, the peer's completion, the ACK,
# the completion) and a well-formed diagram.
. "$(dirname "$0")/../lib/common.sh"
need_root
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/uroce-learn17.XXXXXX)
[ -n "${KEEP:-}" ] || on_exit "rm -rf '$dir'"
"$top/docs/learn/generate.sh" -o "$dir" rc_pingpong || fail "generate.sh failed"
md=$dir/rc_pingpong.md
for want in '^# SEND/RECV on an RC QP: ibv_rc_pingpong$' \
	    'ibv_post_send wr_id 0x2 SEND, 3000 bytes' \
	    'WQE wr_id 0x2 SEND starts: 3 packet(s), PSN [0-9]*\.\.[0-9]*' \
	    '--> RC_SEND_FIRST PSN [0-9]*, 1024 bytes' \
	    '<-- RC_SEND_LAST PSN [0-9]*, 952 bytes, AckReq' \
	    'completion wr_id 0x1 RECV success, 3000 bytes' \
	    '--> RC_ACKNOWLEDGE PSN [0-9]*: everything up to here arrived' \
	    'completion wr_id 0x2 SEND success' \
	    '!\[sequence diagram\](rc_pingpong.svg)'; do
	grep -q -- "$want" "$md" || { cat "$md"; fail "the page lacks: $want"; }
done
"$PY" -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$dir/rc_pingpong.svg" ||
	fail "rc_pingpong.svg is not well-formed"
pass "docs/learn/rc_pingpong.md regenerated from a real run with its key lines and diagram"

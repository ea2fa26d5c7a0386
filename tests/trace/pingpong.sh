#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# UROCE_TRACE end to end: unmodified ibv_rc_pingpong between two
# namespaces, each process tracing to its own pcapng.  tshark opens both
# files without a warning and decodes the packets (RoCEv2) and the events
# (systemd journal entries); `uroce trace --wr 2 --nth 5` merges them and
# shows, for that one send WQE and in this order: the post, the PSNs it
# takes, its packets leaving, arriving at the peer, the peer's receive
# completion, the peer's ACK, its arrival and the sender's completion
# (in causal order: each step after what causes it).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
need_root
command -v tshark >/dev/null || skip "tshark not installed"
use_private_registry
veth_pair_with_devices 38
dir=$(mktemp -d /tmp/uroce-trace17.XXXXXX)
[ -n "${KEEP:-}" ] || on_exit "rm -rf '$dir'"

export UROCE_TRACE=$dir/t-%p.pcapng
pair veth $VETH_A $DEV_A $GID_A $VETH_B $DEV_B $GID_B $ADDR_A -- ibv_rc_pingpong -n 20 -s 3000
unset UROCE_TRACE
files=("$dir"/t-*.pcapng)
[ ${#files[@]} -eq 2 ] || fail "expected 2 trace files, found ${#files[@]}"

for f in "${files[@]}"; do
	# tshark's only word on stderr may be its note about running as root.
	err=$(tshark -r "$f" 2>&1 >/dev/null | grep -v '^Running as user "root"' || true)
	[ -z "$err" ] || fail "$(basename "$f"): tshark says: $err"
	all=$(tshark -r "$f" 2>/dev/null | wc -l)
	ib=$(tshark -r "$f" -Y infiniband 2>/dev/null | wc -l)
	ev=$(tshark -r "$f" -Y systemd_journal 2>/dev/null | wc -l)
	bad=$(tshark -r "$f" -Y _ws.malformed 2>/dev/null | wc -l)
	[ "$ib" -ge 100 ] || fail "$(basename "$f"): only $ib RoCEv2 packets decoded"
	[ "$ev" -ge 60 ] || fail "$(basename "$f"): only $ev events"
	[ $((ib + ev)) -eq "$all" ] || fail "$(basename "$f"): $((all - ib - ev)) records neither RoCEv2 nor events"
	[ "$bad" -eq 0 ] || fail "$(basename "$f"): $bad malformed records"
	pass "tshark opens $(basename "$f") without a warning: $ib RoCEv2 packets, $ev events"
done

"$UROCE" trace --wr 2 --nth 5 "${files[@]}" >"$dir/wr.txt" || fail "uroce trace failed"
cat "$dir/wr.txt"
# The steps in causal order: S is the side that posted, P its peer, F..L
# the PSNs the WQE takes.  Each packet arrives after it left; the sends
# and the arrivals may interleave.
awk '
NR == FNR {
	if (!S && /ibv_post_send wr_id 0x2 SEND, 3000 bytes/) S = $2
	if (S && !F && $2 == S && match($0, /3 packet\(s\), PSN [0-9]+\.\.[0-9]+/)) {
		split(substr($0, RSTART + 17, RLENGTH - 17), r, /\.\./)
		F = r[1] + 0; L = r[2] + 0; M = (F + 1) % 16777216
	}
	next
}
FNR == 1 {
	if (!F) { print "no post/WQE of wr_id 2 found"; bad = 1; exit }
	P = (S == "A") ? "B" : "A"
	n = split("post wqe txF txM txL rxF rxM rxL rcqe acktx ackrx scqe", key, " ")
	re["post"] = S SUBSEP "ibv_post_send wr_id 0x2 SEND, 3000 bytes"
	re["wqe"] = S SUBSEP "WQE wr_id 0x2 SEND starts"
	re["txF"] = S SUBSEP "--> RC_SEND_FIRST PSN " F ","
	re["txM"] = S SUBSEP "--> RC_SEND_MIDDLE PSN " M ","
	re["txL"] = S SUBSEP "--> RC_SEND_LAST PSN " L ", .*AckReq"
	re["rxF"] = P SUBSEP "<-- RC_SEND_FIRST PSN " F ","
	re["rxM"] = P SUBSEP "<-- RC_SEND_MIDDLE PSN " M ","
	re["rxL"] = P SUBSEP "<-- RC_SEND_LAST PSN " L ","
	re["rcqe"] = P SUBSEP "completion wr_id 0x1 RECV success, 3000 bytes"
	re["acktx"] = P SUBSEP "--> RC_ACKNOWLEDGE PSN " L ":"
	re["ackrx"] = S SUBSEP "<-- RC_ACKNOWLEDGE PSN " L ":"
	re["scqe"] = S SUBSEP "completion wr_id 0x2 SEND success"
}
{
	for (i = 1; i <= n; i++) {
		split(re[key[i]], w, SUBSEP)
		if (!(key[i] in at) && $2 == w[1] && $0 ~ w[2])
			at[key[i]] = FNR
	}
}
END {
	if (bad) exit 1
	for (i = 1; i <= n; i++)
		if (!(key[i] in at)) { split(re[key[i]], w, SUBSEP); print "missing: side " w[1] " \"" w[2] "\""; exit 1 }
	m = split("post<wqe wqe<txF txF<txM txM<txL txF<rxF txM<rxM txL<rxL rxF<rxM rxM<rxL " \
		  "rxL<rcqe rcqe<acktx acktx<ackrx ackrx<scqe", order, " ")
	for (i = 1; i <= m; i++) {
		split(order[i], o, "<")
		if (at[o[1]] >= at[o[2]]) { print "out of order: " o[1] " (line " at[o[1]] ") not before " o[2] " (line " at[o[2]] ")"; exit 1 }
	}
	print "side " S " posted wr_id 2 (PSN " F ".." L "); every step found, in causal order, on both sides"
}' "$dir/wr.txt" "$dir/wr.txt" || fail "the timeline of one WR is incomplete"
pass "uroce trace --wr 2 --nth 5: post, PSNs, packets, peer completion, ACK, completion in order"

# The SVG view of the same: well-formed, two lifelines and an arrow per
# packet (three SEND packets, one ACK).
"$UROCE" trace --svg --wr 2 --nth 5 "${files[@]}" >"$dir/wr.svg"
"$PY" -c 'import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1]); n = len(d.getElementsByTagName("line"))
sys.exit(0 if n >= 6 else "only %d lines in the diagram" % n)' "$dir/wr.svg" ||
	fail "the SVG diagram is not well-formed or has no arrows"
pass "uroce trace --svg: a well-formed sequence diagram"

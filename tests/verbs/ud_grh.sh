#!/bin/bash
# UD receive completions as RoCEv2 defines them (ud_grh.c), and their GRH
# areas byte for byte against the IPv4 header rxe writes (its UD capture)
# and the IPv6 header, also for packets a plain UDP socket sends with a
# TOS/TTL/flow label of its own (ud_grh.py); a device on the lo of a
# namespace of the test's own (no other process shares its addresses, so
# no packet is passed on between processes), with an IPv4 and an IPv6 GID.
. "$(dirname "$0")/../lib/common.sh"
need_root
use_private_registry
: "${UD_GRH:?UD_GRH must name the ud_grh binary}"
here=$(cd "$(dirname "$0")" && pwd)
pcap=${RXE_PCAP_DIR:-/work/shared/pcap/rxe}/ud_send.pcap
[ -f "$pcap" ] || skip "no rxe UD capture ($pcap; set RXE_PCAP_DIR)"
dev=vg$(uniq_id)
ns=uroceG$(uniq_id)
make_ns $ns
add_dev "$dev" lo $ns
out=$(mktemp /tmp/uroce-udgrh.XXXXXX)
on_exit "rm -f '$out'"
timeout 60 ip netns exec $ns "$UROCE" run "$UD_GRH" "$dev" >"$out" || { cat "$out"; fail "UD completions"; }
grep -c '^ok' "$out" | xargs -I{} echo "ok: {} completion checks"
timeout 90 ip netns exec $ns "$PY" "$here/ud_grh.py" "$pcap" --live "$UROCE" "$UD_GRH" "$dev" <"$out" ||
	fail "GRH area differs from rxe's"
pass "UD GRH area and completion fields"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# UROCE_TRACE on an impaired wire: ibv_rc_pingpong (4096-byte messages,
# four packets each) across tests/faults/impair's bridge dropping 5 % of
# the RC requests.  ACKs are spared: ibv_rc_pingpong has no closing
# handshake, so a lost ACK of the last message leaves the peer retrying
# into a QP that has exited (RETRY_EXC_ERR, on any RNIC; CI saw it).
# The merged timeline must show retransmissions with their cause named
# and the IBTA section (a PSN sequence error NAK, 9.7.5.1.4, or the ACK
# timeout, 9.7.6.1.3), the packets sent again, and packets marked lost;
# tshark still opens the traces without a warning.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
. "$(dirname "$0")/../faults/wire.sh"
need_root
command -v nft >/dev/null || skip "needs nft (apt-get install nftables)"
command -v tshark >/dev/null || skip "tshark not installed"
use_private_registry
impaired_pair_with_devices T tra trb
dir=$(mktemp -d /tmp/uroce-trace17.XXXXXX)
[ -n "${KEEP:-}" ] || on_exit "rm -rf '$dir'"

"$IMPAIR" set $ID loss 5 rc-only spare-acks
export UROCE_TRACE=$dir/l-%p.pcapng
pair loss $A tra $GID_A $B trb $GID_B $ADDR_A -- ibv_rc_pingpong -n 300 -s 4096
unset UROCE_TRACE
dropped=$(impair_counter dropped "$("$IMPAIR" show $ID)")
"$IMPAIR" clear $ID >/dev/null
[ "${dropped:-0}" -gt 0 ] || fail "the wire dropped nothing"
files=("$dir"/l-*.pcapng)
for f in "${files[@]}"; do
	err=$(tshark -r "$f" 2>&1 >/dev/null | grep -v '^Running as user "root"' || true)
	[ -z "$err" ] || fail "$(basename "$f"): tshark says: $err"
done
pass "tshark opens both traces of the lossy run without a warning"

"$UROCE" trace "${files[@]}" >"$dir/all.txt" || fail "uroce trace failed"
nak=$(grep -c 'retransmit after a PSN sequence error NAK, PSN [0-9]*.*(IBTA 9\.7\.5\.1\.4)' "$dir/all.txt" || true)
tmo=$(grep -c 'retransmit after the local ACK timeout, PSN [0-9]*.*(IBTA 9\.7\.6\.1\.3)' "$dir/all.txt" || true)
probe=$(grep -c 'early retransmit .*(IBTA 9\.7\.6\.1\.3)' "$dir/all.txt" || true)
nak_sent=$(grep -c 'PSN sequence error NAK sent, PSN [0-9]*, expected PSN [0-9]* (IBTA 9\.7\.5\.1\.4)' "$dir/all.txt" || true)
again=$(grep -c '\[sent again' "$dir/all.txt" || true)
lost=$(grep -c '\[LOST: never arrived\]' "$dir/all.txt" || true)
why=$(grep -c 'why: IBTA 9\.7\.5\.1\.4, retransmit after a PSN sequence error NAK: .*go-back-N' "$dir/all.txt" || true)
echo "wire dropped $dropped; timeline: $nak_sent NAKs sent, $nak resends after a NAK, $tmo after a timeout," \
	"$probe early, $again packets sent again, $lost lost"
[ $((nak + tmo)) -ge 1 ] || fail "no retransmission with its cause (NAK or timeout) in the timeline"
[ "$again" -ge 1 ] || fail "no packet marked as sent again"
# Every packet the wire dropped is one the timeline shows as never
# arriving (more only if a socket dropped some too).
[ "$lost" -ge "$dropped" ] || fail "$dropped packets dropped by the wire, only $lost marked lost"
[ "$nak" -eq 0 ] || [ "$why" -ge 1 ] || fail "a NAK retransmission without its explanation"
grep -m1 -B2 -A3 'retransmit after' "$dir/all.txt"
pass "loss 5 %: retransmissions named with their IBTA section ($nak after a NAK, $tmo after a timeout)"

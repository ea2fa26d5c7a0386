#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Wireshark as an independent decoder of the CM MADs uroce builds.
# usage: cm_tshark.sh CM_VECTORS
# One packet of every CM attribute, as the GSI sends it (UD SEND_ONLY to
# QP 1, Q_Key 0x80010000, ICRC): tshark decodes each as InfiniBand CM with
# the attribute ID, TID, Q_Key, dest QP and ICRC we wrote, and raises no
# expert note and finds nothing malformed.
set -euo pipefail
vectors=$1
command -v tshark >/dev/null || { echo "tshark not installed: skip"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
ts() { tshark "$@" 2>/dev/null; }

"$vectors" pcapgen "$dir/cm.pcap" >"$dir/want.txt"
ts -r "$dir/cm.pcap" -T fields -E separator=, -e infiniband.mad.attributeid \
	-e infiniband.mad.transactionid -e infiniband.deth.q_key -e infiniband.bth.destqp \
	-e infiniband.invariant.crc >"$dir/got.txt"
if ! diff -u "$dir/want.txt" "$dir/got.txt"; then
	echo "FAIL: tshark decodes our CM packets differently (- expected, + tshark)"
	fail=1
fi
want=$(wc -l <"$dir/want.txt")
cm=$(ts -r "$dir/cm.pcap" -Y "infiniband.mad.mgmtclass == 0x07" | wc -l)
echo "CM packets: $want built, decoded as InfiniBand CM: $cm"
[ "$cm" -eq "$want" ] || { echo "FAIL: not every packet decoded as CM"; fail=1; }
warn=$(ts -r "$dir/cm.pcap" -Y "_ws.malformed || _ws.expert" | wc -l)
echo "malformed or expert notes: $warn"
[ "$warn" -eq 0 ] || {
	ts -r "$dir/cm.pcap" -Y "_ws.malformed || _ws.expert" -V | grep -iE "expert|malformed" | head
	fail=1
}
ts -r "$dir/cm.pcap" | sed 's/^ */  /'
exit $fail

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Check the ICRC of every IPv4 RoCEv2 packet of a pcap file with scapy's
own RoCE layer (scapy.contrib.roce computes the ICRC over the packet's
real IP header, IPv4 ID included).  Prints 'FILE: N packets, M bad';
exit 1 if any is bad or there is none, 77 without scapy."""
import sys

try:
    from scapy.all import rdpcap, raw, IP, UDP
    from scapy.contrib.roce import BTH
except ImportError:
    print("scapy not available")
    sys.exit(77)

rc = 0
for path in sys.argv[1:]:
    n = bad = 0
    for p in rdpcap(path):
        if IP not in p or UDP not in p or p[UDP].dport != 4791:
            continue
        p[UDP].decode_payload_as(BTH)
        got = raw(p)[-4:]
        p[BTH].icrc = None      # scapy computes it again when building
        want = raw(p)[-4:]
        n += 1
        if got != want:
            bad += 1
            if bad <= 5:
                print("%s: packet with IPv4 ID %d: ICRC %s, scapy says %s"
                      % (path, p[IP].id, got.hex(), want.hex()))
    print("%s: %d packets, %d bad (scapy)" % (path, n, bad))
    if n == 0 or bad:
        rc = 1
sys.exit(rc)

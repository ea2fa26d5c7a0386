#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Compare the GRH areas ud_grh printed with the header rxe writes there.

rxe (rxe_resp.c, execute()) copies the packet's own IP header into a UD
receive buffer: for IPv4, 20 zero bytes then the 20-byte IPv4 header; for
IPv6, the 40-byte IPv6 header.  The IPv4 fields a UDP socket cannot show
(TOS, flags, TTL) are taken from rxe's own UD SEND packets in the reference
capture, so the expected header is rxe's header with our addresses and
length; the ID is 0 and the checksum is scapy's.  IPv6 (no rxe capture): the
header scapy builds for hop limit 64, traffic class and flow label 0.
usage: ud_grh.py RXE_UD_PCAP < ud_grh-output
"""
import sys

from scapy.all import IP, UDP, IPv6, rdpcap, raw

pcap = sys.argv[1]
rxe = [p[IP] for p in rdpcap(pcap) if IP in p and UDP in p and p[UDP].dport == 4791]
if not rxe:
    sys.exit(f"FAIL: no RoCEv2 packets in {pcap}")
ref = rxe[0]
# What every rxe UD packet of the capture has in common with the others.
for p in rxe:
    if (p.version, p.ihl, p.tos, p.flags, p.frag, p.ttl, p.proto) != \
       (ref.version, ref.ihl, ref.tos, ref.flags, ref.frag, ref.ttl, ref.proto):
        sys.exit(f"FAIL: rxe capture headers differ: {p.summary()}")
print(f"ok: rxe IPv4 UD header: ihl {ref.ihl} tos {ref.tos} flags {ref.flags} "
      f"ttl {ref.ttl} proto {ref.proto}")

bad = seen = 0
for line in sys.stdin:
    if not line.startswith("grh "):
        continue
    _, fam, udp_payload, src, dst, got = line.split()
    got = bytes.fromhex(got)
    n = int(udp_payload) + 8
    if fam == "ipv4":
        hdr = IP(version=4, ihl=ref.ihl, tos=ref.tos, len=20 + n, id=0, flags=ref.flags,
                 frag=ref.frag, ttl=ref.ttl, proto=ref.proto, src=src, dst=dst)
        want = bytes(20) + raw(hdr)[:20]
    else:
        want = raw(IPv6(tc=0, fl=0, plen=n, nh=17, hlim=64, src=src, dst=dst))[:40]
    seen += 1
    if got != want:
        bad += 1
        print(f"FAIL: {fam} {udp_payload}: got  {got.hex()}\n"
              f"      {' ' * len(fam)} {' ' * len(udp_payload)}  want {want.hex()}")
    else:
        print(f"ok: {fam} GRH area of a {udp_payload}-byte RoCEv2 datagram matches rxe's layout")
if seen == 0:
    sys.exit("FAIL: no GRH areas to compare")
sys.exit(1 if bad else 0)

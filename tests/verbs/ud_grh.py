#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Compare UD receive GRH areas byte for byte with the header rxe writes.

rxe (rxe_resp.c, execute()) copies the packet's own IP header into a UD
receive buffer: for IPv4, 20 zero bytes then the 20-byte IPv4 header; for
IPv6, the 40-byte IPv6 header.

1. The areas ud_grh printed (stdin; uroce to uroce): the IPv4 fields uroce
   senders leave to the kernel (TOS, flags, TTL) must be those of rxe's own
   UD SEND packets in the reference capture, so the expected header is rxe's
   header with our addresses and length, ID 0, checksum by scapy.  IPv6:
   scapy's header for hop limit 64 and traffic class 0; the flow label is
   the one the sending kernel chose (Linux labels IPv6 flows itself), so it
   is read back, not predicted.
2. With --live UROCE UD_GRH DEV: for IPv4 and IPv6, a UD SEND built by scapy
   (ICRC included) leaves a plain UDP socket with a TOS/traffic class, TTL/
   hop limit (and IPv6 flow label) of our choosing; the GRH area ud_grh
   receives must carry exactly those.
usage: ud_grh.py RXE_UD_PCAP [--live UROCE UD_GRH DEV] < ud_grh-output
"""
import socket
import struct
import subprocess
import sys
import zlib

from scapy.all import IP, UDP, IPv6, Raw, rdpcap, raw
from scapy.contrib.roce import BTH, opcode

QKEY = 0x11111111
bad = 0


def report(ok, what, got=b"", want=b""):
    global bad
    if ok:
        print(f"ok: {what}")
    else:
        bad += 1
        print(f"FAIL: {what}\n  got  {got.hex()}\n  want {want.hex()}")


def ipv4_area(src, dst, udp_len, tos, flags, ttl):
    hdr = IP(version=4, ihl=5, tos=tos, len=20 + udp_len, id=0, flags=flags, frag=0,
             ttl=ttl, proto=17, src=src, dst=dst)
    return bytes(20) + raw(hdr)[:20]


def ipv6_area(src, dst, udp_len, tc, fl, hlim):
    return raw(IPv6(tc=tc, fl=fl, plen=udp_len, nh=17, hlim=hlim, src=src, dst=dst))[:40]


def roce_ud_send(ip, sport, qpn, body, tc, fl, hlim):
    """BTH + DETH/payload + ICRC of an IPv6 RoCEv2 UD SEND ONLY (scapy's ICRC
    covers IPv4 only): CRC-32 over 8 bytes of ones, the IPv6 header with
    traffic class, flow label and hop limit set to ones, the UDP header with
    its checksum set to ones, the BTH with its reserved/FECN/BECN byte set to
    ones, and the payload (IBTA A17.4.1); sent least significant byte first."""
    bth = struct.pack("!BBHII", opcode("UD", "SEND_ONLY")[0], 0, 0xffff, qpn, 1)
    masked = bytearray(bth)
    masked[4] = 0xff
    udp_len = 8 + len(bth) + len(body) + 4
    ps = raw(IPv6(src=ip, dst=ip, tc=0xff, fl=0xfffff, hlim=0xff, plen=udp_len, nh=17))
    ps += struct.pack("!HHHH", sport, 4791, udp_len, 0xffff) + bytes(masked) + body
    icrc = zlib.crc32(b"\xff" * 8 + ps) & 0xffffffff
    return bth + body + struct.pack("<I", icrc)


pcap = sys.argv[1]
rxe = [p[IP] for p in rdpcap(pcap) if IP in p and UDP in p and p[UDP].dport == 4791]
if not rxe:
    sys.exit(f"FAIL: no RoCEv2 packets in {pcap}")
ref = rxe[0]
for p in rxe:
    if (p.version, p.ihl, p.tos, p.flags, p.frag, p.ttl, p.proto) != \
       (ref.version, ref.ihl, ref.tos, ref.flags, ref.frag, ref.ttl, ref.proto):
        sys.exit(f"FAIL: rxe capture headers differ: {p.summary()}")
print(f"ok: rxe IPv4 UD header: ihl {ref.ihl} tos {ref.tos} flags {ref.flags} "
      f"ttl {ref.ttl} proto {ref.proto}")

seen = 0
for line in sys.stdin:
    if not line.startswith("grh "):
        continue
    _, fam, udp_payload, src, dst, got = line.split()
    got = bytes.fromhex(got)
    n = int(udp_payload) + 8
    if fam == "ipv4":
        want = ipv4_area(src, dst, n, ref.tos, ref.flags, ref.ttl)
    else:
        fl = struct.unpack("!I", got[:4])[0] & 0xfffff
        want = ipv6_area(src, dst, n, 0, fl, 64)
    seen += 1
    report(got == want, f"{fam} GRH area of a {udp_payload}-byte RoCEv2 datagram "
           "matches rxe's layout", got, want)
if seen == 0:
    sys.exit("FAIL: no GRH areas to compare")

if len(sys.argv) > 2 and sys.argv[2] == "--live":
    uroce, ud_grh, dev = sys.argv[3:6]
    for fam, tos, ttl, fl in (("ipv4", 0x6a, 17, 0), ("ipv6", 0x6a, 9, 0x12345)):
        proc = subprocess.Popen([uroce, "run", ud_grh, dev, "listen", fam],
                                stdout=subprocess.PIPE, text=True)
        try:
            first = proc.stdout.readline().split()
            if len(first) != 3 or first[0] != "qpn":
                report(False, f"{fam}: ud_grh listen did not start ({first})")
                continue
            qpn, ip = int(first[1]), first[2]
            payload = bytes(range(64))
            deth = struct.pack("!II", QKEY, 0x000abc)   # Q_Key, source QP 0xabc
            bth = BTH(opcode=opcode("UD", "SEND_ONLY")[0], dqpn=qpn, psn=1)
            if fam == "ipv4":
                pkt = IP(src=ip, dst=ip, tos=tos, ttl=ttl, id=0, flags="DF") / \
                    UDP(sport=0xc123, dport=4791, chksum=0) / bth / Raw(deth + payload)
                roce = raw(pkt)[28:]
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
                s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, ttl)
                s.setsockopt(socket.IPPROTO_IP, 10, 2)   # IP_MTU_DISCOVER = DO: DF
                s.bind((ip, 0xc123))
                s.sendto(roce, (ip, 4791))
                want = ipv4_area(ip, ip, 8 + len(roce), tos, "DF", ttl)
            else:
                roce = roce_ud_send(ip, 0xc123, qpn, deth + payload, tos, fl, ttl)
                s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, tos)
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, ttl)
                s.setsockopt(socket.IPPROTO_IPV6, 33, 1)  # IPV6_FLOWINFO_SEND
                s.bind((ip, 0xc123))
                s.sendto(roce, (ip, 4791, fl, 0))
                want = ipv6_area(ip, ip, 8 + len(roce), tos, fl, ttl)
            s.close()
            out, _ = proc.communicate(timeout=20)
            print(out, end="")
            got = [ln for ln in out.splitlines() if ln.startswith("grh ")]
            got = bytes.fromhex(got[0].split()[-1]) if got else b""
            report(proc.returncode == 0 and got == want,
                   f"{fam} GRH area carries the sender's TOS/TTL (and flow label)", got, want)
        finally:
            if proc.poll() is None:
                proc.kill()
sys.exit(1 if bad else 0)

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Hostile RoCEv2 traffic at a live uroce device, built with scapy.

    hostile.py IFACE TARGET_IP SECONDS_TO_LEARN [frames]

Sniffs IFACE to learn the live QPs at TARGET_IP (destination QPNs of RC
and UD packets going there) and the PSNs in use -- until it has seen an
RC and a UD QP, or SECONDS_TO_LEARN have passed -- then sends classes of
bad packets at TARGET_IP:4791 and prints, per class, how many it sent
("sent CLASS N"), so the caller can compare with uroce's drop counters:

  random      random bytes, 0-200 long
  unknown_qp  well-formed RC SEND_ONLY/WRITE_ONLY, good ICRC, QPN unused
  bad_icrc    well-formed packets to live QPs, ICRC wrong
  bad_pkey    good ICRC, live QP, P_Key 0x1234
  bad_qkey    UD SEND_ONLY to the live UD QP with a wrong Q_Key
  bad_psn     WRITE_ONLY / SEND_ONLY / READ / atomics to live RC QPs with
              PSNs far from the expected one, keys and addresses random,
              lengths past any MR
  stale_resp  ACKs/NAKs/read responses to live QPs for PSNs never sent
  bad_iplen   (with "frames": a target that reads whole frames, transport
              xdp) good packets to live QPs in Ethernet frames whose IPv4
              total length claims 64 bytes more than the frame holds; a
              kernel's IP layer drops those before any UDP socket

The caller keeps the QPs alive until this script has ended (verbs_verify
-u), so every packet meets a live connection.  Each class is built just
before it is sent, from the PSNs seen just before: a "far" PSN stays at
least 3 * 2^20 away from the live one.  A PSN inside the requester's window would be indistinguishable from
a real packet (RoCE has no authentication) -- not what this test is about.
"""
import random
import struct
import sys
import time
import zlib

from scapy.all import IP, UDP, AsyncSniffer, Ether, Raw, conf, getmacbyip, send, sendp
from scapy.contrib.roce import BTH  # noqa: F401 (registers the ICRC layer)

conf.verb = 0
iface, target, learn_secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
frames = sys.argv[4:5] == ['frames']
rng = random.Random(4791)

# ---- learn the live QPs (and keep learning their PSNs) -------------------------
rc_qps, ud_qps = {}, {}


def learn(pkt):
    if IP not in pkt or UDP not in pkt or pkt[IP].dst != target or pkt[UDP].dport != 4791:
        return
    raw = bytes(pkt[UDP].payload)
    if len(raw) < 12:
        return
    opcode = raw[0]
    qpn = struct.unpack('!I', raw[4:8])[0] & 0xffffff
    psn = struct.unpack('!I', raw[8:12])[0] & 0xffffff
    if opcode >> 5 == 0:      # RC (UC's QPs would count RC packets as wrong-type drops)
        rc_qps[qpn] = psn
    elif opcode >> 5 == 3:    # UD
        ud_qps[qpn] = psn


def learn_until(done, secs):
    """Sniff (in the background, stopped at once: Python is slow to follow
    a transfer) until done() or SECS have passed."""
    sniffer = AsyncSniffer(iface=iface, prn=learn, store=False,
                           filter=f'udp dst port 4791 and dst host {target}')
    sniffer.start()
    end = time.monotonic() + secs
    while not done() and time.monotonic() < end:
        time.sleep(0.02)
    sniffer.stop()


learn_until(lambda: rc_qps and ud_qps, learn_secs)
if not rc_qps:
    print(f'no live RC QP seen in {learn_secs} s', file=sys.stderr)
    sys.exit(2)
print(f'live RC QPs {sorted(hex(q) for q in rc_qps)} UD QPs {sorted(hex(q) for q in ud_qps)}', flush=True)


# ---- packet building: our own bytes, scapy's IP/UDP and its ICRC -----------------
def bth(opcode, qpn, psn, pkey=0xffff, ackreq=False, pad=0):
    return struct.pack('!BBHII', opcode, pad << 4, pkey, qpn & 0xffffff,
                       (0x80000000 if ackreq else 0) | (psn & 0xffffff))


def frame(udp_payload_without_icrc, good_icrc=True, sport=None):
    """IP/UDP around the BTH and the rest; the ICRC computed by scapy's
    BTH layer (Annex A17), then optionally broken."""
    sport = sport or rng.randrange(49152, 65536)
    pkt = IP(dst=target, flags='DF', id=rng.randrange(65536)) / \
        UDP(sport=sport, dport=4791, chksum=0) / \
        Raw(udp_payload_without_icrc + b'\0\0\0\0')
    raw = bytearray(bytes(pkt))
    ip = bytearray(raw[:20])
    udp = bytearray(raw[20:28])
    body = bytes(raw[28:-4])
    ip[1] = 0xff; ip[8] = 0xff; ip[10:12] = b'\xff\xff'
    udp[6:8] = b'\xff\xff'
    b = bytearray(body[:12]); b[4] = 0xff
    icrc = zlib.crc32(b'\xff' * 8 + bytes(ip) + bytes(udp) + bytes(b) + body[12:])
    if not good_icrc:
        icrc ^= 1 << rng.randrange(32)
    raw[-4:] = struct.pack('<I', icrc)
    return IP(bytes(raw))


def reth(va, rkey, length):
    return struct.pack('!QII', va, rkey, length)


def far_psn(psn):
    # A quarter of the 24-bit PSN space ahead (out of sequence) or behind
    # (an old duplicate), give or take 2^20: at least 3 * 2^20 packets from
    # the live PSN, more than the transfer moves while a class is sent.
    return (psn + rng.choice([1, -1]) * ((1 << 22) + rng.randrange(-(1 << 20), 1 << 20))) & 0xffffff


sent = {}


def refresh_psns():
    """Learn the live PSNs again: the transfer has moved on meanwhile."""
    seen = dict(rc_qps)
    learn_until(lambda: any(rc_qps[q] != seen[q] for q in seen), 10)


def emit(cls, pkts, layer2=False):
    t0 = time.monotonic()
    if layer2:
        sendp(pkts, iface=iface)   # as built: the kernel's raw IP socket would fix the length
    else:
        send(pkts, iface=None)
    sent[cls] = sent.get(cls, 0) + len(pkts)
    print(f'# {cls}: {len(pkts)} packets in {time.monotonic() - t0:.1f} s', flush=True)


live = list(rc_qps)
N = 400

emit('random', [IP(dst=target) / UDP(sport=rng.randrange(1024, 65536), dport=4791, chksum=0) /
                Raw(bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200))))
                for _ in range(N)])

unused = [q for q in (0xabcde, 0x7ffff0, 0x123456, 0x3) if q not in rc_qps and q not in ud_qps]
emit('unknown_qp', [frame(bth(rng.choice([0x04, 0x0a]), rng.choice(unused), rng.randrange(1 << 24)) +
                          (reth(rng.randrange(1 << 64), rng.randrange(1 << 32), 64) if i % 2 else b'') +
                          bytes(64))
                    for i in range(N)])

emit('bad_icrc', [frame(bth(0x04, rng.choice(live), rng.randrange(1 << 24)) + bytes(rng.randrange(0, 256, 4)),
                        good_icrc=False)
                  for _ in range(N)])

refresh_psns()
emit('bad_pkey', [frame(bth(0x04, rng.choice(live), rc_qps[live[0]], pkey=0x1234) + bytes(32))
                  for _ in range(N // 2)])

if ud_qps:
    udq = list(ud_qps)[0]
    emit('bad_qkey', [frame(bth(0x64, udq, rng.randrange(1 << 24)) +
                            struct.pack('!II', 0xdeadbeef, 0x42) + bytes(16))
                      for _ in range(N // 2)])


def hostile_request(qpn):
    psn = far_psn(rc_qps[qpn])
    kind = rng.randrange(5)
    if kind == 0:   # WRITE_ONLY anywhere, any length claim
        return bth(0x0a, qpn, psn, ackreq=True) + \
            reth(rng.randrange(1 << 64), rng.randrange(1 << 32), rng.choice([8, 1 << 20, 0xffffffff])) + bytes(8)
    if kind == 1:   # SEND_ONLY bigger than any receive buffer
        return bth(0x04, qpn, psn, ackreq=True) + bytes(1024)
    if kind == 2:   # READ of a huge range
        return bth(0x0c, qpn, psn, ackreq=True) + reth(rng.randrange(1 << 64), rng.randrange(1 << 32), 0x7fffffff)
    if kind == 3:   # FETCH_ADD / CMP_SWAP anywhere
        return bth(rng.choice([0x13, 0x14]), qpn, psn, ackreq=True) + \
            struct.pack('!QIQQ', rng.randrange(1 << 64) & ~7, rng.randrange(1 << 32), 1, 0)
    return bth(0x07, qpn, psn) + bytes(256)   # WRITE_MIDDLE out of nowhere


refresh_psns()
emit('bad_psn', [frame(hostile_request(rng.choice(live))) for _ in range(N)])


def stale_response(qpn):
    psn = far_psn(rc_qps[qpn])
    op = rng.choice([0x11, 0x10, 0x12])
    syndrome = rng.choice([0x1f, 0x60, 0x62, 0x63, 0x20])
    aeth = struct.pack('!I', syndrome << 24 | rng.randrange(1 << 24))
    tail = {0x11: b'', 0x10: bytes(64), 0x12: bytes(8)}[op]
    return bth(op, qpn, psn) + aeth + tail


refresh_psns()
emit('stale_resp', [frame(stale_response(rng.choice(live))) for _ in range(N // 2)])

if frames:
    mac = getmacbyip(target)

    def long_claim(p):
        p = IP(bytes(p))
        p.len += 64          # scapy keeps a length it was given, and sums the header again
        del p.chksum
        return Ether(dst=mac) / p
    refresh_psns()
    emit('bad_iplen', [long_claim(frame(bth(0x04, rng.choice(live), rng.randrange(1 << 24)) + bytes(64)))
                       for _ in range(N // 4)], layer2=True)

for cls, n in sent.items():
    print(f'sent {cls} {n}')

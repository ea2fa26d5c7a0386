#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Check the ICRC of every RoCEv2 packet in pcap files, independently of
uroce's C code: zlib's CRC-32 over the IBTA Annex A17 pseudo packet, and
for IPv4 also scapy's own ICRC (scapy.contrib.roce; it has none for IPv6),
both over the IP header as captured, its real IPv4 ID included.
Prints 'FILE: N packets, M bad' per file; exit 1 if any is bad or a file
has no RoCEv2 packet."""
import struct
import sys
import zlib

try:
    import logging
    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
    from scapy.all import Ether, IP
    from scapy.contrib.roce import BTH
except ImportError:
    BTH = None


def packets(path):
    with open(path, 'rb') as f:
        data = f.read()
    magic = struct.unpack_from('<I', data)[0]
    assert magic in (0xa1b2c3d4, 0xa1b23c4d), 'not a little-endian pcap'
    off = 24
    while off + 16 <= len(data):
        caplen = struct.unpack_from('<I', data, off + 8)[0]
        yield data[off + 16:off + 16 + caplen]
        off += 16 + caplen


def icrc_ok(frame):
    eth_type = struct.unpack_from('!H', frame, 12)[0]
    if eth_type == 0x0800:
        ip = bytearray(frame[14:34])
        if ip[9] != 17:
            return None
        udp = bytearray(frame[34:42])
        rest = frame[42:]
        ip[1] = 0xff
        ip[8] = 0xff
        ip[10:12] = b'\xff\xff'
    elif eth_type == 0x86dd:
        ip = bytearray(frame[14:54])
        if ip[6] != 17:
            return None
        udp = bytearray(frame[54:62])
        rest = frame[62:]
        ip[0:4] = bytes([0x6f, 0xff, 0xff, 0xff])
        ip[7] = 0xff
    else:
        return None
    if struct.unpack_from('!H', udp, 2)[0] != 4791:
        return None
    udp[6:8] = b'\xff\xff'
    bth = bytearray(rest[:12])
    bth[4] = 0xff
    body = b'\xff' * 8 + bytes(ip) + bytes(udp) + bytes(bth) + rest[12:-4]
    return zlib.crc32(body) == struct.unpack('<I', rest[-4:])[0]


def scapy_ok(frame):
    """scapy's verdict on an IPv4 RoCEv2 frame; None where it has none."""
    if BTH is None:
        return None
    pkt = Ether(frame)
    if IP not in pkt or BTH not in pkt:
        return None
    return pkt[BTH].compute_icrc(b'') == struct.pack('!I', pkt[BTH].icrc)


bad_files = 0
for path in sys.argv[1:]:
    n = bad = by_scapy = bad_scapy = 0
    for frame in packets(path):
        ok = icrc_ok(frame)
        if ok is None:
            continue
        n += 1
        bad += not ok
        ok = scapy_ok(frame)
        if ok is not None:
            by_scapy += 1
            bad_scapy += not ok
    print(f'{path}: {n} RoCEv2 packets, {bad} with a bad ICRC; '
          f'scapy checked the {by_scapy} over IPv4: {bad_scapy} bad')
    bad_files += bad > 0 or bad_scapy > 0 or n == 0
sys.exit(1 if bad_files else 0)

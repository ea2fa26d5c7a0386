#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Golden RoCEv2 vectors from an independent implementation (scapy).

usage: golden.py WIRE_VECTORS [OUTDIR]

Asks WIRE_VECTORS for the opcode table, builds random packets of every
opcode over IPv4 and IPv6 with scapy (ICRC: scapy for IPv4, our own
Annex A17 code for IPv6, cross-checked against each other on IPv4),
writes golden.pcap and golden.txt (expected fields, one line per packet)
and runs `WIRE_VECTORS golden golden.pcap golden.txt`.  Exit 77 (skip)
without scapy.
"""
import os
import random
import struct
import subprocess
import sys
import tempfile
import zlib

try:
    from scapy.all import Ether, IP, IPv6, UDP, Raw, wrpcap, raw
    from scapy.contrib.roce import BTH, AETH, CNPPadding
except ImportError:
    print("scapy not available: skip")
    sys.exit(77)

# IBTA vol. 1 table 38: base opcode -> (extended headers, payload, first, last).
# The transport (RC 0x00, UC 0x20, UD 0x60) is in the top 3 bits.
BASE = {
    0x00: ([], True, True, False),            # SEND_FIRST
    0x01: ([], True, False, False),           # SEND_MIDDLE
    0x02: ([], True, False, True),            # SEND_LAST
    0x03: (["imm"], True, False, True),       # SEND_LAST_IMM
    0x04: ([], True, True, True),             # SEND_ONLY
    0x05: (["imm"], True, True, True),        # SEND_ONLY_IMM
    0x06: (["reth"], True, True, False),      # WRITE_FIRST
    0x07: ([], True, False, False),           # WRITE_MIDDLE
    0x08: ([], True, False, True),            # WRITE_LAST
    0x09: (["imm"], True, False, True),       # WRITE_LAST_IMM
    0x0a: (["reth"], True, True, True),       # WRITE_ONLY
    0x0b: (["reth", "imm"], True, True, True),  # WRITE_ONLY_IMM
    0x0c: (["reth"], False, True, True),      # READ_REQ
    0x0d: (["aeth"], True, True, False),      # READ_RESP_FIRST
    0x0e: ([], True, False, False),           # READ_RESP_MIDDLE
    0x0f: (["aeth"], True, False, True),      # READ_RESP_LAST
    0x10: (["aeth"], True, True, True),       # READ_RESP_ONLY
    0x11: (["aeth"], False, True, True),      # ACK
    0x12: (["aeth", "atomicack"], False, True, True),  # ATOMIC_ACK
    0x13: (["atomic"], False, True, True),    # CMP_SWAP
    0x14: (["atomic"], False, True, True),    # FETCH_ADD
    0x16: (["ieth"], True, False, True),      # SEND_LAST_INV
    0x17: (["ieth"], True, True, True),       # SEND_ONLY_INV
    0x1d: (["reth"], True, True, True),       # ATOMIC_WRITE (IBTA 1.5, RC only)
}
UC_BASES = range(0x00, 0x0c)
UD_BASES = (0x04, 0x05)
# XRC (prefix 0xA0): RC's operations but ATOMIC WRITE; requests carry an
# XRCETH right after the BTH, responses (AETH) do not.
XRC_BASES = [b for b in BASE if b != 0x1d]
RESPONSES = range(0x0d, 0x13)             # READ responses, ACK, ATOMIC ACK
CNP = 0x81


def ibta_table():
    """opcode -> (headers, payload, first, last) for RC, UC, UD and CNP."""
    t = {op: BASE[op] for op in BASE}
    t.update({0x20 | b: BASE[b] for b in UC_BASES})
    # UD: the DETH comes first (IBTA 9.3.3)
    t.update({0x60 | b: (["deth"] + BASE[b][0],) + BASE[b][1:] for b in UD_BASES})
    t.update({0xa0 | b: ((BASE[b][0] if b in RESPONSES else ["xrceth"] + BASE[b][0]),)
              + BASE[b][1:] for b in XRC_BASES})
    t[CNP] = (["cnp"], False, True, True)
    return t


def icrc_a17(frame):
    """ICRC per Annex A17.3.3 over a whole Ethernet frame whose last 4
    bytes are the ICRC: 8 x 0xff, IP and UDP with the variant fields set
    to ones, BTH with byte 4 set to ones, the rest.  Returns the 4 bytes."""
    b = bytearray(frame[14:-4])
    if frame[12:14] == b"\x08\x00":
        ihl = 20
        b[1] = 0xff                     # TOS
        b[8] = 0xff                     # TTL
        b[10:12] = b"\xff\xff"          # header checksum
    else:
        ihl = 40
        b[0] |= 0x0f                    # traffic class (low nibble of byte 0)
        b[1:4] = b"\xff\xff\xff"        # traffic class and flow label
        b[7] = 0xff                     # hop limit
    b[ihl + 6:ihl + 8] = b"\xff\xff"    # UDP checksum
    b[ihl + 8 + 4] = 0xff               # BTH byte 4: FECN, BECN, resv6
    crc = zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xffffffff
    return struct.pack("<I", crc)


def rand_syndrome(r):
    """A syndrome of a defined type: ACK+credits, RNR NAK+timer, NAK+code."""
    kind = r.choice((0x00, 0x20, 0x60))
    return kind | (r.randrange(5) if kind == 0x60 else r.randrange(32))


def ext_headers(hdrs, r, f):
    """Bytes of the extended headers except the AETH (a scapy layer);
    fills F with the expected values."""
    out = b""
    for h in hdrs:
        if h == "xrceth":
            f["xrcsrq"] = r.getrandbits(24)
            out += struct.pack("!I", f["xrcsrq"])
        elif h == "deth":
            f["qkey"], f["sqpn"] = r.getrandbits(32), r.getrandbits(24)
            out += struct.pack("!II", f["qkey"], f["sqpn"])
        elif h == "reth":
            f["va"], f["rkey"], f["dmalen"] = (r.getrandbits(64), r.getrandbits(32),
                                               r.getrandbits(32))
            out += struct.pack("!QII", f["va"], f["rkey"], f["dmalen"])
        elif h == "atomic":
            f["va"], f["rkey"] = r.getrandbits(64), r.getrandbits(32)
            f["swap"], f["cmp"] = r.getrandbits(64), r.getrandbits(64)
            out += struct.pack("!QIQQ", f["va"], f["rkey"], f["swap"], f["cmp"])
        elif h == "atomicack":
            f["orig"] = r.getrandbits(64)
            out += struct.pack("!Q", f["orig"])
        elif h == "imm":
            f["imm"] = r.getrandbits(32)
            out += struct.pack("!I", f["imm"])
        elif h == "ieth":
            f["ieth"] = r.getrandbits(32)
            out += struct.pack("!I", f["ieth"])
    return out


def transport_layers(op, info, paylen, r, f):
    """scapy BTH / [AETH] / Raw(other headers, payload, pad)."""
    hdrs, _payload, _first, _last = info
    pad = (4 - paylen % 4) % 4
    f.update(op=op, dqpn=r.getrandbits(24), psn=r.getrandbits(24),
             pkey=r.getrandbits(16), se=r.getrandbits(1), m=r.getrandbits(1),
             ackreq=r.getrandbits(1), fecn=r.getrandbits(1), becn=r.getrandbits(1),
             pad=pad, paylen=paylen)
    bth = BTH(opcode=op, solicited=f["se"], migreq=f["m"], padcount=pad,
              pkey=f["pkey"], fecn=f["fecn"], becn=f["becn"], dqpn=f["dqpn"],
              ackreq=f["ackreq"], psn=f["psn"])
    if "cnp" in hdrs:
        return bth / CNPPadding()
    pl = bytes(r.getrandbits(8) for _ in range(paylen)) + b"\0" * pad
    if "aeth" in hdrs:
        f["syn"], f["msn"] = rand_syndrome(r), r.getrandbits(24)
        rest = [h for h in hdrs if h != "aeth"]
        return bth / AETH(syndrome=f["syn"], msn=f["msn"]) / Raw(ext_headers(rest, r, f) + pl)
    return bth / Raw(ext_headers(hdrs, r, f) + pl)


def rand_mac(r):
    return ":".join("%02x" % (r.getrandbits(8) & (0xfc if i == 0 else 0xff)) for i in range(6))


def frame(op, info, paylen, v6, r):
    """One Ethernet frame and its expected fields."""
    f = {"fam": 6 if v6 else 4}
    f["sport"] = r.randrange(0xc000, 0x10000)
    f["tos"], f["ttl"] = r.getrandbits(8), r.randrange(1, 256)
    eth = Ether(src=rand_mac(r), dst=rand_mac(r))
    udp = UDP(sport=f["sport"], dport=4791, chksum=0)
    tl = transport_layers(op, info, paylen, r, f)
    if v6:
        f["flow"] = r.getrandbits(20)
        ip = IPv6(src="fd00::%x:%x" % (r.getrandbits(16), r.getrandbits(16)),
                  dst="fd00:1::%x" % r.getrandbits(16), tc=f["tos"], fl=f["flow"],
                  hlim=f["ttl"])
        tl.icrc = 0                      # scapy has no IPv6 ICRC; ours below
        b = raw(eth / ip / udp / tl)
        b = b[:-4] + icrc_a17(b)
    else:
        f["id"], f["df"] = r.getrandbits(16), r.getrandbits(1)
        ip = IP(src="10.%d.%d.%d" % tuple(r.getrandbits(8) for _ in range(3)),
                dst="192.168.%d.%d" % (r.getrandbits(8), r.getrandbits(8)),
                tos=f["tos"], ttl=f["ttl"], id=f["id"], flags="DF" if f["df"] else 0)
        b = raw(eth / ip / udp / tl)     # scapy computes the ICRC
        if b[-4:] != icrc_a17(b):
            sys.exit("golden.py: scapy and Annex A17 ICRC disagree for opcode 0x%02x" % op)
    f["icrc"] = struct.unpack("<I", b[-4:])[0]
    return b, f


def paylens(info, r):
    """Payload sizes: 0..~300, every pad count for last/only packets; first
    and middle packets carry a multiple of 4 (no pad, IBTA 9.2.1)."""
    _h, payload, first, last = info
    if not payload:
        return [0] * 4
    if not last:
        return [4, 300] + [4 * r.randrange(1, 76) for _ in range(4)]
    return [0, 1, 2, 3] + [r.randrange(4, 301) for _ in range(4)]


def c_opcodes(prog):
    out = subprocess.run([prog, "opcodes"], check=True, capture_output=True, text=True).stdout
    return {int(line.split()[0], 16): line.split()[1] for line in out.splitlines() if line}


def fmt(f):
    return " ".join("%s=0x%x" % (k, v) for k, v in f.items())


def main():
    prog = sys.argv[1]
    outdir = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="uroce-golden-")
    seed = int(os.environ.get("GOLDEN_SEED", "4791"))
    r = random.Random(seed)
    table, cops = ibta_table(), c_opcodes(prog)
    missing = sorted(set(table) - set(cops))
    unknown = sorted(set(cops) - set(table))
    if missing or unknown:
        print("opcode table differs from IBTA ch. 9: missing %s, unexpected %s"
              % ([hex(x) for x in missing], [hex(x) for x in unknown]))
        return 1
    frames, lines = [], []
    for op in sorted(cops):
        for v6 in (False, True):
            for n in paylens(table[op], r):
                b, f = frame(op, table[op], n, v6, r)
                frames.append(Ether(b))
                lines.append(fmt(f))
    pcap, txt = os.path.join(outdir, "golden.pcap"), os.path.join(outdir, "golden.txt")
    wrpcap(pcap, frames)
    with open(txt, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("golden.py: seed %d, %d opcodes, %d frames in %s" % (seed, len(cops), len(frames), pcap))
    sys.stdout.flush()
    return subprocess.run([prog, "golden", pcap, txt]).returncode


if __name__ == "__main__":
    sys.exit(main())

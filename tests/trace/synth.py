#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""`uroce trace` on a synthetic exchange whose story is known (no root):
two trace files written here in UROCE_TRACE's format (docs/trace.md), a
requester (QP 18, pid 200) and a responder (QP 17, pid 100).  A 3000-byte
SEND takes PSNs 100..102; PSN 101 is lost; the responder NAKs it (PSN
sequence error), the requester goes back to it, the resend arrives, the
receive completes, the ACK completes the send.  The timeline must name
all of it: the lost packet, the resends, the NAK and the retransmission
with their IBTA section, and which packet each completion came from; a
file cut short is read up to its last whole block; tshark opens the
files without a warning.  Usage: synth.py UROCE WORKDIR"""
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "wire"))
from golden import icrc_a17  # noqa: E402  (exits 77 without scapy)

uroce, work = sys.argv[1], sys.argv[2]
T0 = 1_800_000_000_000_000_000   # ns


def block(btype, body):
    pad = (-len(body)) % 4
    n = 12 + len(body) + pad
    return struct.pack("<II", btype, n) + body + b"\0" * pad + struct.pack("<I", n)


def header():
    shb = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1) + struct.pack("<HH", 0, 0))
    opts = struct.pack("<HH", 9, 1) + b"\x09\0\0\0" + struct.pack("<HH", 0, 0)
    return shb + block(1, struct.pack("<HHI", 1, 0, 65535) + opts)


def ipsum(h):
    s = sum(struct.unpack("!10H", h))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return struct.pack("!H", ~s & 0xffff)


def frame(src, dst, opcode, dqpn, psn, payload=b"", ackreq=False, aeth=None):
    pad = (-len(payload)) % 4
    bth = struct.pack("!BBHI", opcode, pad << 4, 0xffff, dqpn & 0xffffff)
    bth += struct.pack("!I", (ackreq << 31) | (psn & 0xffffff))
    ext = struct.pack("!I", aeth) if aeth is not None else b""
    roce = bth + ext + payload + b"\0" * pad + b"\0\0\0\0"
    udp = struct.pack("!HHHH", 49152, 4791, 8 + len(roce), 0)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp) + len(roce), 0, 0x4000,
                               64, 17, 0, bytes(src), bytes(dst)))
    ip[10:12] = ipsum(bytes(ip))
    f = bytearray(b"\x02\0" + bytes(dst) + b"\x02\0" + bytes(src) + b"\x08\x00" + bytes(ip) + udp + roce)
    f[-4:] = icrc_a17(bytes(f))
    return bytes(f)


def epb(ts, data, out):
    pad = (-len(data)) % 4
    opts = struct.pack("<HHI", 2, 4, 2 if out else 1) + struct.pack("<HH", 0, 0)
    return block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xffffffff, len(data), len(data))
                 + data + b"\0" * pad + opts)


def event(ts, ev, qpn=0, msg="", **fields):
    e = "__REALTIME_TIMESTAMP=%d\nUROCE_NS=%d\nUROCE_EV=%s\n" % (ts // 1000, ts, ev)
    if qpn:
        e += "UROCE_QPN=%d\n" % qpn
    for k, v in fields.items():
        e += "UROCE_%s=%s\n" % (k, v)
    e += "MESSAGE=uroce: %s\n" % (msg or ev)
    return block(9, e.encode())


A_IP, B_IP = [10, 0, 0, 1], [10, 0, 0, 2]     # responder, requester
us = lambda n: T0 + n * 1000                    # noqa: E731


def setup(pid, comm, qpn, dest, t):
    return (event(t, "process", 0, PID=pid, COMM=comm)
            + event(t + 1, "modify", qpn, TYPE="RC", FROM="RESET", TO="INIT", ATTRS="")
            + event(t + 2, "modify", qpn, TYPE="RC", FROM="INIT", TO="RTR", DEST=dest,
                    ATTRS="dest_qp_num=%d" % dest)
            + event(t + 3, "modify", qpn, TYPE="RC", FROM="RTR", TO="RTS", ATTRS=""))


def req(t, psn, op, n, ackreq=False):
    return epb(t, frame(B_IP, A_IP, op, 17, psn, b"x" * n, ackreq), t in SENT)


SEND_FIRST, SEND_MIDDLE, SEND_LAST, ACK = 0x00, 0x01, 0x02, 0x11
SENT = set()
b = header() + setup(200, "requester", 18, 17, us(0))
a = header() + setup(100, "responder", 17, 18, us(1))
a += event(us(5), "post_recv", 17, WR="0x1", LEN=3000)
b += event(us(10), "post_send", 18, WR="0x7", OP="SEND", LEN=3000, FLAGS="0x2")
b += event(us(11), "wqe", 18, WR="0x7", OP="SEND", LEN=3000, PSN=100, NPKTS=3)
for t, psn, op, n, ar in [(12, 100, SEND_FIRST, 1024, 0), (13, 101, SEND_MIDDLE, 1024, 0),
                          (14, 102, SEND_LAST, 952, 1)]:
    b += epb(us(t), frame(B_IP, A_IP, op, 17, psn, b"x" * n, ar), True)
a += epb(us(20), frame(B_IP, A_IP, SEND_FIRST, 17, 100, b"x" * 1024), False)
a += epb(us(21), frame(B_IP, A_IP, SEND_LAST, 17, 102, b"x" * 952, True), False)
a += event(us(22), "why", 17, WHY="NAK_SEQ", PSN=102, ARG=101)
a += epb(us(23), frame(A_IP, B_IP, ACK, 18, 101, aeth=(0x60 << 24) | 1), True)
b += epb(us(30), frame(A_IP, B_IP, ACK, 18, 101, aeth=(0x60 << 24) | 1), False)
b += event(us(31), "why", 18, WHY="RETX_NAK", PSN=101, ARG=6)
b += epb(us(32), frame(B_IP, A_IP, SEND_MIDDLE, 17, 101, b"x" * 1024), True)
b += epb(us(33), frame(B_IP, A_IP, SEND_LAST, 17, 102, b"x" * 952, True), True)
a += epb(us(40), frame(B_IP, A_IP, SEND_MIDDLE, 17, 101, b"x" * 1024), False)
a += epb(us(41), frame(B_IP, A_IP, SEND_LAST, 17, 102, b"x" * 952, True), False)
a += event(us(42), "cqe", 17, WR="0x1", OP="RECV", STATUS="success", LEN=3000)
a += epb(us(43), frame(A_IP, B_IP, ACK, 18, 102, aeth=(0x1f << 24) | 2), True)
b += epb(us(50), frame(A_IP, B_IP, ACK, 18, 102, aeth=(0x1f << 24) | 2), False)
b += event(us(51), "cqe", 18, WR="0x7", OP="SEND", STATUS="success", LEN=0)
fa, fb = os.path.join(work, "a.pcapng"), os.path.join(work, "b.pcapng")
open(fa, "wb").write(a)
open(fb, "wb").write(b)

fails = []


def run(*args):
    r = subprocess.run([uroce, "trace"] + list(args), capture_output=True, text=True, timeout=60)
    if r.returncode:
        fails.append("uroce trace %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr))
    return r.stdout, r.stderr


out, _ = run(fa, fb)
print(out)
want = [
    "A = QP 18 (requester, pid 200), B = QP 17 (responder, pid 100)",
    "--> RC_SEND_MIDDLE PSN 101, 1024 bytes  [LOST: never arrived]",
    "why: the wire dropped it",
    "PSN sequence error NAK sent, PSN 102, expected PSN 101 (IBTA 9.7.5.1.4)",
    "--> RC_ACKNOWLEDGE PSN 101, NAK PSN sequence error (MSN 1)",
    "retransmit after a PSN sequence error NAK, PSN 101, retries left 6 (IBTA 9.7.5.1.4)",
    "why: IBTA 9.7.5.1.4, retransmit after a PSN sequence error NAK",
    "--> RC_SEND_MIDDLE PSN 101, 1024 bytes  [sent again, time 2]",
    "--> RC_SEND_LAST PSN 102, 952 bytes, AckReq  [sent again, time 2]",
    "<-- RC_SEND_MIDDLE PSN 101, 1024 bytes  (8.0 us after it left)",
    "completion wr_id 0x1 RECV success, 3000 bytes  <= from the arrival of RC_SEND_LAST PSN 102",
    "completion wr_id 0x7 SEND success, 0 bytes  <= from the arrival of RC_ACKNOWLEDGE PSN 102",
]
pos = 0
for w in want:
    i = out.find(w, pos)
    if i < 0:
        fails.append("missing, in this order: " + w)
    else:
        pos = i
# The first SEND_LAST arrived (out of sequence) and is not lost; only 101's first sending is.
if out.count("[LOST") != 1:
    fails.append("%d packets marked lost, not 1" % out.count("[LOST"))
# --wr 0x7 keeps that WQE's story; the other side's post_recv is not part of it.
wr, _ = run("--wr", "7", fa, fb)
if "ibv_post_recv" in wr or "retransmit after a PSN sequence error NAK" not in wr or \
   "completion wr_id 0x7 SEND success" not in wr:
    fails.append("--wr 7 selects the wrong records:\n" + wr)
# --from/--to: 0.000025 s .. 0.000045 s after the first record.
win, _ = run("--from", "0.000025", "--to", "0.000045", fa, fb)
if "post_send" in win or "RECV success" not in win:
    fails.append("--from/--to window wrong:\n" + win)
# A file cut in the middle of a block: read up to it, said on stderr.
cut = os.path.join(work, "cut.pcapng")
open(cut, "wb").write(a[:len(a) - 30])
_, err = run(cut, fb)
if "cut short" not in err:
    fails.append("a cut file is not reported: " + err)
# tshark (when installed) opens both without a word but its root note.
if subprocess.run(["sh", "-c", "command -v tshark"], capture_output=True).returncode == 0:
    for f in (fa, fb):
        r = subprocess.run(["tshark", "-r", f], capture_output=True, text=True)
        err = [l for l in r.stderr.splitlines() if not l.startswith('Running as user "root"')]
        if r.returncode or err or r.stdout.count("RRoCE") < 4:
            fails.append("tshark on %s: rc %d, %s\n%s" % (f, r.returncode, err, r.stdout))
for f in fails:
    print("FAIL:", f)
if not fails:
    print("ok: the lost packet, the NAK, the go-back-N resend and both completions' causes are named")
sys.exit(1 if fails else 0)

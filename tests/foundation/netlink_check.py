#!/usr/bin/python3
"""RDMA netlink as a program sees it under `uroce run` (docs/netlink.md):
requests made by hand on a NETLINK_RDMA socket, answers decoded here.

usage: netlink_check.py DEVICE UVERBS_N
Checks the device dump, the uverbs character device, errors for what is
not ours or not offered, and that bad requests get an error, not a hang.

usage: netlink_check.py --res-{qp,cq,mr,pd} DEVICE PID_A PID_B [QPN_A QPN_B]
Checks `rdma resource show -j KIND` (on stdin) against a connected
ibv_rc_pingpong pair of processes PID_A and PID_B on DEVICE: one object of
the kind each; QPs of the QPNs they print, each the other's remote QPN."""
import errno
import json
import socket
import struct
import sys

NETLINK_RDMA = 20
NLDEV = 5
CMD = {'GET': 1, 'SET': 2, 'NEWLINK': 3, 'PORT_GET': 5, 'GET_CHARDEV': 15}
# <rdma/rdma_netlink.h>: the commands and attributes used here
A = {'DEV_INDEX': 1, 'DEV_NAME': 2, 'PORT_INDEX': 3, 'NODE_GUID': 6, 'DEV_NODE_TYPE': 14,
     'DEV_PROTOCOL': 67, 'CHARDEV_TYPE': 69, 'CHARDEV_NAME': 70, 'CHARDEV_ABI': 71,
     'CHARDEV': 72}
F_REQUEST, F_MULTI, F_ACK, F_DUMP = 1, 2, 4, 0x300
DONE, ERROR = 3, 2
BASE = 0x40000000


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def attr(kind, value):
    if isinstance(value, str):
        data = value.encode() + b'\0'
    else:
        data = struct.pack('I', value)
    pad = (4 - len(data) % 4) % 4
    return struct.pack('HH', 4 + len(data), A[kind]) + data + b'\0' * pad


def request(sock, cmd, flags, attrs=b'', seq=[100]):
    seq[0] += 1
    msg = struct.pack('IHHII', 16 + len(attrs), (NLDEV << 10) + cmd,
                      F_REQUEST | flags, seq[0], 0) + attrs
    sock.send(msg)
    return seq[0]


def parse_attrs(data):
    out = {}
    while len(data) >= 4:
        n, t = struct.unpack('HH', data[:4])
        if n < 4:
            break
        out[t & 0x3fff] = data[4:n]
        data = data[(n + 3) & ~3:]
    return out


def answer(sock, seq):
    """The messages of one answer: (type, flags, attrs or error) until its end."""
    got = []
    sock.settimeout(10)
    while True:
        data, addr = sock.recvfrom(65536)
        if addr != (0, 0):
            fail('answer not from the kernel\'s port: %r' % (addr,))
        while len(data) >= 16:
            n, typ, flags, s, _ = struct.unpack('IHHII', data[:16])
            if s != seq:
                fail('answer with sequence %d to request %d' % (s, seq))
            body = data[16:n]
            if typ == ERROR:
                got.append(('error', -struct.unpack('i', body[:4])[0]))
                return got
            if typ == DONE:
                return got
            got.append((typ & 0x3ff, flags, parse_attrs(body)))
            data = data[(n + 3) & ~3:]
        if not got or not got[-1][1] & F_MULTI:
            return got


def u32(a):
    return struct.unpack('I', a)[0]


def text(a):
    return a.rstrip(b'\0').decode()


def descendant(pid, ancestor):
    """PID is ANCESTOR or runs under it (timeout, uroce run, stdbuf exec)."""
    while pid > 1:
        if pid == ancestor:
            return True
        with open('/proc/%d/stat' % pid) as f:
            pid = int(f.read().rsplit(')', 1)[1].split()[1])
    return False


def check_res(kind, dev, ancestors, qpns):
    rows = [r for r in json.load(sys.stdin) if r['ifname'] == dev]
    owners = []
    for a in ancestors:
        mine = [r for r in rows if descendant(r['pid'], a)]
        if len(mine) != 1:
            fail('%s: process %d owns %d %ss: %s' % (dev, a, len(mine), kind, rows))
        owners.append(mine[0])
    if len(rows) != 2:
        fail('%s: %d %ss listed, not the pair\'s 2: %s' % (dev, len(rows), kind, rows))
    if kind == 'qp':
        a, b = owners
        for r in owners:
            if (r['type'], r['state'], r['port']) != ('RC', 'RTS', 1) or r['pdn'] < 1:
                fail('QP %s' % r)
        if qpns and [r['lqpn'] for r in owners] != [int(q, 16) for q in qpns]:
            fail('QPNs %s, the pingpongs say %s' % ([r['lqpn'] for r in owners], qpns))
        if a['rqpn'] != b['lqpn'] or b['rqpn'] != a['lqpn']:
            fail('remote QPNs do not pair: %s' % owners)
    if kind == 'cq' and any(r['users'] != 1 or r['cqe'] < 1 for r in owners):
        fail('CQs: %s' % owners)
    if kind == 'mr' and any(r['mrlen'] < 4096 or r['pdn'] < 1 for r in owners):
        fail('MRs: %s' % owners)
    if kind == 'pd' and any(r['users'] != 2 for r in owners):  # its QP and its MR
        fail('PDs: %s' % owners)
    print('ok: rdma resource show %s: %s' % (kind, owners))


def main():
    if sys.argv[1].startswith('--res-'):
        check_res(sys.argv[1][6:], sys.argv[2], [int(p) for p in sys.argv[3:5]], sys.argv[5:7])
        return
    dev, uverbs = sys.argv[1], int(sys.argv[2])
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA)
    s.bind((0, 0))
    pid = s.getsockname()[0]
    if not pid:
        fail('bind gave no port id')

    # The device dump: ours is there, with what libibverbs requires.
    seq = request(s, CMD['GET'], F_DUMP)
    mine = [m for m in answer(s, seq) if m[0] == CMD['GET'] and text(m[2][A['DEV_NAME']]) == dev]
    if len(mine) != 1:
        fail('the device dump does not list %s once' % dev)
    at = mine[0][2]
    index = u32(at[A['DEV_INDEX']])
    if index != BASE + uverbs:
        fail('index %#x, not %#x' % (index, BASE + uverbs))
    for need in ('NODE_GUID', 'DEV_NODE_TYPE', 'PORT_INDEX', 'DEV_PROTOCOL'):
        if A[need] not in at:
            fail('the dump lacks %s' % need)
    print('ok: dump lists %s as %#x' % (dev, index))

    # Its character device is the uverbs node uroce made.
    seq = request(s, CMD['GET_CHARDEV'], 0, attr('DEV_INDEX', index) + attr('CHARDEV_TYPE', 'uverbs'))
    got = answer(s, seq)
    if len(got) != 1 or got[0][0] != CMD['GET_CHARDEV']:
        fail('GET_CHARDEV answered %r' % got)
    at = got[0][2]
    if text(at[A['CHARDEV_NAME']]) != 'uverbs%d' % uverbs:
        fail('chardev %s' % text(at[A['CHARDEV_NAME']]))
    if struct.unpack('Q', at[A['CHARDEV']])[0] != 0x103:
        fail('chardev number is not 1:3 (the null device the node stands for)')
    print('ok: GET_CHARDEV names uverbs%d' % uverbs)

    # The rdma_cm device (no index) is uroce's, the number preload_cm.c's
    # fstat gives (10:58), whether or not the kernel has one.
    seq = request(s, CMD['GET_CHARDEV'], 0, attr('CHARDEV_TYPE', 'rdma_cm'))
    got = answer(s, seq)
    if len(got) != 1 or got[0][0] != CMD['GET_CHARDEV']:
        fail('GET_CHARDEV rdma_cm answered %r' % got)
    at = got[0][2]
    if (text(at[A['CHARDEV_NAME']]) != 'rdma_cm' or
            struct.unpack('Q', at[A['CHARDEV']])[0] != 0xa3a or
            struct.unpack('Q', at[A['CHARDEV_ABI']])[0] != 4):
        fail('rdma_cm chardev %r' % at)
    print('ok: GET_CHARDEV rdma_cm is uroce\'s 10:58, ABI 4')

    # Errors: another client type, a device that is not there, a change.
    def expect(err, cmd, flags, attrs, what):
        seq = request(s, cmd, flags, attrs)
        got = answer(s, seq)
        if got != [('error', err)]:
            fail('%s: answered %r, not %s' % (what, got, errno.errorcode[err]))
        print('ok: %s -> %s' % (what, errno.errorcode[err]))
    expect(errno.EOPNOTSUPP, CMD['GET_CHARDEV'], 0,
           attr('DEV_INDEX', index) + attr('CHARDEV_TYPE', 'umad'), 'umad chardev')
    expect(errno.ENODEV, CMD['GET'], 0, attr('DEV_INDEX', BASE + 4000), 'unknown index')
    expect(errno.EOPNOTSUPP, CMD['SET'], F_ACK, attr('DEV_INDEX', index), 'SET on ours')
    expect(errno.EOPNOTSUPP, CMD['NEWLINK'], F_ACK, attr('DEV_NAME', dev), 'NEWLINK of ours')
    seq = request(s, CMD['PORT_GET'], F_ACK, attr('DEV_INDEX', index) + attr('PORT_INDEX', 1))
    got = answer(s, seq)
    if len(got) != 2 or got[0][0] != CMD['PORT_GET'] or got[1] != ('error', 0):
        fail('PORT_GET with ack answered %r' % got)
    print('ok: PORT_GET answered and acked')

    # Bad input: a broken attribute is an error; a message shorter than
    # its header is dropped, as the kernel drops it; nothing hangs.
    bad = struct.pack('IHHII', 16 + 4, (NLDEV << 10) + CMD['GET'], F_REQUEST, 900, 0)
    s.send(bad + struct.pack('HH', 200, A['DEV_INDEX']))
    got = answer(s, 900)
    if got != [('error', errno.EINVAL)]:
        fail('an attribute past its message answered %r' % got)
    s.send(b'\x08\0\0\0')
    s.setblocking(False)
    try:
        s.recv(100)
        fail('a runt message was answered')
    except BlockingIOError:
        pass
    print('ok: bad requests refused, runts dropped')


main()

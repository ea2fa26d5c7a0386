#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The table of provider ABI layouts in kernel-uapi/uroce/provider_abi.h,
# read the way meson reads it (the C preprocessor, UROCE_ABI_PROBE), for
# every rdma-core major from 1 to 99:
#   - every release PABI_KNOWN_FIRST..PABI_KNOWN_LAST has a row, none
#     outside, and a build for one outside stops with the #error;
#   - each release lies in its own row, and the rows tile the range with
#     no gap and no overlap;
#   - neighbouring rows differ (else they would be one row), and the
#     columns only grow: PABI (changing only where a row starts), ops,
#     ibv_qp_ex 344/352/360, verbs_context (a multiple of 8 from 648),
#     ibv_port_attr 52/56;
#   - struct verbs_context_ops in the same header, with its PABI_SINCE_NN
#     members counted for that release, has the row's number of ops.
#
#   abi_rows.py SOURCE_ROOT CC [CC ARGS...]
import re
import subprocess
import sys

root, cc = sys.argv[1], sys.argv[2:]
header = root + '/kernel-uapi/uroce/provider_abi.h'
COLS = ('first', 'last', 'pabi', 'ops', 'qp_ex', 'vctx', 'port')
failures = 0


def check(ok, what):
    global failures
    if not ok:
        failures += 1
        print('FAIL:', what)
    return ok


def probe(release):
    """The row for RELEASE (a dict), None if it has none; and PABI_KNOWN_*."""
    src = ('#define UROCE_ABI_PROBE 1\n#define UROCE_RDMA_CORE %d\n'
           '#include <uroce/provider_abi.h>\n'
           'row: PABI_FIRST PABI_LAST PABI_VERSION PABI_OPS PABI_QP_EX_SIZE '
           'PABI_VERBS_CONTEXT_SIZE PABI_PORT_ATTR_SIZE\n'
           'known: PABI_KNOWN_FIRST PABI_KNOWN_LAST PABI_SUPPORTED\n' % release)
    out = subprocess.run(cc + ['-E', '-P', '-I', root + '/kernel-uapi', '-'], input=src,
                         capture_output=True, text=True, check=True).stdout
    row = re.search(r'^row: (.*)$', out, re.M).group(1).split()
    known = re.search(r'^known: (\d+) (\d+) "(.*)"$', out, re.M)
    if row[0] == 'PABI_FIRST':
        row = None
    else:
        row = dict(zip(COLS, map(int, row)))
    return row, (int(known.group(1)), int(known.group(2)), known.group(3))


def ops_declared(release):
    """Members of struct verbs_context_ops that exist in RELEASE."""
    text = open(header).read()
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    body = re.search(r'struct verbs_context_ops \{(.*?)\n\};', text, re.S).group(1)
    n = 0
    for member in body.split(';'):
        if '(*' not in member:
            continue
        since = re.search(r'PABI_SINCE_(\d+)\(', member)
        n += since is None or int(since.group(1)) <= release
    return n


rows = {}
known = None
for r in range(1, 100):
    row, known = probe(r)
    rows[r] = row
first, last, supported = known
check(supported == '%d-%d' % (first, last), 'PABI_SUPPORTED "%s" is not %d-%d' % (supported, first, last))
for r, row in rows.items():
    if not first <= r <= last:
        check(row is None, 'rdma-core %d is outside %d-%d but has a row' % (r, first, last))
        continue
    if not check(row is not None, 'rdma-core %d has no row' % r):
        continue
    check(row['first'] <= r <= row['last'], 'rdma-core %d is given the row %d-%d' % (r, row['first'], row['last']))
    check(ops_declared(r) == row['ops'], 'rdma-core %d: verbs_context_ops declares %d ops, the row says %d'
          % (r, ops_declared(r), row['ops']))
    check(row['qp_ex'] in (344, 352, 360), 'rdma-core %d: ibv_qp_ex %d' % (r, row['qp_ex']))
    check(row['port'] in (52, 56), 'rdma-core %d: ibv_port_attr %d' % (r, row['port']))
    check(row['vctx'] >= 648 and row['vctx'] % 8 == 0, 'rdma-core %d: verbs_context %d' % (r, row['vctx']))
    prev = rows.get(r - 1)
    if r == first or prev is None or prev == row:
        continue
    check(row['first'] == r and prev['last'] == r - 1,
          'rows %d-%d and %d-%d do not meet at %d' % (prev['first'], prev['last'], row['first'], row['last'], r))
    check(any(prev[c] != row[c] for c in COLS[2:]),
          'rows %d-%d and %d-%d lay out the same: one row' % (prev['first'], prev['last'], row['first'], row['last']))
    for c in COLS[2:]:
        check(row[c] >= prev[c], 'row %d-%d: %s %d is smaller than the row before\'s %d'
              % (row['first'], row['last'], c, row[c], prev[c]))

# A build (no UROCE_ABI_PROBE) for a release with no row stops at once.
for r in (first - 1, last + 1):
    p = subprocess.run(cc + ['-E', '-I', root + '/kernel-uapi', '-DUROCE_RDMA_CORE=%d' % r, header],
                       capture_output=True, text=True)
    check(p.returncode != 0 and 'has no layout row here' in p.stderr,
          'a build for rdma-core %d is not stopped by the #error' % r)

table = sorted({(v['first'], v['last'], v['pabi'], v['ops'], v['qp_ex'], v['vctx'], v['port'])
                for v in rows.values() if v})
for t in table:
    print('row: rdma-core %d-%d  PABI %d  %d ops  ibv_qp_ex %d  verbs_context %d  ibv_port_attr %d' % t)
print('%d rows cover rdma-core %d-%d; %d failed' % (len(table), first, last, failures))
sys.exit(1 if failures else 0)

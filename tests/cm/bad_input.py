#!/usr/bin/python3
"""Bad input to the rdma CM through stock librdmacm (pyverbs' bindings),
run under `uroce run` in a namespace whose lo carries a uroce device, with
a listener on PORT (argv[1]):
  - REQ private data over its room (56 bytes after the CMA header): EINVAL,
    and nothing is sent (the connection still works with 56 bytes);
Exit 0 only if every check holds."""
import errno
import sys

from pyverbs.cmid import CMID, AddrInfo, ConnParam
from pyverbs.pyverbs_error import PyverbsRDMAError, PyverbsError
import pyverbs.cm_enums as ce

port = sys.argv[1]
failures = []


def expect_error(what, fn, codes):
    try:
        fn()
    except (PyverbsRDMAError, PyverbsError) as e:
        err = getattr(e, 'error_code', None)
        if codes and err not in codes:
            failures.append(f'{what}: errno {err}, wanted {codes}')
        else:
            print(f'ok: {what}: {e}')
        return
    failures.append(f'{what}: no error')


def client():
    ai = AddrInfo(dst='127.0.0.1', dst_service=port, port_space=ce.RDMA_PS_TCP)
    return CMID(creator=ai)


# Private data over the room of a REQ.
cmid = client()
def param(n):
    p = ConnParam(data_len=n)
    p.set_private_data(bytes(range(n)))
    return p


expect_error('connect with 57 bytes of private data',
             lambda: cmid.connect(param(57)), [errno.EINVAL])
cmid.close()

# The same with exactly the room: the listener (rping -s) gets the REQ.
cmid = client()
try:
    cmid.connect(param(56))
    print('ok: connect with 56 bytes of private data')
except PyverbsRDMAError as e:
    failures.append(f'connect with 56 bytes: {e}')
cmid.close()

for f in failures:
    print('FAIL:', f, file=sys.stderr)
sys.exit(1 if failures else 0)

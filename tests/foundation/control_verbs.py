#!/usr/bin/python3
"""Control-path verbs through pyverbs (rdma-core's own Python binding).

Run under `uroce run`.  Opens the device, queries device and port, allocates
PDs, registers MRs with valid and invalid access flags, creates CQs, and
checks that verbs the device does not implement yet fail with EOPNOTSUPP.
"""
import errno
import sys

import pyverbs.device as d
import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError

dev = sys.argv[1]
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def fails_with(err, fn, what):
    try:
        fn()
    except PyverbsRDMAError as ex:
        check(ex.error_code == err, f"{what}: errno {ex.error_code} (want {err})")
        return
    check(False, f"{what}: succeeded, expected errno {err}")


names = [x.name.decode() for x in d.get_device_list()]
check(dev in names, f"device list {names} holds {dev}")

ctx = d.Context(name=dev)
attr = ctx.query_device()
check(attr.phys_port_cnt == 1, "one port")
check(attr.max_qp > 0 and attr.max_cqe > 0 and attr.max_mr > 0, "limits are set")
check(attr.node_guid != 0, "node GUID set")
ex_attr = ctx.query_device_ex()
check(ex_attr.orig_attr.max_qp == attr.max_qp, "query_device_ex agrees with query_device")

port = ctx.query_port(1)
check(port.state == e.IBV_PORT_ACTIVE, "port active")
check(port.link_layer == e.IBV_LINK_LAYER_ETHERNET, "link layer Ethernet")
check(port.gid_tbl_len > 0 and port.pkey_tbl_len == 1, "GID and P_Key tables")
fails_with(errno.EINVAL, lambda: ctx.query_port(2), "query_port(2)")
gid = ctx.query_gid(1, 0)
check(str(gid) != "0000:0000:0000:0000:0000:0000:0000:0000", f"GID[0] = {gid}")
check(ctx.query_pkey(1, 0) == 0xffff, "P_Key[0] = 0xffff")

pd = PD(ctx)
pd2 = PD(ctx)
LW, RW, RR, RA = (e.IBV_ACCESS_LOCAL_WRITE, e.IBV_ACCESS_REMOTE_WRITE,
                  e.IBV_ACCESS_REMOTE_READ, e.IBV_ACCESS_REMOTE_ATOMIC)
mrs = []
for acc in (0, LW, RR, LW | RW, LW | RW | RR | RA, LW | RA):
    mr = MR(pd, 8192, acc)
    mrs.append(mr)
    check(mr.lkey != 0 and mr.rkey != 0, f"MR access {acc:#x}: lkey {mr.lkey:#x}")
keys = {mr.rkey for mr in mrs}
check(len(keys) == len(mrs), "every MR has its own rkey")
# IBTA C10-29 (and ibv_reg_mr(3)): remote write/atomic need local write.
fails_with(errno.EINVAL, lambda: MR(pd, 4096, RW), "REMOTE_WRITE without LOCAL_WRITE")
fails_with(errno.EINVAL, lambda: MR(pd, 4096, RA), "REMOTE_ATOMIC without LOCAL_WRITE")
fails_with(errno.EINVAL, lambda: MR(pd, 4096, RW | RR), "REMOTE_WRITE|READ without LOCAL_WRITE")
for mr in mrs:
    mr.close()

cq = CQ(ctx, 16)
check(cq.cqe >= 16, f"CQ holds at least 16 (cqe={cq.cqe})")
check(cq.poll(4)[0] == 0, "an idle CQ polls empty")
fails_with(errno.EINVAL, lambda: CQ(ctx, 0), "CQ with 0 entries")
fails_with(errno.EINVAL, lambda: CQ(ctx, attr.max_cqe + 1), "CQ above max_cqe")
fails_with(errno.EINVAL, lambda: CQ(ctx, 8, None, None, 99), "CQ on comp_vector 99")

# Verbs the device does not offer fail cleanly, never crash or fake success.
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.mr import MW
fails_with(errno.EINVAL, lambda: MW(pd, 3), "memory window of type 3")
fails_with(errno.EOPNOTSUPP,
           lambda: QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RAW_PACKET, scq=cq, rcq=cq, cap=QPCap())),
           "raw packet QP (not offered)")
cq.close()
pd2.close()
pd.close()
ctx.close()
print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)

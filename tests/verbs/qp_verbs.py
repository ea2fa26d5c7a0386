#!/usr/bin/python3
"""The verbs layer of the data path through pyverbs, with no traffic.

Run under `uroce run` with the device name as argument.  Creates RC, UC
and UD QPs with various capabilities, walks the IBTA state machine with
exactly the required attributes (and checks query_qp returns them), tries
illegal transitions, missing and out-of-range attributes, posts to QPs in
states and with work requests that must be refused, fills a send queue
that cannot drain (SQD) and a receive queue (INIT), and exercises SRQs,
AHs and the extended post API's errors.  Every check names what it expects.
"""
import errno
import sys

import pyverbs.device as d
import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

MAX_INLINE = 512          # UROCE_MAX_INLINE (engine/objects.h)
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def fails_with(err, fn, what):
    try:
        fn()
    except PyverbsRDMAError as ex:
        check(ex.error_code == err,
              f"{what}: errno {ex.error_code} (want {errno.errorcode[err]})")
        return
    except PyverbsError as ex:
        check(False, f"{what}: pyverbs error without errno ({ex}), want {errno.errorcode[err]}")
        return
    check(False, f"{what}: succeeded, want {errno.errorcode[err]}")


def works(fn, what):
    try:
        r = fn()
    except PyverbsError as ex:
        check(False, f"{what}: {ex}")
        return None
    check(True, what)
    return r


ctx = d.Context(name=sys.argv[1])
dattr = ctx.query_device()
port = ctx.query_port(1)
gid_index = next(i for i in range(port.gid_tbl_len)
                 if str(ctx.query_gid(1, i)).replace('0', '').replace(':', ''))
gid = ctx.query_gid(1, gid_index)
empty_index = next((i for i in range(port.gid_tbl_len)
                    if not str(ctx.query_gid(1, i)).replace('0', '').replace(':', '')), None)
print(f"GID[{gid_index}] = {gid}; max_qp_wr {dattr.max_qp_wr}, max_sge {dattr.max_sge}")

pd = PD(ctx)
cq = CQ(ctx, 256)
mr = MR(pd, 1 << 16, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
        e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)
TYPES = {'RC': e.IBV_QPT_RC, 'UC': e.IBV_QPT_UC, 'UD': e.IBV_QPT_UD}


def cap(sw=16, rw=16, ss=1, rs=1, inl=0):
    return QPCap(max_send_wr=sw, max_recv_wr=rw, max_send_sge=ss, max_recv_sge=rs,
                 max_inline_data=inl)


def mkqp(t, c=None, srq=None, sig_all=0):
    ia = QPInitAttr(qp_type=t, scq=cq, rcq=cq, cap=c or cap(), srq=srq, sq_sig_all=sig_all)
    return QP(pd, ia)


def av(is_global=1, index=None, port_num=1):
    gr = GlobalRoute(dgid=gid, sgid_index=gid_index if index is None else index, hop_limit=64)
    return AHAttr(port_num=port_num, is_global=is_global, gr=gr if is_global else None)


def modify(qp, mask, **kw):
    a = QPAttr()
    for k, v in kw.items():
        setattr(a, k, v)
    qp.modify(a, mask)


def state(qp):
    return qp.query(e.IBV_QP_STATE)[0].qp_state


S, PK, PORT, ACC, QK = (e.IBV_QP_STATE, e.IBV_QP_PKEY_INDEX, e.IBV_QP_PORT,
                        e.IBV_QP_ACCESS_FLAGS, e.IBV_QP_QKEY)
AV, MTU, DQPN, RQPSN, MDRA, MRNR = (e.IBV_QP_AV, e.IBV_QP_PATH_MTU, e.IBV_QP_DEST_QPN,
                                    e.IBV_QP_RQ_PSN, e.IBV_QP_MAX_DEST_RD_ATOMIC,
                                    e.IBV_QP_MIN_RNR_TIMER)
TMO, RETRY, RNR, SQPSN, MRA = (e.IBV_QP_TIMEOUT, e.IBV_QP_RETRY_CNT, e.IBV_QP_RNR_RETRY,
                               e.IBV_QP_SQ_PSN, e.IBV_QP_MAX_QP_RD_ATOMIC)
CUR = e.IBV_QP_CUR_STATE
ALL_ACC = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
           e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)


def to_init(qp, t):
    if t == e.IBV_QPT_UD:
        modify(qp, S | PK | PORT | QK, qp_state=e.IBV_QPS_INIT, pkey_index=0, port_num=1,
               qkey=0x11111111)
    else:
        modify(qp, S | PK | PORT | ACC, qp_state=e.IBV_QPS_INIT, pkey_index=0, port_num=1,
               qp_access_flags=ALL_ACC)


def to_rtr(qp, t, dqpn):
    if t == e.IBV_QPT_UD:
        modify(qp, S, qp_state=e.IBV_QPS_RTR)
    elif t == e.IBV_QPT_UC:
        modify(qp, S | AV | MTU | DQPN | RQPSN, qp_state=e.IBV_QPS_RTR, ah_attr=av(),
               path_mtu=e.IBV_MTU_1024, dest_qp_num=dqpn, rq_psn=0x123)
    else:
        modify(qp, S | AV | MTU | DQPN | RQPSN | MDRA | MRNR, qp_state=e.IBV_QPS_RTR,
               ah_attr=av(), path_mtu=e.IBV_MTU_1024, dest_qp_num=dqpn, rq_psn=0x123,
               max_dest_rd_atomic=4, min_rnr_timer=12)


def to_rts(qp, t):
    if t == e.IBV_QPT_RC:
        modify(qp, S | TMO | RETRY | RNR | SQPSN | MRA, qp_state=e.IBV_QPS_RTS, timeout=14,
               retry_cnt=7, rnr_retry=7, sq_psn=0x456, max_rd_atomic=4)
    else:
        modify(qp, S | SQPSN, qp_state=e.IBV_QPS_RTS, sq_psn=0x456)


# ---- create ------------------------------------------------------------------
for name, t in TYPES.items():
    for c in (cap(1, 1, 1, 1, 0), cap(100, 50, 3, 2, 64), cap(0, 0, 0, 0, 0),
              cap(dattr.max_qp_wr, dattr.max_qp_wr, dattr.max_sge, dattr.max_sge, MAX_INLINE)):
        want = (c.max_send_wr, c.max_recv_wr, c.max_send_sge, c.max_recv_sge, c.max_inline_data)
        qp = works(lambda: mkqp(t, c), f"{name} QP with caps {want}")
        if not qp:
            continue
        got = qp.query(e.IBV_QP_CAP)[0].cap
        g = (got.max_send_wr, got.max_recv_wr, got.max_send_sge, got.max_recv_sge,
             got.max_inline_data)
        check(all(x >= y for x, y in zip(g, want)), f"{name}: granted {g} >= requested {want}")
        check(state(qp) == e.IBV_QPS_RESET, f"{name}: a new QP is in RESET")
        check(0 < qp.qp_num < 1 << 24, f"{name}: QPN {qp.qp_num:#x}")
        qp.close()
    fails_with(errno.EINVAL, lambda: mkqp(t, cap(sw=dattr.max_qp_wr + 1)), f"{name}: max_send_wr above max_qp_wr")
    fails_with(errno.EINVAL, lambda: mkqp(t, cap(rw=dattr.max_qp_wr + 1)), f"{name}: max_recv_wr above max_qp_wr")
    fails_with(errno.EINVAL, lambda: mkqp(t, cap(ss=dattr.max_sge + 1)), f"{name}: max_send_sge above max_sge")
    fails_with(errno.EINVAL, lambda: mkqp(t, cap(rs=dattr.max_sge + 1)), f"{name}: max_recv_sge above max_sge")
    fails_with(errno.EINVAL, lambda: mkqp(t, cap(inl=MAX_INLINE + 1)), f"{name}: max_inline_data above {MAX_INLINE}")

qps = [mkqp(e.IBV_QPT_RC) for _ in range(8)]
check(len({q.qp_num for q in qps}) == 8, "eight QPs, eight QPNs")
for q in qps:
    q.close()

for name, t in (('RAW_PACKET', e.IBV_QPT_RAW_PACKET), ('DRIVER', e.IBV_QPT_DRIVER)):
    fails_with(errno.EOPNOTSUPP, lambda: mkqp(t), f"{name} QP")
# XRC: a send QP is made like an RC QP (its receive CQ is ignored); a
# receive QP needs an XRC domain (ibv_create_qp_ex), without one: EINVAL.
q = works(lambda: mkqp(e.IBV_QPT_XRC_SEND), "XRC_SEND QP")
if q:
    q.close()
fails_with(errno.EINVAL, lambda: mkqp(e.IBV_QPT_XRC_RECV), "XRC_RECV QP without an XRC domain")

# create_qp_ex: comp_mask, create_flags, send_ops_flags per type.
PDM, OPS, CF = (e.IBV_QP_INIT_ATTR_PD, e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
                e.IBV_QP_INIT_ATTR_CREATE_FLAGS)
W = {n: getattr(e, 'IBV_QP_EX_WITH_' + n) for n in
     ('SEND', 'SEND_WITH_IMM', 'RDMA_WRITE', 'RDMA_WRITE_WITH_IMM', 'RDMA_READ',
      'ATOMIC_CMP_AND_SWP', 'ATOMIC_FETCH_AND_ADD', 'SEND_WITH_INV', 'LOCAL_INV', 'BIND_MW')}
ok_ops = {'UD': ('SEND', 'SEND_WITH_IMM'),
          'UC': ('SEND', 'SEND_WITH_IMM', 'RDMA_WRITE', 'RDMA_WRITE_WITH_IMM', 'LOCAL_INV', 'BIND_MW'),
          'RC': ('SEND', 'SEND_WITH_IMM', 'RDMA_WRITE', 'RDMA_WRITE_WITH_IMM', 'RDMA_READ',
                 'ATOMIC_CMP_AND_SWP', 'ATOMIC_FETCH_AND_ADD', 'SEND_WITH_INV', 'LOCAL_INV',
                 'BIND_MW')}


def mkqpex(t, ops=None, comp_mask=PDM | OPS, create_flags=0):
    ia = QPInitAttrEx(qp_type=t, scq=cq, rcq=cq, cap=cap(), pd=pd, comp_mask=comp_mask,
                      create_flags=create_flags,
                      send_ops_flags=W['SEND'] if ops is None else ops)
    return QPEx(ctx, ia)


for name, t in TYPES.items():
    flags = 0
    for op in ok_ops[name]:
        flags |= W[op]
    q = works(lambda: mkqpex(t, flags), f"{name} extended QP with {'|'.join(ok_ops[name])}")
    if q:
        q.close()
    for op in W:
        if op not in ok_ops[name]:
            fails_with(errno.EOPNOTSUPP, lambda: mkqpex(t, W[op]), f"{name} extended QP with {op}")
    fails_with(errno.EOPNOTSUPP, lambda: mkqpex(t, comp_mask=PDM | OPS | CF,
                                                create_flags=e.IBV_QP_CREATE_SCATTER_FCS),
               f"{name} extended QP with create_flags")
    fails_with(errno.EINVAL, lambda: mkqpex(t, comp_mask=PDM | OPS | (1 << 12)),
               f"{name} extended QP with an undefined comp_mask bit")
    fails_with(errno.EOPNOTSUPP, lambda: mkqpex(t, comp_mask=PDM | OPS | e.IBV_QP_INIT_ATTR_MAX_TSO_HEADER),
               f"{name} extended QP asking for TSO")

# ---- the state machine -------------------------------------------------------
for name, t in TYPES.items():
    qp = mkqp(t)
    peer = mkqp(t)
    # Illegal jumps and missing/extra attributes from RESET.
    fails_with(errno.EINVAL, lambda: modify(qp, S, qp_state=e.IBV_QPS_RTR), f"{name}: RESET->RTR")
    fails_with(errno.EINVAL, lambda: modify(qp, S, qp_state=e.IBV_QPS_RTS), f"{name}: RESET->RTS")
    fails_with(errno.EINVAL, lambda: modify(qp, S, qp_state=e.IBV_QPS_SQD), f"{name}: RESET->SQD")
    fails_with(errno.EINVAL, lambda: modify(qp, S, qp_state=e.IBV_QPS_ERR), f"{name}: RESET->ERR")
    fails_with(errno.EINVAL, lambda: modify(qp, S, qp_state=e.IBV_QPS_INIT),
               f"{name}: RESET->INIT without its required attributes")
    third = QK if t != e.IBV_QPT_UD else ACC
    fails_with(errno.EINVAL, lambda: modify(qp, S | PK | PORT | third, qp_state=e.IBV_QPS_INIT,
                                            qkey=1, qp_access_flags=0),
               f"{name}: RESET->INIT with the other type's attribute")
    fails_with(errno.EINVAL, lambda: modify(qp, S | PK | PORT | ACC | QK | SQPSN, qp_state=e.IBV_QPS_INIT,
                                            qkey=1, qp_access_flags=0, sq_psn=1),
               f"{name}: RESET->INIT with SQ_PSN (not allowed)")
    m = S | PK | PORT | (QK if t == e.IBV_QPT_UD else ACC)
    fails_with(errno.EINVAL, lambda: modify(qp, m, qp_state=e.IBV_QPS_INIT, port_num=2, qkey=1,
                                            qp_access_flags=0), f"{name}: port 2")
    fails_with(errno.EINVAL, lambda: modify(qp, m, qp_state=e.IBV_QPS_INIT, pkey_index=1, qkey=1,
                                            qp_access_flags=0), f"{name}: pkey_index 1")
    fails_with(errno.EINVAL, lambda: modify(qp, S | CUR | m, qp_state=e.IBV_QPS_INIT,
                                            cur_qp_state=e.IBV_QPS_RESET, qkey=1, qp_access_flags=0),
               f"{name}: CUR_STATE on RESET->INIT (not allowed)")
    check(state(qp) == e.IBV_QPS_RESET, f"{name}: still RESET after refused modifies")

    to_init(qp, t)
    to_init(peer, t)
    a, ia = qp.query(e.IBV_QP_STATE | e.IBV_QP_PORT | e.IBV_QP_PKEY_INDEX | QK | ACC)
    check(a.qp_state == e.IBV_QPS_INIT and a.port_num == 1 and a.pkey_index == 0,
          f"{name}: INIT, port 1, pkey_index 0")
    if t == e.IBV_QPT_UD:
        check(a.qkey == 0x11111111, f"{name}: qkey {a.qkey:#x}")
    else:
        check(a.qp_access_flags == ALL_ACC, f"{name}: access flags {a.qp_access_flags:#x}")
    # INIT->INIT with an optional attribute; INIT->RTS is no transition.
    if t == e.IBV_QPT_UD:
        works(lambda: modify(qp, S | QK, qp_state=e.IBV_QPS_INIT, qkey=0x22222222), f"{name}: INIT->INIT (QKEY)")
        check(qp.query(QK)[0].qkey == 0x22222222, f"{name}: new qkey")
    else:
        works(lambda: modify(qp, ACC, qp_access_flags=e.IBV_ACCESS_LOCAL_WRITE), f"{name}: INIT->INIT (ACCESS_FLAGS, no STATE)")
        check(qp.query(ACC)[0].qp_access_flags == e.IBV_ACCESS_LOCAL_WRITE, f"{name}: new access flags")
        modify(qp, ACC, qp_access_flags=ALL_ACC)
    fails_with(errno.EINVAL, lambda: modify(qp, S | SQPSN, qp_state=e.IBV_QPS_RTS, sq_psn=1), f"{name}: INIT->RTS")

    if t != e.IBV_QPT_UD:
        base = S | AV | MTU | DQPN | RQPSN | (MDRA | MRNR if t == e.IBV_QPT_RC else 0)
        kw = dict(qp_state=e.IBV_QPS_RTR, ah_attr=av(), path_mtu=e.IBV_MTU_1024,
                  dest_qp_num=peer.qp_num, rq_psn=0x123, max_dest_rd_atomic=4, min_rnr_timer=12)
        fails_with(errno.EINVAL, lambda: modify(qp, base & ~AV, **kw), f"{name}: INIT->RTR without AV")
        fails_with(errno.EINVAL, lambda: modify(qp, base & ~RQPSN, **kw), f"{name}: INIT->RTR without RQ_PSN")
        if t == e.IBV_QPT_RC:
            fails_with(errno.EINVAL, lambda: modify(qp, base & ~MRNR, **kw), f"{name}: INIT->RTR without MIN_RNR_TIMER")
        else:
            fails_with(errno.EINVAL, lambda: modify(qp, base | MDRA, **kw), f"{name}: INIT->RTR with MAX_DEST_RD_ATOMIC (RC only)")
        fails_with(errno.EINVAL, lambda: modify(qp, base, **dict(kw, ah_attr=av(is_global=0))),
                   f"{name}: RoCE address without GRH")
        fails_with(errno.EINVAL, lambda: modify(qp, base, **dict(kw, ah_attr=av(port_num=2))),
                   f"{name}: address on port 2")
        fails_with(errno.EINVAL, lambda: modify(qp, base, **dict(kw, ah_attr=av(index=port.gid_tbl_len))),
                   f"{name}: sgid_index past the GID table")
        if empty_index is not None:
            fails_with(errno.EINVAL, lambda: modify(qp, base, **dict(kw, ah_attr=av(index=empty_index))),
                       f"{name}: sgid_index of an empty GID")
        fails_with(errno.EINVAL, lambda: modify(qp, base, **dict(kw, path_mtu=0)), f"{name}: path_mtu 0")
        fails_with(errno.EINVAL, lambda: modify(qp, base, **dict(kw, path_mtu=6)), f"{name}: path_mtu 6")
        fails_with(errno.EINVAL, lambda: modify(qp, base, **dict(kw, dest_qp_num=1 << 24)), f"{name}: dest_qp_num 2^24")
        if t == e.IBV_QPT_RC:
            fails_with(errno.EINVAL, lambda: modify(qp, base, **dict(kw, min_rnr_timer=32)), f"{name}: min_rnr_timer 32")
            fails_with(errno.EINVAL, lambda: modify(qp, base, **dict(kw, max_dest_rd_atomic=dattr.max_qp_rd_atom + 1)),
                       f"{name}: max_dest_rd_atomic above the device's")
        check(state(qp) == e.IBV_QPS_INIT, f"{name}: still INIT after refused modifies")
    to_rtr(qp, t, peer.qp_num)
    to_rtr(peer, t, qp.qp_num)
    a, ia = qp.query(0x1fffff)
    check(a.qp_state == e.IBV_QPS_RTR, f"{name}: RTR")
    if t != e.IBV_QPT_UD:
        check(a.path_mtu == e.IBV_MTU_1024 and a.dest_qp_num == peer.qp_num and a.rq_psn == 0x123,
              f"{name}: path_mtu {a.path_mtu}, dest_qp_num {a.dest_qp_num:#x}, rq_psn {a.rq_psn:#x}")
        ah = a.ah_attr
        check(ah.is_global == 1 and ah.sgid_index == gid_index and str(ah.dgid) == str(gid)
              and ah.port_num == 1, f"{name}: ah_attr as set (dgid {ah.dgid}, sgid_index {ah.sgid_index})")
    if t == e.IBV_QPT_RC:
        check(a.max_dest_rd_atomic == 4 and a.min_rnr_timer == 12, f"{name}: max_dest_rd_atomic, min_rnr_timer")

    if t == e.IBV_QPT_RC:
        rts = S | TMO | RETRY | RNR | SQPSN | MRA
        kw = dict(qp_state=e.IBV_QPS_RTS, timeout=14, retry_cnt=7, rnr_retry=7, sq_psn=0x456, max_rd_atomic=4)
        fails_with(errno.EINVAL, lambda: modify(qp, rts & ~TMO, **kw), f"{name}: RTR->RTS without TIMEOUT")
        fails_with(errno.EINVAL, lambda: modify(qp, rts, **dict(kw, timeout=32)), f"{name}: timeout 32")
        fails_with(errno.EINVAL, lambda: modify(qp, rts, **dict(kw, retry_cnt=8)), f"{name}: retry_cnt 8")
        fails_with(errno.EINVAL, lambda: modify(qp, rts, **dict(kw, rnr_retry=8)), f"{name}: rnr_retry 8")
        fails_with(errno.EINVAL, lambda: modify(qp, rts, **dict(kw, max_rd_atomic=dattr.max_qp_init_rd_atom + 1)),
                   f"{name}: max_rd_atomic above the device's")
    else:
        fails_with(errno.EINVAL, lambda: modify(qp, S, qp_state=e.IBV_QPS_RTS), f"{name}: RTR->RTS without SQ_PSN")
        fails_with(errno.EINVAL, lambda: modify(qp, S | SQPSN | TMO, qp_state=e.IBV_QPS_RTS, sq_psn=1, timeout=14),
                   f"{name}: RTR->RTS with TIMEOUT (RC only)")
    fails_with(errno.EINVAL, lambda: modify(qp, S | SQPSN | CUR, qp_state=e.IBV_QPS_RTS, sq_psn=1,
                                            cur_qp_state=e.IBV_QPS_RTS), f"{name}: CUR_STATE that is not the state")
    to_rts(qp, t)
    to_rts(peer, t)
    a, _ = qp.query(0x1fffff)
    check(a.qp_state == e.IBV_QPS_RTS and a.sq_psn == 0x456, f"{name}: RTS, sq_psn {a.sq_psn:#x}")
    if t == e.IBV_QPT_RC:
        check(a.timeout == 14 and a.retry_cnt == 7 and a.rnr_retry == 7 and a.max_rd_atomic == 4,
              f"{name}: timeout, retry_cnt, rnr_retry, max_rd_atomic as set")
    # RTS->RTS (optional attribute), with CUR_STATE.
    if t == e.IBV_QPT_RC:
        works(lambda: modify(qp, S | CUR | MRNR, qp_state=e.IBV_QPS_RTS, cur_qp_state=e.IBV_QPS_RTS,
                             min_rnr_timer=20), f"{name}: RTS->RTS (MIN_RNR_TIMER, CUR_STATE)")
        check(qp.query(MRNR)[0].min_rnr_timer == 20, f"{name}: min_rnr_timer 20")
    else:
        works(lambda: modify(qp, S | CUR, qp_state=e.IBV_QPS_RTS, cur_qp_state=e.IBV_QPS_RTS),
              f"{name}: RTS->RTS (CUR_STATE)")
    fails_with(errno.EINVAL, lambda: modify(qp, S | SQPSN, qp_state=e.IBV_QPS_RTS, sq_psn=9),
               f"{name}: RTS->RTS with SQ_PSN (not allowed)")
    fails_with(errno.EINVAL, lambda: modify(qp, S, qp_state=e.IBV_QPS_INIT), f"{name}: RTS->INIT")
    fails_with(errno.EINVAL, lambda: modify(qp, S, qp_state=e.IBV_QPS_SQE), f"{name}: RTS->SQE (only the device does that)")
    works(lambda: modify(qp, S, qp_state=e.IBV_QPS_SQD), f"{name}: RTS->SQD")
    check(state(qp) == e.IBV_QPS_SQD, f"{name}: SQD")
    if t == e.IBV_QPT_RC:
        works(lambda: modify(qp, S | TMO, qp_state=e.IBV_QPS_SQD, timeout=18), f"{name}: SQD->SQD (TIMEOUT)")
        check(qp.query(TMO)[0].timeout == 18, f"{name}: timeout 18")
    elif t == e.IBV_QPT_UD:
        works(lambda: modify(qp, S | QK, qp_state=e.IBV_QPS_SQD, qkey=0x33), f"{name}: SQD->SQD (QKEY)")
    else:
        works(lambda: modify(qp, S | PK, qp_state=e.IBV_QPS_SQD, pkey_index=0), f"{name}: SQD->SQD (PKEY_INDEX)")
    works(lambda: modify(qp, S | CUR, qp_state=e.IBV_QPS_RTS, cur_qp_state=e.IBV_QPS_SQD),
          f"{name}: SQD->RTS (CUR_STATE)")
    works(lambda: modify(qp, S, qp_state=e.IBV_QPS_ERR), f"{name}: RTS->ERR")
    check(state(qp) == e.IBV_QPS_ERR, f"{name}: ERR")
    fails_with(errno.EINVAL, lambda: modify(qp, S, qp_state=e.IBV_QPS_RTS), f"{name}: ERR->RTS")
    fails_with(errno.EINVAL, lambda: modify(qp, S | CUR, qp_state=e.IBV_QPS_RESET, cur_qp_state=e.IBV_QPS_ERR),
               f"{name}: CUR_STATE on ->RESET (not allowed)")
    works(lambda: modify(qp, S, qp_state=e.IBV_QPS_ERR), f"{name}: ERR->ERR")
    works(lambda: modify(qp, S, qp_state=e.IBV_QPS_RESET), f"{name}: ERR->RESET")
    check(state(qp) == e.IBV_QPS_RESET, f"{name}: RESET again")
    # And once more up to RTS, with PSNs above 24 bits (masked, as rxe does).
    to_init(qp, t)
    to_rtr(qp, t, peer.qp_num)
    modify(qp, S | SQPSN | (TMO | RETRY | RNR | MRA if t == e.IBV_QPT_RC else 0), qp_state=e.IBV_QPS_RTS,
           sq_psn=0x1abcdef, timeout=14, retry_cnt=7, rnr_retry=7, max_rd_atomic=4)
    check(qp.query(SQPSN)[0].sq_psn == 0xabcdef, f"{name}: sq_psn masked to 24 bits")
    works(lambda: modify(qp, S, qp_state=e.IBV_QPS_RESET), f"{name}: RTS->RESET")
    _, ia = qp.query(S)
    check(ia.qp_type == t and ia.sq_sig_all == 0, f"{name}: init_attr qp_type, sq_sig_all")
    qp.close()
    peer.close()

# ---- posting ---------------------------------------------------------------------


def sge(n=64, off=0):
    return SGE(mr.buf + off, n, mr.lkey)


def send_wr(op=e.IBV_WR_SEND, sges=None, flags=e.IBV_SEND_SIGNALED, wr_id=1):
    sges = [sge()] if sges is None else sges
    return SendWR(wr_id=wr_id, opcode=op, num_sge=len(sges), sg=sges, send_flags=flags)


for name, t in TYPES.items():
    qp = mkqp(t, cap(sw=8, rw=8, ss=2, rs=2, inl=64))
    peer = mkqp(t)
    ah = AH(pd, attr=av())

    def mk(op=e.IBV_WR_SEND, sges=None, flags=e.IBV_SEND_SIGNALED):
        wr = send_wr(op, sges, flags)
        if op in (e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_WRITE_WITH_IMM, e.IBV_WR_RDMA_READ):
            wr.set_wr_rdma(mr.rkey, mr.buf)
        if op in (e.IBV_WR_ATOMIC_CMP_AND_SWP, e.IBV_WR_ATOMIC_FETCH_AND_ADD):
            wr.set_wr_atomic(mr.rkey, mr.buf, 1, 2)
        if t == e.IBV_QPT_UD:
            wr.set_wr_ud(ah, peer.qp_num, 0x11111111)
        return wr

    fails_with(errno.EINVAL, lambda: qp.post_send(mk()), f"{name}: post_send in RESET")
    fails_with(errno.EINVAL, lambda: qp.post_recv(RecvWR(sg=[sge()], num_sge=1)), f"{name}: post_recv in RESET")
    to_init(qp, t)
    to_init(peer, t)
    fails_with(errno.EINVAL, lambda: qp.post_send(mk()), f"{name}: post_send in INIT")
    # The receive queue (INIT takes receives; nothing consumes them yet).
    rcap = qp.query(e.IBV_QP_CAP)[0].cap
    fails_with(errno.EINVAL, lambda: qp.post_recv(RecvWR(sg=[sge()] * (rcap.max_recv_sge + 1),
                                                         num_sge=rcap.max_recv_sge + 1)),
               f"{name}: post_recv with {rcap.max_recv_sge + 1} SGEs (max {rcap.max_recv_sge})")
    for i in range(rcap.max_recv_wr):
        qp.post_recv(RecvWR(wr_id=i, sg=[sge()], num_sge=1))
    fails_with(errno.ENOMEM, lambda: qp.post_recv(RecvWR(sg=[sge()], num_sge=1)),
               f"{name}: post_recv into a full RQ ({rcap.max_recv_wr} WRs)")
    to_rtr(qp, t, peer.qp_num)
    to_rtr(peer, t, qp.qp_num)
    fails_with(errno.EINVAL, lambda: qp.post_send(mk()), f"{name}: post_send in RTR")
    to_rts(qp, t)
    to_rts(peer, t)
    # Move to SQD: WRs are taken but not started, so the SQ can be filled.
    modify(qp, S, qp_state=e.IBV_QPS_SQD)
    scap = qp.query(e.IBV_QP_CAP)[0].cap
    fails_with(errno.EINVAL, lambda: qp.post_send(mk(sges=[sge(8, 8 * i) for i in range(scap.max_send_sge + 1)])),
               f"{name}: {scap.max_send_sge + 1} SGEs (max {scap.max_send_sge})")
    fails_with(errno.EINVAL, lambda: qp.post_send(mk(sges=[sge(scap.max_inline_data + 1)], flags=e.IBV_SEND_INLINE)),
               f"{name}: {scap.max_inline_data + 1} inline bytes (max {scap.max_inline_data})")
    bad_ops = {'UD': (e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_READ, e.IBV_WR_ATOMIC_FETCH_AND_ADD, e.IBV_WR_SEND_WITH_INV),
               'UC': (e.IBV_WR_RDMA_READ, e.IBV_WR_ATOMIC_CMP_AND_SWP, e.IBV_WR_ATOMIC_FETCH_AND_ADD,
                      e.IBV_WR_SEND_WITH_INV),
               # RC has LOCAL_INV and BIND_MW (memory windows): a bind
               # without a window is still invalid, TSO is not offered.
               'RC': (e.IBV_WR_BIND_MW, e.IBV_WR_TSO)}[name]
    for op in bad_ops:
        fails_with(errno.EINVAL, lambda: qp.post_send(mk(op)), f"{name}: opcode {op} not for this QP type")
    if t == e.IBV_QPT_RC:
        fails_with(errno.EINVAL, lambda: qp.post_send(mk(e.IBV_WR_ATOMIC_FETCH_AND_ADD, sges=[sge(4)])),
                   f"{name}: atomic into 4 bytes")
        fails_with(errno.EINVAL, lambda: qp.post_send(mk(e.IBV_WR_ATOMIC_FETCH_AND_ADD, sges=[sge(8), sge(8, 8)])),
                   f"{name}: atomic with two SGEs")
    fails_with(errno.EINVAL, lambda: qp.post_send(mk(flags=e.IBV_SEND_IP_CSUM)), f"{name}: IBV_SEND_IP_CSUM")
    # A chain whose second WR is bad: the first is posted, nothing after it.
    w1, w2, w3 = mk(), mk(sges=[sge(8, 8 * i) for i in range(scap.max_send_sge + 1)]), mk()
    w1.next_wr = w2
    w2.next_wr = w3
    fails_with(errno.EINVAL, lambda: qp.post_send(w1), f"{name}: a chain whose second WR is bad")
    n_ok = 1
    inline = mk(sges=[sge(scap.max_inline_data)], flags=e.IBV_SEND_INLINE)
    works(lambda: qp.post_send(inline), f"{name}: {scap.max_inline_data} inline bytes")
    n_ok += 1
    for i in range(scap.max_send_wr - n_ok):
        qp.post_send(mk())
    fails_with(errno.ENOMEM, lambda: qp.post_send(mk()), f"{name}: post_send into a full SQ ({scap.max_send_wr} WRs)")
    # The extended API on the same QP: the whole batch fails, nothing is posted.
    works(lambda: modify(qp, S, qp_state=e.IBV_QPS_RESET), f"{name}: SQD->RESET empties the queues")
    qp.close()
    peer.close()
    ah.close()

# ---- the extended post API (ibv_wr_*) -------------------------------------------------
for name, t in TYPES.items():
    flags = 0
    for op in ok_ops[name]:
        flags |= W[op]
    qp = mkqpex(t, flags)
    peer = mkqp(t)
    ah = AH(pd, attr=av())

    def batch(*steps):
        qp.wr_start()
        for s_ in steps:
            s_()
        qp.wr_complete()

    def send():
        qp.wr_id = 7
        qp.wr_flags = e.IBV_SEND_SIGNALED
        qp.wr_send()
        if t == e.IBV_QPT_UD:
            qp.wr_set_ud_addr(ah, peer.qp_num, 0x11111111)
        qp.wr_set_sge(sge(16))

    fails_with(errno.EINVAL, lambda: batch(send), f"{name} wr_*: batch in RESET")
    to_init(qp, t), to_init(peer, t)
    to_rtr(qp, t, peer.qp_num), to_rtr(peer, t, qp.qp_num)
    fails_with(errno.EINVAL, lambda: batch(send), f"{name} wr_*: batch in RTR")
    to_rts(qp, t), to_rts(peer, t)
    modify(qp, S, qp_state=e.IBV_QPS_SQD)
    works(lambda: batch(send), f"{name} wr_*: one send in SQD")
    # An operation the QP was not made for (atomic write: not in its
    # send_ops_flags, and RC only) fails the batch with EINVAL.
    fails_with(errno.EINVAL, lambda: batch(send, lambda: qp.wr_atomic_write(mr.rkey, mr.buf, b'x' * 8)),
               f"{name} wr_*: atomic_write outside the QP's send_ops_flags")
    if t == e.IBV_QPT_UD:
        fails_with(errno.EINVAL, lambda: batch(lambda: qp.wr_local_inv(1)),
                   f"{name} wr_*: local_inv (not for UD)")
    if t != e.IBV_QPT_RC:
        fails_with(errno.EINVAL, lambda: batch(lambda: qp.wr_rdma_read(mr.rkey, mr.buf)),
                   f"{name} wr_*: rdma_read (not offered by the type)")
    if t == e.IBV_QPT_UD:
        fails_with(errno.EINVAL, lambda: batch(lambda: qp.wr_send(), lambda: qp.wr_set_sge(sge(8))),
                   f"{name} wr_*: send without wr_set_ud_addr")

    # (No verb on this QP between wr_start and wr_complete: the batch holds the QP.)
    scap = qp.query(e.IBV_QP_CAP)[0].cap

    def too_many():
        qp.wr_send()
        if t == e.IBV_QPT_UD:
            qp.wr_set_ud_addr(ah, peer.qp_num, 0x11111111)
        qp.wr_set_sge_list(scap.max_send_sge + 1, [sge(8, 8 * i) for i in range(scap.max_send_sge + 1)])

    fails_with(errno.EINVAL, lambda: batch(too_many), f"{name} wr_*: too many SGEs")

    def too_long():
        qp.wr_send()
        if t == e.IBV_QPT_UD:
            qp.wr_set_ud_addr(ah, peer.qp_num, 0x11111111)
        qp.wr_set_inline_data(mr.buf, MAX_INLINE + 1)

    fails_with(errno.EINVAL, lambda: batch(too_long), f"{name} wr_*: inline data too long")
    # The failed batches posted nothing: the SQ holds exactly the one send.
    for i in range(scap.max_send_wr - 1):
        batch(send)
    fails_with(errno.ENOMEM, lambda: batch(send), f"{name} wr_*: full SQ ({scap.max_send_wr} WRs)")
    qp.wr_start()
    send()
    qp.wr_abort()
    check(True, f"{name} wr_*: wr_abort releases the QP")
    modify(qp, S, qp_state=e.IBV_QPS_RESET)
    qp.close()
    peer.close()
    ah.close()

# ---- SRQ ------------------------------------------------------------------------------
fails_with(errno.EINVAL, lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=dattr.max_srq_wr + 1, max_sge=1))),
           "SRQ above max_srq_wr")
fails_with(errno.EINVAL, lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=dattr.max_srq_sge + 1))),
           "SRQ above max_srq_sge")
fails_with(errno.EINVAL, lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1, srq_limit=17))),
           "SRQ with srq_limit above max_wr")
srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=100, max_sge=3, srq_limit=0)))
sa = srq.query()
check(sa.max_wr >= 100 and sa.max_sge >= 3 and sa.srq_limit == 0,
      f"SRQ granted max_wr {sa.max_wr}, max_sge {sa.max_sge}")
works(lambda: srq.modify(SrqAttr(srq_limit=10), e.IBV_SRQ_LIMIT), "SRQ arm limit 10")
check(srq.query().srq_limit == 10, "SRQ limit reads back")
fails_with(errno.EINVAL, lambda: srq.modify(SrqAttr(srq_limit=sa.max_wr + 1), e.IBV_SRQ_LIMIT),
           "SRQ limit above max_wr")
fails_with(errno.EOPNOTSUPP, lambda: srq.modify(SrqAttr(max_wr=200), e.IBV_SRQ_MAX_WR),
           "SRQ resize (IBV_DEVICE_SRQ_RESIZE not offered)")
check(not (dattr.device_cap_flags & e.IBV_DEVICE_SRQ_RESIZE), "device does not claim SRQ resize")
fails_with(errno.EINVAL, lambda: srq.post_recv(RecvWR(sg=[sge()] * (sa.max_sge + 1), num_sge=sa.max_sge + 1)),
           "SRQ receive with too many SGEs")
for i in range(sa.max_wr):
    srq.post_recv(RecvWR(wr_id=i, sg=[sge()], num_sge=1))
fails_with(errno.ENOMEM, lambda: srq.post_recv(RecvWR(sg=[sge()], num_sge=1)), "SRQ full")
for name, t in (('RC', e.IBV_QPT_RC), ('UD', e.IBV_QPT_UD)):
    qp = works(lambda: mkqp(t, cap(rw=dattr.max_qp_wr * 4), srq=srq),
               f"{name} QP on an SRQ (max_recv_wr ignored)")
    if qp:
        to_init(qp, t)
        fails_with(errno.EINVAL, lambda: qp.post_recv(RecvWR(sg=[sge()], num_sge=1)),
                   f"{name}: post_recv on a QP with an SRQ")
        qp.close()
srq.close()

# ---- AH -------------------------------------------------------------------------------
fails_with(errno.EINVAL, lambda: AH(pd, attr=av(is_global=0)), "AH without GRH on RoCE")
fails_with(errno.EINVAL, lambda: AH(pd, attr=av(port_num=2)), "AH on port 2")
fails_with(errno.EINVAL, lambda: AH(pd, attr=av(index=port.gid_tbl_len)), "AH with sgid_index past the table")
if empty_index is not None:
    fails_with(errno.EINVAL, lambda: AH(pd, attr=av(index=empty_index)), "AH with an empty sgid_index")
ah = works(lambda: AH(pd, attr=av()), "AH to our own GID")
if ah:
    ah.close()

mr.close()
cq.close()
pd.close()
ctx.close()
print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Queue pairs: create, query, destroy.  Modify and the IBTA state machine
 * are qp_modify.c's; the engine hooks (engine/engine.h) do the protocol
 * side of every change.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "verbs/verbs.h"

/* The QP's completions still queued go, at Reset and at destroy, as
 * hardware providers clean their CQs (mlx5_cq_clean, mlx5_destroy_qp). */
void uroce_qp_clean_cqs(struct uroce_qp *qp)
{
	if (qp->scq)
		uroce_cq_clean(qp->scq, qp->vqp.qp.qp_num);
	if (qp->rcq && qp->rcq != qp->scq)
		uroce_cq_clean(qp->rcq, qp->vqp.qp.qp_num);
}

int uroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
		   struct ibv_qp_init_attr *init)
{
	struct uroce_qp *qp = to_uqp(ibqp);

	if (uroce_parents(qp->fork_gen))
		return EPERM;
	pthread_mutex_lock(&qp->lock);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->cap = qp->cap;
	attr->sq_draining = uroce_engine_sq_draining(qp);
	pthread_mutex_unlock(&qp->lock);
	if (init) {
		memset(init, 0, sizeof(*init));
		init->qp_context = ibqp->qp_context;
		init->send_cq = ibqp->send_cq;
		init->recv_cq = ibqp->recv_cq;
		init->srq = ibqp->srq;
		init->cap = qp->cap;
		init->qp_type = ibqp->qp_type;
		init->sq_sig_all = qp->sq_sig_all;
	}
	return 0;
}

/* ---- create / destroy ---------------------------------------------------------- */

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static int ring_alloc(struct uroce_ring *r, struct ibv_pd *pd, uint32_t entries, uint32_t stride)
{
	r->size = pow2_at_least(entries ? entries : 1);
	r->stride = (stride + 63) & ~63u;
	r->prod = r->cons = 0;
	r->buf = uroce_buf_alloc(pd, (size_t)r->size * r->stride, UROCE_RES_TYPE_QP, &r->custom_buf);
	return r->buf ? 0 : ENOMEM;
}

static void ring_free(struct uroce_ring *r, struct ibv_pd *pd)
{
	uroce_buf_free(pd, r->buf, UROCE_RES_TYPE_QP, r->custom_buf);
	r->buf = NULL;
}

static uint64_t supported_send_ops(enum ibv_qp_type t)
{
	uint64_t ud = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	uint64_t uc = ud | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
		      IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;
	uint64_t rc = uc | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV
		      PABI_SINCE_44(| IBV_QP_EX_WITH_ATOMIC_WRITE);

	/* XRC sends are RC's but ATOMIC WRITE (RC only here); XRC receive
	 * QPs send nothing. */
	uint64_t xrc = rc PABI_SINCE_44(& ~IBV_QP_EX_WITH_ATOMIC_WRITE);

	return t == IBV_QPT_UD ? ud : t == IBV_QPT_UC ? uc : t == IBV_QPT_XRC_SEND ? xrc :
	       t == IBV_QPT_XRC_RECV ? 0 : rc;
}

/* Take (N 1) or give back (N -1) the QP's hold on what it was made with. */
static void hold(struct uroce_qp *qp, int n)
{
	if (qp->pd)
		atomic_fetch_add(&qp->pd->users, n);
	if (qp->scq)
		atomic_fetch_add(&qp->scq->users, n);
	if (qp->rcq)
		atomic_fetch_add(&qp->rcq->users, n);
	if (qp->srq)
		atomic_fetch_add(&qp->srq->users, n);
	uroce_xrcd_hold(qp->xrcd, n);
}

static struct ibv_qp *create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *in)
{
	struct uroce_context *ctx = to_uctx(context);
	/* What is used of the caller's attributes (XRC QPs ignore some);
	 * only the granted capabilities are written back. */
	struct ibv_qp_init_attr_ex use = *in, *ia = &use;
	struct ibv_qp_cap *cap = &ia->cap;
	struct uroce_qp *qp;
	uint32_t sq_data;
	int err = EINVAL;
	enum ibv_qp_type type = ia->qp_type;
	/* An XRC send QP has no receive side (no receive CQ, SRQ or queue);
	 * an XRC receive QP has only its domain: its responder takes PD, SRQ
	 * and CQ from the XRC SRQ each request names (xrc.c). */
	bool xsend = type == IBV_QPT_XRC_SEND, xrecv = type == IBV_QPT_XRC_RECV;

	if (type != IBV_QPT_RC && type != IBV_QPT_UC && type != IBV_QPT_UD && !xsend && !xrecv) {
		errno = EOPNOTSUPP; /* no raw packet or driver QPs */
		return NULL;
	}
	if (xsend || xrecv) {
		ia->recv_cq = NULL;
		ia->srq = NULL;
		cap->max_recv_wr = cap->max_recv_sge = 0;
	}
	if (xrecv) {
		ia->send_cq = NULL;
		ia->pd = NULL;
		cap->max_send_wr = cap->max_send_sge = cap->max_inline_data = 0;
		if (!(ia->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !ia->xrcd ||
		    ia->xrcd->context != context) {
			errno = EINVAL;
			return NULL;
		}
	} else if (!ia->send_cq || !ia->pd || ia->pd->context != context ||
		   ia->send_cq->context != context || (!xsend && !ia->recv_cq) ||
		   (ia->recv_cq && ia->recv_cq->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	/* a forked child's copies of its parent's CQs and SRQs (docs/fork.md) */
	if ((ia->send_cq && uroce_parents(to_ucq(ia->send_cq)->fork_gen)) ||
	    (ia->recv_cq && uroce_parents(to_ucq(ia->recv_cq)->fork_gen)) ||
	    (ia->srq && uroce_parents(to_usrq(ia->srq)->fork_gen))) {
		errno = EPERM;
		return NULL;
	}
	if ((ia->srq && ia->srq->context != context) ||
	    cap->max_send_wr > UROCE_MAX_QP_WR || cap->max_send_sge > UROCE_MAX_SGE ||
	    cap->max_inline_data > UROCE_MAX_INLINE ||
	    (!ia->srq && (cap->max_recv_wr > UROCE_MAX_QP_WR || cap->max_recv_sge > UROCE_MAX_SGE))) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->ctx = ctx;
	qp->fork_gen = uroce_fork_gen;
	qp->pd = ia->pd ? to_upd(ia->pd) : NULL;
	qp->scq = ia->send_cq ? to_ucq(ia->send_cq) : NULL;
	qp->rcq = ia->recv_cq ? to_ucq(ia->recv_cq) : NULL;
	qp->xrcd = xrecv ? uroce_xrcd_dom(ia->xrcd) : NULL;
	qp->srq = ia->srq ? to_usrq(ia->srq) : NULL;
	qp->sq_sig_all = ia->sq_sig_all;
	/* Granted capabilities: at least what was asked. */
	qp->cap.max_send_sge = cap->max_send_sge ? cap->max_send_sge : 1;
	qp->cap.max_inline_data = cap->max_inline_data < 64 ? 64 : cap->max_inline_data;
	sq_data = qp->cap.max_send_sge * sizeof(struct uroce_sge);
	if (sq_data < qp->cap.max_inline_data)
		sq_data = qp->cap.max_inline_data;
	if ((err = ring_alloc(&qp->sq, ia->pd, cap->max_send_wr, sizeof(struct uroce_send_wqe) + sq_data)))
		goto fail;
	qp->cap.max_send_wr = qp->sq.size;
	qp->cap.max_inline_data = qp->sq.stride - sizeof(struct uroce_send_wqe);
	if (qp->cap.max_inline_data > UROCE_MAX_INLINE)
		qp->cap.max_inline_data = UROCE_MAX_INLINE;
	if (xrecv)
		qp->cap = (struct ibv_qp_cap){ 0 };
	if (!qp->srq && !xsend && !xrecv) {
		qp->cap.max_recv_sge = cap->max_recv_sge ? cap->max_recv_sge : 1;
		if ((err = ring_alloc(&qp->rq, ia->pd, cap->max_recv_wr,
				      sizeof(struct uroce_recv_wqe) +
				      qp->cap.max_recv_sge * sizeof(struct uroce_sge))))
			goto fail;
		qp->cap.max_recv_wr = qp->rq.size;
	}
	in->cap = qp->cap;
	if (ia->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		qp->send_ops_flags = ia->send_ops_flags;
	pthread_mutex_init(&qp->lock, NULL);
	pthread_mutex_init(&qp->post_lock, NULL);
	qp->state = IBV_QPS_RESET;
	qp->attr.qp_state = IBV_QPS_RESET;
	qp->attr.port_num = 1;

	struct ibv_qp *q = &qp->vqp.qp;
	q->context = context;
	q->qp_context = ia->qp_context;
	q->pd = ia->pd;
	q->send_cq = ia->send_cq;
	q->recv_cq = ia->recv_cq;
	q->srq = ia->srq;
	qp->vqp.xrcd = xrecv ? (struct verbs_xrcd *)ia->xrcd : NULL;
	q->state = IBV_QPS_RESET;
	q->qp_type = ia->qp_type;
	q->events_completed = 0;
	pthread_mutex_init(&q->mutex, NULL);
	pthread_cond_init(&q->cond, NULL);
	uroce_evobj_init(&qp->ev, qp, &q->mutex, &q->events_completed, NULL);
	qp->vqp.comp_mask |= 1 << 1; /* VERBS_QP_EX: ibv_qp_to_qp_ex() works */
	uroce_qp_init_wr_ops(qp);

	err = uroce_engine_qp_create(qp);
	if (err)
		goto fail;
	q->handle = q->qp_num;
	hold(qp, 1);
	uroce_track(ctx, UROCE_RES_QP, qp, &qp->res_slot);
	return q;
fail:
	ring_free(&qp->sq, ia->pd);
	ring_free(&qp->rq, ia->pd);
	free(qp);
	errno = err;
	return NULL;
}

struct ibv_qp *uroce_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp = create_qp(pd->context, &ia);

	if (qp)
		attr->cap = ia.cap;
	return qp;
}

struct ibv_qp *uroce_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *ia)
{
	/* Every bit libibverbs 44 defines: the ones we do not offer are
	 * EOPNOTSUPP (TSO, RSS), bits beyond them are EINVAL. */
	const uint32_t defined = (IBV_QP_INIT_ATTR_SEND_OPS_FLAGS << 1) - 1;
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			       IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_XRCD;

	/* Every QP but an XRC receive QP needs a PD. */
	if ((!(ia->comp_mask & IBV_QP_INIT_ATTR_PD) && ia->qp_type != IBV_QPT_XRC_RECV) ||
	    (ia->comp_mask & ~defined)) {
		errno = EINVAL;
		return NULL;
	}
	if (ia->comp_mask & ~known) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((ia->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && ia->create_flags) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* The operations each transport has (as rxe: EOPNOTSUPP otherwise). */
	if ((ia->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (ia->send_ops_flags & ~supported_send_ops(ia->qp_type))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return create_qp(context, ia);
}

void uroce_qp_async_event(struct uroce_qp *qp, enum ibv_event_type type)
{
	uroce_evobj_async_event(qp->ctx, &qp->ev, type, &qp->vqp.qp);
}

int uroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct uroce_qp *qp = to_uqp(ibqp);
	struct uroce_context *ctx = qp->ctx;

	/* a forked child's copy: the engine's part is the parent's */
	if (uroce_parents(qp->fork_gen))
		return EPERM;
	if (uroce_mcast_attached(qp))
		return EBUSY;
	uroce_engine_qp_destroy(qp);
	uroce_untrack(ctx, UROCE_RES_QP, &qp->res_slot);
	/* Programs poll on after closing an endpoint, and libfabric's ofi_rxm
	 * reposts the receive of each completion it flushes then to the
	 * endpoint it names, which no longer exists (docs/cm.md).  The engine
	 * no longer adds any for it. */
	uroce_qp_clean_cqs(qp);
	hold(qp, -1);
	pthread_mutex_destroy(&qp->lock);
	pthread_mutex_destroy(&qp->post_lock);
	ring_free(&qp->sq, ibqp->pd);
	ring_free(&qp->rq, ibqp->pd);
	uroce_evobj_release(ctx, &qp->ev);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * ibv_post_send / ibv_post_recv: check each work request against the QP
 * (ibv_post_send(3), IBTA 10.8) and turn it into a WQE in the ring.
 */
#include <errno.h>
#include <string.h>

#include "engine/engine.h"
#include "trace/trace.h"
#include "verbs/verbs.h"

/* ATOMIC WRITE exists from rdma-core 44's verbs.h on. */
static bool is_atomic_write(enum ibv_wr_opcode op)
{
	return PABI_SINCE_44(op == IBV_WR_ATOMIC_WRITE ||) false;
}

/* Which operations each transport has (IBTA 9.1, table 34... "valid
 * operations per service type"). */
int uroce_send_op_allowed(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	/* An XRC send QP has RC's operations but ATOMIC WRITE; an XRC
	 * receive QP sends nothing. */
	if (type == IBV_QPT_XRC_RECV || (type == IBV_QPT_XRC_SEND && is_atomic_write(op)))
		return 0;
	if (type == IBV_QPT_XRC_SEND)
		type = IBV_QPT_RC;
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return 1;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return type != IBV_QPT_UD;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	PABI_SINCE_44(case IBV_WR_ATOMIC_WRITE:)
	case IBV_WR_SEND_WITH_INV:
		return type == IBV_QPT_RC;
	case IBV_WR_BIND_MW:
	case IBV_WR_LOCAL_INV:
		return type == IBV_QPT_RC || type == IBV_QPT_UC;
	default:
		return 0;
	}
}

int uroce_sq_state_ok(const struct uroce_qp *qp)
{
	/* Posting needs RTS (or SQD/SQE/ERR, where WRs wait or flush). */
	return qp->state == IBV_QPS_RTS || qp->state == IBV_QPS_SQD ||
	       qp->state == IBV_QPS_SQE || qp->state == IBV_QPS_ERR;
}

/* Fill the payload part of W from an SGE list; inline data is copied now. */
int uroce_wqe_set_sges(struct uroce_qp *qp, struct uroce_send_wqe *w,
		       const struct ibv_sge *sg, int num)
{
	uint64_t len = 0;

	if (num < 0)
		return EINVAL;
	for (int i = 0; i < num; i++)
		len += sg[i].length;
	if (len > UROCE_MAX_MSG_SZ)
		return EINVAL;
	w->length = len;
	if (w->send_flags & IBV_SEND_INLINE) {
		uint8_t *p = w->data;

		if (len > qp->cap.max_inline_data)
			return EINVAL;
		for (int i = 0; i < num; i++) {
			memcpy(p, (void *)(uintptr_t)sg[i].addr, sg[i].length);
			p += sg[i].length;
		}
		w->inline_len = (uint32_t)len;
		w->num_sge = 0;
		return 0;
	}
	if ((uint32_t)num > qp->cap.max_send_sge)
		return EINVAL;
	for (int i = 0; i < num; i++) {
		wqe_sges(w)[i].addr = sg[i].addr;
		wqe_sges(w)[i].length = sg[i].length;
		wqe_sges(w)[i].lkey = sg[i].lkey;
	}
	w->num_sge = num;
	return 0;
}

/* Fill the UD destination of W. */
int uroce_wqe_set_ud(struct uroce_qp *qp, struct uroce_send_wqe *w, struct ibv_ah *ah,
		     uint32_t remote_qpn, uint32_t remote_qkey)
{
	if (!ah || ah->context != qp->vqp.qp.context)
		return EINVAL;
	w->av = ((struct uroce_ah *)ah)->av;
	w->remote_qpn = remote_qpn & 0xffffff;
	/* IBTA 10.2.5: a Q_Key with the high bit set means "use the QP's". */
	w->remote_qkey = (remote_qkey & 0x80000000u) ? qp->attr.qkey : remote_qkey;
	return 0;
}

/* The final checks of a filled WQE (sizes that depend on the opcode). */
int uroce_wqe_check(struct uroce_qp *qp, struct uroce_send_wqe *w)
{
	if (w->send_flags & ~(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |
			      IBV_SEND_INLINE))
		return EINVAL; /* no checksum offload (IBV_SEND_IP_CSUM) or other flags */
	/* A UD send needs its destination (ibv_wr_set_ud_addr in the wr_* API). */
	if (qp->vqp.qp.qp_type == IBV_QPT_UD && !w->av.family)
		return EINVAL;
	if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
		/* IBTA 9.4.5: atomics move exactly 8 bytes into one local buffer. */
		if (w->num_sge != 1 || wqe_sges(w)[0].length < 8 ||
		    (w->send_flags & IBV_SEND_INLINE))
			return EINVAL;
	if (w->opcode == IBV_WR_RDMA_READ && (w->send_flags & IBV_SEND_INLINE))
		return EINVAL;
	/* IBTA 1.5 ATOMIC WRITE: exactly 8 bytes (from SGEs or inline data).
	 * The target's alignment is the responder's to check (a NAK), as for
	 * the other atomics. */
	if (is_atomic_write(w->opcode) && w->length != 8)
		return EINVAL;
	return 0;
}

static void wqe_reset(struct uroce_send_wqe *w, uint64_t wr_id, enum ibv_wr_opcode op,
		      unsigned int flags)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	w->opcode = op;
	w->send_flags = flags;
	w->state = UROCE_WQE_POSTED;
}

/* A fresh WQE in the next free slot, or NULL when the send queue is full. */
struct uroce_send_wqe *uroce_wqe_new(struct uroce_qp *qp, uint64_t wr_id,
				     enum ibv_wr_opcode op, unsigned int flags)
{
	struct uroce_send_wqe *w;

	if (ring_used(&qp->sq) >= qp->sq.size)
		return NULL;
	w = ring_slot(&qp->sq, qp->sq.prod);
	wqe_reset(w, wr_id, op, flags);
	return w;
}

static int fill_send(struct uroce_qp *qp, const struct ibv_send_wr *wr)
{
	enum ibv_qp_type type = qp->vqp.qp.qp_type;
	struct uroce_send_wqe *w;
	int err;

	if (!uroce_send_op_allowed(type, wr->opcode))
		return EINVAL;
	w = uroce_wqe_new(qp, wr->wr_id, wr->opcode, wr->send_flags);
	if (!w)
		return ENOMEM;
	err = uroce_wqe_set_sges(qp, w, wr->sg_list, wr->num_sge);
	if (err)
		return err;
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		w->invalidate_rkey = wr->invalidate_rkey;
		break;
	case IBV_WR_BIND_MW:
		/* ibv_post_send binds type 2 windows; type 1 has ibv_bind_mw. */
		if (!wr->bind_mw.mw || wr->bind_mw.mw->type != IBV_MW_TYPE_2)
			return EINVAL;
		err = uroce_wqe_set_bind(qp, w, wr->bind_mw.mw, wr->bind_mw.rkey,
					 &wr->bind_mw.bind_info);
		if (err)
			return err;
		break;
	case IBV_WR_SEND_WITH_IMM:
		w->imm_data = wr->imm_data;
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		w->imm_data = wr->imm_data;
		/* fall through */
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_READ:
	PABI_SINCE_44(case IBV_WR_ATOMIC_WRITE:) /* its 8 bytes are the SGE list's, as rxe takes them */
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
		break;
	default:
		break;
	}
	if (type == IBV_QPT_UD) {
		err = uroce_wqe_set_ud(qp, w, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
				       wr->wr.ud.remote_qkey);
		if (err)
			return err;
	}
	if (type == IBV_QPT_XRC_SEND)
		w->xrc_srqn = wr->qp_type.xrc.remote_srqn & 0xffffff;
	return uroce_wqe_check(qp, w);
}

/*
 * A post fills and publishes its WQEs under the QP's post_lock only.  The
 * QP's lock is the engine's, held while it takes a response and sends
 * what waited behind it, system calls included.  With many QPs that is
 * where perftest's next post to the same QP met it: at ib_write_bw -q 128
 * the posting thread slept on that lock 12 000 times a second
 * (docs/performance.md).  The post takes the lock only when the engine
 * must act now: the queue looks full (a completion can be seen before its
 * slot is given back, uroce_complete_send), or the engine's next pass is
 * not sure to send the WQEs (uroce_engine_post_deferred).
 */
int uroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct uroce_qp *qp = to_uqp(ibqp);
	bool locked = false;
	int err = 0, posted = 0;

	/* a forked child's copy of its parent's (docs/fork.md) */
	if (uroce_parents(qp->fork_gen)) {
		*bad_wr = wr;
		return EPERM;
	}
	pthread_mutex_lock(&qp->post_lock);
	if (!uroce_sq_state_ok(qp))
		err = EINVAL;
	for (; wr && !err; wr = wr->next) {
		err = fill_send(qp, wr);
		if (err == ENOMEM && !locked) {
			pthread_mutex_lock(&qp->lock);
			locked = true;
			err = fill_send(qp, wr);
		}
		if (err)
			break;
		UROCE_TRACE(uroce_trace_sq_posted(qp, qp->sq.prod, qp->sq.prod + 1));
		ring_publish(&qp->sq);
		posted++;
	}
	if (posted && (locked || !uroce_engine_post_deferred(qp))) {
		if (!locked)
			pthread_mutex_lock(&qp->lock);
		locked = true;
		uroce_engine_sq_posted(qp);
	}
	if (locked)
		pthread_mutex_unlock(&qp->lock);
	pthread_mutex_unlock(&qp->post_lock);
	if (err)
		*bad_wr = wr;
	return err;
}

int uroce_fill_recv(struct uroce_ring *r, uint32_t max_sge, const struct ibv_recv_wr *wr)
{
	struct uroce_recv_wqe *rw;
	uint64_t len = 0;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge)
		return EINVAL;
	if (ring_used(r) >= r->size)
		return ENOMEM;
	rw = ring_slot(r, r->prod);
	rw->wr_id = wr->wr_id;
	rw->num_sge = wr->num_sge;
	for (int i = 0; i < wr->num_sge; i++) {
		rw->sge[i].addr = wr->sg_list[i].addr;
		rw->sge[i].length = wr->sg_list[i].length;
		rw->sge[i].lkey = wr->sg_list[i].lkey;
		len += wr->sg_list[i].length;
	}
	rw->length = len;
	r->prod++;
	return 0;
}

int uroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct uroce_qp *qp = to_uqp(ibqp);
	int err = 0;

	/* a forked child's copy of its parent's (docs/fork.md) */
	if (uroce_parents(qp->fork_gen)) {
		*bad_wr = wr;
		return EPERM;
	}
	pthread_mutex_lock(&qp->lock);
	/* A QP with an SRQ has no receive queue, nor has either XRC QP;
	 * RESET takes no WRs (10.8.2). */
	if (qp->srq || qp->state == IBV_QPS_RESET || ibqp->qp_type == IBV_QPT_XRC_SEND ||
	    ibqp->qp_type == IBV_QPT_XRC_RECV)
		err = EINVAL;
	for (; wr && !err; wr = wr->next) {
		err = uroce_fill_recv(&qp->rq, qp->cap.max_recv_sge, wr);
		if (err)
			break;
		UROCE_TRACE(uroce_trace_post_recv(qp->vqp.qp.qp_num, wr));
	}
	pthread_mutex_unlock(&qp->lock);
	if (err)
		*bad_wr = wr;
	uroce_engine_rq_posted(qp);
	return err;
}

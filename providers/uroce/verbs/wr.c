// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The extended post API (ibv_wr_start(3)): wr_start takes the QP, each
 * wr_<op> opens a WQE that the wr_set_* calls complete, wr_complete posts
 * the batch (or none of it, returning the first error), wr_abort drops it.
 * The checks are post.c's, shared with ibv_post_send.
 */
#include <errno.h>
#include <string.h>

#include "engine/engine.h"
#include "trace/trace.h"
#include "verbs/verbs.h"

static void set_error(struct uroce_qp *qp, int err)
{
	if (!qp->wr_error)
		qp->wr_error = err;
	qp->wr_cur = NULL;
}

/* Open a WQE for OP; NULL (and the batch fails) if it is not allowed. */
static struct uroce_send_wqe *begin(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
				    uint64_t ops_flag)
{
	struct uroce_qp *qp = qp_ex_to_uqp(qpx);
	struct uroce_send_wqe *w;

	if (qp->wr_error)
		return NULL;
	if (!uroce_send_op_allowed(qp->vqp.qp.qp_type, op) ||
	    (qp->send_ops_flags && !(qp->send_ops_flags & ops_flag))) {
		set_error(qp, EINVAL);
		return NULL;
	}
	w = uroce_wqe_new(qp, qpx->wr_id, op, qpx->wr_flags);
	if (!w) {
		set_error(qp, ENOMEM);
		return NULL;
	}
	ring_publish(&qp->sq);
	qp->wr_cur = w;
	return w;
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct uroce_qp *qp = qp_ex_to_uqp(qpx);

	if (uroce_parents(qp->fork_gen)) {  /* a forked child's copy: no locks taken */
		qp->wr_error = EPERM;
		qp->wr_cur = NULL;
		return;
	}
	/* Both locks until wr_complete: the WQEs are published before they
	 * are filled, so the engine must not look meanwhile. */
	pthread_mutex_lock(&qp->post_lock);
	pthread_mutex_lock(&qp->lock);
	qp->wr_start_prod = qp->sq.prod;
	qp->wr_error = uroce_sq_state_ok(qp) ? 0 : EINVAL;
	qp->wr_cur = NULL;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct uroce_qp *qp = qp_ex_to_uqp(qpx);
	int err = qp->wr_error;

	if (uroce_parents(qp->fork_gen))
		return EPERM;
	for (uint32_t i = qp->wr_start_prod; !err && i != qp->sq.prod; i++)
		err = uroce_wqe_check(qp, ring_slot(&qp->sq, i));
	UROCE_TRACE(uroce_trace_sq_posted(qp, qp->wr_start_prod, err ? qp->wr_start_prod : qp->sq.prod));
	if (err)
		qp->sq.prod = qp->wr_start_prod;
	else if (qp->sq.prod != qp->wr_start_prod)
		uroce_engine_sq_posted(qp);
	qp->wr_cur = NULL;
	pthread_mutex_unlock(&qp->lock);
	pthread_mutex_unlock(&qp->post_lock);
	return err;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct uroce_qp *qp = qp_ex_to_uqp(qpx);

	if (uroce_parents(qp->fork_gen))
		return;
	qp->sq.prod = qp->wr_start_prod;
	qp->wr_cur = NULL;
	pthread_mutex_unlock(&qp->lock);
	pthread_mutex_unlock(&qp->post_lock);
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	begin(qpx, IBV_WR_SEND, IBV_QP_EX_WITH_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct uroce_send_wqe *w = begin(qpx, IBV_WR_SEND_WITH_IMM, IBV_QP_EX_WITH_SEND_WITH_IMM);

	if (w)
		w->imm_data = imm;
}

static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct uroce_send_wqe *w = begin(qpx, IBV_WR_SEND_WITH_INV, IBV_QP_EX_WITH_SEND_WITH_INV);

	if (w)
		w->invalidate_rkey = rkey;
}

static void remote(struct uroce_send_wqe *w, uint32_t rkey, uint64_t addr)
{
	if (w) {
		w->rkey = rkey;
		w->remote_addr = addr;
	}
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	remote(begin(qpx, IBV_WR_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE), rkey, addr);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, __be32 imm)
{
	struct uroce_send_wqe *w = begin(qpx, IBV_WR_RDMA_WRITE_WITH_IMM,
					 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);

	remote(w, rkey, addr);
	if (w)
		w->imm_data = imm;
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	remote(begin(qpx, IBV_WR_RDMA_READ, IBV_QP_EX_WITH_RDMA_READ), rkey, addr);
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
			      uint64_t compare, uint64_t swap)
{
	struct uroce_send_wqe *w = begin(qpx, IBV_WR_ATOMIC_CMP_AND_SWP,
					 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP);

	remote(w, rkey, addr);
	if (w) {
		w->compare_add = compare;
		w->swap = swap;
	}
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
				uint64_t add)
{
	struct uroce_send_wqe *w = begin(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD,
					 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);

	remote(w, rkey, addr);
	if (w)
		w->compare_add = add;
}

/* Operations the device does not offer fail the batch with EOPNOTSUPP. */
static void unsupported(struct ibv_qp_ex *qpx)
{
	set_error(qp_ex_to_uqp(qpx), EOPNOTSUPP);
}

static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct uroce_send_wqe *w = begin(qpx, IBV_WR_BIND_MW, IBV_QP_EX_WITH_BIND_MW);
	struct uroce_qp *qp = qp_ex_to_uqp(qpx);
	int err;

	if (!w)
		return;
	err = (!mw || mw->type != IBV_MW_TYPE_2) ? EINVAL :
		uroce_wqe_set_bind(qp, w, mw, rkey, info);
	if (err)
		set_error(qp, err);
}

static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct uroce_send_wqe *w = begin(qpx, IBV_WR_LOCAL_INV, IBV_QP_EX_WITH_LOCAL_INV);

	if (w)
		w->invalidate_rkey = rkey;
}

static void wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	unsupported(qpx);
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t srqn)
{
	struct uroce_qp *qp = qp_ex_to_uqp(qpx);

	if (!qp->wr_cur)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_XRC_SEND) {
		set_error(qp, EINVAL);
		return;
	}
	qp->wr_cur->xrc_srqn = srqn & 0xffffff;
}

/* The 8 bytes are copied now (ibv_wr_atomic_write(3): the buffer may be
 * reused once the call returns), as inline data.  rdma-core 44+. */
PABI_SINCE_44(
static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
			    const void *data)
{
	struct uroce_send_wqe *w = begin(qpx, IBV_WR_ATOMIC_WRITE, IBV_QP_EX_WITH_ATOMIC_WRITE);

	remote(w, rkey, addr);
	if (!w)
		return;
	memcpy(w->data, data, 8);
	w->inline_len = 8;
	w->length = 8;
	w->send_flags |= IBV_SEND_INLINE;
})

/* IBV_WR_FLUSH (rdma-core 45+, IBTA 1.5 FLUSH) is not offered. */
PABI_SINCE_45(
static void wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
		     size_t len, uint8_t type, uint8_t level)
{
	unsupported(qpx);
})

/* ---- payload and address of the open WQE -------------------------------------- */

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num, const struct ibv_sge *sg)
{
	struct uroce_qp *qp = qp_ex_to_uqp(qpx);
	int err;

	if (!qp->wr_cur)
		return;
	if (num > UROCE_MAX_SGE) {
		set_error(qp, EINVAL);
		return;
	}
	/* SGEs, not inline data, whatever wr_flags says. */
	qp->wr_cur->send_flags &= ~IBV_SEND_INLINE;
	err = uroce_wqe_set_sges(qp, qp->wr_cur, sg, (int)num);
	if (err)
		set_error(qp, err);
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(qpx, 1, &sge);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num,
				    const struct ibv_data_buf *bufs)
{
	struct uroce_qp *qp = qp_ex_to_uqp(qpx);
	struct ibv_sge sg[UROCE_MAX_SGE];
	int err;

	if (!qp->wr_cur)
		return;
	if (num > UROCE_MAX_SGE) {
		set_error(qp, EINVAL);
		return;
	}
	for (size_t i = 0; i < num; i++) {
		if (bufs[i].length > UROCE_MAX_INLINE) {
			set_error(qp, EINVAL); /* longer than any inline data */
			return;
		}
		sg[i].addr = (uintptr_t)bufs[i].addr;
		sg[i].length = (uint32_t)bufs[i].length;
		sg[i].lkey = 0;
	}
	qp->wr_cur->send_flags |= IBV_SEND_INLINE;
	err = uroce_wqe_set_sges(qp, qp->wr_cur, sg, (int)num);
	if (err)
		set_error(qp, err);
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf b = { .addr = addr, .length = length };

	wr_set_inline_data_list(qpx, 1, &b);
}

static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct uroce_qp *qp = qp_ex_to_uqp(qpx);
	int err;

	if (!qp->wr_cur)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_UD) {
		set_error(qp, EINVAL);
		return;
	}
	err = uroce_wqe_set_ud(qp, qp->wr_cur, ah, qpn, qkey);
	if (err)
		set_error(qp, err);
}

void uroce_qp_init_wr_ops(struct uroce_qp *qp)
{
	struct ibv_qp_ex *x = &qp->vqp.qp_ex;

	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_send_inv = wr_send_inv;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_local_inv = wr_local_inv;
	x->wr_send_tso = wr_send_tso;
	x->wr_set_xrc_srqn = wr_set_xrc_srqn;
	PABI_SINCE_44(x->wr_atomic_write = wr_atomic_write;)
	PABI_SINCE_45(x->wr_flush = wr_flush;)
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_set_ud_addr = wr_set_ud_addr;
}

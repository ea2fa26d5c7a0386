// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * How send WQEs end: the CQE of a finished one (uroce_complete_send, when
 * the completer, comp.c, or the requester, req.c, says it is done); the
 * error state, whose flush completes every WQE of both queues with
 * IBV_WC_WR_FLUSH_ERR (IBTA 10.3.1, 11.6.3.1); and SQ_DRAINED once a QP
 * in SQD has nothing outstanding.
 */
#include <errno.h>
#include <stdio.h>

#include "engine/engine_int.h"
#include "trace/trace.h"

static enum ibv_wc_opcode send_wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	PABI_SINCE_44(case IBV_WR_ATOMIC_WRITE:
		return IBV_WC_ATOMIC_WRITE;)
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	default:
		return IBV_WC_SEND;
	}
}

static void push_cqe(struct uroce_qp *qp, struct uroce_cq *cq, struct ibv_wc *wc)
{
	if (uroce_up->cq_push(cq, wc, false) == -ENOSPC) {
		/* CQ overrun: never a silent drop (IBTA 11.4.2.1: CQ error). */
		fprintf(stderr, "uroce: CQ overrun on QP %u: the CQ is in error\n",
			qp->vqp.qp.qp_num);
	}
}

void uroce_complete_send(struct uroce_qp *qp, struct uroce_send_wqe *w,
			 enum ibv_wc_status status)
{
	bool signaled = qp->sq_sig_all || (w->send_flags & IBV_SEND_SIGNALED);

	if (status != IBV_WC_SUCCESS || signaled) {
		struct ibv_wc wc = {
			.wr_id = w->wr_id,
			.status = status,
			.opcode = send_wc_opcode(w->opcode),
			.qp_num = qp->vqp.qp.qp_num,
		};

		if (status == IBV_WC_SUCCESS && (w->opcode == IBV_WR_RDMA_READ))
			wc.byte_len = w->length;
		else if (status == IBV_WC_SUCCESS &&
			 (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
			  w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD))
			wc.byte_len = 8;
		push_cqe(qp, qp->scq, &wc);
	}
	w->state = UROCE_WQE_DONE;
	ring_retire(&qp->sq);
}

void uroce_qp_flush(struct uroce_qp *qp)
{
	struct uroce_qp_eng *qe = qp->engine;

	/* The error state is stored: now read sq.prod (uroce_engine_post_deferred). */
	atomic_thread_fence(memory_order_seq_cst);
	while (ring_used(&qp->sq)) {
		struct uroce_send_wqe *w = ring_slot(&qp->sq, qp->sq.cons);

		if ((w->opcode == IBV_WR_RDMA_READ || w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		     w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) && w->state != UROCE_WQE_POSTED &&
		    qe->rd_atomic)
			qe->rd_atomic--;
		uroce_complete_send(qp, w, IBV_WC_WR_FLUSH_ERR);
	}
	qe->sq_next = qp->sq.cons;
	qe->cur_off = 0;
	qe->una_psn = qe->cur_psn;
	while (!qp->srq && ring_used(&qp->rq)) {
		struct uroce_recv_wqe *r = ring_slot(&qp->rq, qp->rq.cons);
		struct ibv_wc wc = {
			.wr_id = r->wr_id,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.qp_num = qp->vqp.qp.qp_num,
		};

		push_cqe(qp, qp->rcq, &wc);
		qp->rq.cons++;
	}
	qe->deadline_ns = qe->rnr_until_ns = 0;
	uroce_engine_arm(qe, false);
}

void uroce_qp_to_error_ev(struct uroce_qp *qp, int ev)
{
	bool was_err = qp->state == IBV_QPS_ERR;

	UROCE_TRACE(uroce_trace_to_error(qp, ev));
	qp->state = IBV_QPS_ERR;
	/* Not ibv_qp's own state field: libibverbs keeps there the state the
	 * application last set (ibv_modify_qp), and a real RNIC or rxe does
	 * not change it when the QP fails.  UCX asserts on it (a loaded
	 * ucx_mpi run aborted in uct_rc_verbs_ep_flush).  ibv_query_qp
	 * reports ERR from qp->attr. */
	qp->attr.qp_state = IBV_QPS_ERR;
	uroce_qp_flush(qp);
	if (was_err)
		return;
	if (ev >= 0)
		uroce_up->qp_event(qp, ev);
	if (qp->srq && qp->vqp.qp.qp_type != IBV_QPT_XRC_RECV)
		uroce_up->qp_event(qp, IBV_EVENT_QP_LAST_WQE_REACHED);
}

/* IBTA 11.6.3.1: the affiliated asynchronous errors are for what no
 * completion can report.  A requester error (retries exhausted, a NAK, a
 * local error while building a packet) is reported by the failing WQE's
 * CQE (IBTA 10.10.2), and the QP goes to error without an event, as on
 * rxe and on RNICs (mlx5 raises its catastrophic-error event only for
 * errors it cannot put in a CQE). */
void uroce_qp_to_error(struct uroce_qp *qp)
{
	uroce_qp_to_error_ev(qp, -1);
}

void uroce_check_drained(struct uroce_qp *qp)
{
	struct uroce_qp_eng *qe = qp->engine;

	/* IBTA 11.6.3.1: SQ drained once in SQD no WQE is outstanding. */
	if (qp->state == IBV_QPS_SQD && qe->draining && !qe->drained_sent &&
	    (qe->sq_next == qp->sq.cons ||
	     ((struct uroce_send_wqe *)ring_slot(&qp->sq, qp->sq.cons))->state == UROCE_WQE_POSTED)) {
		qe->drained_sent = true;
		uroce_up->qp_event(qp, IBV_EVENT_SQ_DRAINED);
	}
}

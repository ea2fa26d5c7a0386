// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The completer (IBTA 9.7.5.1, 9.9.2): ACKs, NAKs, RDMA READ responses and
 * ATOMIC ACKs coming back to an RC requester complete its WQEs, in order.
 * Called with qp->lock held.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "engine/mem.h"
#include "engine/pkt.h"
#include "trace/trace.h"

/* IBTA 9.7.5.2.8, table 45: RNR NAK timer codes in microseconds. */
static const uint32_t rnr_timer_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280,
	1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440,
	81920, 122880, 163840, 245760, 327680, 491520,
};

static void done(struct uroce_qp *qp, struct uroce_send_wqe *w, enum ibv_wc_status st)
{
	struct uroce_qp_eng *qe = qp->engine;

	if (uroce_is_rd_atomic(w->opcode) && qe->rd_atomic)
		qe->rd_atomic--;
	uroce_complete_send(qp, w, st);
	uroce_check_drained(qp);
}

/*
 * Forward progress: an ACK, a READ response or an ATOMIC ACK completed
 * something or moved the oldest unacknowledged PSN.  The transport and RNR
 * retry counters count consecutive failed attempts, so progress of any
 * kind refills them (IBTA 9.7.6.1.3, 9.7.5.2.8).  Without this an atomic
 * or READ stream, whose responses are not plain ACKs, never refilled them
 * and died with RETRY_EXC_ERR after retry_cnt resends spread over the
 * whole connection.
 */
static void progressed(struct uroce_qp *qp)
{
	struct uroce_qp_eng *qe = qp->engine;

	qe->retry_left = qp->attr.retry_cnt;
	qe->rnr_left = qp->attr.rnr_retry;
	uroce_cc_progress(qe);
}

/* The response PSN the READ at the head of the queue waits for next. */
static uint32_t read_expected(const struct uroce_qp_eng *qe, const struct uroce_send_wqe *w)
{
	return psn_add(w->first_psn, w->read_done / uroce_qp_mtu(qe));
}

/*
 * A response for PSN came while the READ or atomic response at EXPECT is
 * missing: resend from EXPECT (go-back-N).  Once per burst of responses:
 * each response of the burst already on its way would ask again, and with
 * a window of atomics outstanding every one would resend the whole window.
 * For atomics (NEW_BURST_COUNTS), a response with a PSN below the highest
 * seen since then belongs to a new burst (the resend's, answered from the
 * responder's replay cache) that lost EXPECT again: resend again at once
 * rather than wait for the probe or the ACK timeout.  Not for READs: their
 * duplicates are re-executed, up to 64 packets each, and a responder behind
 * on older duplicates sends old bursts late, which would look new.
 */
static void resend_from(struct uroce_qp *qp, uint32_t expect, uint32_t psn, bool new_burst_counts)
{
	struct uroce_qp_eng *qe = qp->engine;

	if (qe->rd_rewound && qe->rd_rewind_psn == expect &&
	    (!new_burst_counts || psn_diff(psn, qe->rd_ahead_psn) >= 0)) {
		qe->rd_ahead_psn = psn;
		return;
	}
	UROCE_TRACE(uroce_trace_why(qp, UROCE_WHY_RETX_IMPLIED, expect, psn));
	qe->rd_rewound = true;
	qe->rd_rewind_psn = expect;
	qe->rd_ahead_psn = psn;
	uroce_count(qe->eng, UROCE_STAT_NAKS_RX_SEQ, 1);
	uroce_cc_loss(qe, false);
	uroce_req_rewind(qp, expect);
	uroce_req_progress(qp);
}

/*
 * PSN A is acknowledged (by a response for PSN RESP): complete every
 * SEND/WRITE whose packets all lie at or before A.  A READ or atomic
 * reached this way lost its response (an implied NAK, IBTA 9.7.5.1.4):
 * resend it.  Returns false if it had to.
 */
static bool ack_through(struct uroce_qp *qp, uint32_t a, uint32_t resp)
{
	struct uroce_qp_eng *qe = qp->engine;
	bool progress = false;

	while (qp->sq.cons != ring_prod(&qp->sq)) {
		struct uroce_send_wqe *w = ring_slot(&qp->sq, qp->sq.cons);

		if (w->state != UROCE_WQE_SENT || psn_diff(w->last_psn, a) > 0)
			break;
		if (uroce_is_rd_atomic(w->opcode)) {
			if (w->opcode == IBV_WR_RDMA_READ)
				resend_from(qp, read_expected(qe, w), resp, false);
			else
				resend_from(qp, w->first_psn, resp, true);
			return false;
		}
		done(qp, w, IBV_WC_SUCCESS);
		progress = true;
	}
	if (psn_diff(psn_add(a, 1), qe->una_psn) > 0) {
		qe->una_psn = psn_add(a, 1);
		uroce_req_acked(qp, a);
		progress = true;
	}
	if (progress)
		progressed(qp);
	return true;
}

static void fail_head(struct uroce_qp *qp, enum ibv_wc_status st)
{
	struct uroce_engine *eng = ((struct uroce_qp_eng *)qp->engine)->eng;

	if (st == IBV_WC_RETRY_EXC_ERR)
		uroce_count(eng, UROCE_STAT_RETRY_EXCEEDED, 1);
	else if (st == IBV_WC_RNR_RETRY_EXC_ERR)
		uroce_count(eng, UROCE_STAT_RNR_RETRY_EXCEEDED, 1);
	if (qp->sq.cons != ring_prod(&qp->sq))
		done(qp, ring_slot(&qp->sq, qp->sq.cons), st);
	uroce_qp_to_error(qp);
}

static void on_nak(struct uroce_qp *qp, const struct roce_pkt *pkt)
{
	struct uroce_qp_eng *qe = qp->engine;
	uint8_t code = pkt->syndrome & 0x1f;

	/* Everything before the NAKed PSN has arrived (IBTA 9.7.5.2.x). */
	if (!ack_through(qp, psn_add(pkt->psn, -1u), pkt->psn))
		return;
	if ((pkt->syndrome & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RNR_NAK) {
		uroce_count(qe->eng, UROCE_STAT_RNR_NAKS_RX, 1);
		if (uroce_debug)
			fprintf(stderr, "uroce: QP %u RNR NAK psn %u: una %u cur %u next %u cons %u armed %d/%d\n",
				qp->vqp.qp.qp_num, pkt->psn, qe->una_psn, qe->cur_psn, qe->sq_next,
				qp->sq.cons, qe->armed, atomic_load(&qe->eng->armed));
		if (qe->rnr_left == 0) {
			UROCE_TRACE(uroce_trace_why(qp, UROCE_WHY_RNR_RETRY_EXC, pkt->psn, 0));
			fail_head(qp, IBV_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		if (qp->attr.rnr_retry != 7) /* 7 means retry forever */
			qe->rnr_left--;
		uroce_req_rewind(qp, pkt->psn);
		/* Nothing is resent before the RNR timer ends (IBTA 9.7.5.2.8):
		 * no retransmit timer, no tail-loss probe. */
		qe->deadline_ns = qe->probe_ns = 0;
		qe->rnr_until_ns = uroce_now_ns() + 1000ull * rnr_timer_us[code];
		UROCE_TRACE(uroce_trace_why(qp, UROCE_WHY_RNR_WAIT, pkt->psn, rnr_timer_us[code]));
		uroce_engine_arm(qe, true);
		return;
	}
	uroce_count(qe->eng, uroce_nak_stat(UROCE_STAT_NAKS_RX_SEQ, code), 1);
	switch (code) {
	case ROCE_NAK_PSN_SEQ:
		if (qe->retry_left == 0) {
			UROCE_TRACE(uroce_trace_why(qp, UROCE_WHY_RETRY_EXC, pkt->psn, 0));
			fail_head(qp, IBV_WC_RETRY_EXC_ERR);
			return;
		}
		qe->retry_left--;
		UROCE_TRACE(uroce_trace_why(qp, UROCE_WHY_RETX_NAK, pkt->psn, qe->retry_left));
		uroce_cc_loss(qe, false);
		uroce_req_rewind(qp, pkt->psn);
		uroce_req_progress(qp);
		uroce_req_restart_timer(qp);
		return;
	case ROCE_NAK_INVALID_REQ:
		fail_head(qp, IBV_WC_REM_INV_REQ_ERR);
		return;
	case ROCE_NAK_REMOTE_ACCESS:
		fail_head(qp, IBV_WC_REM_ACCESS_ERR);
		return;
	case ROCE_NAK_REMOTE_OP:
		fail_head(qp, IBV_WC_REM_OP_ERR);
		return;
	default:
		fail_head(qp, IBV_WC_REM_INV_RD_REQ_ERR);
		return;
	}
}

/*
 * A READ response or ATOMIC ACK for PSN implicitly acknowledges every
 * request before it (IBTA 9.7.5.1.1): complete those and return the WQE
 * the response is for, or NULL if there is none (or one had to be resent).
 */
static struct uroce_send_wqe *head_for_response(struct uroce_qp *qp, uint32_t psn, bool read)
{
	struct uroce_send_wqe *w;

	while (qp->sq.cons != ring_prod(&qp->sq)) {
		w = ring_slot(&qp->sq, qp->sq.cons);
		if ((read && w->opcode == IBV_WR_RDMA_READ) || w->state != UROCE_WQE_SENT ||
		    psn_diff(w->last_psn, psn) >= 0)
			return w;
		if (!ack_through(qp, w->last_psn, psn))
			return NULL;
	}
	return NULL;
}

/* Bytes of READ W that the response for PSN carries: one MTU each, the
 * rest in the last (requests are cut at MTU multiples, so PSN -> offset). */
static uint32_t read_resp_len(const struct uroce_qp_eng *qe, const struct uroce_send_wqe *w,
			      uint32_t psn)
{
	uint64_t off = (uint64_t)psn_diff(psn, w->first_psn) * uroce_qp_mtu(qe);

	return off >= w->length ? 0 : (uint32_t)(w->length - off > uroce_qp_mtu(qe) ?
						 uroce_qp_mtu(qe) : w->length - off);
}

static int read_place(struct uroce_qp *qp, struct uroce_send_wqe *w, uint64_t off,
		      const struct roce_pkt *pkt)
{
	int ret;

	if (!pkt->paylen)
		return 0;
	uroce_mem_lock(qp);
	ret = uroce_mem_scatter(qp, wqe_sges(w), w->num_sge, off, pkt->payload, pkt->paylen);
	uroce_mem_unlock(qp);
	return ret;
}

/*
 * A response beyond the gap at EXPECT, for the same READ: place it now and
 * remember it, so that the resend only has to fill the gap rather than
 * bring every later response again (at 20 % loss, go-back-N alone needs
 * some 16 rounds for a 64-packet READ).  The buffer's contents are not
 * defined before the completion, so placing out of order is invisible.
 */
static void read_keep_ahead(struct uroce_qp *qp, struct uroce_send_wqe *w, uint32_t expect,
			    const struct roce_pkt *pkt)
{
	struct uroce_qp_eng *qe = qp->engine;
	int32_t ahead = psn_diff(pkt->psn, expect);

	if (ahead < 1 || ahead > 64 || psn_diff(pkt->psn, w->last_psn) > 0 ||
	    pkt->paylen != read_resp_len(qe, w, pkt->psn) || !pkt->paylen ||
	    read_place(qp, w, (uint64_t)psn_diff(pkt->psn, w->first_psn) * uroce_qp_mtu(qe), pkt)) {
		uroce_count(qe->eng, UROCE_STAT_DUPLICATES, 1);
		return;
	}
	qe->rd_kept |= 1ull << (ahead - 1);
}

/*
 * Is the READ response at EXPECT lost, now that the one for PSN (beyond
 * it) came?  Only if READ_REORDER_SLACK responses or more came past it, or
 * PSN is the last response asked for so far (nothing later will show the
 * gap).  A response overtaken by a few later ones is late, not lost: asking
 * for it again at once makes the responder execute the rest of the READ
 * again (IBTA 9.7.5.1.1: a duplicate READ is executed again, up to 64
 * packets here) while the originals are still on the way, and on a wire
 * that reorders often these re-requests, each answered with a burst of
 * duplicates, filled the wire's queue until responses took longer than the
 * ACK timeout (docs/xdp.md, "Reordering").  As TCP's duplicate-ACK
 * threshold, a small count of later responses tells reordering from loss;
 * a real loss costs those few packets' time more.
 */
enum { READ_REORDER_SLACK = 4 };

static bool read_gap_lost(const struct uroce_qp_eng *qe, uint32_t expect, uint32_t psn)
{
	return psn_diff(psn, expect) >= READ_REORDER_SLACK ||
	       psn_diff(psn_add(qe->cur_psn, -1u), psn) <= 0;
}

static void on_read_resp(struct uroce_qp *qp, const struct roce_pkt *pkt)
{
	struct uroce_qp_eng *qe = qp->engine;
	struct uroce_send_wqe *w = head_for_response(qp, pkt->psn, true);
	uint32_t expect;

	if (!w || w->opcode != IBV_WR_RDMA_READ || w->state == UROCE_WQE_POSTED)
		return; /* a stale response */
	if (qe->rd_kept_first != w->first_psn) {
		qe->rd_kept = 0;
		qe->rd_kept_first = w->first_psn;
	}
	expect = read_expected(qe, w);
	if (pkt->psn != expect) {
		/* Ahead: responses were lost; keep this one, resend the READ
		 * from the gap. */
		if (psn_diff(pkt->psn, expect) > 0) {
			read_keep_ahead(qp, w, expect, pkt);
			if (psn_diff(qe->cur_psn, expect) > 0 && read_gap_lost(qe, expect, pkt->psn))
				resend_from(qp, expect, pkt->psn, false);
		} else {
			uroce_count(qe->eng, UROCE_STAT_DUPLICATES, 1);
		}
		return;
	}
	if (pkt->paylen > w->length - w->read_done ||
	    (pkt->last && w->read_done + pkt->paylen != w->length &&
	     psn_diff(pkt->psn, w->last_psn) == 0 && w->state == UROCE_WQE_SENT)) {
		fail_head(qp, IBV_WC_BAD_RESP_ERR);
		return;
	}
	if (read_place(qp, w, w->read_done, pkt)) {
		fail_head(qp, IBV_WC_LOC_PROT_ERR);
		return;
	}
	w->read_done += pkt->paylen;
	qe->una_psn = psn_add(pkt->psn, 1);
	/* The responses kept beyond it follow on, as far as this pass has
	 * asked again (una never passes cur_psn: a READ being resent
	 * completes once its last request is out). */
	while ((qe->rd_kept & 1) && psn_diff(qe->una_psn, qe->cur_psn) < 0) {
		w->read_done += read_resp_len(qe, w, qe->una_psn);
		qe->una_psn = psn_add(qe->una_psn, 1);
		qe->rd_kept >>= 1;
	}
	qe->rd_kept = qe->rd_kept & 1 ? 0 : qe->rd_kept >> 1;
	uroce_req_acked(qp, psn_add(qe->una_psn, -1u));
	progressed(qp);
	if (w->read_done == w->length && w->state == UROCE_WQE_SENT &&
	    psn_diff(psn_add(qe->una_psn, -1u), w->last_psn) >= 0)
		done(qp, w, IBV_WC_SUCCESS);
	else if (w->length == 0 && w->state == UROCE_WQE_SENT)
		done(qp, w, IBV_WC_SUCCESS);
}

static void on_atomic_ack(struct uroce_qp *qp, const struct roce_pkt *pkt)
{
	struct uroce_qp_eng *qe = qp->engine;
	struct uroce_send_wqe *w = head_for_response(qp, pkt->psn, false);
	int ret;

	if (!w || (w->opcode != IBV_WR_ATOMIC_CMP_AND_SWP && w->opcode != IBV_WR_ATOMIC_FETCH_AND_ADD) ||
	    w->state != UROCE_WQE_SENT || w->first_psn != pkt->psn)
		return; /* duplicate or stale */
	uroce_mem_lock(qp);
	ret = uroce_mem_scatter(qp, wqe_sges(w), w->num_sge, 0, &pkt->orig, 8);
	uroce_mem_unlock(qp);
	qe->una_psn = psn_add(pkt->psn, 1);
	if (ret) {
		fail_head(qp, IBV_WC_LOC_PROT_ERR);
		return;
	}
	progressed(qp);
	done(qp, w, IBV_WC_SUCCESS);
}

void uroce_comp_rx(struct uroce_qp *qp, const struct roce_pkt *pkt)
{
	struct uroce_qp_eng *qe = qp->engine;
	uint32_t una = qe->una_psn;

	/* Responses are for the requester of RC and XRC send QPs. */
	if ((qp->vqp.qp.qp_type != IBV_QPT_RC && qp->vqp.qp.qp_type != IBV_QPT_XRC_SEND) ||
	    (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD)) {
		uroce_count(qe->eng, UROCE_STAT_DROP_QP_STATE, 1);
		return;
	}
	/* Responses to PSNs we never sent are stale or forged, and so are
	 * responses to PSNs already acknowledged: drop them, counted.  Not
	 * READ responses while requests are outstanding: an ACK or NAK for a
	 * later request moves una past the PSNs of a READ whose responses
	 * are still missing (ack_through), and those must still be taken. */
	if (qe->resending && psn_diff(qe->cur_psn, qe->resent_end) >= 0)
		qe->resending = false;
	/* While resending, an ACK or NAK may name a PSN sent before the
	 * rewind and not yet again (see below); READ responses and atomic
	 * ACKs must still belong to requests sent in this pass. */
	if (psn_diff(pkt->psn, qe->resending && pkt->kind == ROCE_K_ACK ?
			       qe->resent_end : qe->cur_psn) >= 0 ||
	    (psn_diff(pkt->psn, qe->una_psn) < 0 &&
	     (pkt->kind != ROCE_K_READ_RESP || qe->una_psn == qe->cur_psn))) {
		uroce_count(qe->eng, UROCE_STAT_DROP_STALE, 1);
		return;
	}
	/* A NAK names a PSN the responder is waiting for: one we sent and is
	 * not yet acknowledged.  Any other is stale or forged; acting on it
	 * would fail or stall a healthy QP. */
	if (pkt->kind == ROCE_K_ACK && (pkt->syndrome & ROCE_AETH_TYPE_MASK) != ROCE_AETH_ACK &&
	    qp->sq.cons == ring_prod(&qp->sq)) {
		uroce_count(qe->eng, UROCE_STAT_DROP_STALE, 1);
		return;
	}
	switch (pkt->kind) {
	case ROCE_K_ACK:
		if (psn_diff(pkt->psn, qe->cur_psn) >= 0)
			/* Resending: the responder had more than this pass of
			 * go-back-N has sent again (ACK or NAK past cur_psn).
			 * What was resent is acknowledged; the rest goes again,
			 * a window at a time, and is acknowledged as duplicates. */
			ack_through(qp, psn_add(qe->cur_psn, -1u), psn_add(qe->cur_psn, -1u));
		else if ((pkt->syndrome & ROCE_AETH_TYPE_MASK) == ROCE_AETH_ACK)
			ack_through(qp, pkt->psn, pkt->psn);
		else
			on_nak(qp, pkt);
		break;
	case ROCE_K_READ_RESP:
		on_read_resp(qp, pkt);
		break;
	case ROCE_K_ATOMIC_ACK:
		on_atomic_ack(qp, pkt);
		break;
	default:
		return;
	}
	if (qp->state == IBV_QPS_ERR)
		return;
	uroce_req_progress(qp);
	/* The timer restarts on forward progress only (IBTA 9.7.6.1.3). */
	if (qe->una_psn != una || psn_diff(qe->cur_psn, qe->una_psn) == 0)
		uroce_req_restart_timer(qp);
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The responder's answers that carry data or a result (IBTA 9.7.5.1.5,
 * 9.4.5): READ responses, read from the MR when the request comes, and
 * ATOMIC ACKs, whose result is kept so that a duplicate is answered, never
 * executed again; and every duplicate request (9.7.5.1.1): a READ is
 * answered again, an atomic replayed from its kept result, anything else
 * acknowledged again.  Called with qp->lock held.
 */
#include <stdio.h>
#include <string.h>

#include "engine/engine_int.h"
#include "engine/mem.h"
#include "engine/pkt.h"
#include "trace/trace.h"


/* Answer a READ request: responses carry its PSNs (IBTA 9.7.5.1.5). */
void uroce_resp_read(struct uroce_qp *qp, const struct roce_pkt *pkt)
{
	struct uroce_qp_eng *qe = qp->engine;
	uint32_t mtu = uroce_qp_mtu(qe);
	uint32_t n = uroce_npkts(qe, pkt->dma_len);
	uint8_t *src;

	uroce_mem_lock(qp);
	src = uroce_mem_remote(qp, pkt->rkey, pkt->va, pkt->dma_len, IBV_ACCESS_REMOTE_READ);
	if (!src && pkt->dma_len) {
		uroce_mem_unlock(qp);
		uroce_resp_fatal(qp, pkt->psn, ROCE_NAK_REMOTE_ACCESS, IBV_WC_REM_ACCESS_ERR, pkt);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t off = i * mtu;
		uint32_t len = pkt->dma_len - off > mtu ? mtu : pkt->dma_len - off;
		struct iovec iov = { src + off, len };
		bool first = i == 0, last = i == n - 1;

		if (last && !qe->read_dup)
			qe->msn++;
		uroce_resp_send_aeth(qp, ROCE_K_READ_RESP, psn_add(pkt->psn, i),
				     ROCE_AETH_ACK | ROCE_AETH_CREDITS_INVALID, &iov, len ? 1 : 0,
				     first, last, 0);
	}
	uroce_tx_flush();   /* the payloads point into the MR */
	uroce_mem_unlock(qp);
}

void uroce_resp_atomic(struct uroce_qp *qp, const struct roce_pkt *pkt)
{
	struct uroce_qp_eng *qe = qp->engine;
	struct uroce_atomic_res *res;
	uint64_t *target, orig;

	if (pkt->va & 7) {
		uroce_resp_fatal(qp, pkt->psn, ROCE_NAK_INVALID_REQ, IBV_WC_REM_INV_REQ_ERR, pkt);
		return;
	}
	uroce_mem_lock(qp);
	target = (uint64_t *)uroce_mem_remote(qp, pkt->rkey, pkt->va, 8, IBV_ACCESS_REMOTE_ATOMIC);
	if (!target) {
		uroce_mem_unlock(qp);
		uroce_resp_fatal(qp, pkt->psn, ROCE_NAK_REMOTE_ACCESS, IBV_WC_REM_ACCESS_ERR, pkt);
		return;
	}
	/* Atomic with respect to every other access through this engine and
	 * to the CPUs of this process (IBV_ATOMIC_HCA). */
	if (pkt->kind == ROCE_K_CMP_SWAP) {
		orig = pkt->compare;
		__atomic_compare_exchange_n(target, &orig, pkt->swap_add, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add(target, pkt->swap_add, __ATOMIC_SEQ_CST);
	}
	uroce_mem_unlock(qp);
	/* Remember the result: a duplicate is answered, never re-executed. */
	res = &qe->atomic_res[qe->atomic_next++ % UROCE_MAX_RD_ATOM];
	res->psn = pkt->psn;
	res->orig = orig;
	res->valid = true;
	qe->msn++;
	uroce_resp_send_aeth(qp, ROCE_K_ATOMIC_ACK, pkt->psn,
			     ROCE_AETH_ACK | ROCE_AETH_CREDITS_INVALID, NULL, 0, true, true, orig);
}

/* ---- duplicates (IBTA 9.7.5.1.1) -------------------------------------------- */

void uroce_resp_duplicate(struct uroce_qp *qp, const struct roce_pkt *pkt)
{
	struct uroce_qp_eng *qe = qp->engine;

	uroce_count(uroce_eng_of(qp), UROCE_STAT_DUPLICATES, 1);
	UROCE_TRACE(uroce_trace_why(qp, UROCE_WHY_DUPLICATE, pkt->psn, qe->epsn));
	switch (pkt->kind) {
	case ROCE_K_READ_REQ: {
		uint32_t n = uroce_npkts(qe, pkt->dma_len);

		/* A resent READ lies within requests already accepted: its
		 * responses end before EPSN.  Anything else, or one that fails
		 * its access checks, is no resend of ours: dropped, never
		 * fatal, so that a stray or forged old packet cannot break the
		 * connection (as rxe drops duplicates it has no record of). */
		bool ok = psn_diff(psn_add(pkt->psn, n - 1), qe->epsn) < 0;

		if (ok && pkt->dma_len) {
			uroce_mem_lock(qp);
			ok = uroce_mem_remote(qp, pkt->rkey, pkt->va, pkt->dma_len,
					      IBV_ACCESS_REMOTE_READ) != NULL;
			uroce_mem_unlock(qp);
		}
		if (!ok) {
			uroce_count(uroce_eng_of(qp), UROCE_STAT_DROP_BAD_DUPLICATE, 1);
			return;
		}
		/* Re-execute: memory is read again (allowed by the spec). */
		qe->read_dup = true;
		uroce_resp_read(qp, pkt);
		qe->read_dup = false;
		return;
	}
	case ROCE_K_CMP_SWAP:
	case ROCE_K_FETCH_ADD:
		for (int i = 0; i < UROCE_MAX_RD_ATOM; i++)
			if (qe->atomic_res[i].valid && qe->atomic_res[i].psn == pkt->psn) {
				uroce_resp_send_aeth(qp, ROCE_K_ATOMIC_ACK, pkt->psn,
						     ROCE_AETH_ACK | ROCE_AETH_CREDITS_INVALID,
						     NULL, 0, true, true, qe->atomic_res[i].orig);
				return;
			}
		return; /* too old to answer: the requester times out */
	default:
		/* SEND/WRITE/ATOMIC WRITE: acknowledge again, deliver nothing. */
		uroce_resp_ack(qp, psn_add(qe->epsn, -1u));
		return;
	}
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The responder (IBTA 9.7.5, 9.8, 9.9.3): a request's checks and its
 * placement.  It checks a request's PSN, the QP's state and access rights,
 * lengths and keys; places SEND data in receive WQEs (UD's behind the GRH
 * it rebuilds) and WRITE and ATOMIC WRITE data in MRs; and completes
 * receives.  RC answers every problem with the NAK the spec assigns; UC
 * and UD drop silently.  ACKs and NAKs are resp_ack.c's; READ and atomic
 * responses and duplicates, resp_read.c's.  Called with qp->lock held.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "engine/engine_int.h"
#include "engine/evobj.h"
#include "engine/mem.h"
#include "engine/pkt.h"
#include "trace/trace.h"

/* ---- receive WQEs ----------------------------------------------------------- */

/* Take the next receive WQE (the QP's RQ or its SRQ) into qe->rwqe. */
static bool take_rwqe(struct uroce_qp *qp)
{
	struct uroce_qp_eng *qe = qp->engine;
	struct uroce_ring *r = qp->srq ? &qp->srq->rq : &qp->rq;
	bool ok = false;

	if (qp->srq)
		pthread_mutex_lock(&qp->srq->lock);
	if (ring_used(r)) {
		struct uroce_recv_wqe *src = ring_slot(r, r->cons);

		memcpy(qe->rwqe, src, sizeof(*src) + src->num_sge * sizeof(struct uroce_sge));
		r->cons++;
		ok = true;
	}
	/* IBTA 10.2.9.2: an armed SRQ limit fires once, when the count of
	 * WQEs falls below it. */
	if (qp->srq && qp->srq->srq_limit && ring_used(r) < qp->srq->srq_limit) {
		qp->srq->srq_limit = 0;
		uroce_up->obj_event(qp->ctx, &qp->srq->ev, IBV_EVENT_SRQ_LIMIT_REACHED,
					&qp->srq->vsrq.srq);
	}
	if (qp->srq)
		pthread_mutex_unlock(&qp->srq->lock);
	qe->recv_wqe_valid = ok;
	qe->recv_off = 0;
	return ok;
}

static bool have_rwqe(struct uroce_qp *qp)
{
	struct uroce_ring *r = qp->srq ? &qp->srq->rq : &qp->rq;
	bool ok;

	if (!qp->srq)
		return ring_used(r) > 0;
	pthread_mutex_lock(&qp->srq->lock);
	ok = ring_used(r) > 0;
	pthread_mutex_unlock(&qp->srq->lock);
	return ok;
}

/* RoCEv2 (IBTA A17.4.5.1): a UD completion tells whether the frame came over
 * IPv4 or IPv6.  struct ibv_wc has no field for it; RoCE has no SL of its
 * own, so mlx5 reports the L3 header type in the SL (0 GRH, 1 IPv6, 2 IPv4)
 * and UCX's UD transport reads it there to find the destination GID in the
 * GRH area.  uroce does the same.  (rxe leaves the SL 0, which makes UCX 1.13
 * look for an IPv6 DGID in an IPv4 header and drop every packet.) */
enum { UROCE_L3_IPV6 = 1, UROCE_L3_IPV4 = 2 };

static void complete_recv(struct uroce_qp *qp, enum ibv_wc_status st, enum ibv_wc_opcode op,
			  uint32_t byte_len, const struct roce_pkt *pkt, const struct uroce_rx *rx)
{
	struct uroce_qp_eng *qe = qp->engine;
	struct ibv_wc wc = {
		.wr_id = qe->rwqe->wr_id,
		.status = st,
		.opcode = op,
		.byte_len = byte_len,
		.qp_num = qp->vqp.qp.qp_num,
		.src_qp = qp->vqp.qp.qp_type == IBV_QPT_UD ? pkt->sqpn : qp->attr.dest_qp_num,
		.pkey_index = 0,
	};

	if (st == IBV_WC_SUCCESS) {
		if (pkt->has_imm) {
			wc.wc_flags |= IBV_WC_WITH_IMM;
			wc.imm_data = pkt->imm;
		} else if (pkt->has_inv) {
			wc.wc_flags |= IBV_WC_WITH_INV;
			wc.invalidated_rkey = pkt->inv_rkey;
		}
		if (qp->vqp.qp.qp_type == IBV_QPT_UD && rx) {
			wc.wc_flags |= IBV_WC_GRH;
			wc.sl = rx->family == AF_INET ? UROCE_L3_IPV4 : UROCE_L3_IPV6;
		}
	}
	qe->recv_wqe_valid = false;
	uroce_up->cq_push(qp->rcq, &wc, pkt->solicited && pkt->last);
}

/* Responder errors of class "the QP goes to error" (IBTA 9.9.3.1.2). */
void uroce_resp_fatal(struct uroce_qp *qp, uint32_t psn, uint8_t nak_code,
		      enum ibv_wc_status local, const struct roce_pkt *pkt)
{
	struct uroce_qp_eng *qe = qp->engine;

	UROCE_TRACE(uroce_trace_why(qp, UROCE_WHY_NAK_FATAL, psn, nak_code));
	if (uroce_qp_type_rc(qp->vqp.qp.qp_type))
		uroce_resp_nak(qp, psn, nak_code);
	if (qe->recv_wqe_valid && qp->rcq)
		complete_recv(qp, local, IBV_WC_RECV, 0, pkt, NULL);
	/* IBTA 11.6.3.1: invalid requests and access violations have their
	 * own asynchronous events. */
	uroce_qp_to_error_ev(qp, nak_code == ROCE_NAK_REMOTE_ACCESS ? IBV_EVENT_QP_ACCESS_ERR :
				 nak_code == ROCE_NAK_INVALID_REQ ? IBV_EVENT_QP_REQ_ERR :
				 IBV_EVENT_QP_FATAL);
}

/* ---- the operations --------------------------------------------------------- */

/* Place a SEND packet's payload into the current receive WQE. */
static int place_send(struct uroce_qp *qp, const struct roce_pkt *pkt)
{
	struct uroce_qp_eng *qe = qp->engine;
	int ret;

	if (qe->recv_off + pkt->paylen > qe->rwqe->length)
		return -E2BIG;
	if (!pkt->paylen)
		return 0;
	uroce_mem_lock(qp);
	ret = uroce_mem_scatter(qp, qe->rwqe->sge, qe->rwqe->num_sge, qe->recv_off,
				pkt->payload, pkt->paylen);
	uroce_mem_unlock(qp);
	if (!ret)
		qe->recv_off += pkt->paylen;
	return ret;
}

/* RC/UC SEND.  Returns false if the packet must not advance the PSN. */
static bool do_send(struct uroce_qp *qp, const struct roce_pkt *pkt)
{
	struct uroce_qp_eng *qe = qp->engine;
	int ret;

	if (pkt->first) {
		if (!qe->recv_wqe_valid && !take_rwqe(qp)) {
			if (uroce_qp_type_rc(qp->vqp.qp.qp_type))
				uroce_resp_rnr_nak(qp, pkt->psn);
			return false;
		}
		qe->recv_off = 0;
	} else if (!qe->recv_wqe_valid) {
		uroce_resp_fatal(qp, pkt->psn, ROCE_NAK_INVALID_REQ, IBV_WC_REM_INV_REQ_ERR, pkt);
		return false;
	}
	ret = place_send(qp, pkt);
	if (ret == -E2BIG) {
		/* The message is longer than the receive buffer (IBTA 9.9.3.1.2). */
		uroce_resp_fatal(qp, pkt->psn, ROCE_NAK_INVALID_REQ, IBV_WC_LOC_LEN_ERR, pkt);
		return false;
	}
	if (ret) {
		uroce_resp_fatal(qp, pkt->psn, ROCE_NAK_REMOTE_OP, IBV_WC_LOC_PROT_ERR, pkt);
		return false;
	}
	/* SEND with Invalidate: the named window goes invalid once the
	 * message is in; a key it may not invalidate makes the request
	 * invalid (as rxe's responder treats it). */
	if (pkt->last && pkt->has_inv && uroce_up->mw_remote_invalidate(qp, pkt->inv_rkey)) {
		uroce_resp_fatal(qp, pkt->psn, ROCE_NAK_INVALID_REQ, IBV_WC_REM_INV_REQ_ERR, pkt);
		return false;
	}
	if (pkt->last) {
		complete_recv(qp, IBV_WC_SUCCESS, IBV_WC_RECV, (uint32_t)qe->recv_off, pkt, NULL);
		qe->msn++;
	}
	return true;
}

static bool do_write(struct uroce_qp *qp, const struct roce_pkt *pkt)
{
	struct uroce_qp_eng *qe = qp->engine;

	/* WRITE with immediate consumes a receive WQE: check before placing. */
	if (pkt->last && pkt->has_imm && !qe->recv_wqe_valid && !have_rwqe(qp)) {
		if (uroce_qp_type_rc(qp->vqp.qp.qp_type))
			uroce_resp_rnr_nak(qp, pkt->psn);
		return false;
	}
	uroce_mem_lock(qp);
	if (pkt->first) {
		qe->write_len = pkt->dma_len;
		qe->write_left = pkt->dma_len;
		qe->write_ptr = uroce_mem_remote(qp, pkt->rkey, pkt->va, pkt->dma_len,
						 IBV_ACCESS_REMOTE_WRITE);
		if (!qe->write_ptr && pkt->dma_len) {
			uroce_mem_unlock(qp);
			uroce_resp_fatal(qp, pkt->psn, ROCE_NAK_REMOTE_ACCESS,
					 IBV_WC_REM_ACCESS_ERR, pkt);
			return false;
		}
	}
	/* Payload beyond the RETH length, or a short last packet (IBTA 9.7.5.2.x). */
	if (pkt->paylen > qe->write_left || (pkt->last && pkt->paylen != qe->write_left)) {
		uroce_mem_unlock(qp);
		uroce_resp_fatal(qp, pkt->psn, ROCE_NAK_INVALID_REQ, IBV_WC_REM_INV_REQ_ERR, pkt);
		return false;
	}
	if (pkt->paylen)
		memcpy(qe->write_ptr, pkt->payload, pkt->paylen);
	uroce_mem_unlock(qp);
	qe->write_ptr += pkt->paylen;
	qe->write_left -= pkt->paylen;
	if (pkt->last) {
		if (pkt->has_imm) {
			take_rwqe(qp);
			complete_recv(qp, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
				      (uint32_t)qe->write_len, pkt, NULL);
		}
		qe->msn++;
	}
	return true;
}

/*
 * ATOMIC WRITE (IBTA 1.5): the 8 payload bytes replace the 8 aligned bytes
 * the RETH names, in one store that no other access through this engine or
 * of the local CPUs can see half done.  It needs remote write access (QP
 * and key), like rxe; a misaligned target or a length other than 8 is an
 * invalid request.  Acknowledged like a WRITE; a duplicate is acknowledged
 * again and not re-executed (see uroce_resp_duplicate()).
 */
static bool do_atomic_write(struct uroce_qp *qp, const struct roce_pkt *pkt)
{
	struct uroce_qp_eng *qe = qp->engine;
	uint64_t *target, val;

	if ((pkt->va & 7) || pkt->dma_len != 8 || pkt->paylen != 8) {
		uroce_resp_fatal(qp, pkt->psn, ROCE_NAK_INVALID_REQ, IBV_WC_REM_INV_REQ_ERR, pkt);
		return false;
	}
	uroce_mem_lock(qp);
	target = (uint64_t *)uroce_mem_remote(qp, pkt->rkey, pkt->va, 8, IBV_ACCESS_REMOTE_WRITE);
	if (!target) {
		uroce_mem_unlock(qp);
		uroce_resp_fatal(qp, pkt->psn, ROCE_NAK_REMOTE_ACCESS, IBV_WC_REM_ACCESS_ERR, pkt);
		return false;
	}
	memcpy(&val, pkt->payload, 8); /* the bytes as sent: no byte order applies */
	__atomic_store_n(target, val, __ATOMIC_SEQ_CST);
	uroce_mem_unlock(qp);
	qe->msn++;
	return true;
}


/* ---- UD ----------------------------------------------------------------------- */

/* The 40 bytes a UD receive buffer starts with (IBTA A17.4.5.2): the IP
 * header the packet arrived with.  IPv6 fills all 40; an IPv4 header sits in
 * the second half and the first 20 bytes are zero (rxe_resp.c: execute()
 * clears them and copies ip_hdr(skb) behind).  A UDP socket does not hand
 * us the header, so it is rebuilt from what the socket shows: addresses, the
 * datagram's length (BTH to ICRC, pad included), TOS/traffic class, TTL/hop
 * limit and the IPv6 flow label (transport/udp/udp_rx.c).  DF is set (uroce
 * and rxe senders set it; fragments never reach RoCE), the IPv4 ID (arbitrary on the
 * wire, unseen) is 0, and the checksum is computed over what we wrote, so
 * libibverbs' ibv_init_ah_from_wc() recognises the header as IPv4. */
static void make_grh(const struct uroce_rx *rx, uint8_t grh[40])
{
	uint32_t udp_len = 8 + rx->len;

	memset(grh, 0, 40);
	if (rx->family == AF_INET) {
		uint8_t *ip = grh + 20;
		uint32_t sum = 0;
		uint32_t tot = 20 + udp_len;

		ip[0] = 0x45;
		ip[1] = rx->tos;
		ip[2] = tot >> 8;
		ip[3] = tot & 0xff;
		ip[6] = 0x40; /* DF */
		ip[8] = rx->ttl;
		ip[9] = IPPROTO_UDP;
		memcpy(ip + 12, rx->src_ip + 12, 4);
		memcpy(ip + 16, rx->dst_ip + 12, 4);
		for (int i = 0; i < 20; i += 2)
			sum += ip[i] << 8 | ip[i + 1];
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		sum = ~sum & 0xffff;
		ip[10] = sum >> 8;
		ip[11] = sum & 0xff;
	} else {
		uint32_t vtf = 6u << 28 | (uint32_t)rx->tos << 20 | (rx->flow & 0xfffff);

		for (int i = 0; i < 4; i++)
			grh[i] = vtf >> (24 - 8 * i);
		grh[4] = udp_len >> 8;
		grh[5] = udp_len & 0xff;
		grh[6] = IPPROTO_UDP;
		grh[7] = rx->ttl;
		memcpy(grh + 8, rx->src_ip, 16);
		memcpy(grh + 24, rx->dst_ip, 16);
	}
}

static void ud_recv(struct uroce_qp *qp, const struct roce_pkt *pkt, const struct uroce_rx *rx)
{
	struct uroce_qp_eng *qe = qp->engine;
	uint8_t grh[40];
	int ret;

	if (pkt->kind != ROCE_K_SEND || !pkt->first || !pkt->last) {
		uroce_count(uroce_eng_of(qp), UROCE_STAT_DROP_QP_TYPE, 1);
		return;
	}
	/* IBTA 10.2.5 / C10-15: the Q_Key must match. */
	if (pkt->qkey != qp->attr.qkey) {
		uroce_count(uroce_eng_of(qp), UROCE_STAT_DROP_QKEY, 1);
		return;
	}
	if (!take_rwqe(qp)) {
		uroce_count(uroce_eng_of(qp), UROCE_STAT_DROP_NO_RECV, 1); /* UD: dropped */
		return;
	}
	if (40 + (uint64_t)pkt->paylen > qe->rwqe->length) {
		complete_recv(qp, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, pkt, NULL);
		return;
	}
	make_grh(rx, grh);
	uroce_mem_lock(qp);
	ret = uroce_mem_scatter(qp, qe->rwqe->sge, qe->rwqe->num_sge, 0, grh, 40);
	if (!ret && pkt->paylen)
		ret = uroce_mem_scatter(qp, qe->rwqe->sge, qe->rwqe->num_sge, 40,
					pkt->payload, pkt->paylen);
	uroce_mem_unlock(qp);
	complete_recv(qp, ret ? IBV_WC_LOC_PROT_ERR : IBV_WC_SUCCESS, IBV_WC_RECV,
		      40 + pkt->paylen, pkt, rx);
}

/* ---- entry -------------------------------------------------------------------- */

static bool kind_allowed(const struct uroce_qp *qp, const struct roce_pkt *pkt)
{
	int acc = qp->attr.qp_access_flags;

	switch (pkt->kind) {
	case ROCE_K_WRITE:
	case ROCE_K_ATOMIC_WRITE:
		return acc & IBV_ACCESS_REMOTE_WRITE;
	case ROCE_K_READ_REQ:
		return acc & IBV_ACCESS_REMOTE_READ;
	case ROCE_K_CMP_SWAP:
	case ROCE_K_FETCH_ADD:
		return acc & IBV_ACCESS_REMOTE_ATOMIC;
	default:
		return true;
	}
}

static void resp_rx(struct uroce_qp *qp, const struct roce_pkt *pkt, const struct uroce_rx *rx)
{
	struct uroce_qp_eng *qe = qp->engine;
	enum ibv_qp_type type = qp->vqp.qp.qp_type;
	int32_t d;

	/* The responder works from RTR on (IBTA 10.3.1). */
	if (qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS &&
	    qp->state != IBV_QPS_SQD && qp->state != IBV_QPS_SQE) {
		uroce_count(uroce_eng_of(qp), UROCE_STAT_DROP_QP_STATE, 1);
		return;
	}
	/* IBTA 11.6.3.1: the first packet received in RTR establishes the
	 * connection. */
	if (qp->state == IBV_QPS_RTR && !qe->comm_est_sent && type != IBV_QPT_UD) {
		qe->comm_est_sent = true;
		uroce_up->qp_event(qp, IBV_EVENT_COMM_EST);
	}
	/* An XRC send QP has no responder. */
	if (pkt->transport != uroce_pkt_transport(type) || type == IBV_QPT_XRC_SEND) {
		uroce_count(uroce_eng_of(qp), UROCE_STAT_DROP_QP_TYPE, 1);
		return;
	}
	if (type == IBV_QPT_UD) {
		ud_recv(qp, pkt, rx);
		return;
	}
	d = psn_diff(pkt->psn, qe->epsn);
	if (type == IBV_QPT_UC) {
		/* UC (IBTA 9.8.2): on a gap, drop the broken message and resync
		 * at the next first/only packet. */
		if (d != 0) {
			if (!pkt->first) {
				if (uroce_debug && !qe->uc_drop)
					fprintf(stderr, "uroce: QP %u UC message dropped: psn %u, expected %u (%s)\n",
						qp->vqp.qp.qp_num, pkt->psn, qe->epsn,
						rx->has_macs ? "frame" : "socket");
				qe->uc_drop = true;
				uroce_count(uroce_eng_of(qp), UROCE_STAT_DROP_UC_PARTIAL, 1);
				return;
			}
			qe->epsn = pkt->psn;
			qe->recv_off = 0;
		}
		if (pkt->first)
			qe->uc_drop = false;
		if (qe->uc_drop) {
			if (uroce_debug && d == 0)
				fprintf(stderr, "uroce: QP %u UC psn %u dropped with its message (%s)\n",
					qp->vqp.qp.qp_num, pkt->psn, rx->has_macs ? "frame" : "socket");
			qe->epsn = psn_add(pkt->psn, 1);
			return;
		}
		if ((pkt->kind == ROCE_K_SEND && do_send(qp, pkt)) ||
		    (pkt->kind == ROCE_K_WRITE && kind_allowed(qp, pkt) && do_write(qp, pkt)))
			qe->epsn = psn_add(pkt->psn, 1);
		else if (qp->state != IBV_QPS_ERR) {
			if (uroce_debug)
				fprintf(stderr, "uroce: QP %u UC message dropped at psn %u (opcode 0x%02x): no receive WQE or not allowed\n",
					qp->vqp.qp.qp_num, pkt->psn, pkt->opcode);
			qe->uc_drop = !pkt->last;
		}
		return;
	}

	/* RC */
	if (d > 0) {
		if (uroce_debug)
			fprintf(stderr, "uroce: QP %u out of sequence: psn %u epsn %u nak_sent %d\n",
				qp->vqp.qp.qp_num, pkt->psn, qe->epsn, qe->nak_sent);
		/* Out of sequence: one NAK, then silence until EPSN (9.7.5.1.4). */
		uroce_count(uroce_eng_of(qp), UROCE_STAT_OUT_OF_SEQUENCE, 1);
		UROCE_TRACE(uroce_trace_why(qp, qe->nak_sent ? UROCE_WHY_OUT_OF_SEQ : UROCE_WHY_NAK_SEQ, pkt->psn, qe->epsn));
		if (!qe->nak_sent) {
			qe->nak_sent = true;
			uroce_resp_nak(qp, qe->epsn, ROCE_NAK_PSN_SEQ);
		}
		return;
	}
	if (d < 0) {
		uroce_resp_duplicate(qp, pkt);
		return;
	}
	qe->nak_sent = false;
	/* A packet larger than the path MTU is a length error (IBTA 9.7.5.2.3:
	 * NAK Invalid Request), whoever sent it. */
	if (pkt->paylen > uroce_qp_mtu(qe)) {
		uroce_resp_fatal(qp, pkt->psn, ROCE_NAK_INVALID_REQ, IBV_WC_REM_INV_REQ_ERR, pkt);
		return;
	}
	if (!kind_allowed(qp, pkt)) {
		uroce_resp_fatal(qp, pkt->psn, ROCE_NAK_REMOTE_ACCESS, IBV_WC_REM_ACCESS_ERR, pkt);
		return;
	}
	switch (pkt->kind) {
	case ROCE_K_SEND:
		if (!do_send(qp, pkt))
			return;
		qe->epsn = psn_add(qe->epsn, 1);
		break;
	case ROCE_K_WRITE:
		if (!do_write(qp, pkt))
			return;
		qe->epsn = psn_add(qe->epsn, 1);
		break;
	case ROCE_K_ATOMIC_WRITE:
		if (!do_atomic_write(qp, pkt))
			return;
		qe->epsn = psn_add(qe->epsn, 1);
		break;
	case ROCE_K_READ_REQ: {
		uroce_resp_read(qp, pkt);
		if (qp->state != IBV_QPS_ERR)
			qe->epsn = psn_add(qe->epsn, uroce_npkts(qe, pkt->dma_len));
		return;
	}
	case ROCE_K_CMP_SWAP:
	case ROCE_K_FETCH_ADD:
		uroce_resp_atomic(qp, pkt);
		if (qp->state != IBV_QPS_ERR)
			qe->epsn = psn_add(qe->epsn, 1);
		return;
	default:
		return;
	}
	if (pkt->ackreq)
		uroce_resp_ack(qp, pkt->psn);
}

/*
 * XRC receive QP: every request names, in its XRCETH, the XRC SRQ its
 * message goes to; that SRQ's PD checks the memory the request touches
 * and its CQ takes the completion.  An SRQ that does not exist, is not an
 * XRC SRQ of the QP's domain, or is not the one the message in progress
 * started with, makes the expected request invalid (NAK Invalid Request,
 * the QP goes to error).
 * Other PSNs (duplicates, out of sequence) go the usual way when the SRQ
 * resolves, and are dropped when it does not.
 */
static void xrc_rx(struct uroce_qp *qp, const struct roce_pkt *pkt, const struct uroce_rx *rx)
{
	struct uroce_qp_eng *qe = qp->engine;
	bool expected = psn_diff(pkt->psn, qe->epsn) == 0;
	bool ok;

	if (pkt->transport != ROCE_TR_XRC || pkt->is_response) {
		uroce_count(uroce_eng_of(qp), UROCE_STAT_DROP_QP_TYPE, 1);
		return;
	}
	ok = uroce_up->xrc_resolve(qp, pkt->xrc_srqn);
	if (ok && !(expected && qe->recv_wqe_valid && qe->xrc_srqn != pkt->xrc_srqn)) {
		resp_rx(qp, pkt, rx);
		if (qe->recv_wqe_valid)
			qe->xrc_srqn = pkt->xrc_srqn;
		uroce_up->xrc_release(qp);
		return;
	}
	if (ok)
		uroce_up->xrc_release(qp);
	if (!expected || qp->state < IBV_QPS_RTR || qp->state > IBV_QPS_SQE) {
		uroce_count(uroce_eng_of(qp), UROCE_STAT_DROP_OTHER, 1);
		return;
	}
	if (uroce_debug)
		fprintf(stderr, "uroce: XRC QP %u: request for SRQ %u, not one of its domain\n",
			qp->vqp.qp.qp_num, pkt->xrc_srqn);
	/* The receive WQE taken for the message belongs to an SRQ this
	 * request does not name: it is lost with the message. */
	qe->recv_wqe_valid = false;
	uroce_resp_fatal(qp, pkt->psn, ROCE_NAK_INVALID_REQ, IBV_WC_REM_INV_REQ_ERR, pkt);
}

void uroce_resp_rx(struct uroce_qp *qp, const struct roce_pkt *pkt, const struct uroce_rx *rx)
{
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_RECV)
		xrc_rx(qp, pkt, rx);
	else
		resp_rx(qp, pkt, rx);
}

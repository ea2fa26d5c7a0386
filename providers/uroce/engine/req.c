// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The requester (IBTA 9.5, 9.7.4): turns send WQEs into packets, numbers
 * them with PSNs, keeps a window of unacknowledged packets, and resends
 * from the oldest unacknowledged PSN (go-back-N) on timeout or NAK.
 * Called with qp->lock held.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "engine/mem.h"
#include "engine/pkt.h"
#include "trace/trace.h"

/* IBTA 9.7.6.1.3: local ACK timeout = 4.096 us * 2^timeout; 0 = infinite. */
static uint64_t ack_timeout_ns(const struct uroce_qp *qp)
{
	uint8_t t = qp->attr.timeout;
	uint64_t ns;

	if (t == 0)
		return 0;
	ns = 4096ull << (t > 31 ? 31 : t);
	return ns < 1000000 ? 1000000 : ns; /* at least 1 ms: a thread, not a NIC */
}

static uint32_t unacked(const struct uroce_qp_eng *qe)
{
	return (uint32_t)psn_diff(qe->cur_psn, qe->una_psn);
}

/*
 * Early go-back-N ("probe").  A lost packet is normally recovered fast:
 * later packets make the responder NAK the gap.  But when the last packet
 * of a burst is lost, or an ACK, or the NAK, or the resent packet (after
 * which the responder stays silent until the expected PSN comes, IBTA
 * 9.7.5.1.2), only the local ACK timeout helps: 67 ms at perftest's
 * timeout 14, which at a few percent loss dominates everything.  So when
 * nothing has been acknowledged for a few round trips (at least 4 ms, a
 * scheduler tick: on a busy host the peer may simply not have run yet;
 * and only once a round trip has been measured: restart_timer),
 * the requester resends early (probe_from), as a timeout would, but
 * without using up retry_cnt: the ACK timeout still runs and alone
 * decides that retries are exhausted.  At most PROBES_MAX early resends
 * per forward progress.
 */
enum { PROBES_MAX = 2, PROBE_MIN_NS = 4000000 };

static uint64_t probe_delay_ns(const struct uroce_qp_eng *qe)
{
	uint64_t d = 4 * qe->srtt_ns;

	return d < PROBE_MIN_NS ? PROBE_MIN_NS : d;
}

/*
 * Where a probe resends from.  The first resends only the newest packet,
 * with AckReq.  A responder that merely ran late answers it as a duplicate
 * with one ACK (IBTA 9.7.5.1.1); going back to the oldest unacknowledged
 * PSN instead resent whole windows to a receiver already behind (128 QPs
 * whose peer was not scheduled for 4 ms: 3455 duplicate packets).  A
 * responder that lost the tail takes the probe as its next packet, or NAKs
 * the gap before it, and the requester goes back from there.  The second
 * probe goes back to the oldest unacknowledged PSN: it also covers a lost
 * NAK or resend, after which the responder ignores anything but the PSN it
 * expects (9.7.5.1.4).
 */
static uint32_t probe_from(const struct uroce_qp_eng *qe)
{
	return qe->probes == 0 ? psn_add(qe->cur_psn, -1u) : qe->una_psn;
}

/* (Re)start the retransmit timer if packets are outstanding, else stop it. */
void uroce_req_restart_timer(struct uroce_qp *qp)
{
	struct uroce_qp_eng *qe = qp->engine;
	uint64_t t = ack_timeout_ns(qp), now = uroce_now_ns();

	qe->probes = 0;
	qe->probe_ns = 0;
	if (uroce_qp_type_rc(qp->vqp.qp.qp_type) && unacked(qe) && t) {
		qe->deadline_ns = now + t;
		/* No probe before the QP's first round-trip sample, as TCP
		 * waits for the RTO then (Linux's tcp_schedule_loss_probe).
		 * The first ACKs of many QPs that start at once queue behind
		 * each other's first windows: at -q 128 on lo, which lost
		 * nothing, nearly every probe came before its QP's first
		 * sample (docs/performance.md). */
		if (qe->srtt_ns && probe_delay_ns(qe) * 2 <= t)
			qe->probe_ns = now + probe_delay_ns(qe);
	} else {
		qe->deadline_ns = 0;
	}
	uroce_engine_arm(qe, qe->deadline_ns || qe->rnr_until_ns);
}

/* An ACK covered PSN: time the round trip of the packet being timed. */
void uroce_req_acked(struct uroce_qp *qp, uint32_t psn)
{
	struct uroce_qp_eng *qe = qp->engine;
	uint64_t sample;

	if (!qe->rtt_sent_ns || psn_diff(psn, qe->rtt_psn) < 0)
		return;
	sample = uroce_now_ns() - qe->rtt_sent_ns;
	qe->srtt_ns = qe->srtt_ns ? (7 * qe->srtt_ns + sample) / 8 : sample;
	qe->rtt_sent_ns = 0;
}

/* Time the round trip of the request at PSN: an AckReq packet to its ACK,
 * a READ request to its first response.  New requests only (Karn): not
 * probes, not resends. */
static void rtt_start(struct uroce_qp_eng *qe, uint32_t psn)
{
	if (!qe->rtt_sent_ns && !qe->probe_ackreq) {
		qe->rtt_psn = psn;
		qe->rtt_sent_ns = uroce_now_ns();
	}
	qe->probe_ackreq = false;
}

/* Local errors while building packets: the WQE fails, the QP goes to error. */
static void local_error(struct uroce_qp *qp, struct uroce_send_wqe *w, enum ibv_wc_status st)
{
	struct uroce_qp_eng *qe = qp->engine;

	/* What earlier WQEs queued leaves before any WQE completes. */
	uroce_tx_flush();
	/* Earlier WQEs still wait for their ACKs; they flush with the rest.
	 * The failing WQE reports its own status (IBTA 10.8.3.1). */
	while (qp->sq.cons != qe->sq_next) {
		struct uroce_send_wqe *o = ring_slot(&qp->sq, qp->sq.cons);

		uroce_complete_send(qp, o, IBV_WC_WR_FLUSH_ERR);
	}
	uroce_complete_send(qp, w, st);
	qe->sq_next = qp->sq.cons;
	uroce_qp_to_error(qp);
}

static void fill_common(struct uroce_qp *qp, struct uroce_send_wqe *w, struct roce_pkt *p)
{
	memset(p, 0, sizeof(*p));
	p->pkey = 0xffff;
	p->dqpn = qp->vqp.qp.qp_type == IBV_QPT_UD ? w->remote_qpn : qp->attr.dest_qp_num;
	p->solicited = !!(w->send_flags & IBV_SEND_SOLICITED);
	p->imm = w->imm_data;
	p->inv_rkey = w->invalidate_rkey;
	p->xrc_srqn = w->xrc_srqn; /* XRC: the XRCETH (other transports have none) */
}

/* Send one packet carrying bytes [off, off+len) of W.  The MR table is
 * read-locked by the pass (uroce_req_progress) until the packets leave. */
static int send_data(struct uroce_qp *qp, struct uroce_send_wqe *w, struct roce_pkt *p,
		     uint64_t off, uint32_t len)
{
	struct uroce_qp_eng *qe = qp->engine;
	const struct uroce_av *av = qp->vqp.qp.qp_type == IBV_QPT_UD ? &w->av : &qp->av;
	struct iovec iov[UROCE_MAX_SGE];
	int n = 0;

	if (w->send_flags & IBV_SEND_INLINE) {
		if (len) {
			iov[0].iov_base = w->data + off;
			iov[0].iov_len = len;
			n = 1;
		}
		return uroce_pkt_queue(qe->eng, av, qp->udp_sport, p, iov, n);
	}
	n = uroce_mem_local(qp, wqe_sges(w), w->num_sge, off, len, 0, iov, UROCE_MAX_SGE);
	return n < 0 ? n : uroce_pkt_queue(qe->eng, av, qp->udp_sport, p, iov, n);
}

/* Start W: number it and check what can be checked before sending. */
static void start_wqe(struct uroce_qp *qp, struct uroce_send_wqe *w)
{
	struct uroce_qp_eng *qe = qp->engine;

	w->first_psn = qe->cur_psn;
	w->sent = 0;
	w->read_done = 0;
	w->state = UROCE_WQE_SENDING;
	qe->cur_off = 0;
	if (uroce_is_rd_atomic(w->opcode))
		qe->rd_atomic++;
	UROCE_TRACE(uroce_trace_wqe_start(qp, w));
}

/*
 * Emit the next packet(s) of W.  Returns 1 when W has been sent completely,
 * 0 when it has more to send, -1 when it failed (the QP is in error).
 */
static int send_some(struct uroce_qp *qp, struct uroce_send_wqe *w)
{
	struct uroce_qp_eng *qe = qp->engine;
	enum ibv_qp_type type = qp->vqp.qp.qp_type;
	uint32_t mtu = uroce_qp_mtu(qe);
	struct roce_pkt p;
	int ret;

	fill_common(qp, w, &p);
	switch (w->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	PABI_SINCE_44(case IBV_WR_ATOMIC_WRITE:) {
		/* ATOMIC WRITE travels as a one-packet WRITE with its own
		 * opcode (8 bytes, one packet whatever the MTU). */
		bool awrite = PABI_SINCE_44(w->opcode == IBV_WR_ATOMIC_WRITE ||) false;
		bool write = awrite || w->opcode == IBV_WR_RDMA_WRITE ||
			     w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
		uint64_t off = qe->cur_off;
		uint32_t len = w->length - off > mtu ? mtu : (uint32_t)(w->length - off);
		bool first = off == 0, last = off + len == w->length;

		if (type == IBV_QPT_UD && w->length > mtu) {
			local_error(qp, w, IBV_WC_LOC_LEN_ERR);
			return -1;
		}
		p.kind = awrite ? ROCE_K_ATOMIC_WRITE : write ? ROCE_K_WRITE : ROCE_K_SEND;
		p.opcode = uroce_pkt_opcode(type, p.kind, first, last,
					    w->opcode == IBV_WR_SEND_WITH_IMM ||
					    w->opcode == IBV_WR_RDMA_WRITE_WITH_IMM,
					    w->opcode == IBV_WR_SEND_WITH_INV);
		if (write && first) {
			p.va = w->remote_addr;
			p.rkey = w->rkey;
			p.dma_len = (uint32_t)w->length;
		}
		if (type == IBV_QPT_UD) {
			p.qkey = w->remote_qkey;
			p.sqpn = qp->vqp.qp.qp_num;
		}
		p.psn = qe->cur_psn;
		/* The packet that fills the window asks for the ACK that
		 * opens it again. */
		if (uroce_qp_type_rc(type))
			p.ackreq = last || qe->probe_ackreq ||
				   ++qe->since_ackreq >= UROCE_ACKREQ_EVERY ||
				   unacked(qe) + 1 >= qe->win;
		if (p.ackreq) {
			qe->since_ackreq = 0;
			rtt_start(qe, p.psn);
		}
		qe->probe_ackreq = false;
		ret = send_data(qp, w, &p, off, len);
		if (ret == -EACCES || ret == -E2BIG) {
			local_error(qp, w, IBV_WC_LOC_PROT_ERR);
			return -1;
		}
		/* Other send errors count as loss: the timer resends. */
		qe->cur_psn = psn_add(qe->cur_psn, 1);
		qe->cur_off += len;
		if (!last)
			return 0;
		w->last_psn = p.psn;
		return 1;
	}
	case IBV_WR_RDMA_READ: {
		/* One READ request per chunk, so that the responses of a huge
		 * read never flood the receive socket at once.  Chunks keep
		 * fixed boundaries: a READ resent from a lost response ends
		 * where the original request ended, so the responder, which
		 * re-executes it as a duplicate (IBTA 9.7.5.1.1), never sends
		 * responses past the PSNs it has accepted. */
		uint64_t off = qe->cur_off;
		uint64_t chunk = (uint64_t)UROCE_READ_CHUNK_PKTS * mtu;
		uint64_t to_boundary = chunk - off % chunk;
		uint64_t len = w->length - off > to_boundary ? to_boundary : w->length - off;

		p.kind = ROCE_K_READ_REQ;
		p.opcode = uroce_pkt_opcode(type, p.kind, true, true, false, false);
		p.va = w->remote_addr + off;
		p.rkey = w->rkey;
		p.dma_len = (uint32_t)len;
		p.psn = qe->cur_psn;
		p.ackreq = true;
		/* Timed too: without a round trip of its own, a READ-only QP
		 * probed after the 4 ms floor, which a busy host's scheduler
		 * often exceeds, and each probe re-read up to two chunks. */
		rtt_start(qe, p.psn);
		uroce_pkt_queue(qe->eng, &qp->av, qp->udp_sport, &p, NULL, 0);
		qe->cur_psn = psn_add(qe->cur_psn, uroce_npkts(qe, len));
		qe->cur_off += len;
		if (qe->cur_off < w->length)
			return 0;
		w->last_psn = psn_add(qe->cur_psn, -1u);
		return 1;
	}
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		p.kind = w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? ROCE_K_CMP_SWAP : ROCE_K_FETCH_ADD;
		p.opcode = uroce_pkt_opcode(type, p.kind, true, true, false, false);
		p.va = w->remote_addr;
		p.rkey = w->rkey;
		p.swap_add = w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? w->swap : w->compare_add;
		p.compare = w->compare_add;
		p.psn = qe->cur_psn;
		p.ackreq = true;
		uroce_pkt_queue(qe->eng, &qp->av, qp->udp_sport, &p, NULL, 0);
		qe->cur_psn = psn_add(qe->cur_psn, 1);
		w->last_psn = p.psn;
		return 1;
	case IBV_WR_BIND_MW:
	case IBV_WR_LOCAL_INV: {
		/* Local operations: no packet, executed in send-queue order
		 * (IBTA 10.6.7), once; complete once all before them have. */
		enum ibv_wc_status st = w->executed ? IBV_WC_SUCCESS : uroce_up->mw_local_op(qp, w);

		w->executed = true;
		if (st != IBV_WC_SUCCESS) {
			local_error(qp, w, st);
			return -1;
		}
		w->last_psn = psn_add(qe->cur_psn, -1u);
		return 1;
	}
	default:
		local_error(qp, w, IBV_WC_LOC_QP_OP_ERR);
		return -1;
	}
}

enum { ACK_AFTER_LOOK = 4 };  /* WQEs looked at; more: the ACK goes first */

/*
 * May the ACK this QP owes follow its new requests?  Yes when they are
 * few and the peer's application sees each only in memory (RDMA WRITE
 * without immediate, READ, atomics): no receive completion of the peer's
 * can then overtake the completion the ACK gives it.  An ACK may come
 * late (IBTA 9.7.5.1.1), and a requester's completion is not ordered with
 * the responder's requests.  It matters for a ping-pong of WRITEs
 * (ib_write_lat): the peer's application, polling for the ACK, finds the
 * WRITE ahead of it and places it itself, where otherwise it would take
 * the ACK, go back to watching its memory, and leave the WRITE to a
 * thread of uroce's that must be woken first.
 */
static bool ack_after_requests(struct uroce_qp *qp)
{
	struct uroce_qp_eng *qe = qp->engine;
	uint32_t prod = ring_prod(&qp->sq);

	if (!qe->ack_due || prod - qe->sq_next > ACK_AFTER_LOOK)
		return false;
	for (uint32_t i = qe->sq_next; i != prod; i++) {
		enum ibv_wr_opcode op = ((struct uroce_send_wqe *)ring_slot(&qp->sq, i))->opcode;

		if (op != IBV_WR_RDMA_WRITE && !uroce_is_rd_atomic(op))
			return false;
	}
	return true;
}

/* Send what the send queue allows.  The packets leave in as few transport
 * calls as possible: queued while the MR lock keeps their payloads, sent
 * before it is dropped; UD/UC WQEs complete once their packets are out. */
void uroce_req_progress(struct uroce_qp *qp)
{
	struct uroce_qp_eng *qe = qp->engine;
	enum ibv_qp_type type = qp->vqp.qp.qp_type;
	bool sent_any = false, ack_after = false;
	uint64_t ack_pos = UROCE_TX_NOWHERE;   /* where the ACK sent first was queued */
	uint32_t sent_from;

	/* What the caller stored (una_psn) before sq.prod is read
	 * (uroce_engine_post_deferred). */
	atomic_thread_fence(memory_order_seq_cst);
	if (!qe || (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD) || qe->rnr_until_ns)
		return;
	/* Nothing to send: the pass after every ACK of a ping-pong. */
	if (qe->sq_next == ring_prod(&qp->sq))
		return;
	/* One window for the whole pass: the packet that fills it is the one
	 * that asked for an ACK, even if other QPs change the share meanwhile. */
	qe->win = uroce_cc_window(qe);
	/* Too little room for a burst: the next ACK opens more (cc.c). */
	if (uroce_qp_type_rc(type) && uroce_cc_burst_waits(qe, unacked(qe)))
		return;
	sent_from = qe->sq_next;
	uroce_mem_lock(qp);
	uroce_tx_begin(qe->eng);
	/* An ACK this QP owes leaves in one batch with its new requests:
	 * before them, as a NIC sends it on receipt, so that a peer whose
	 * request was answered by a receive learns of the answer after its
	 * own send completes, never before (perftest -e waits for them in
	 * that order).  After them when the peer sees them only in memory
	 * (ack_after_requests), or in one datagram with them (below). */
	if (qe->sq_next != ring_prod(&qp->sq)) {
		ack_after = ack_after_requests(qp);
		if (!ack_after) {
			uint64_t pos = uroce_tx_position();

			uroce_resp_ack_before_requests(qp);
			if (uroce_tx_position() != pos)
				ack_pos = uroce_tx_position() - 1;
		}
	}
	while (qe->sq_next != ring_prod(&qp->sq)) {
		struct uroce_send_wqe *w = ring_slot(&qp->sq, qe->sq_next);
		int done;

		if (w->state == UROCE_WQE_POSTED) {
			/* SQD: finish what started, start nothing new (IBTA 10.3.1.6). */
			if (qp->state == IBV_QPS_SQD)
				break;
			if (uroce_qp_type_rc(type) && uroce_is_rd_atomic(w->opcode) &&
			    qe->rd_atomic >= (qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1))
				break;
			/* Fence: wait for earlier READs and atomics (IBTA 10.8.3.3). */
			if ((w->send_flags & IBV_SEND_FENCE) && qe->rd_atomic)
				break;
			start_wqe(qp, w);
		}
		if (uroce_qp_type_rc(type) && unacked(qe) >= qe->win)
			break;
		if (uroce_is_local_op(w->opcode)) {
			/* A bind or invalidate takes the MR table for writing. */
			uroce_tx_flush();
			uroce_mem_unlock(qp);
			done = send_some(qp, w);
			uroce_mem_lock(qp);
		} else {
			done = send_some(qp, w);
		}
		if (done < 0)
			break;
		sent_any = true;
		if (!done)
			continue;
		w->state = UROCE_WQE_SENT;
		qe->sq_next++;
		qe->cur_off = 0;
		/* A local operation at the head of a reliable (RC, XRC) queue completes at
		 * once (behind others, the ACK that completes them completes it). */
		if (uroce_qp_type_rc(type) && uroce_is_local_op(w->opcode) &&
		    ring_slot(&qp->sq, qp->sq.cons) == w)
			uroce_complete_send(qp, w, IBV_WC_SUCCESS);
	}
	if (ack_after)
		uroce_resp_flush_ack(qp);
	/* The peer dispatches the ACK of a datagram first all the same. */
	if (ack_pos != UROCE_TX_NOWHERE)
		uroce_tx_ack_trails(ack_pos);
	uroce_tx_flush();
	uroce_tx_end(qe->eng);
	uroce_mem_unlock(qp);
	/* Unreliable transports complete a WQE once it is on the wire. */
	if (!uroce_qp_type_rc(type))
		for (uint32_t i = sent_from; i != qe->sq_next && ring_used(&qp->sq); i++) {
			struct uroce_send_wqe *w = ring_slot(&qp->sq, qp->sq.cons);

			if (w->state != UROCE_WQE_SENT)
				break;
			uroce_complete_send(qp, w, IBV_WC_SUCCESS);
		}
	if (sent_any && uroce_qp_type_rc(type) && !qe->deadline_ns)
		uroce_req_restart_timer(qp);
}

void uroce_req_rewind(struct uroce_qp *qp, uint32_t psn)
{
	struct uroce_qp_eng *qe = qp->engine;
	uint32_t mtu = uroce_qp_mtu(qe);
	struct uroce_send_wqe *fw = NULL;
	uint32_t found = 0;

	for (uint32_t idx = qp->sq.cons; idx != ring_prod(&qp->sq); idx++) {
		struct uroce_send_wqe *w = ring_slot(&qp->sq, idx);

		if (w->state == UROCE_WQE_POSTED)
			break;
		if (!fw) {
			if (psn_diff(psn, w->first_psn) >= 0 &&
			    (w->state == UROCE_WQE_SENDING || psn_diff(psn, w->last_psn) <= 0)) {
				fw = w;
				found = idx;
			}
			continue;
		}
		/* WQEs after the one holding PSN start over. */
		if (uroce_is_rd_atomic(w->opcode) && qe->rd_atomic)
			qe->rd_atomic--;
		w->state = UROCE_WQE_POSTED;
	}
	if (!fw)
		return; /* nothing was sent at or after PSN */
	fw->state = UROCE_WQE_SENDING;
	qe->sq_next = found;
	if (psn_diff(qe->cur_psn, psn) > 0 &&
	    (!qe->resending || psn_diff(qe->cur_psn, qe->resent_end) > 0)) {
		qe->resent_end = qe->cur_psn;
		qe->resending = true;
	}
	qe->cur_psn = psn;
	/* A READ's responses may be missing below una: an ACK or NAK for a
	 * later request of the same READ (a chunk after the one whose
	 * response was lost) moved una past them (comp.c, ack_through).
	 * From PSN on, nothing counts as acknowledged again; with una above
	 * cur the window looked full (cur - una < 0) and the resend never
	 * left: every probe and timeout asked again from una, past the gap,
	 * until the READ ran out of retries (faults loss20). */
	if (psn_diff(qe->una_psn, psn) > 0)
		qe->una_psn = psn;
	/* SEND/WRITE packets and READ responses are MTU-sized: PSN -> offset. */
	if (fw->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || fw->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
		qe->cur_off = 0;
	else
		qe->cur_off = (uint64_t)psn_diff(psn, fw->first_psn) * mtu;
	qe->since_ackreq = 0;
	qe->rtt_sent_ns = 0; /* a resent packet's ACK says nothing of the RTT */
	uroce_count(qe->eng, UROCE_STAT_RETRANSMITS, 1);
}

void uroce_req_timer(struct uroce_qp *qp, uint64_t now)
{
	struct uroce_qp_eng *qe = qp->engine;

	if (!qe)
		return;
	if (qe->rnr_until_ns && now >= qe->rnr_until_ns) {
		qe->rnr_until_ns = 0;
		UROCE_TRACE(uroce_trace_why(qp, UROCE_WHY_RNR_RESUME, qe->cur_psn, -1));
		uroce_req_progress(qp);
		uroce_req_restart_timer(qp);
		return;
	}
	if (qe->probe_ns && now >= qe->probe_ns && unacked(qe)) {
		uint32_t from = probe_from(qe);

		qe->probe_ns = ++qe->probes < PROBES_MAX ? now + probe_delay_ns(qe) : 0;
		uroce_count(qe->eng, UROCE_STAT_TAIL_PROBES, 1);
		UROCE_TRACE(uroce_trace_why(qp, UROCE_WHY_RETX_PROBE, from, qe->probes));
		/* Only the second probe, the go-back to una, decreases the
		 * window.  The first is no sign of loss yet (RFC 8985 7.4): on
		 * a busy receiver most are spurious, answered by a duplicate's
		 * ACK; a loss it reveals comes back as a sequence NAK, which
		 * decreases the window (comp.c).  A second means the first
		 * brought no progress: a lost NAK or resend, or a lost probe. */
		if (qe->probes >= PROBES_MAX)
			uroce_cc_loss(qe, false);
		uroce_req_rewind(qp, from);
		qe->probe_ackreq = true;
		uroce_req_progress(qp);
		return;
	}
	if (!qe->deadline_ns || now < qe->deadline_ns)
		return;
	uroce_count(qe->eng, UROCE_STAT_ACK_TIMEOUTS, 1);
	if (uroce_debug)
		fprintf(stderr, "uroce: QP %u timeout: una %u cur %u sq cons %u next %u prod %u "
			"retry_left %u rnr_until %llu\n", qp->vqp.qp.qp_num, qe->una_psn, qe->cur_psn,
			qp->sq.cons, qe->sq_next, ring_prod(&qp->sq), qe->retry_left,
			(unsigned long long)qe->rnr_until_ns);
	if (qe->retry_left == 0) {
		/* IBTA 9.7.6.1.3: retries exhausted. */
		struct uroce_send_wqe *w = ring_slot(&qp->sq, qp->sq.cons);

		qe->deadline_ns = 0;
		UROCE_TRACE(uroce_trace_why(qp, UROCE_WHY_RETRY_EXC, qe->una_psn, 0));
		uroce_count(qe->eng, UROCE_STAT_RETRY_EXCEEDED, 1);
		uroce_complete_send(qp, w, IBV_WC_RETRY_EXC_ERR);
		uroce_qp_to_error(qp);
		return;
	}
	qe->retry_left--;
	UROCE_TRACE(uroce_trace_why(qp, UROCE_WHY_RETX_TIMEOUT, qe->una_psn, qe->retry_left));
	uroce_cc_loss(qe, true);
	uroce_req_rewind(qp, qe->una_psn);
	qe->deadline_ns = 0;
	uroce_req_progress(qp);
	uroce_req_restart_timer(qp);
}

void uroce_req_reset(struct uroce_qp *qp)
{
	struct uroce_qp_eng *qe = qp->engine;

	qe->sq_next = qp->sq.cons;
	qe->cur_off = 0;
	qe->rd_atomic = 0;
}

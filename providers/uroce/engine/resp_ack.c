// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The responder's ACKs and NAKs (IBTA 9.7.5.1): every response leaves
 * after the ACK its QP has due; within a receive burst the ACKs are
 * coalesced, one per QP for the highest PSN (9.7.5.1.1: an ACK
 * acknowledges every PSN up to its own), and some are held for the QP's
 * next post, which takes them along, or until ack_hold_ns.  NAKs and RNR
 * NAKs leave at once.  Called with qp->lock held.
 */
#include <stdio.h>
#include <string.h>

#include "engine/engine_int.h"
#include "engine/pkt.h"
#include "trace/trace.h"

/* ---- sending ACKs and responses --------------------------------------------- */

static void send_aeth_msn(struct uroce_qp *qp, enum roce_kind kind, uint32_t psn,
			  uint8_t syndrome, const struct iovec *payload, int n,
			  bool first, bool last, uint64_t orig, uint32_t msn)
{
	struct uroce_qp_eng *qe = qp->engine;
	struct roce_pkt p = {
		.kind = kind,
		.pkey = 0xffff,
		.dqpn = qp->attr.dest_qp_num,
		.psn = psn,
		.syndrome = syndrome,
		.msn = msn & 0xffffff,
		.orig = orig,
	};

	p.opcode = uroce_pkt_opcode(qp->vqp.qp.qp_type, kind, first, last, false, false);
	uroce_pkt_queue(qe->eng, &qp->av, qp->udp_sport, &p, payload, n);
}

static void send_ack_due(struct uroce_qp *qp)
{
	struct uroce_qp_eng *qe = qp->engine;

	send_aeth_msn(qp, ROCE_K_ACK, qe->ack_psn, ROCE_AETH_ACK | ROCE_AETH_CREDITS_INVALID,
		      NULL, 0, true, true, 0, qe->ack_msn);
}

/* Every response of a QP leaves after the ACK it has due: the requester
 * sees PSNs acknowledged in order. */
void uroce_resp_send_aeth(struct uroce_qp *qp, enum roce_kind kind, uint32_t psn,
			  uint8_t syndrome, const struct iovec *payload, int n,
			  bool first, bool last, uint64_t orig)
{
	struct uroce_qp_eng *qe = qp->engine;

	uroce_resp_flush_ack(qp);
	send_aeth_msn(qp, kind, psn, syndrome, payload, n, first, last, orig, qe->msn);
}

/* ---- coalesced ACKs (IBTA 9.7.5.1.1: an ACK acknowledges every PSN up to
 * its own, so one ACK may answer many AckReq packets) ---------------------- */

/* The QPs with an ACK due in the receive burst this thread dispatches. */
#define ACKS_DUE_MAX 64
static __thread struct {
	struct uroce_engine *eng;   /* NULL: no burst open, ACKs leave at once */
	uint64_t gen;               /* this burst's number (eng->acks_sent_gen + 1) */
	unsigned int n;
	uint32_t qpn[ACKS_DUE_MAX];
} acks;

void uroce_resp_flush_ack(struct uroce_qp *qp)
{
	struct uroce_qp_eng *qe = qp->engine;

	if (!qe || !qe->ack_due)
		return;
	qe->ack_due = false;
	/* Owed for requests received before an error: still sent. */
	if (qp->state < IBV_QPS_RTR)
		return;
	send_ack_due(qp);
	/* Inside a burst it waits in this thread's queue until the burst
	 * ends (uroce_resp_flush_acks). */
	if (acks.eng == qe->eng)
		qe->ack_gen = acks.gen;
}

/*
 * A NIC acknowledges a request on receipt, so the peer sees the ACK of its
 * request before any request this QP sends after the receive completed
 * (programs rely on it: perftest -e takes its send completion first).
 * Here the ACK may wait in the queue of the thread that ran the burst,
 * not yet sent, while the application posts: then it is said again, first.
 * The requester drops the later copy: it acknowledges nothing new.
 */
void uroce_resp_ack_before_requests(struct uroce_qp *qp)
{
	struct uroce_qp_eng *qe = qp->engine;

	if (qe->ack_due) {
		uroce_resp_flush_ack(qp);
		return;
	}
	if (qe->ack_gen && !(acks.eng == qe->eng && acks.gen == qe->ack_gen) &&
	    qe->ack_gen > atomic_load(&qe->eng->acks_sent_gen) && qp->state >= IBV_QPS_RTR)
		send_ack_due(qp);
}

void uroce_resp_acks_begin(struct uroce_engine *eng)
{
	acks.eng = eng;
	acks.gen = atomic_load(&eng->acks_sent_gen) + 1;
	acks.n = 0;
}

/* Keep QPN's due ACK for later (uroce_resp_flush_held); SINCE: when it was
 * first held.  False: no room. */
static bool hold_ack(struct uroce_engine *eng, uint32_t qpn, uint64_t since)
{
	unsigned int n;
	bool room;

	pthread_mutex_lock(&eng->held_lock);
	n = atomic_load_explicit(&eng->n_held, memory_order_relaxed);
	room = n < sizeof(eng->held_qpn) / sizeof(eng->held_qpn[0]);
	if (room) {
		if (!n || since < atomic_load(&eng->held_since_ns))
			atomic_store(&eng->held_since_ns, since);
		eng->held_qpn[n] = qpn;
		atomic_store(&eng->n_held, n + 1);
	}
	pthread_mutex_unlock(&eng->held_lock);
	return room;
}

enum {
	HOLD_MISS_LIMIT = 2,    /* misses in a row before the progress thread stops holding */
	HOLD_RETRY_EVERY = 256, /* and then it tries again once in so many ACKs */
};

/*
 * May the progress thread hold QE's ACK?  Yes while the application has
 * been taking held ACKs along with its posts (a ping-pong: ib_write_lat's
 * side spins on memory and answers each WRITE with one).  Not after
 * HOLD_MISS_LIMIT holds in a row that only the clock sent (a one-way
 * stream, a receiver that never answers), but for one trial now and then.
 */
static bool progress_may_hold(struct uroce_qp_eng *qe)
{
	if (qe->hold_misses < HOLD_MISS_LIMIT)
		return true;
	return ++qe->hold_tries % HOLD_RETRY_EVERY == 0;
}

/*
 * The burst's ACKs leave now, or wait for the QP's next post (IBTA
 * 9.7.5.1.1: one ACK may answer many requests, and none is owed at once).
 * A post takes the ACK along in its own system call (uroce_req_progress).
 *
 * - An application thread's CQ poll ran the burst: that thread is about to
 *   see the completions, and an application that answers each receive
 *   with a send (a ping-pong) gets its completion a system call sooner.
 * - The progress thread ran it: it holds an ACK only while the QP's
 *   application has been answering (progress_may_hold).  The peer, polling
 *   for that ACK, then finds the answer's request ahead of it, and its
 *   application thread handles both with no thread of its own woken.
 *
 * What no post takes leaves at the application's next poll, or after
 * ack_hold_ns (the progress thread's clock, uroce_resp_held_wait_ns).
 */
void uroce_resp_flush_acks(struct uroce_engine *eng, enum uroce_burst_by by)
{
	uint64_t now = 0;
	bool held = false;

	for (unsigned int i = 0; i < acks.n; i++) {
		struct uroce_qp *qp;

		if (!now && eng->ack_hold_ns)
			now = uroce_now_ns();
		if (by == UROCE_BURST_APP && eng->ack_hold_ns && hold_ack(eng, acks.qpn[i], now)) {
			held = true;
			continue;
		}
		qp = uroce_engine_qp_locked(eng, acks.qpn[i]);
		if (!qp)
			continue;
		if (by == UROCE_BURST_PROGRESS && eng->ack_hold_ns && qp->engine &&
		    progress_may_hold(qp->engine) && hold_ack(eng, acks.qpn[i], now)) {
			held = true;
			pthread_mutex_unlock(&qp->lock);
			continue;
		}
		uroce_resp_flush_ack(qp);
		pthread_mutex_unlock(&qp->lock);
	}
	/* The burst's ACKs (and responses) go now: then they are on the wire. */
	uroce_tx_flush();
	atomic_store(&eng->acks_sent_gen, acks.gen);
	acks.n = 0;
	acks.eng = NULL;
	/* An application thread's holds: the progress thread looks on the
	 * tick, or at its next look when it defers to polling applications
	 * (a ping-pong's every poll holds one: a tick for each cost a
	 * wake-up a millisecond).  Its own: it times them itself (progress.c). */
	if (held && by == UROCE_BURST_APP && !uroce_poll_looks_within(eng, UROCE_TICK_NS))
		uroce_engine_start_tick(eng);
	if (held && by == UROCE_BURST_PROGRESS)
		eng->progress_held = true;
}

/* Worth keeping at an application's next poll: the QP's own requests are
 * still unacknowledged, so the application is likely waiting for their
 * completion to post again (ib_write_lat between its WRITE and the ACK). */
static bool keep_for_post(const struct uroce_qp *qp)
{
	const struct uroce_qp_eng *qe = qp->engine;

	return qp->state == IBV_QPS_RTS && psn_diff(qe->cur_psn, qe->una_psn) > 0;
}

uint64_t uroce_resp_held_wait_ns(struct uroce_engine *eng)
{
	uint64_t age;

	if (!atomic_load_explicit(&eng->n_held, memory_order_acquire))
		return UINT64_MAX;
	age = uroce_now_ns() - atomic_load(&eng->held_since_ns);
	return age >= eng->ack_hold_ns ? 0 : eng->ack_hold_ns - age;
}

void uroce_resp_flush_held(struct uroce_engine *eng, enum uroce_held_flush which)
{
	uint32_t qpns[sizeof(eng->held_qpn) / sizeof(eng->held_qpn[0])];
	unsigned int n;
	uint64_t since;
	bool expired;

	if (!atomic_load_explicit(&eng->n_held, memory_order_acquire))
		return;
	expired = uroce_resp_held_wait_ns(eng) == 0;
	if (which == UROCE_HELD_EXPIRED && !expired)
		return;
	pthread_mutex_lock(&eng->held_lock);
	n = atomic_load_explicit(&eng->n_held, memory_order_relaxed);
	memcpy(qpns, eng->held_qpn, n * sizeof(qpns[0]));
	since = atomic_load(&eng->held_since_ns);
	atomic_store(&eng->n_held, 0);
	pthread_mutex_unlock(&eng->held_lock);
	uroce_tx_begin(eng);
	for (unsigned int i = 0; i < n; i++) {
		struct uroce_qp *qp = uroce_engine_qp_locked(eng, qpns[i]);
		struct uroce_qp_eng *qe;

		if (!qp)
			continue;
		qe = qp->engine;
		/* Kept: back on the list, as old as it was (no room: it goes). */
		if (qe && qe->ack_due && which == UROCE_HELD_POLL && !expired && keep_for_post(qp) &&
		    hold_ack(eng, qpns[i], since)) {
			pthread_mutex_unlock(&qp->lock);
			continue;
		}
		if (qe && qe->ack_due) {
			/* No post took it: a miss. */
			qe->hold_misses += qe->hold_misses < UINT8_MAX;
			uroce_resp_flush_ack(qp);
		} else if (qe) {
			/* Gone already: the QP posted meanwhile and took it
			 * along (or was replaced: a new QP of that number owes
			 * nothing yet). */
			qe->hold_misses = 0;
		}
		pthread_mutex_unlock(&qp->lock);
	}
	uroce_tx_end(eng);
}

void uroce_resp_ack(struct uroce_qp *qp, uint32_t psn)
{
	struct uroce_qp_eng *qe = qp->engine;

	if (acks.eng != qe->eng || (!qe->ack_due && acks.n == ACKS_DUE_MAX)) {
		uroce_resp_send_aeth(qp, ROCE_K_ACK, psn, ROCE_AETH_ACK | ROCE_AETH_CREDITS_INVALID,
				     NULL, 0, true, true, 0);
		return;
	}
	if (!qe->ack_due)
		acks.qpn[acks.n++] = qp->vqp.qp.qp_num;
	qe->ack_due = true;
	qe->ack_psn = psn;
	qe->ack_msn = qe->msn;
}

void uroce_resp_nak(struct uroce_qp *qp, uint32_t psn, uint8_t code)
{
	uroce_count(uroce_eng_of(qp), uroce_nak_stat(UROCE_STAT_NAKS_TX_SEQ, code), 1);
	uroce_resp_send_aeth(qp, ROCE_K_ACK, psn, ROCE_AETH_NAK | code, NULL, 0, true, true, 0);
}

void uroce_resp_rnr_nak(struct uroce_qp *qp, uint32_t psn)
{
	/* Until PSN comes again, later packets are dropped without a
	 * sequence NAK: the requester is waiting out the RNR timer. */
	qp->engine->nak_sent = true;
	uroce_count(uroce_eng_of(qp), UROCE_STAT_RNR_NAKS_TX, 1);
	UROCE_TRACE(uroce_trace_why(qp, UROCE_WHY_RNR_NAK, psn, qp->attr.min_rnr_timer));
	if (uroce_debug)
		fprintf(stderr, "uroce: QP %u sends RNR NAK psn %u\n", qp->vqp.qp.qp_num, psn);
	uroce_resp_send_aeth(qp, ROCE_K_ACK, psn,
			     ROCE_AETH_RNR_NAK | (qp->attr.min_rnr_timer & 0x1f), NULL, 0, true,
			     true, 0);
}

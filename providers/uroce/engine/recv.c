// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Receiving (as the kernel's rxe_recv.c): packets from the transport a
 * burst at a time, each parsed and checked once (pkt.c), then dispatched
 * by destination QPN to the completer (responses) or the responder
 * (requests), to QP 1 (the CM), to multicast groups, or passed on to the
 * process of this device that owns the QP.  Both the progress thread and
 * an application thread polling its CQ (uroce_engine_poll) run it, one at
 * a time (rx_lock), so packets keep their order.
 */
#include <stdio.h>
#include <unistd.h>

#include "engine/engine_int.h"
#include "engine/pkt.h"
#include "wire/wire.h"

struct uroce_qp *uroce_engine_qp_locked(struct uroce_engine *eng, uint32_t qpn)
{
	struct uroce_qp *qp = NULL;

	pthread_rwlock_rdlock(&eng->qps_lock);
	if (qpn < UROCE_MAX_QP)
		qp = eng->qps[qpn];
	if (qp)
		pthread_mutex_lock(&qp->lock);
	pthread_rwlock_unlock(&eng->qps_lock);
	return qp;
}

int uroce_engine_forward(struct uroce_engine *eng, uint16_t port, const struct uroce_rx *rx)
{
	int ret;

	if (!eng->xport->ops->forward)
		return -EOPNOTSUPP;
	ret = eng->xport->ops->forward(eng->xport, port, rx);
	if (ret == 0)
		uroce_count(eng, UROCE_STAT_FORWARDED_OUT, 1);
	return ret;
}

static void forward(struct uroce_engine *eng, uint32_t qpn, struct uroce_rx *rx)
{
	uint16_t port = 0;
	pid_t owner;

	if (rx->forwarded)
		goto drop;
	owner = uroce_qpn_owner(eng->qpns, qpn, 0, &port);
	if (!owner || owner == getpid())
		goto drop;
	if (!eng->xport->ops->forward)
		goto drop;
	if (uroce_engine_forward(eng, port, rx) == 0)
		return;
	/* The owner may be gone: ask again, freeing its QPN if it died. */
	owner = uroce_qpn_owner(eng->qpns, qpn, 1, &port);
	if (owner && owner != getpid() && uroce_engine_forward(eng, port, rx) == 0)
		return;
drop:
	uroce_count(eng, UROCE_STAT_DROP_NO_QP, 1);
}

/* Parse and check RX into PKT (in arrival order: a packet trace records
 * them so): true if it is for a QP, the CM or a group. */
static bool rx_accept(struct uroce_engine *eng, const struct uroce_rx *rx, struct roce_pkt *pkt)
{
	if (uroce_pkt_parse(eng, rx, pkt))
		return false;
	if (uroce_debug && pkt->kind == ROCE_K_ACK && (pkt->syndrome & ROCE_AETH_TYPE_MASK))
		fprintf(stderr, "uroce: rx NAK syndrome 0x%02x psn %u for QP %u\n", pkt->syndrome,
			pkt->psn, pkt->dqpn);
	/* The only P_Key is the default 0xffff; a packet matches if the low 15
	 * bits agree (IBTA 10.9.3: membership bit aside). */
	if ((pkt->pkey & 0x7fff) != 0x7fff) {
		uroce_count(eng, UROCE_STAT_DROP_PKEY, 1);
		return false;
	}
	/* Congestion notifications: uroce does no rate control (DCQCN);
	 * they are counted and dropped. */
	if (pkt->kind == ROCE_K_CNP) {
		uroce_count(eng, UROCE_STAT_DROP_OTHER, 1);
		return false;
	}
	return true;
}

/* PKT, accepted from RX: to its QP's completer or responder, to the CM, to
 * a multicast group, or on to the process of this device that owns it. */
static void rx_dispatch(struct uroce_engine *eng, struct uroce_rx *rx, const struct roce_pkt *pkt)
{
	struct uroce_qp *qp = NULL;
	uint32_t qpn = pkt->dqpn;

	if (qpn == CM_GSI_QPN) {
		uroce_up->gsi_rx(eng, rx, pkt);
		return;
	}
	if (qpn == ROCE_QPN_MULTICAST) {
		uroce_mcast_rx(eng, rx, pkt);
		return;
	}
	qp = uroce_engine_qp_locked(eng, qpn);
	if (!qp) {
		forward(eng, qpn, rx);
		return;
	}
	struct uroce_qp_eng *qe = qp->engine;
	uint32_t epsn = qe->epsn, una = qe->una_psn;

	if (pkt->is_response)
		uroce_comp_rx(qp, pkt);
	else
		uroce_resp_rx(qp, pkt, rx);
	/* A peer whose source port we could not predict (another RoCE
	 * implementation): connect to where it really sends from, so the rest
	 * of the connection comes here directly.  Only for a packet the QP
	 * took (a new request, a response that acknowledged something): any
	 * host can send a packet with a far-off PSN from any port, and such
	 * a packet must not move the connection (tests/faults/hostile.sh). */
	if (qp->vqp.qp.qp_type != IBV_QPT_UD && rx->src_port != qe->conn_port &&
	    qp->state >= IBV_QPS_RTR && qp->state <= IBV_QPS_SQE && qe->reconnects < 4 &&
	    (qe->epsn != epsn || qe->una_psn != una) && eng->xport->ops->steer) {
		qe->reconnects++;
		uroce_count(eng, UROCE_STAT_CONN_RESTEERS, 1);
		if (eng->xport->ops->steer(eng->xport, qpn, rx->family, rx->dst_ip, rx->src_ip,
					   rx->src_port) == 0)
			qe->conn_port = rx->src_port;
	}
	pthread_mutex_unlock(&qp->lock);
}

/* Everything the transport has, a burst at a time: each burst is checked
 * and dispatched whole, and what it makes the engine send (ACKs coalesced
 * per QP, IBTA 9.7.5.1.1) leaves together after it.  The packets taken. */
unsigned int uroce_engine_rx_bursts(struct uroce_engine *eng, enum uroce_burst_by by)
{
	static __thread struct {
		struct uroce_rx pkts[RX_BURST];
		struct roce_pkt parsed[RX_BURST];
		bool accepted[RX_BURST];
	} burst;
	struct uroce_rx *pkts = burst.pkts;
	struct roce_pkt *parsed = burst.parsed;
	bool *accepted = burst.accepted;
	unsigned int got = 0;

	for (int round = 0; round < RX_ROUNDS; round++) {
		int n = eng->xport->ops->recv(eng->xport, pkts, RX_BURST,
					      by == UROCE_BURST_APP ? UROCE_RX_SPINNING : 0);
		uint64_t bytes = 0;
		bool requests = false;

		if (n <= 0)
			break;
		got += (unsigned int)n;
		uroce_tx_begin(eng);
		uroce_resp_acks_begin(eng);
		uroce_up->cq_events_hold(true);
		/*
		 * The burst's responses are dispatched before its requests.  A
		 * peer's ACK may share a datagram with its next SEND, behind it
		 * (pkt.c, uroce_tx_ack_trails); dispatched first, its completion
		 * still comes before the SEND's, as from a NIC that acknowledged
		 * on receipt.  The requests a QP receives and the responses to
		 * its own requests are separate streams (its responder's and its
		 * requester's, IBTA 9.7), each kept in its order.
		 */
		for (int i = 0; i < n; i++) {
			bytes += pkts[i].len;
			accepted[i] = rx_accept(eng, &pkts[i], &parsed[i]);
			if (accepted[i] && parsed[i].is_response)
				rx_dispatch(eng, &pkts[i], &parsed[i]);
			else
				requests |= accepted[i];
		}
		for (int i = 0; requests && i < n; i++)
			if (accepted[i] && !parsed[i].is_response)
				rx_dispatch(eng, &pkts[i], &parsed[i]);
		/* Counted once a burst: each count is an atomic add. */
		uroce_count(eng, UROCE_STAT_RX_PACKETS, (uint64_t)n);
		uroce_count(eng, UROCE_STAT_RX_BYTES, bytes);
		uroce_resp_flush_acks(eng, by);
		uroce_tx_end(eng);
		/* The ACKs are on the wire: now wake the sleepers. */
		uroce_up->cq_events_hold(false);
		/* Held ACKs whose time is up leave between bursts, not after
		 * the whole drain: a drain runs as long as packets keep coming
		 * (up to RX_ROUNDS^2 bursts from the progress thread).  One of
		 * 180 ms at -q 128 held 64 QPs' ACKs past their peers' 67 ms
		 * ACK timeout (docs/performance.md). */
		uroce_resp_flush_held(eng, UROCE_HELD_EXPIRED);
		if (n < RX_BURST)
			break;
	}
	return got;
}

unsigned int uroce_engine_rx_pass_on(struct uroce_engine *eng)
{
	static __thread struct {
		struct uroce_rx pkts[RX_BURST];
		struct roce_pkt parsed;
	} burst;
	unsigned int got = 0;

	for (int round = 0; round < RX_ROUNDS; round++) {
		int n = eng->xport->ops->recv(eng->xport, burst.pkts, RX_BURST, 0);

		if (n <= 0)
			break;
		got += (unsigned int)n;
		for (int i = 0; i < n; i++) {
			struct uroce_rx *rx = &burst.pkts[i];
			uint32_t qpn;

			if (!rx_accept(eng, rx, &burst.parsed))
				continue;
			qpn = burst.parsed.dqpn;
			/* The CM routes by its tables; with the engine stopping
			 * it delivers nothing here (gsi.c, deliver). */
			if (qpn == CM_GSI_QPN)
				uroce_up->gsi_rx(eng, rx, &burst.parsed);
			else if (qpn == ROCE_QPN_MULTICAST)
				uroce_count(eng, UROCE_STAT_DROP_OTHER, 1);
			else
				forward(eng, qpn, rx);    /* ours: dropped */
		}
		uroce_count(eng, UROCE_STAT_RX_PACKETS, (uint64_t)n);
		if (n < RX_BURST)
			break;
	}
	return got;
}

/* An application thread polls its CQ and finds it empty: it serves the
 * wire itself, with no thread hop.  The transport's recv looks (a
 * non-blocking epoll, or an AF_XDP ring) without the engine's epoll set,
 * which is the progress thread's to change (poll.c). */
void uroce_engine_poll(struct uroce_engine *eng)
{
	if (uroce_parents(eng->gen))    /* the parent's sockets: never read here */
		return;
	uroce_poll_app_polled(eng);
	uroce_poll_beat(eng);
	/* The ACKs its last poll held: this thread did not post on their
	 * QPs meanwhile, so they go now, before it looks for more, unless
	 * their QP still waits for its own ACK (resp_ack.c, keep_for_post). */
	uroce_resp_flush_held(eng, UROCE_HELD_POLL);
	if (pthread_mutex_trylock(&eng->rx_lock)) {
		/* Another thread is draining: it will deliver.  If it is the
		 * progress thread, preempted on this CPU by this busy poller,
		 * let it run (poll.c). */
		uroce_poll_contended(eng);
		return;
	}
	uroce_engine_rx_bursts(eng, UROCE_BURST_APP);
	pthread_mutex_unlock(&eng->rx_lock);
}

void uroce_engine_poll_done(struct uroce_engine *eng)
{
	if (uroce_parents(eng->gen))
		return;
	uroce_resp_flush_held(eng, UROCE_HELD_ALL);
	uroce_poll_app_sleeps(eng);
}

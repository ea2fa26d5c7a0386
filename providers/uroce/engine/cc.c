// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Congestion control of the requester: how many packets an RC QP may have
 * unacknowledged (its window), from the loss signals the protocol already
 * gives.  Called with qp->lock held.
 *
 * Why: lo and a veth queue at most net.core.netdev_max_backlog (1000)
 * packets per CPU, and a UDP socket drops what it cannot buffer.  With a
 * fixed window of 64 packets per QP, 128 QPs put 8192 packets in flight:
 * most were dropped, go-back-N resent whole windows into the same queue,
 * and QPs ran out of retries (issue 14: ib_write_bw -q 128 ended in
 * RETRY_EXC_ERR).  The paths uroce runs on mark no ECN, so RoCEv2's own
 * ECN -> CNP -> DCQCN loop has nothing to react to; loss is the signal
 * (docs/performance.md):
 *
 * - a window starts at CC_INIT packets and grows by the packets each ACK
 *   covers up to ssthresh (slow start), then by one packet per window of
 *   ACKs (additive increase), never beyond UROCE_WINDOW_PKTS;
 * - a PSN sequence NAK, a lost READ/atomic response or an early resend
 *   (tail-loss probe: nothing acknowledged for 4 round trips) halves it
 *   (multiplicative decrease), at most once per window of packets;
 * - a local ACK timeout drops it to CC_MIN.
 *
 * The window stays within [share / 2, share], where share is the QP's part
 * of a bound for the whole process on this device: the QPs that have
 * packets in flight (eng->armed) share UROCE_INFLIGHT packets (default
 * 256: 1 MiB at a 4096-byte MTU, what 4 QPs with full windows hold), at
 * least CC_MIN each.  Without it, 128 QPs starting at once put 2048
 * packets into the receiver's queues, whose one progress thread (on a
 * shared 2-CPU machine) then took longer than the ACK timeout to reach
 * the last of them: no packet was lost, yet QPs timed out.  8 processes
 * of 64 QPs each on one device completed with 256, not with 1024.
 *
 * UROCE_CC=0 turns both off (the fixed window of 64), for comparison.
 *
 * ACK clocking of posts: a WQE posted to an RC QP that has packets
 * unacknowledged waits for the next response (or timer) of that QP, whose
 * handler sends everything the window allows in one transport call; a
 * post to a QP with nothing in flight is sent at once.  So a stream of
 * small posts leaves in bursts (one GSO datagram or sendmmsg each) instead
 * of one system call per post, as TCP's ACK clock does: ib_send_bw -s 64
 * went from 0.070 to 0.42 Mpps on lo.  A ping-pong (ib_*_lat) always
 * posts to an idle QP and is not delayed.  UROCE_ACK_CLOCK=0 sends every
 * post at once.
 */
#include <stdlib.h>

#include "engine.h"

enum {
	CC_UNIT = 256,               /* the window is kept in 1/256 packets */
	CC_INIT = 16,                /* packets: TCP's initial window is 10 */
	CC_MIN = 2,
};

static int cc_enabled(void)
{
	static int on = -1;

	if (on < 0) {
		const char *v = getenv("UROCE_CC");

		on = !(v && *v == '0');
	}
	return on;
}

/* UROCE_INFLIGHT: packets the process's busy QPs on one device share. */
static uint32_t cc_budget(void)
{
	static long budget = -1;

	if (budget < 0) {
		const char *v = getenv("UROCE_INFLIGHT");

		budget = v && *v ? strtol(v, NULL, 10) : 0;
		if (budget <= 0)
			budget = 256;
	}
	return (uint32_t)budget;
}

static void cc_start(struct uroce_qp_eng *qe)
{
	qe->cwnd = CC_INIT * CC_UNIT;
	qe->ssthresh = UROCE_WINDOW_PKTS * CC_UNIT;
	qe->cc_una = qe->una_psn;
	qe->cc_recover_psn = qe->una_psn;
}

uint32_t uroce_cc_window(struct uroce_qp_eng *qe)
{
	int busy = atomic_load_explicit(&qe->eng->armed, memory_order_relaxed);
	uint32_t share, w;

	if (!cc_enabled())
		return UROCE_WINDOW_PKTS;
	if (!qe->cwnd)
		cc_start(qe);
	/* This QP counts among the busy ones once it has sent. */
	busy += !qe->armed;
	share = cc_budget() / (uint32_t)(busy > 1 ? busy : 1);
	if (share > UROCE_WINDOW_PKTS)
		share = UROCE_WINDOW_PKTS;
	/* Loss is taken for congestion only where many QPs share the budget
	 * (a share below the full window): there a QP keeps at least half its
	 * share.  Up to 4 busy QPs keep the full window of 64, as before:
	 * verbs_verify's QP pair went 10 s without a completion at 20 %
	 * random loss with a window of 2, and ran out of retries under 25 %
	 * reordering with a window of 32 (the faults suite). */
	w = qe->cwnd / CC_UNIT;
	if (w < (share < UROCE_WINDOW_PKTS ? share / 2 : share))
		w = share < UROCE_WINDOW_PKTS ? share / 2 : share;
	if (w > share)
		w = share;
	return w < CC_MIN ? CC_MIN : w;
}

void uroce_cc_progress(struct uroce_qp_eng *qe)
{
	int32_t n;

	if (!qe->cwnd)
		cc_start(qe);
	n = psn_diff(qe->una_psn, qe->cc_una);
	if (n <= 0)
		return;
	qe->cc_una = qe->una_psn;
	if (qe->cwnd < qe->ssthresh)
		qe->cwnd += (uint32_t)n * CC_UNIT;
	else
		qe->cwnd += (uint32_t)n * CC_UNIT * CC_UNIT / qe->cwnd;
	if (qe->cwnd > UROCE_WINDOW_PKTS * CC_UNIT)
		qe->cwnd = UROCE_WINDOW_PKTS * CC_UNIT;
}

void uroce_cc_loss(struct uroce_qp_eng *qe, bool severe)
{
	if (!qe->cwnd)
		cc_start(qe);
	/* One decrease per window: the packets already in flight when the
	 * window shrank are lost to the same congestion. */
	if (!severe && psn_diff(qe->una_psn, qe->cc_recover_psn) < 0)
		return;
	qe->cc_recover_psn = qe->cur_psn;
	qe->ssthresh = qe->cwnd / 2 < CC_MIN * CC_UNIT ? CC_MIN * CC_UNIT : qe->cwnd / 2;
	qe->cwnd = severe ? CC_MIN * CC_UNIT : qe->ssthresh;
	uroce_count(qe->eng, UROCE_STAT_CC_DECREASES, 1);
}

bool uroce_cc_post_waits(const struct uroce_qp *qp)
{
	static int on = -1;
	const struct uroce_qp_eng *qe = qp->engine;

	if (on < 0) {
		const char *v = getenv("UROCE_ACK_CLOCK");

		on = !(v && *v == '0');
	}
	/* The pass that answers the response restarts what waits here:
	 * comp.c calls uroce_req_progress after every response, req.c after
	 * every timer (so a lost response costs a probe, never a WQE). */
	return on && qe && uroce_qp_type_rc(qp->vqp.qp.qp_type) &&
	       psn_diff(qe->cur_psn, qe->una_psn) > 0;
}

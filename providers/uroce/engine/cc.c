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
 *   ACKs (additive increase), never beyond the QP's largest window:
 *   UROCE_WINDOW_KB (default 1 MiB) of path MTU packets;
 * - a PSN sequence NAK, a lost READ/atomic response or a second early
 *   resend (tail-loss probe: nothing acknowledged for 4 round trips
 *   after a first probe, which alone does not: req.c) halves it
 *   (multiplicative decrease), at most once per window of packets;
 * - a local ACK timeout drops it to CC_MIN.
 *
 * The window stays within [floor, share], where share is the QP's part of
 * a bound for the whole process on this device: the QPs that have packets
 * in flight (eng->armed) share UROCE_INFLIGHT_KB (default 16 MiB), at least
 * CC_MIN packets each.  The floor is CC_FLOOR packets (the fixed window
 * uroce had before) where the share allows it, else half the share.
 * Without the bound, 128 QPs starting at once put 2048 packets into the
 * receivers' queues, whose one progress thread (on a shared 2-CPU machine)
 * then took longer than the ACK timeout to reach the last of them: no
 * packet was lost, yet QPs timed out.  The floor is there because loss on
 * these paths is not always congestion: with windows down to 2, one
 * verbs_verify QP pair at 20 % random loss (the faults suite) went more
 * than 10 s without a completion.
 *
 * Why a window in bytes, and why 1 MiB (docs/performance.md, "Window"):
 * one QP's ib_write_bw 1 MiB is bound by its window over the round trip,
 * which includes a wake-up of the receiver's progress thread.  64 packets
 * gave 11 Gbit/s on lo (4 KiB packets) and 3.7 Gbit/s over a veth (1 KiB),
 * with a CPU idle half the time; 256 KiB-1 MiB in flight gave 16-24 and
 * 8-9 Gbit/s, both CPUs busy.  The budget: ib_write_bw -q 128 (64 KiB)
 * made 17.5 Gbit/s on lo with 4 MiB (8 packets a QP), 19-21 with 16 MiB,
 * against 25 for one QP; 8 x 64 QPs at once under load still passed.
 *
 * UROCE_CC=0 turns both off (every QP keeps its largest window), for
 * comparison.
 *
 * Bursts: a QP with packets in flight sends again only once its window
 * has room for a burst, UROCE_BURST_KB (32 KiB, at most half the window;
 * 0: no such wait), and a window of two bursts or more is a whole number
 * of them.  Why: each ACK opens the window by what it acknowledged, and
 * the pass after it sends that much at once, so a burst keeps its size
 * from one round trip to the next; without the wait nothing would join
 * two small ones again.  With 128 QPs over a veth (1 KiB packets,
 * windows of 128), the bursts fell apart once the first QPs finished:
 * each time the share grew by a packet, every burst after it started in
 * the middle of a message.  Datagrams went from 31 to 14 packets, and the
 * transfer slowed from 14 to 10 Gbit/s halfway through a run.  No ACK is
 * lost to the wait: the last packet of every pass asks for one (the
 * packet that fills the window, or the last of a message), and the QP's
 * timers run as before (docs/performance.md, "Bursts").
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

#include "engine/engine_int.h"
#include "knob/knob.h"

enum {
	CC_UNIT = 256,               /* the window is kept in 1/256 packets */
	CC_INIT = 16,                /* packets: TCP's initial window is 10 */
	CC_MIN = 2,
	CC_FLOOR = 64,               /* packets: no loss takes a full share below it */
};

/* UROCE_INFLIGHT_KB: bytes the process's busy QPs on one device share. */
static uint64_t cc_budget(void)
{
	return uroce_knob_num(UROCE_KNOB_INFLIGHT_KB) << 10;
}

/* The most QE may have unacknowledged, in packets: UROCE_WINDOW_KB of its
 * path MTU, never fewer than CC_FLOOR. */
static uint32_t cc_max(const struct uroce_qp_eng *qe)
{
	uint64_t pkts = (uroce_knob_num(UROCE_KNOB_WINDOW_KB) << 10) / uroce_qp_mtu(qe);

	return pkts < CC_FLOOR ? CC_FLOOR : pkts > UROCE_WINDOW_MAX ? UROCE_WINDOW_MAX : (uint32_t)pkts;
}

static void cc_start(struct uroce_qp_eng *qe)
{
	qe->cwnd = CC_INIT * CC_UNIT;
	qe->ssthresh = cc_max(qe) * CC_UNIT;
	qe->cc_una = qe->una_psn;
	qe->cc_recover_psn = qe->una_psn;
}

/* The burst of QE, in packets: UROCE_BURST_KB (default 32; 0: none) of
 * its path MTU. */
static uint32_t cc_burst(const struct uroce_qp_eng *qe)
{
	return (uint32_t)((uroce_knob_num(UROCE_KNOB_BURST_KB) << 10) / uroce_qp_mtu(qe));
}

uint32_t uroce_cc_window(struct uroce_qp_eng *qe)
{
	int busy = atomic_load_explicit(&qe->eng->armed, memory_order_relaxed);
	uint32_t share, floor, w, burst, max = cc_max(qe);

	if (!uroce_knob_on(UROCE_KNOB_CC))
		return max;
	if (!qe->cwnd)
		cc_start(qe);
	/* This QP counts among the busy ones once it has sent. */
	busy += !qe->armed;
	share = (uint32_t)(cc_budget() / (uint64_t)(busy > 1 ? busy : 1) / uroce_qp_mtu(qe));
	if (share > max)
		share = max;
	/* Loss is taken for congestion only down to the floor: up to
	 * CC_FLOOR packets where the share allows it (a few busy QPs keep the
	 * fixed window of old), else half the share.  verbs_verify's QP pair
	 * went 10 s without a completion at 20 % random loss with a window of
	 * 2, and ran out of retries under 25 % reordering with a window of 32
	 * (the faults suite). */
	floor = share >= CC_FLOOR ? CC_FLOOR : share / 2;
	w = qe->cwnd / CC_UNIT;
	if (w < floor)
		w = floor;
	if (w > share)
		w = share;
	/* In whole bursts: a share that moves by a packet as other QPs start
	 * and finish would cut every burst after it in two. */
	burst = cc_burst(qe);
	if (burst && w >= 2 * burst)
		w -= w % burst;
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
	if (qe->cwnd > cc_max(qe) * CC_UNIT)
		qe->cwnd = cc_max(qe) * CC_UNIT;
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

bool uroce_cc_burst_waits(const struct uroce_qp_eng *qe, uint32_t unacked)
{
	uint32_t burst = cc_burst(qe);

	if (!unacked || unacked >= qe->win)
		return false;
	if (burst > qe->win / 2)
		burst = qe->win / 2;
	return qe->win - unacked < burst;
}

bool uroce_cc_post_waits(const struct uroce_qp *qp)
{
	bool on = uroce_knob_on(UROCE_KNOB_ACK_CLOCK);
	const struct uroce_qp_eng *qe = qp->engine;

	/* The pass that answers the response restarts what waits here:
	 * comp.c calls uroce_req_progress after every response, req.c after
	 * every timer (so a lost response costs a probe, never a WQE). */
	/* Also read without the QP's lock (uroce_engine_post_deferred). */
	return on && qe && uroce_qp_type_rc(qp->vqp.qp.qp_type) &&
	       psn_diff(__atomic_load_n(&qe->cur_psn, __ATOMIC_RELAXED),
			__atomic_load_n(&qe->una_psn, __ATOMIC_RELAXED)) > 0;
}

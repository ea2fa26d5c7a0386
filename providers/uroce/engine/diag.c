// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * What a process that gives up leaves behind: with UROCE_STATS=1, the
 * counters (engine.c) and, here, the state of every QP that still has
 * work: its requester's PSNs, timers and window, its responder's expected
 * PSN, and whether the progress thread still runs.  A test that dies with
 * "no completion" then shows which side stopped and why (a timer not
 * running, a window shut, a lock held) instead of only that it stopped.
 *
 * Runs at exit, while other threads may still hold locks: it only tries
 * them, and says so when one is held.
 */
#include <stdio.h>
#include <unistd.h>

#include "engine/engine_int.h"

/* Milliseconds from NOW to T (negative: past), or "off" for T == 0. */
static void put_time(char *buf, size_t len, uint64_t t, uint64_t now)
{
	if (!t)
		snprintf(buf, len, "off");
	else
		snprintf(buf, len, "%+.1fms", ((double)(int64_t)(t - now)) / 1e6);
}

/* The device's line, before the first QP's. */
static void put_header(struct uroce_engine *eng, uint64_t now, bool *done)
{
	char last[24], tick[24];
	bool rx_free;

	if (*done)
		return;
	*done = true;
	put_time(last, sizeof(last), atomic_load(&eng->loop_ns), now);
	put_time(tick, sizeof(tick), atomic_load(&eng->tick_at_ns) == UINT64_MAX ? 0 :
		 atomic_load(&eng->tick_at_ns), now);
	/* A thread that stopped while draining the transport holds it: then
	 * no application poll can take packets either. */
	rx_free = pthread_mutex_trylock(&eng->rx_lock) == 0;
	if (rx_free)
		pthread_mutex_unlock(&eng->rx_lock);
	fprintf(stderr, "uroce[%d] %s: QPs with work left; progress thread last looped %s, "
		"receive lock %s, %d QPs armed, timers due %s, transmit queue %s\n",
		(int)getpid(), eng->devname, last, rx_free ? "free" : "held",
		atomic_load(&eng->armed), tick,
		uroce_xport_tx_left(eng->xport) ? "not empty" : "empty");
}

static const char *state_name(enum ibv_qp_state st)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return (unsigned int)st < sizeof(names) / sizeof(names[0]) ? names[st] : "?";
}

static void dump_qp(struct uroce_engine *eng, struct uroce_qp *qp, uint64_t now, bool *header)
{
	struct uroce_qp_eng *qe = qp->engine;
	char deadline[24], probe[24], rnr[24];

	if (pthread_mutex_trylock(&qp->lock)) {
		put_header(eng, now, header);
		fprintf(stderr, "uroce[%d]   QP %u: its lock is held\n", (int)getpid(),
			qp->vqp.qp.qp_num);
		return;
	}
	if (qe && (ring_used(&qp->sq) || qe->una_psn != qe->cur_psn || qe->recv_off)) {
		put_header(eng, now, header);
		put_time(deadline, sizeof(deadline), qe->deadline_ns, now);
		put_time(probe, sizeof(probe), qe->probe_ns, now);
		put_time(rnr, sizeof(rnr), qe->rnr_until_ns, now);
		fprintf(stderr, "uroce[%d]   QP %u %s: sq cons %u next %u prod %u, psn una %u "
			"cur %u, timer %s probe %s rnr %s armed %d, win %u, retry_left %u, "
			"rd_atomic %u; responder epsn %u recv_off %llu nak_sent %d\n",
			(int)getpid(), qp->vqp.qp.qp_num, state_name(qp->state), qp->sq.cons, qe->sq_next,
			ring_prod(&qp->sq), qe->una_psn, qe->cur_psn, deadline, probe, rnr, (int)qe->armed,
			qe->win, qe->retry_left, qe->rd_atomic, qe->epsn,
			(unsigned long long)qe->recv_off, (int)qe->nak_sent);
	}
	pthread_mutex_unlock(&qp->lock);
}

void uroce_engine_dump_qps(struct uroce_engine *eng)
{
	uint64_t now = uroce_now_ns();
	bool header = false;

	if (pthread_rwlock_tryrdlock(&eng->qps_lock)) {
		put_header(eng, now, &header);
		fprintf(stderr, "uroce[%d]   the QP table is locked\n", (int)getpid());
		return;
	}
	for (uint32_t i = 0; i < eng->n_qps; i++)
		dump_qp(eng, eng->qp_list[i], now, &header);
	pthread_rwlock_unlock(&eng->qps_lock);
}

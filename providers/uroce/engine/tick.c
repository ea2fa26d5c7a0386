// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The timer tick: one timerfd per engine, set to the earliest timer of
 * any QP (the requester's retransmit, RNR and tail-loss probe timers,
 * req.c), and the scan of the armed QPs when it fires.  A timer that moves
 * later costs nothing until the tick comes.
 */
#include <time.h>
#include <sys/timerfd.h>

#include "engine/engine_int.h"

/*
 * The progress thread runs the timers by AT_NS at the latest: tick_fd is
 * set to the earliest time any thread asked for, and tick_at_ns says which
 * (so that a later time costs one compare).  Invariant: tick_at_ns is never
 * after the earliest timer of an armed QP.  A timer that moves later (a
 * ping-pong's every ACK restarts it) costs nothing: the thread wakes at the
 * old time, finds nothing due and sets the tick for the new earliest one.
 * Until 2026-11-28 the tick came every millisecond while any QP was armed:
 * a thousand wake-ups a second, each preempting a spinning application
 * thread on a busy machine (docs/performance.md).  While an application
 * that polls keeps the time (poll.c, uroce_poll_beat), its polls run the
 * timers, and tick_fd is only its watchdog.
 */
void uroce_engine_tick_set_fd(struct uroce_engine *eng, uint64_t at_ns)
{
	struct itimerspec its = { 0 };

	atomic_store(&eng->fd_at_ns, at_ns);
	if (at_ns == UINT64_MAX)
		return;
	/* An absolute time of 0 would disarm the timer. */
	its.it_value.tv_sec = (time_t)(at_ns / 1000000000u);
	its.it_value.tv_nsec = (long)(at_ns % 1000000000u) + !at_ns;
	if (timerfd_settime(eng->tick_fd, TFD_TIMER_ABSTIME, &its, NULL))
		uroce_engine_wake(eng);
}

void uroce_engine_tick_by(struct uroce_engine *eng, uint64_t at_ns)
{
	if (at_ns >= atomic_load(&eng->tick_at_ns))
		return;
	pthread_mutex_lock(&eng->tick_lock);
	if (at_ns < atomic_load(&eng->tick_at_ns)) {
		atomic_store(&eng->tick_at_ns, at_ns);
		/* A polling application keeps the time: it runs the timers
		 * at its polls, and tick_fd stays at its watchdog's time. */
		if (!atomic_load(&eng->watchdog))
			uroce_engine_tick_set_fd(eng, at_ns);
	}
	pthread_mutex_unlock(&eng->tick_lock);
}

/* A look by the progress thread within UROCE_TICK_NS (an application's held
 * ACKs, resp_ack.c).  Not a wake-up at once: an eventfd cost a context switch
 * per message in a ping-pong. */
void uroce_engine_start_tick(struct uroce_engine *eng)
{
	uroce_engine_tick_by(eng, uroce_now_ns() + UROCE_TICK_NS);
}

/* The earliest of QE's timers, UINT64_MAX: none. */
static uint64_t timers_due_ns(const struct uroce_qp_eng *qe)
{
	uint64_t due = UINT64_MAX;
	const uint64_t t[] = { qe->deadline_ns, qe->rnr_until_ns, qe->probe_ns };

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i] && t[i] < due)
			due = t[i];
	return due;
}

/* QE's timers run (ON) or not; called with its QP's lock held. */
void uroce_engine_arm(struct uroce_qp_eng *qe, bool on)
{
	if (qe->armed != on) {
		qe->armed = on;
		atomic_fetch_add(&qe->eng->armed, on ? 1 : -1);
	}
	if (!on)
		return;
	/* Armed, then the tick read: run_timers clears the tick, then reads
	 * the QPs' armed flags, so either it finds this QP or this call
	 * finds the tick cleared and sets it. */
	atomic_thread_fence(memory_order_seq_cst);
	uroce_engine_tick_by(qe->eng, timers_due_ns(qe));
}

/* The timers that are due, if the tick says some may be; then the tick is
 * set for the next.  It is cleared first: a timer started while the QPs
 * are looked at sets it again (uroce_engine_arm), so none is missed.
 *
 * What the wire holds is read first (as BY): an ACK waiting in a socket
 * has arrived, as a NIC takes it on receipt, and counts before a timeout
 * does.  A thread kept off the CPU for a timeout's length on a loaded
 * machine otherwise finds its QPs' timers run out while their peers'
 * ACKs wait unread, and spends a retry on each. */
void uroce_engine_run_timers(struct uroce_engine *eng, enum uroce_burst_by by)
{
	uint64_t now = uroce_now_ns(), next = UINT64_MAX;

	if (now < atomic_load(&eng->tick_at_ns))
		return;
	if (pthread_mutex_trylock(&eng->rx_lock) == 0) {
		uroce_engine_rx_bursts(eng, by);
		pthread_mutex_unlock(&eng->rx_lock);
	}
	pthread_mutex_lock(&eng->tick_lock);
	atomic_store(&eng->tick_at_ns, UINT64_MAX);
	pthread_mutex_unlock(&eng->tick_lock);
	atomic_thread_fence(memory_order_seq_cst);
	pthread_rwlock_rdlock(&eng->qps_lock);
	for (uint32_t i = 0; i < eng->n_qps; i++) {
		struct uroce_qp *qp = eng->qp_list[i];
		struct uroce_qp_eng *qe = qp->engine;
		uint64_t due;

		if (!qe->armed)
			continue;
		pthread_mutex_lock(&qp->lock);
		uroce_req_timer(qp, now);
		due = qe->armed ? timers_due_ns(qe) : UINT64_MAX;
		pthread_mutex_unlock(&qp->lock);
		/* A time already past that the timer did not act on (a probe
		 * with nothing left to probe) is looked at again on the tick,
		 * not at once, again and again. */
		if (due <= now)
			due = now + UROCE_TICK_NS;
		next = due < next ? due : next;
	}
	pthread_rwlock_unlock(&eng->qps_lock);
	if (next != UINT64_MAX)
		uroce_engine_tick_by(eng, next);
}

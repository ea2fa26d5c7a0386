// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The CM's one timer thread per process: resends the last MAD of a
 * connection that waits for an answer (IBTA 12.4.1: up to Max CM Retries
 * times, each after the peer's response timeout), gives up with the
 * kernel's event (REQ/REP: UNREACHABLE -ETIMEDOUT; DREQ: DISCONNECTED),
 * and ends timewait with TIMEWAIT_EXIT.  It sleeps until the earliest
 * deadline; arming a sooner one wakes it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "cm/ucma.h"
#include "cm/conn_int.h"

static pthread_cond_t timer_cond;
static pthread_once_t started = PTHREAD_ONCE_INIT;
static int start_err;
static uint64_t next_deadline;   /* what the thread sleeps toward; 0 = nothing */

uint64_t uroce_cm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void conn_timer_arm(struct ucma_ctx *ctx, uint64_t deadline_ns)
{
	ctx->conn.deadline_ns = deadline_ns;
	if (!next_deadline || deadline_ns < next_deadline) {
		next_deadline = deadline_ns;
		pthread_cond_signal(&timer_cond);
	}
}

/* The answer never came: what the kernel's CM reports for each state. */
static void give_up(struct ucma_ctx *ctx)
{
	struct cm_conn *c = &ctx->conn;

	cm_stop_timer(ctx);
	switch (c->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
	case CM_REP_SENT:
	case CM_SIDR_REQ_SENT:
		/* cma_ib_handler: IB_CM_REQ_ERROR / IB_CM_REP_ERROR */
		cm_set_state(ctx, CM_IDLE);
		ucma_event_queue(ctx, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
		break;
	case CM_DREQ_SENT:
		/* IB_CM_DREQ_ERROR: disconnected all the same */
		ucma_event_queue(ctx, RDMA_CM_EVENT_DISCONNECTED, 0);
		cm_enter_timewait(ctx);
		break;
	default:
		cm_set_state(ctx, CM_IDLE);
		break;
	}
}

static void expire(struct ucma_ctx *ctx, void *arg)
{
	struct cm_conn *c = &ctx->conn;
	uint64_t now = *(uint64_t *)arg;

	if (!c->deadline_ns || c->deadline_ns > now)
		return;
	c->deadline_ns = 0;
	if (c->state == CM_TIMEWAIT) {
		cm_set_state(ctx, CM_IDLE);
		ucma_event_queue(ctx, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
		return;
	}
	if (!c->last_valid)
		return;
	if (c->retries_left-- > 0) {
		if (uroce_debug_cm > 1)
			fprintf(stderr, "uroce cm: id %u resends %s (%d left)\n", ctx->id,
				cm_attr_name(c->last.attr_id), c->retries_left);
		if (c->gsi)
			uroce_gsi_send(c->gsi, &c->last, c->lgid, c->rgid);
		c->deadline_ns = now + c->timeout_ns;
		return;
	}
	give_up(ctx);
}

static void earliest(struct ucma_ctx *ctx, void *arg)
{
	uint64_t *min = arg;

	if (ctx->conn.deadline_ns && (!*min || ctx->conn.deadline_ns < *min))
		*min = ctx->conn.deadline_ns;
}

static void *timer_thread(void *arg)
{
	pthread_mutex_lock(&ucma_lock);
	for (;;) {
		uint64_t now = uroce_cm_now_ns(), min = 0;

		ucma_for_each_ctx(expire, &now);
		ucma_for_each_ctx(earliest, &min);
		next_deadline = min;
		if (min) {
			struct timespec ts = { .tv_sec = min / 1000000000ull,
					       .tv_nsec = min % 1000000000ull };

			pthread_cond_timedwait(&timer_cond, &ucma_lock, &ts);
		} else {
			pthread_cond_wait(&timer_cond, &ucma_lock);
		}
		/* Drop GSI references outside the lock. */
		pthread_mutex_unlock(&ucma_lock);
		conn_flush_puts();
		pthread_mutex_lock(&ucma_lock);
	}
	return NULL;
}

static void start_once(void)
{
	pthread_condattr_t a;
	pthread_t t;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&timer_cond, &a);
	pthread_condattr_destroy(&a);
	start_err = pthread_create(&t, NULL, timer_thread, NULL);
	if (!start_err)
		pthread_detach(t);
}

/* The parent's timer thread did not come along: the child's first file
 * starts its own (its cond is made anew by start_once). */
void conn_timer_fork_child(void)
{
	static const pthread_once_t again = PTHREAD_ONCE_INIT;

	started = again;
	start_err = 0;
	next_deadline = 0;
}

int conn_start(void)
{
	pthread_once(&started, start_once);
	if (start_err) {
		errno = start_err;
		return -1;
	}
	return 0;
}

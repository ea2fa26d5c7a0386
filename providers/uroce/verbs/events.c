// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Completion channel notification and asynchronous events. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <rdma/ib_user_verbs.h>

#include "engine/engine.h"
#include "verbs/verbs.h"

int uroce_cq_channel_attach(struct uroce_cq *cq, struct ibv_comp_channel *ch)
{
	char path[64];
	struct stat st;

	/* Ours (liburoce-preload.so) is a pipe; anything else did not come
	 * from `uroce run` and cannot carry our events. */
	if (fstat(ch->fd, &st) || !S_ISFIFO(st.st_mode)) {
		fprintf(stderr, "uroce: this completion channel was not made by uroce: "
			"run the program under `uroce run`\n");
		return EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", ch->fd);
	cq->chan_fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
	return cq->chan_fd < 0 ? errno : 0;
}

void uroce_cq_channel_detach(struct uroce_cq *cq)
{
	if (cq->chan_fd >= 0)
		close(cq->chan_fd);
	cq->chan_fd = -1;
}

static void channel_write(struct uroce_cq *cq)
{
	struct ib_uverbs_comp_event_desc ev = { .cq_handle = (uintptr_t)&cq->vcq.cq };

	if (write(cq->chan_fd, &ev, sizeof(ev)) != sizeof(ev))
		fprintf(stderr, "uroce: completion event lost (channel full)\n");
	else
		uroce_evobj_reported(&cq->ev); /* ibv_ack_cq_events() counts it into the CQ */
}

/*
 * The events of the receive burst this thread dispatches (the engine's
 * rx_lock held).  They are written once the burst's ACKs have left, as a
 * NIC acknowledges on receipt: an application woken mid-burst posted its
 * answer before the ACK was on the wire, and had to say the ACK again
 * (resp_ack.c), one more packet and one more wake-up of the peer's
 * progress thread for 3 messages in 4 of ib_send_lat -e
 * (docs/performance.md, "Event path").  Its CQs outlive the burst: a
 * CQ's QPs cannot be destroyed before the rx_lock is free.
 */
enum { HELD_EVENTS_MAX = 32 };
static __thread struct {
	bool on;
	unsigned int n;
	struct uroce_cq *cq[HELD_EVENTS_MAX];
} held;

void uroce_cq_events_hold(bool on)
{
	held.on = on;
	if (on)
		return;
	for (unsigned int i = 0; i < held.n; i++)
		channel_write(held.cq[i]);
	held.n = 0;
}

void uroce_cq_notify(struct uroce_cq *cq, bool solicited, bool error)
{
	/* IBTA 11.4.2.2: NEXT fires on any completion; SOLICITED on a
	 * solicited one or an error.  One event per arming. */
	if (cq->arm == UROCE_CQ_DISARMED || cq->chan_fd < 0)
		return;
	if (cq->arm == UROCE_CQ_ARM_SOLICITED && !solicited && !error)
		return;
	cq->arm = UROCE_CQ_DISARMED;
	if (held.on && held.n < HELD_EVENTS_MAX)
		held.cq[held.n++] = cq;
	else
		channel_write(cq);
}

int uroce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct uroce_cq *cq = to_ucq(ibcq);

	if (uroce_parents(cq->fork_gen))
		return EPERM;
	if (cq->chan_fd < 0)
		return EINVAL; /* no channel: nothing to notify (as the kernel says) */
	/* The thread is going to sleep: the ACKs its polls held leave now. */
	if (to_uctx(ibcq->context)->engine)
		uroce_engine_poll_done(to_uctx(ibcq->context)->engine);
	pthread_spin_lock(&cq->lock);
	/* A SOLICITED request never narrows an outstanding NEXT one. */
	if (!solicited_only)
		cq->arm = UROCE_CQ_ARM_NEXT;
	else if (cq->arm == UROCE_CQ_DISARMED)
		cq->arm = UROCE_CQ_ARM_SOLICITED;
	pthread_spin_unlock(&cq->lock);
	return 0;
}

void uroce_cq_event(struct ibv_cq *cq)
{
	/* ibv_get_cq_event read the handle; ibv_ack_cq_events counts it. */
}

void uroce_async_event(struct uroce_context *ctx, enum ibv_event_type type, uint64_t element)
{
	struct ib_uverbs_async_event_desc ev = { .element = element, .event_type = type };

	if (write(ctx->async_wr_fd, &ev, sizeof(ev)) != sizeof(ev))
		fprintf(stderr, "uroce: asynchronous event %s lost (queue full)\n",
			ibv_event_type_str(type));
}

void uroce_async_event_done(struct ibv_context *context, struct ibv_async_event *event)
{
}

/* ---- objects that events name ----------------------------------------------- */

void uroce_evobj_init(struct uroce_evobj *o, void *mem, pthread_mutex_t *mutex,
		      const uint32_t *acked0, const uint32_t *acked1)
{
	atomic_init(&o->reported, 0);
	o->mutex = mutex;
	o->acked[0] = acked0;
	o->acked[1] = acked1;
	o->mem = mem;
	o->next = NULL;
}

void uroce_evobj_async_event(struct uroce_context *ctx, struct uroce_evobj *o,
			     enum ibv_event_type type, void *element)
{
	/* Counted first: the application may read and acknowledge it at once. */
	uroce_evobj_reported(o);
	uroce_async_event(ctx, type, (uintptr_t)element);
}

static bool evobj_acked(struct uroce_evobj *o)
{
	uint32_t acked = 0;

	pthread_mutex_lock(o->mutex);
	for (int i = 0; i < 2; i++)
		if (o->acked[i])
			acked += *o->acked[i];
	pthread_mutex_unlock(o->mutex);
	return acked == atomic_load(&o->reported);
}

void uroce_evobj_release(struct uroce_context *ctx, struct uroce_evobj *o)
{
	if (evobj_acked(o)) {
		free(o->mem);
		return;
	}
	pthread_mutex_lock(&ctx->lock);
	o->next = ctx->zombies;
	ctx->zombies = o;
	pthread_mutex_unlock(&ctx->lock);
}

void uroce_evobj_zombies_free(struct uroce_context *ctx)
{
	while (ctx->zombies) {
		struct uroce_evobj *o = ctx->zombies;

		ctx->zombies = o->next;
		free(o->mem);
	}
}

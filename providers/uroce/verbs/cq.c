// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Completion queues: a ring of work completions per CQ. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "trace/trace.h"
#include "verbs/verbs.h"

/* A ring of SIZE entries: from the parent domain's allocator, if any. */
static struct uroce_cqe *ring_alloc(struct uroce_cq *cq, uint32_t size, bool *custom)
{
	return uroce_buf_alloc(cq->parent, (size_t)size * sizeof(struct uroce_cqe),
			       UROCE_RES_TYPE_CQ, custom);
}

static void ring_free(struct uroce_cq *cq, struct uroce_cqe *ring, bool custom)
{
	uroce_buf_free(cq->parent, ring, UROCE_RES_TYPE_CQ, custom);
}

struct uroce_cq *uroce_cq_alloc(struct ibv_context *context, int cqe,
				struct ibv_comp_channel *channel, int comp_vector,
				struct ibv_pd *parent)
{
	struct uroce_cq *cq;
	uint32_t size = 1;

	if (cqe < 1 || cqe > UROCE_MAX_CQE || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	/* One slot stays free to tell full from empty. */
	while (size < (uint32_t)cqe + 1)
		size <<= 1;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		goto nomem;
	cq->parent = parent;
	cq->fork_gen = uroce_fork_gen;
	cq->ring = ring_alloc(cq, size, &cq->custom_ring);
	if (!cq->ring)
		goto nomem;
	cq->size = size;
	cq->chan_fd = -1;
	if (channel) {
		int err = uroce_cq_channel_attach(cq, channel);

		if (err) {
			ring_free(cq, cq->ring, cq->custom_ring);
			free(cq);
			errno = err;
			return NULL;
		}
	}
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	/* libibverbs (verbs_init_cq) sets up the mutex and the counters. */
	uroce_evobj_init(&cq->ev, cq, &cq->vcq.cq.mutex, &cq->vcq.cq.comp_events_completed,
			 &cq->vcq.cq.async_events_completed);
	cq->vcq.cq.cqe = size - 1; /* the actual capacity, >= the request */
	cq->res_id = uroce_track(to_uctx(context), UROCE_RES_CQ, cq, &cq->res_slot);
	return cq;
nomem:
	free(cq);
	errno = ENOMEM;
	return NULL;
}

struct ibv_cq *uroce_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel, int comp_vector)
{
	struct uroce_cq *cq = uroce_cq_alloc(context, cqe, channel, comp_vector, NULL);

	return cq ? &cq->vcq.cq : NULL;
}

int uroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct uroce_cq *cq = to_ucq(ibcq);

	if (uroce_parents(cq->fork_gen))
		return EPERM;
	if (atomic_load(&cq->users) > 0)
		return EBUSY; /* still the CQ of a QP */
	uroce_cq_channel_detach(cq);
	uroce_untrack(to_uctx(ibcq->context), UROCE_RES_CQ, &cq->res_slot);
	pthread_spin_destroy(&cq->lock);
	ring_free(cq, cq->ring, cq->custom_ring);
	uroce_evobj_release(to_uctx(ibcq->context), &cq->ev);
	return 0;
}

static bool cq_empty(struct uroce_cq *cq)
{
	return __atomic_load_n(&cq->tail, __ATOMIC_ACQUIRE) ==
	       __atomic_load_n(&cq->head, __ATOMIC_RELAXED);
}

/* Nothing queued: serve the wire from this thread (busy polling).  An
 * empty CQ is seen without its lock: a busy poller that took the lock on
 * every empty poll starved the producers (found on 2 vCPUs).  True when
 * there is something to take (an entry, or the overrun error). */
static bool cq_ready(struct uroce_cq *cq)
{
	if (cq_empty(cq)) {
		struct uroce_context *ctx = to_uctx(cq->vcq.cq.context);

		if (ctx->engine)
			uroce_engine_poll(ctx->engine);
		if (cq_empty(cq) && !__atomic_load_n(&cq->overrun, __ATOMIC_ACQUIRE))
			return false;
	}
	return true;
}

int uroce_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct uroce_cq *cq = to_ucq(ibcq);
	int n = 0;

	if (num_entries < 0)
		return -EINVAL;
	if (uroce_parents(cq->fork_gen))
		return -EPERM;  /* a forked child's copy of its parent's */
	if (!cq_ready(cq))
		return 0;
	pthread_spin_lock(&cq->lock);
	while (n < num_entries && cq->head != cq->tail) {
		wc[n++] = cq->ring[cq->head].wc;
		cq->head = (cq->head + 1) & (cq->size - 1);
	}
	/* An overrun CQ reports the error once its entries are taken. */
	if (!n && cq->overrun)
		n = -EIO;
	pthread_spin_unlock(&cq->lock);
	return n;
}

int uroce_cq_take(struct uroce_cq *cq, struct uroce_cqe *e)
{
	int ret = 0;

	if (uroce_parents(cq->fork_gen))
		return -EPERM;
	if (!cq_ready(cq))
		return -ENOENT;
	pthread_spin_lock(&cq->lock);
	if (cq->head != cq->tail) {
		*e = cq->ring[cq->head];
		cq->head = (cq->head + 1) & (cq->size - 1);
	} else {
		ret = cq->overrun ? -EIO : -ENOENT;
	}
	pthread_spin_unlock(&cq->lock);
	return ret;
}

int uroce_cq_push_ex(struct uroce_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	uint32_t next;
	int ret = 0;

	UROCE_TRACE(uroce_trace_cqe(wc));
	pthread_spin_lock(&cq->lock);
	next = (cq->tail + 1) & (cq->size - 1);
	if (next == cq->head || cq->overrun) {
		/* Overrun (IBTA 11.4.2.1): the CQ goes to error, nothing is
		 * overwritten; the owner hears of it as IBV_EVENT_CQ_ERR. */
		ret = -ENOSPC;
		if (!cq->overrun) {
			cq->overrun = 1;
			pthread_spin_unlock(&cq->lock);
			uroce_evobj_async_event(to_uctx(cq->vcq.cq.context), &cq->ev,
						IBV_EVENT_CQ_ERR, &cq->vcq.cq);
			return ret;
		}
	} else {
		struct uroce_cqe *e = &cq->ring[cq->tail];

		e->wc = *wc;
		if (cq->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
			e->ts = uroce_clock_ns(CLOCK_MONOTONIC_RAW);
		if (cq->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
			e->wallclock = uroce_clock_ns(CLOCK_REALTIME);
		__atomic_store_n(&cq->tail, next, __ATOMIC_RELEASE); /* entry first, then tail */
		uroce_cq_notify(cq, solicited, wc->status != IBV_WC_SUCCESS);
	}
	pthread_spin_unlock(&cq->lock);
	return ret;
}

void uroce_cq_clean(struct uroce_cq *cq, uint32_t qpn)
{
	uint32_t keep, mask;

	if (!cq)
		return;
	pthread_spin_lock(&cq->lock);
	mask = cq->size - 1;
	keep = cq->head;
	for (uint32_t i = cq->head; i != cq->tail; i = (i + 1) & mask)
		if (cq->ring[i].wc.qp_num != qpn) {
			cq->ring[keep] = cq->ring[i];
			keep = (keep + 1) & mask;
		}
	__atomic_store_n(&cq->tail, keep, __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
}

int uroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct uroce_cq *cq = to_ucq(ibcq);
	struct uroce_cqe *ring, *old;
	uint32_t size = 1, used;
	bool custom, old_custom;

	if (cqe < 1 || cqe > UROCE_MAX_CQE)
		return EINVAL;
	while (size < (uint32_t)cqe + 1)
		size <<= 1;
	ring = ring_alloc(cq, size, &custom);
	if (!ring)
		return ENOMEM;
	pthread_spin_lock(&cq->lock);
	used = (cq->tail - cq->head) & (cq->size - 1);
	if (used > size - 1) {
		/* The completions already queued must fit (ibv_resize_cq(3)). */
		pthread_spin_unlock(&cq->lock);
		ring_free(cq, ring, custom);
		return EINVAL;
	}
	for (uint32_t i = 0; i < used; i++)
		ring[i] = cq->ring[(cq->head + i) & (cq->size - 1)];
	old = cq->ring;
	old_custom = cq->custom_ring;
	cq->ring = ring;
	cq->custom_ring = custom;
	cq->size = size;
	cq->head = 0;
	cq->tail = used;
	cq->vcq.cq.cqe = size - 1;
	pthread_spin_unlock(&cq->lock);
	ring_free(cq, old, old_custom);
	return 0;
}

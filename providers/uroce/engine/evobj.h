/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What the objects that events name carry: a CQ's arming for completion
 * notification through its channel (IBTA 11.4.2.2), and the count of
 * asynchronous events (IBTA 11.6.3) written about a QP, SRQ or CQ, which
 * keeps a destroyed object's memory until they are acknowledged.  The
 * events themselves are written by verbs/events.c and verbs/cq.c.
 */
#ifndef UROCE_ENGINE_EVOBJ_H
#define UROCE_ENGINE_EVOBJ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

struct uroce_context;
struct uroce_cq;

enum uroce_cq_arm {
	UROCE_CQ_DISARMED,
	UROCE_CQ_ARM_NEXT,       /* the next completion of any kind */
	UROCE_CQ_ARM_SOLICITED,  /* the next solicited or error completion */
};

/*
 * A verbs object that events name: a QP, SRQ or CQ.  An event written to
 * async_fd (or, for a CQ, to its completion channel) carries the object's
 * address; the application may read it after the object is destroyed, and
 * ibv_ack_async_event() / ibv_ack_cq_events() then lock the object's mutex
 * and count into it.  With the kernel, destroy waits until the events read
 * are acknowledged and drops those not yet read (ibv_get_async_event(3));
 * a pipe cannot take back what it holds, so here an object destroyed with
 * events not yet acknowledged keeps its memory (nothing else) on the
 * context's list until the context is freed.
 */
struct uroce_evobj {
	atomic_uint reported;         /* events written that name the object */
	pthread_mutex_t *mutex;       /* the ibv object's: acknowledgements count under it */
	const uint32_t *acked[2];     /* its counters of acknowledged events (or NULL) */
	void *mem;                    /* the allocation holding it */
	struct uroce_evobj *next;     /* on the context's list once destroyed */
};

/* An event about O went out another way (a completion channel). */
static inline void uroce_evobj_reported(struct uroce_evobj *o)
{
	atomic_fetch_add(&o->reported, 1);
}

#endif

/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Events: completion notification through completion channels (IBTA
 * 11.4.2.2) and asynchronous events through the context's async_fd
 * (IBTA 11.6.3), in the record formats libibverbs reads.
 */
#ifndef UROCE_EVENTS_H
#define UROCE_EVENTS_H

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

/* Attach a completion channel made by liburoce-preload.so; 0 or errno. */
int uroce_cq_channel_attach(struct uroce_cq *cq, struct ibv_comp_channel *ch);
void uroce_cq_channel_detach(struct uroce_cq *cq);
/* A completion went into CQ (cq->lock held): fire the channel if armed for it. */
void uroce_cq_notify(struct uroce_cq *cq, bool solicited, bool error);

int uroce_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void uroce_cq_event(struct ibv_cq *cq);

/* Queue an asynchronous event; ELEMENT is the QP/CQ/SRQ pointer or port. */
void uroce_async_event(struct uroce_context *ctx, enum ibv_event_type type, uint64_t element);

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

/* O belongs to MEM; libibverbs counts acknowledgements into ACKED0 (and
 * ACKED1, or NULL) under MUTEX. */
void uroce_evobj_init(struct uroce_evobj *o, void *mem, pthread_mutex_t *mutex,
		      const uint32_t *acked0, const uint32_t *acked1);
/* An event about O went out another way (a completion channel). */
static inline void uroce_evobj_reported(struct uroce_evobj *o)
{
	atomic_fetch_add(&o->reported, 1);
}
/* O's object is destroyed: free its memory now if every event about it
 * has been acknowledged, else with CTX (uroce_evobj_zombies_free). */
void uroce_evobj_release(struct uroce_context *ctx, struct uroce_evobj *o);
void uroce_evobj_zombies_free(struct uroce_context *ctx);
void uroce_async_event_done(struct ibv_context *context, struct ibv_async_event *event);

/* The per-context watcher of the netdev (port state, addresses) and of
 * the device's registry record (deleted: DEVICE_FATAL). */
int uroce_monitor_start(struct uroce_context *ctx);
void uroce_monitor_stop(struct uroce_context *ctx);

#endif

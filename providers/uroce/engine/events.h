/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Events: completion notification through completion channels (IBTA
 * 11.4.2.2) and asynchronous events through the context's async_fd
 * (IBTA 11.6.3), in the record formats libibverbs reads.
 */
#ifndef UROCE_EVENTS_H
#define UROCE_EVENTS_H

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
void uroce_async_event_done(struct ibv_context *context, struct ibv_async_event *event);

/* The per-context watcher of the netdev (port state, addresses) and of
 * the device's registry record (deleted: DEVICE_FATAL). */
int uroce_monitor_start(struct uroce_context *ctx);
void uroce_monitor_stop(struct uroce_context *ctx);

#endif

/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What the verbs files give the engine (its table of upcalls,
 * engine/upcalls.h, filled in provider.c) and use among themselves.
 */
#ifndef UROCE_VERBS_H
#define UROCE_VERBS_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "upcalls.h"

struct uroce_context;
struct uroce_cq;
struct uroce_evobj;
struct uroce_qp;
struct uroce_send_wqe;

/* cq.c: append a completion; -ENOSPC on overrun (the CQ goes to error).
 * SOLICITED: a receive completion of a message with the SE bit. */
int uroce_cq_push_ex(struct uroce_cq *cq, const struct ibv_wc *wc, bool solicited);
/* events.c: queue asynchronous event TYPE about O, whose ibv object is at
 * ELEMENT. */
void uroce_evobj_async_event(struct uroce_context *ctx, struct uroce_evobj *o,
			     enum ibv_event_type type, void *element);
/* qp.c: an asynchronous event about QP (IBTA 11.6.3), counted so that the
 * QP outlives it until the application acknowledges it. */
void uroce_qp_async_event(struct uroce_qp *qp, enum ibv_event_type type);
/* mw.c: binds and invalidations, executed in send-queue order by the
 * requester; a SEND with Invalidate's, by the responder (0 or -EINVAL). */
enum ibv_wc_status uroce_mw_local_op(struct uroce_qp *qp, struct uroce_send_wqe *w);
int uroce_mw_remote_invalidate(struct uroce_qp *qp, uint32_t rkey);
/* xrc.c: XRC receive QP: make the XRC SRQ named SRQN the target of the
 * request being handled (qp->srq, rcq, pd); the SRQ must be of the QP's
 * XRC domain.  Called with qp->lock held; the SRQ stays valid until
 * uroce_xrc_release.  False if no such SRQ is the QP's to use. */
bool uroce_xrc_resolve(struct uroce_qp *qp, uint32_t srqn);
void uroce_xrc_release(struct uroce_qp *qp);

/* provider.c: the engine's upcalls, these functions and the CM's. */
extern const struct uroce_upcalls uroce_verbs_upcalls;

#endif

/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What the engine asks of the layers above it (verbs, cm), through one
 * table of functions: the engine names none of their functions, so every
 * call arrow in the source points down (verbs -> cm -> engine -> transport
 * -> wire).  verbs/provider.c hands the table over once, when the provider
 * loads (uroce_engine_set_upcalls), before any device can open.
 */
#ifndef UROCE_UPCALLS_H
#define UROCE_UPCALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

struct roce_pkt;
struct uroce_context;
struct uroce_cq;
struct uroce_engine;
struct uroce_evobj;
struct uroce_qp;
struct uroce_rx;
struct uroce_send_wqe;

struct uroce_upcalls {
	/* verbs/cq.c: append a completion (SOLICITED: a receive of a message
	 * with the SE bit, for completion channels armed for those);
	 * -ENOSPC on overrun (the CQ goes to error, IBTA 11.4.2.1). */
	int (*cq_push)(struct uroce_cq *cq, const struct ibv_wc *wc, bool solicited);
	/* verbs/events.c: ON, the completion-channel events of this thread's
	 * receive burst wait; OFF, they are written (the burst's ACKs have
	 * left: recv.c). */
	void (*cq_events_hold)(bool on);
	/* verbs/qp.c, verbs/events.c: an asynchronous event (IBTA 11.6.3)
	 * about a QP, or about another object O (an SRQ) at ELEMENT. */
	void (*qp_event)(struct uroce_qp *qp, enum ibv_event_type type);
	void (*obj_event)(struct uroce_context *ctx, struct uroce_evobj *o,
			  enum ibv_event_type type, void *element);
	/* verbs/mw.c: a bind or local invalidate, executed in send-queue order
	 * by the requester; a SEND with Invalidate's, by the responder (0 or
	 * -EINVAL). */
	enum ibv_wc_status (*mw_local_op)(struct uroce_qp *qp, struct uroce_send_wqe *w);
	int (*mw_remote_invalidate)(struct uroce_qp *qp, uint32_t rkey);
	/* verbs/xrc.c: make the XRC SRQ numbered SRQN the target of the
	 * request being handled (qp->lock held); false if it is not the QP's
	 * to use.  Release undoes it. */
	bool (*xrc_resolve)(struct uroce_qp *qp, uint32_t srqn);
	void (*xrc_release)(struct uroce_qp *qp);
	/* cm/gsi.c: QP 1, the CM's MADs.  Attach when a device's engine
	 * opens, detach when it closes; RX: a packet to QP 1 that passed the
	 * wire checks; LOCAL_PORT: the forwarding port of the process of this
	 * device that MAD (LEN bytes, to address DGID) is for, ours if no
	 * other process owns it. */
	int (*gsi_attach)(struct uroce_engine *eng);
	void (*gsi_detach)(struct uroce_engine *eng);
	void (*gsi_rx)(struct uroce_engine *eng, const struct uroce_rx *rx,
		       const struct roce_pkt *pkt);
	uint16_t (*gsi_local_port)(struct uroce_engine *eng, const void *mad, size_t len,
				   const uint8_t dgid[16]);
};

/* The table (never NULL once the provider is loaded). */
extern const struct uroce_upcalls *uroce_up;
void uroce_engine_set_upcalls(const struct uroce_upcalls *up);

#endif

/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Inside the connection state machine: what conn.c, conn_path.c,
 * conn_rx.c, conn_sidr.c and conn_timer.c share.  All with ucma_lock
 * held. */
#ifndef UROCE_CM_CONN_INT_H
#define UROCE_CM_CONN_INT_H

#include "cm/conn.h"
#include "cm/gsi.h"

struct ucma_ctx;

uint64_t uroce_cm_now_ns(void);
uint64_t cm_timeout_ms(uint8_t t);
void cm_set_state(struct ucma_ctx *ctx, enum cm_state s);
int cm_send(struct ucma_ctx *ctx, const struct cm_msg *m, bool retransmit, uint64_t timeout_ms);
int cm_send_rej(struct ucma_ctx *ctx, uint16_t reason, const uint8_t *pd, uint8_t len);
void cm_stop_timer(struct ucma_ctx *ctx);
void cm_enter_timewait(struct ucma_ctx *ctx);
/* REP_SENT -> ESTABLISHED (an RTU or the first data packet). */
void cm_established(struct ucma_ctx *ctx);

/* The active side's GSI, comm ID, TID and service ID (conn.c). */
int conn_begin_active(struct ucma_ctx *ctx);
/* The 36-byte CMA header of CTX's addresses into BUF. */
void cma_hdr(struct ucma_ctx *ctx, uint8_t *buf);
/* The GSI of CTX's device, taken once. */
int conn_gsi(struct ucma_ctx *ctx);

/* conn_timer.c */
void conn_timer_arm(struct ucma_ctx *ctx, uint64_t deadline_ns);
/* conn_rx.c: the GSI's callback */
void conn_rx(void *arg, struct uroce_gsi *gsi, const struct uroce_gsi_peer *from,
	     const struct cm_msg *m);
/* conn_sidr.c */
int connect_sidr(struct ucma_ctx *ctx, const struct rdma_ucm_conn_param *p);
int conn_accept_sidr(struct ucma_ctx *ctx, const struct rdma_ucm_conn_param *p);
int conn_sidr_reply(struct ucma_ctx *ctx, uint8_t status, uint32_t qkey, const uint8_t *pd,
		    uint8_t len);

#endif

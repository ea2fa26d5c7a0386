/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The IB connection manager's connection state machine (IBTA vol. 1 ch.
 * 12.9 and the Linux kernel's cm.c), one per UCMA id, on top of the GSI
 * (gsi.h, CM MADs on QP1) and below the UCMA layer (ucma.h).  It turns
 * commands into MADs and MADs into rdma_cm events, in the kernel's order
 * and with its statuses, and runs retransmissions and timewait from one
 * timer thread per process.
 */
#ifndef UROCE_CM_CONN_H
#define UROCE_CM_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <rdma/rdma_user_cm.h>
#include <rdma/ib_user_verbs.h>

#include <uroce/ib_cm.h>
#include "wire/wire.h"

#define CONN_REJ_CONSUMER_DEFINED CM_REJ_CONSUMER_DEFINED
#define CONN_REJ_VENDOR_OPTION_NOT_SUPPORTED CM_REJ_VENDOR_OPTION_NOT_SUPPORTED

#define CM_STATE_LIST(X)         \
	X(IDLE)                  \
	X(LISTEN)                \
	X(REQ_SENT)              \
	X(REQ_RCVD)              \
	X(MRA_REQ_RCVD)          \
	X(REP_SENT)              \
	X(REP_RCVD)              \
	X(ESTABLISHED)           \
	X(DREQ_SENT)             \
	X(DREQ_RCVD)             \
	X(TIMEWAIT)              \
	X(SIDR_REQ_SENT)         \
	X(SIDR_REQ_RCVD)

enum cm_state {
#define CM_STATE_ENUM(n) CM_##n,
	CM_STATE_LIST(CM_STATE_ENUM)
#undef CM_STATE_ENUM
	CM_STATE_COUNT
};

const char *cm_state_name(enum cm_state s);

struct ucma_ctx;
struct uroce_gsi;

struct cm_conn {
	enum cm_state state;
	struct uroce_gsi *gsi;       /* the device's QP1 this connection uses */
	struct uroce_gsi *listen_gsi[8]; /* listener: every device it hears on */
	int n_listen_gsi;
	uint32_t local_id, remote_id;    /* communication IDs */
	uint64_t tid;
	uint64_t service_id;
	uint32_t local_qpn, remote_qpn;
	uint32_t rq_psn, sq_psn;
	uint8_t resp_res, init_depth;    /* for the local QP's RTR/RTS */
	uint8_t retry_cnt, rnr_retry;
	uint8_t path_mtu;                /* enum ibv_mtu */
	uint8_t ack_timeout;             /* the QP's local ACK timeout (RTS) */
	uint8_t peer_cm_timeout;         /* peer's local CM response timeout (exponent) */
	uint8_t plt;                     /* packet lifetime (exponent) */
	uint8_t max_cm_retries;
	uint64_t req_timeout_ms;
	bool srq;
	uint32_t flow_label;
	uint8_t tclass, hop_limit;
	uint8_t lgid[16], rgid[16];
	uint64_t remote_guid;
	uint32_t qkey;                   /* UD */
	/* retransmission of the last message sent */
	struct cm_msg last;
	bool last_valid;
	int retries_left;
	uint64_t timeout_ns;
	uint64_t deadline_ns;            /* 0: no timer */
	bool pending_req;                /* CONNECT_REQUEST not yet taken */
	uint32_t reap_handle;            /* published for the reaper while ESTABLISHED */
};

/* Start the CM (timer thread) once per process; 0 or -1 with errno. */
int conn_start(void);

/* With ucma_lock held: */
int conn_port_bind(struct ucma_ctx *ctx, const struct sockaddr *addr, uint16_t *port);
int conn_listen(struct ucma_ctx *ctx);
void conn_set_path(struct ucma_ctx *ctx);
void conn_fill_path(struct ucma_ctx *ctx, struct ib_user_path_rec *p);
int conn_connect(struct ucma_ctx *ctx, const struct rdma_ucm_conn_param *p);
int conn_accept(struct ucma_ctx *ctx, const struct rdma_ucm_conn_param *p);
int conn_establish(struct ucma_ctx *ctx);
int conn_notify_established(struct ucma_ctx *ctx);
int conn_reject(struct ucma_ctx *ctx, uint8_t reason, const uint8_t *pd, uint8_t len);
int conn_disconnect(struct ucma_ctx *ctx);
/* The Q_Key of a UD id (cma_set_default_qkey): RDMA_UDP_QKEY, or what
 * SIDR settled outside the UDP port space; INIT_QP_ATTR and multicast. */
uint32_t conn_ud_qkey(const struct ucma_ctx *ctx);
int conn_init_qp_attr(struct ucma_ctx *ctx, uint32_t state, struct ib_uverbs_qp_attr *a);
/* Drop GSI references released under the lock; call without it. */
void conn_flush_puts(void);
/* A forked child: forget the parent's pending puts and timer thread
 * (ucma_fork_child, docs/fork.md). */
void conn_fork_child(void);
void conn_timer_fork_child(void);
/* The id goes (DESTROY_ID, close): leave the peer with a DREQ or REJ,
 * release the port. */
void conn_destroy(struct ucma_ctx *ctx);

#endif

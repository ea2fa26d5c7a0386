// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The IB CM connection state machine of one UCMA id: commands become CM
 * MADs (conn_connect -> REQ, conn_accept -> REP, ...), received MADs become
 * rdma_cm events, as the kernel's cm.c (IBTA 12.9) and cma.c
 * (cma_ib_handler) do.  Every change of state goes through cm_set_state so
 * UROCE_DEBUG traces it by name.  Retransmission and timewait run on one
 * timer thread (conn_timer.c); received MADs are conn_rx.c's, SIDR
 * conn_sidr.c's, the path and the QP's attributes conn_path.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "cm/gsi.h"
#include "cm/ucma.h"
#include "cm/conn_int.h"
#include "trace/trace.h"

/* The kernel's rdma_cm constants (cma.c): what our REQs offer.  A peer's
 * own values always come from its messages. */
#define CMA_CM_RESPONSE_TIMEOUT 20
#define CMA_MAX_CM_RETRIES 15
#define CM_CA_ACK_DELAY 15          /* target ACK delay we announce (rxe's) */

static const char *const state_names[] = {
#define CM_STATE_NAME(n) [CM_##n] = #n,
	CM_STATE_LIST(CM_STATE_NAME)
#undef CM_STATE_NAME
};

const char *cm_state_name(enum cm_state s)
{
	return s < CM_STATE_COUNT ? state_names[s] : "?";
}

/* An established connection is published to the GSI's reaper, which sends
 * its DREQ if this process dies without closing (the kernel's ucma_close
 * does it for a killed process). */
static void reaper_follow(struct ucma_ctx *ctx, enum cm_state s)
{
	struct cm_conn *c = &ctx->conn;

	if (s == CM_ESTABLISHED && c->state != CM_ESTABLISHED && c->gsi && !c->reap_handle) {
		struct uroce_gsi_conn_info ci = {
			.local_comm_id = c->local_id,
			.remote_comm_id = c->remote_id,
			.remote_qpn = c->remote_qpn,
		};

		memcpy(ci.local_gid, c->lgid, 16);
		memcpy(ci.remote_gid, c->rgid, 16);
		if (uroce_gsi_conn_publish(c->gsi, &ci, &c->reap_handle))
			c->reap_handle = 0;
	} else if (s != CM_ESTABLISHED && c->reap_handle) {
		uroce_gsi_conn_unpublish(c->gsi, c->reap_handle);
		c->reap_handle = 0;
	}
}

void cm_set_state(struct ucma_ctx *ctx, enum cm_state s)
{
	reaper_follow(ctx, s);
	UROCE_TRACE(uroce_trace_cm_state(ctx->id, ctx->conn.local_qpn, cm_state_name(ctx->conn.state), cm_state_name(s)));
	if (uroce_debug_cm > 1)
		fprintf(stderr, "uroce cm[%d %.6f]: id %u comm %08x: %s -> %s\n", (int)getpid(), uroce_cm_now_ns() / 1e9, ctx->id,
			ctx->conn.local_id, cm_state_name(ctx->conn.state), cm_state_name(s));
	ctx->conn.state = s;
}

/* 4.096 us * 2^T in ms, at least 1 (cm_convert_to_ms: 2^(T-8)). */
uint64_t cm_timeout_ms(uint8_t t)
{
	return t > 8 ? 1ull << (t - 8) : 1;
}

/* IBTA 12.7.34 local ACK timeout from the peer's ACK delay and the packet
 * lifetime (cm_ack_timeout). */
static uint8_t cm_ack_timeout(uint8_t ca_ack_delay, uint8_t plt)
{
	int t = plt + 1;

	if (ca_ack_delay >= t)
		t = ca_ack_delay + (ca_ack_delay - t <= 1);
	else
		t = t + (t - ca_ack_delay <= 1);
	return t > 31 ? 31 : t;
}

static uint32_t random24(void)
{
	uint32_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint32_t)uroce_cm_now_ns();
	return v & 0xffffff;
}

/* ---- gsi references: never dropped under ucma_lock (a put may join the
 * engine's thread, which may be waiting for that lock in conn_rx). */

static struct uroce_gsi *put_later[256];
static int n_put_later;

static void gsi_drop(struct uroce_gsi **g)
{
	if (!*g)
		return;
	if (n_put_later < (int)(sizeof(put_later) / sizeof(put_later[0])))
		put_later[n_put_later++] = *g;
	*g = NULL;
}

void conn_fork_child(void)
{
	n_put_later = 0;
}

void conn_flush_puts(void)
{
	struct uroce_gsi *g[256];
	int n;

	pthread_mutex_lock(&ucma_lock);
	n = n_put_later;
	memcpy(g, put_later, n * sizeof(g[0]));
	n_put_later = 0;
	pthread_mutex_unlock(&ucma_lock);
	for (int i = 0; i < n; i++)
		uroce_gsi_put(g[i]);
}

int conn_gsi(struct ucma_ctx *ctx)
{
	if (ctx->conn.gsi)
		return 0;
	if (!ctx->have_dev)
		return -ENODEV;
	ctx->conn.gsi = uroce_gsi_get(ctx->dev.name, conn_rx, NULL);
	return ctx->conn.gsi ? 0 : -(errno ? errno : ENODEV);
}

/* ---- sending -------------------------------------------------------------- */

/* Fill the connection fields every message of CTX carries. */
static void msg_init(struct ucma_ctx *ctx, struct cm_msg *m, uint16_t attr)
{
	memset(m, 0, sizeof(*m));
	m->attr_id = attr;
	m->tid = ctx->conn.tid;
	m->local_comm_id = ctx->conn.local_id;
	m->remote_comm_id = ctx->conn.remote_id;
}

/* Send M; with RETRANSMIT, keep it for the timer: resent every
 * TIMEOUT_MS up to max_cm_retries times (IBTA 12.4.1), then
 * conn_timeout(). */
int cm_send(struct ucma_ctx *ctx, const struct cm_msg *m, bool retransmit, uint64_t timeout_ms)
{
	struct cm_conn *c = &ctx->conn;
	int ret;

	if (!c->gsi)
		return -ENODEV;
	ret = uroce_gsi_send(c->gsi, m, c->lgid, c->rgid);
	if (uroce_debug_cm > 1)
		fprintf(stderr, "uroce cm[%d %.6f]: id %u sends %s -> %d\n", (int)getpid(), uroce_cm_now_ns() / 1e9, ctx->id,
			cm_attr_name(m->attr_id), ret);
	if (retransmit) {
		c->last = *m;
		c->last_valid = true;
		c->retries_left = c->max_cm_retries;
		c->timeout_ns = timeout_ms * 1000000ull;
		conn_timer_arm(ctx, uroce_cm_now_ns() + c->timeout_ns);
	}
	return ret;
}

void cm_stop_timer(struct ucma_ctx *ctx)
{
	ctx->conn.last_valid = false;
	ctx->conn.deadline_ns = 0;
}

/* A REJ for the message in state S of CTX (IBTA 12.6.7). */
int cm_send_rej(struct ucma_ctx *ctx, uint16_t reason, const uint8_t *pd, uint8_t len)
{
	struct cm_msg m;
	enum cm_state s = ctx->conn.state;

	msg_init(ctx, &m, CM_ATTR_REJ);
	m.msg_rejected = s == CM_REQ_RCVD || s == CM_MRA_REQ_RCVD ? CM_MSG_RESPONSE_REQ :
			 s == CM_REP_RCVD ? CM_MSG_RESPONSE_REP : CM_MSG_RESPONSE_OTHER;
	m.reason = reason;
	if (reason == CM_REJ_TIMEOUT) {
		/* ARI: our CA GUID (cm_destroy_id) */
		uint64_t g = ctx->dev.node_guid_be;

		memcpy(m.ari, &g, 8);
		m.ari_length = 8;
	}
	if (len) {
		memcpy(m.private_data, pd, len);
		m.private_data_len = len;
	}
	return cm_send(ctx, &m, false, 0);
}

/* ---- ports and listeners ------------------------------------------------------ */

int conn_port_bind(struct ucma_ctx *ctx, const struct sockaddr *addr, uint16_t *port)
{
	uint8_t ip[16];
	int ret;

	ucma_addr_to_gid(addr, ip);
	ret = uroce_gsi_port_bind(ctx->ps, ip, port, ctx->reuseaddr, &ctx->port_handle);
	if (!ret)
		ctx->port_held = true;
	return ret;
}

int conn_listen(struct ucma_ctx *ctx)
{
	struct cm_conn *c = &ctx->conn;
	int ret = uroce_gsi_port_listen(ctx->port_handle);

	if (ret)
		return ret;
	/* Hear REQs on the bound device, or on every device for the wildcard. */
	if (ctx->have_dev) {
		c->listen_gsi[0] = uroce_gsi_get(ctx->dev.name, conn_rx, NULL);
		c->n_listen_gsi = c->listen_gsi[0] ? 1 : 0;
	} else {
		struct ucma_dev devs[8];
		int n = ucma_dev_all(devs, 8);

		for (int i = 0; i < n; i++) {
			c->listen_gsi[c->n_listen_gsi] = uroce_gsi_get(devs[i].name, conn_rx, NULL);
			if (c->listen_gsi[c->n_listen_gsi])
				c->n_listen_gsi++;
		}
	}
	if (!c->n_listen_gsi)
		return -ENODEV;
	cm_set_state(ctx, CM_LISTEN);
	return 0;
}

/* ---- the active side ------------------------------------------------------------ */

void cma_hdr(struct ucma_ctx *ctx, uint8_t *buf)
{
	struct cm_cma_addrs a = {
		.family = ctx->src.ss_family,
		.src_port = ucma_addr_port((struct sockaddr *)&ctx->src),
	};

	ucma_addr_to_gid((struct sockaddr *)&ctx->src, a.src);
	ucma_addr_to_gid((struct sockaddr *)&ctx->dst, a.dst);
	cm_cma_hdr_pack(buf, &a);
}

/* The active side's start (CONNECT, RC or UD): the device's GSI and a
 * communication ID (also the SIDR request ID) that routes answers here. */
int conn_begin_active(struct ucma_ctx *ctx)
{
	struct cm_conn *c = &ctx->conn;
	int ret = conn_gsi(ctx);

	if (ret)
		return ret;
	c->local_id = uroce_gsi_comm_id_alloc(c->gsi);
	if (!c->local_id)
		return -ENOMEM;
	c->tid = c->local_id;
	c->remote_id = 0;
	c->service_id = cm_service_id(ctx->ps, ucma_addr_port((struct sockaddr *)&ctx->dst));
	c->max_cm_retries = CMA_MAX_CM_RETRIES;
	return 0;
}

/* CONNECT: a REQ (cma_connect_ib, cm_format_req). */
int conn_connect(struct ucma_ctx *ctx, const struct rdma_ucm_conn_param *p)
{
	struct cm_conn *c = &ctx->conn;
	struct cm_msg m;
	int ret;

	if (ctx->state != UCMA_ROUTE_RESOLVED)
		return -EINVAL;
	if (ctx->qp_type == IBV_QPT_UD)
		return connect_sidr(ctx, p);
	if (p->private_data_len > CM_REQ_USER_PRIVATE_DATA_MAX)
		return -EINVAL;
	ret = conn_begin_active(ctx);
	if (ret)
		return ret;
	c->local_qpn = p->qp_num;
	c->rq_psn = random24();
	c->resp_res = p->responder_resources;
	c->init_depth = p->initiator_depth;
	c->retry_cnt = p->retry_count & 7;
	c->rnr_retry = p->rnr_retry_count & 7;
	c->srq = p->srq;
	c->ack_timeout = ctx->ack_timeout ? ctx->ack_timeout : cm_ack_timeout(CM_CA_ACK_DELAY, c->plt);

	msg_init(ctx, &m, CM_ATTR_REQ);
	m.service_id = c->service_id;
	m.local_ca_guid = be64toh(ctx->dev.node_guid_be);
	m.local_qpn = c->local_qpn;
	m.responder_resources = c->resp_res;
	m.initiator_depth = c->init_depth;
	m.remote_cm_response_timeout = CMA_CM_RESPONSE_TIMEOUT;
	m.transport_type = CM_TRANSPORT_RC;
	m.end_to_end_flow_control = p->flow_control & 1;
	m.starting_psn = c->rq_psn;
	m.local_cm_response_timeout = CMA_CM_RESPONSE_TIMEOUT;
	m.retry_count = c->retry_cnt;
	m.pkey = 0xffff;
	m.path_mtu = c->path_mtu;
	m.rnr_retry_count = c->rnr_retry;
	m.max_cm_retries = c->max_cm_retries;
	m.srq = c->srq;
	m.primary.local_lid = m.primary.remote_lid = CM_PERMISSIVE_LID;
	memcpy(m.primary.local_gid, c->lgid, 16);
	memcpy(m.primary.remote_gid, c->rgid, 16);
	m.primary.flow_label = c->flow_label;
	m.primary.traffic_class = c->tclass;
	m.primary.hop_limit = c->hop_limit;
	m.primary.sl = c->tclass >> 5;
	m.primary.local_ack_timeout = c->ack_timeout;
	cma_hdr(ctx, m.private_data);
	memcpy(m.private_data + CM_CMA_HDR_SIZE, p->private_data, p->private_data_len);
	m.private_data_len = CM_CMA_HDR_SIZE + p->private_data_len;

	ctx->state = UCMA_CONNECT;
	cm_set_state(ctx, CM_REQ_SENT);
	/* cm_send_req: 2 packet lifetimes plus the peer's response time */
	c->req_timeout_ms = 2 * cm_timeout_ms(c->plt) + cm_timeout_ms(CMA_CM_RESPONSE_TIMEOUT);
	ret = cm_send(ctx, &m, true, c->req_timeout_ms);
	return ret == -EINVAL ? ret : 0; /* a lost first REQ is the timer's job */
}

/* The active side's ACCEPT after CONNECT_RESPONSE: the RTU (cma_rep_recv). */
int conn_establish(struct ucma_ctx *ctx)
{
	struct cm_msg m;

	if (ctx->conn.state != CM_REP_RCVD)
		return -EINVAL;
	msg_init(ctx, &m, CM_ATTR_RTU);
	cm_set_state(ctx, CM_ESTABLISHED);
	cm_send(ctx, &m, false, 0);
	return 0;
}

/* ---- the passive side ------------------------------------------------------------ */

/* ACCEPT of a CONNECT_REQUEST id: the REP (cma_accept_ib, cm_format_rep). */
int conn_accept(struct ucma_ctx *ctx, const struct rdma_ucm_conn_param *p)
{
	struct cm_conn *c = &ctx->conn;
	struct cm_msg m;

	if (ctx->qp_type == IBV_QPT_UD)
		return conn_accept_sidr(ctx, p);
	if (c->state != CM_REQ_RCVD && c->state != CM_MRA_REQ_RCVD)
		return -EINVAL;
	if (p->private_data_len > CM_REP_PRIVATE_DATA_SIZE)
		return -EINVAL;
	c->local_qpn = p->qp_num;
	c->resp_res = p->responder_resources;
	c->init_depth = p->initiator_depth;
	c->srq = p->srq;
	msg_init(ctx, &m, CM_ATTR_REP);
	m.local_ca_guid = be64toh(ctx->dev.node_guid_be);
	m.local_qpn = c->local_qpn;
	m.starting_psn = c->rq_psn;
	m.responder_resources = c->resp_res;
	m.initiator_depth = c->init_depth;
	m.target_ack_delay = CM_CA_ACK_DELAY;
	m.failover_accepted = 0;
	m.end_to_end_flow_control = p->flow_control & 1;
	m.rnr_retry_count = p->rnr_retry_count & 7;
	m.srq = c->srq;
	memcpy(m.private_data, p->private_data, p->private_data_len);
	m.private_data_len = p->private_data_len;
	cm_set_state(ctx, CM_REP_SENT);
	/* cm_send_rep: the active side's CM response time from its REQ */
	cm_send(ctx, &m, true, cm_timeout_ms(c->peer_cm_timeout));
	return 0;
}

int conn_notify_established(struct ucma_ctx *ctx)
{
	/* ib_cm_notify(COMM_EST): the first data packet stands for the RTU
	 * (IBTA 12.9.7.2). */
	if (ctx->conn.state == CM_REP_SENT)
		cm_established(ctx);
	return 0;
}

int conn_reject(struct ucma_ctx *ctx, uint8_t reason, const uint8_t *pd, uint8_t len)
{
	struct cm_conn *c = &ctx->conn;

	if (ctx->qp_type == IBV_QPT_UD) {
		if (c->state != CM_SIDR_REQ_RCVD)
			return -EINVAL;
		return conn_sidr_reply(ctx, CM_SIDR_REJECT, 0, pd, len);
	}
	if (c->state != CM_REQ_RCVD && c->state != CM_MRA_REQ_RCVD && c->state != CM_REP_RCVD)
		return -EINVAL;
	if (len > CM_REJ_PRIVATE_DATA_SIZE)
		return -EINVAL;
	cm_send_rej(ctx, reason, pd, len);
	cm_stop_timer(ctx);
	cm_set_state(ctx, CM_IDLE);
	return 0;
}

/* ---- disconnect ------------------------------------------------------------------ */

static void send_drep(struct ucma_ctx *ctx)
{
	struct cm_msg m;

	msg_init(ctx, &m, CM_ATTR_DREP);
	cm_send(ctx, &m, false, 0);
}

/* Timewait (IBTA 12.9.8.4; cm_enter_timewait): the comm ID stays ours for
 * the ACK timeout plus the peer's ACK delay, then TIMEWAIT_EXIT. */
void cm_enter_timewait(struct ucma_ctx *ctx)
{
	cm_stop_timer(ctx);
	cm_set_state(ctx, CM_TIMEWAIT);
	conn_timer_arm(ctx, uroce_cm_now_ns() + cm_timeout_ms(ctx->conn.ack_timeout) * 1000000ull);
}

int conn_disconnect(struct ucma_ctx *ctx)
{
	struct cm_conn *c = &ctx->conn;
	struct cm_msg m;

	switch (c->state) {
	case CM_ESTABLISHED:
	case CM_REP_SENT:
		/* rdma_disconnect: a DREQ (ib_send_cm_dreq) */
		msg_init(ctx, &m, CM_ATTR_DREQ);
		m.remote_qpn = c->remote_qpn;
		cm_set_state(ctx, CM_DREQ_SENT);
		ctx->state = UCMA_DISCONNECT;
		cm_send(ctx, &m, true, c->req_timeout_ms ? c->req_timeout_ms :
				       cm_timeout_ms(c->peer_cm_timeout));
		return 0;
	case CM_DREQ_RCVD:
		send_drep(ctx);
		cm_enter_timewait(ctx);
		return 0;
	case CM_DREQ_SENT:
	case CM_TIMEWAIT:
		return 0; /* already on its way out */
	case CM_SIDR_REQ_RCVD:
	case CM_SIDR_REQ_SENT:
	case CM_IDLE:
		return ctx->qp_type == IBV_QPT_UD ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}

void conn_destroy(struct ucma_ctx *ctx)
{
	struct cm_conn *c = &ctx->conn;

	/* cm_destroy_id: leave the peer knowing */
	switch (c->state) {
	case CM_REQ_SENT:
	case CM_MRA_REQ_RCVD:
		cm_send_rej(ctx, CM_REJ_TIMEOUT, NULL, 0);
		break;
	case CM_REQ_RCVD:
	case CM_REP_RCVD:
	case CM_REP_SENT:
		cm_send_rej(ctx, CM_REJ_CONSUMER_DEFINED, NULL, 0);
		break;
	case CM_ESTABLISHED: {
		struct cm_msg m;

		msg_init(ctx, &m, CM_ATTR_DREQ);
		m.remote_qpn = c->remote_qpn;
		cm_send(ctx, &m, false, 0);
		break;
	}
	case CM_DREQ_RCVD:
		send_drep(ctx);
		break;
	case CM_SIDR_REQ_RCVD:
		conn_sidr_reply(ctx, CM_SIDR_REJECT, 0, NULL, 0);
		break;
	default:
		break;
	}
	cm_stop_timer(ctx);
	cm_set_state(ctx, CM_IDLE);
	if (ctx->port_held)
		uroce_gsi_port_release(ctx->port_handle);
	ctx->port_held = false;
	gsi_drop(&c->gsi);
	for (int i = 0; i < c->n_listen_gsi; i++)
		gsi_drop(&c->listen_gsi[i]);
	c->n_listen_gsi = 0;
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * CM MADs in: the GSI hands every message routed to this process here; a
 * table sends each attribute to its handler, which finds the connection
 * (REQ/SIDR_REQ: the listener by service ID and address; the rest: our
 * comm ID in the message's remote comm ID) and moves its state, queueing
 * the rdma_cm event the kernel would (cma_ib_handler, cma_req_handler).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "cm/ucma.h"
#include "cm/conn_int.h"

struct rx {
	struct uroce_gsi *gsi;
	const struct uroce_gsi_peer *from;
	const struct cm_msg *m;
	struct ucma_ctx *found;
};

static void find_by_comm_id(struct ucma_ctx *ctx, void *arg)
{
	struct rx *r = arg;

	if (ctx->conn.local_id && ctx->conn.local_id == cm_msg_dest_id(r->m) &&
	    ctx->conn.state != CM_IDLE && ctx->conn.state != CM_LISTEN)
		r->found = ctx;
}

static struct ucma_ctx *conn_of(struct rx *r)
{
	r->found = NULL;
	ucma_for_each_ctx(find_by_comm_id, r);
	return r->found;
}

/* A connection event with the message's private data (ucma_copy_conn_event). */
static struct ucma_event *conn_event(struct ucma_ctx *ctx, uint32_t event, int status,
				     const struct cm_msg *m, const uint8_t *pd, uint16_t len)
{
	struct ucma_event *ev = ucma_event_queue(ctx, event, status);

	if (ev && len) {
		if (len > RDMA_MAX_PRIVATE_DATA)
			len = RDMA_MAX_PRIVATE_DATA;
		memcpy(ev->resp.param.conn.private_data, pd, len);
		ev->resp.param.conn.private_data_len = len;
	}
	return ev;
}

/* ---- REQ ------------------------------------------------------------------ */

struct listen_match {
	uint16_t ps, port;
	uint8_t ip[16];
	struct ucma_ctx *exact, *any;
	/* duplicate detection */
	uint32_t remote_id;
	uint64_t remote_guid;
	struct ucma_ctx *dup;
};

static void match_listener(struct ucma_ctx *ctx, void *arg)
{
	struct listen_match *l = arg;
	uint8_t gid[16];

	if (ctx->conn.remote_id == l->remote_id && ctx->conn.remote_guid == l->remote_guid &&
	    ctx->conn.state != CM_IDLE && ctx->conn.state != CM_LISTEN)
		l->dup = ctx;
	if (ctx->state != UCMA_LISTEN || ctx->ps != l->ps ||
	    ucma_addr_port((struct sockaddr *)&ctx->src) != l->port)
		return;
	if (ucma_addr_any((struct sockaddr *)&ctx->src)) {
		l->any = ctx;
		return;
	}
	ucma_addr_to_gid((struct sockaddr *)&ctx->src, gid);
	if (!memcmp(gid, l->ip, 16))
		l->exact = ctx;
}

/* The listener for M's service ID at our address A->dst; dup set for a
 * REQ we already have. */
static struct ucma_ctx *find_listener(const struct cm_msg *m, const struct cm_cma_addrs *a,
				      struct listen_match *l)
{
	memset(l, 0, sizeof(*l));
	l->ps = cm_service_id_ps(m->service_id);
	l->port = cm_service_id_port(m->service_id);
	memcpy(l->ip, a->dst, 16);
	l->remote_id = m->local_comm_id;
	l->remote_guid = m->local_ca_guid;
	ucma_for_each_ctx(match_listener, l);
	return l->exact ? l->exact : l->any;
}

/* A REJ to a message that has no connection here (cm_issue_rej). */
static void reply_rej(struct rx *r, uint16_t reason, uint8_t msg_rejected)
{
	struct cm_msg rej;

	memset(&rej, 0, sizeof(rej));
	rej.attr_id = CM_ATTR_REJ;
	rej.tid = r->m->tid;
	rej.remote_comm_id = r->m->local_comm_id;
	rej.msg_rejected = msg_rejected;
	rej.reason = reason;
	uroce_gsi_send(r->gsi, &rej, r->from->local_gid, r->from->remote_gid);
}

/* The id a REQ or SIDR_REQ from R makes under listener LIS (the kernel's
 * cma_ib_new_conn_id / cma_ib_new_udp_id): our address the one it came
 * to, the peer's from the CMA header A, a reference on the arrival
 * device's GSI; NULL (nothing left behind) if any of it fails. */
static struct ucma_ctx *child_new(struct rx *r, struct ucma_ctx *lis,
				  const struct cm_cma_addrs *a, uint8_t qp_type)
{
	struct ucma_ctx *ctx = ucma_ctx_new(lis->file);

	if (!ctx)
		return NULL;
	ctx->ps = lis->ps;
	ctx->qp_type = qp_type;
	ctx->state = UCMA_CONNECT;
	ctx->tos = lis->tos;
	ctx->tos_set = lis->tos_set;
	ctx->ack_timeout = lis->ack_timeout;
	ucma_gid_to_addr(a->dst, ucma_addr_port((struct sockaddr *)&lis->src), &ctx->src);
	ucma_gid_to_addr(a->src, a->src_port, &ctx->dst);
	memcpy(ctx->conn.lgid, r->from->local_gid, 16);
	memcpy(ctx->conn.rgid, r->from->remote_gid, 16);
	if (!ucma_dev_by_addr_gid(r->from->local_gid, &ctx->dev)) {
		ctx->have_dev = true;
		ctx->conn.gsi = uroce_gsi_get(uroce_gsi_devname(r->gsi), NULL, NULL);
	}
	if (!ctx->conn.gsi) {
		ucma_ctx_free(ctx);
		return NULL;
	}
	ctx->conn.tid = r->m->tid;
	ctx->conn.service_id = r->m->service_id;
	return ctx;
}

/* A new id waits on listener LIS as the CONNECT_REQUEST event EV names it,
 * until the application accepts or rejects it (REQ and SIDR_REQ alike). */
static void pend_on_listener(struct ucma_ctx *lis, struct ucma_ctx *ctx, struct ucma_event *ev)
{
	ev->conn_req = ctx;
	ev->resp.id = ctx->id;
	ctx->conn.pending_req = true;
	lis->backlog--;
}

static void rx_req(struct rx *r)
{
	const struct cm_msg *m = r->m;
	struct listen_match l;
	struct cm_cma_addrs a;
	struct ucma_ctx *lis, *ctx;
	struct ucma_event *ev;
	struct cm_conn *c;

	/* cma_check_req_qp_type / cma_save_ip_info: RC, and a CMA header we read */
	if (m->transport_type != CM_TRANSPORT_RC || cm_cma_hdr_unpack(m->private_data, &a)) {
		reply_rej(r, CM_REJ_INVALID_SERVICE_ID, CM_MSG_RESPONSE_REQ);
		return;
	}
	lis = find_listener(m, &a, &l);
	if (l.dup) {
		/* cm_dup_req_handler: a lost REP is sent again */
		if (l.dup->conn.state == CM_REP_SENT && l.dup->conn.last_valid)
			uroce_gsi_send(l.dup->conn.gsi, &l.dup->conn.last, l.dup->conn.lgid,
				       l.dup->conn.rgid);
		return;
	}
	if (!lis || lis->qp_type != IBV_QPT_RC) {
		reply_rej(r, CM_REJ_INVALID_SERVICE_ID, CM_MSG_RESPONSE_REQ);
		return;
	}
	/* A full backlog drops the REQ without a REJ: the peer resends
	 * (ucma_connect_event_handler returns -ENOMEM). */
	if (lis->backlog <= 0)
		return;
	ctx = child_new(r, lis, &a, IBV_QPT_RC);
	if (!ctx)
		return;
	c = &ctx->conn;
	c->local_id = uroce_gsi_comm_id_alloc(c->gsi);
	if (!c->local_id) {
		ucma_ctx_free(ctx);
		return;
	}
	c->remote_id = m->local_comm_id;
	c->remote_guid = m->local_ca_guid;
	c->remote_qpn = m->local_qpn;
	c->sq_psn = m->starting_psn;
	c->rq_psn = 0;
	if (getrandom(&c->rq_psn, sizeof(c->rq_psn), 0) != sizeof(c->rq_psn))
		c->rq_psn = (uint32_t)uroce_cm_now_ns();
	c->rq_psn &= 0xffffff;
	/* cm_req_handler: our resources answer the peer's depth and back */
	c->resp_res = m->initiator_depth;
	c->init_depth = m->responder_resources;
	c->retry_cnt = m->retry_count;
	c->rnr_retry = m->rnr_retry_count;
	c->srq = m->srq;
	c->path_mtu = m->path_mtu < ctx->dev.ib_mtu ? m->path_mtu : ctx->dev.ib_mtu;
	c->ack_timeout = m->primary.local_ack_timeout;
	c->peer_cm_timeout = m->local_cm_response_timeout;
	c->plt = c->ack_timeout > 0 ? c->ack_timeout - 1 : 0;
	c->max_cm_retries = m->max_cm_retries;
	c->hop_limit = m->primary.hop_limit;
	c->flow_label = m->primary.flow_label;
	c->tclass = m->primary.traffic_class;
	cm_set_state(ctx, CM_REQ_RCVD);

	/* CONNECT_REQUEST on the listener, naming the new id; the user data
	 * is what follows the CMA header (cma_set_req_event_data). */
	ev = conn_event(lis, RDMA_CM_EVENT_CONNECT_REQUEST, 0, m,
			m->private_data + CM_CMA_HDR_SIZE, CM_REQ_USER_PRIVATE_DATA_MAX);
	if (!ev) {
		ucma_ctx_free(ctx);
		return;
	}
	ev->resp.param.conn.responder_resources = c->resp_res;
	ev->resp.param.conn.initiator_depth = c->init_depth;
	ev->resp.param.conn.flow_control = m->end_to_end_flow_control;
	ev->resp.param.conn.retry_count = m->retry_count;
	ev->resp.param.conn.rnr_retry_count = m->rnr_retry_count;
	ev->resp.param.conn.srq = m->srq;
	ev->resp.param.conn.qp_num = m->local_qpn;
	pend_on_listener(lis, ctx, ev);
}

/* ---- REP, RTU, REJ, MRA ------------------------------------------------------- */

static void rx_rep(struct rx *r)
{
	const struct cm_msg *m = r->m;
	struct ucma_ctx *ctx = conn_of(r);
	struct ucma_event *ev;
	struct cm_conn *c;

	if (!ctx)
		return; /* the gsi answers strangers */
	c = &ctx->conn;
	if (c->state == CM_ESTABLISHED && c->remote_id == m->local_comm_id) {
		/* cm_dup_rep_handler: our RTU was lost */
		struct cm_msg rtu;

		memset(&rtu, 0, sizeof(rtu));
		rtu.attr_id = CM_ATTR_RTU;
		rtu.tid = c->tid;
		rtu.local_comm_id = c->local_id;
		rtu.remote_comm_id = c->remote_id;
		cm_send(ctx, &rtu, false, 0);
		return;
	}
	if (c->state != CM_REQ_SENT && c->state != CM_MRA_REQ_RCVD)
		return;
	cm_stop_timer(ctx);
	c->remote_id = m->local_comm_id;
	c->remote_guid = m->local_ca_guid;
	c->remote_qpn = m->local_qpn;
	c->sq_psn = m->starting_psn;
	/* cm_rep_handler */
	c->init_depth = m->responder_resources;
	c->resp_res = m->initiator_depth;
	c->rnr_retry = m->rnr_retry_count;
	cm_set_state(ctx, CM_REP_RCVD);
	ev = conn_event(ctx, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, m, m->private_data,
			CM_REP_PRIVATE_DATA_SIZE);
	if (ev) {
		ev->resp.param.conn.responder_resources = m->initiator_depth;
		ev->resp.param.conn.initiator_depth = m->responder_resources;
		ev->resp.param.conn.flow_control = m->end_to_end_flow_control;
		ev->resp.param.conn.rnr_retry_count = m->rnr_retry_count;
		ev->resp.param.conn.srq = m->srq;
		ev->resp.param.conn.qp_num = m->local_qpn;
	}
}

void cm_established(struct ucma_ctx *ctx)
{
	cm_stop_timer(ctx);
	cm_set_state(ctx, CM_ESTABLISHED);
	ucma_event_queue(ctx, RDMA_CM_EVENT_ESTABLISHED, 0);
}

static void rx_rtu(struct rx *r)
{
	struct ucma_ctx *ctx = conn_of(r);

	if (ctx && ctx->conn.state == CM_REP_SENT)
		cm_established(ctx);
}

static void rx_rej(struct rx *r)
{
	const struct cm_msg *m = r->m;
	struct ucma_ctx *ctx = conn_of(r);
	enum cm_state s;

	if (!ctx)
		return;
	s = ctx->conn.state;
	if (s != CM_REQ_SENT && s != CM_MRA_REQ_RCVD && s != CM_REP_SENT && s != CM_REP_RCVD &&
	    s != CM_ESTABLISHED)
		return;
	cm_stop_timer(ctx);
	if (s == CM_ESTABLISHED) {
		/* IBTA 12.9.6: a REJ to an established connection ends it */
		cm_enter_timewait(ctx);
		ucma_event_queue(ctx, RDMA_CM_EVENT_DISCONNECTED, 0);
		return;
	}
	cm_set_state(ctx, CM_IDLE);
	/* cma_ib_handler IB_CM_REJ_RECEIVED: REJECTED, status = the reason */
	conn_event(ctx, RDMA_CM_EVENT_REJECTED, m->reason, m, m->private_data,
		   CM_REJ_PRIVATE_DATA_SIZE);
}

static void rx_mra(struct rx *r)
{
	const struct cm_msg *m = r->m;
	struct ucma_ctx *ctx = conn_of(r);
	struct cm_conn *c;

	if (!ctx)
		return;
	c = &ctx->conn;
	/* cm_mra_handler: the peer needs longer; wait its service timeout
	 * plus a packet lifetime before resending */
	if ((c->state == CM_REQ_SENT && m->msg_mraed == CM_MSG_RESPONSE_REQ) ||
	    (c->state == CM_REP_SENT && m->msg_mraed == CM_MSG_RESPONSE_REP)) {
		c->timeout_ns = (cm_timeout_ms(m->service_timeout) + cm_timeout_ms(c->plt)) *
				1000000ull;
		conn_timer_arm(ctx, uroce_cm_now_ns() + c->timeout_ns);
		if (c->state == CM_REQ_SENT)
			cm_set_state(ctx, CM_MRA_REQ_RCVD);
	}
}

/* ---- DREQ, DREP ---------------------------------------------------------------- */

static void reply_drep(struct rx *r)
{
	struct cm_msg drep;

	memset(&drep, 0, sizeof(drep));
	drep.attr_id = CM_ATTR_DREP;
	drep.tid = r->m->tid;
	drep.local_comm_id = r->m->remote_comm_id;
	drep.remote_comm_id = r->m->local_comm_id;
	uroce_gsi_send(r->gsi, &drep, r->from->local_gid, r->from->remote_gid);
}

static void rx_dreq(struct rx *r)
{
	struct ucma_ctx *ctx = conn_of(r);
	enum cm_state s;

	/* cm_dreq_handler: a DREQ for a connection we no longer have, or one
	 * in timewait (our DREP was lost), gets a DREP */
	if (!ctx || ctx->conn.state == CM_TIMEWAIT) {
		reply_drep(r);
		return;
	}
	s = ctx->conn.state;
	if (s != CM_ESTABLISHED && s != CM_REP_SENT && s != CM_DREQ_SENT && s != CM_REP_RCVD)
		return;
	reply_drep(r);
	cm_enter_timewait(ctx);
	ctx->state = UCMA_DISCONNECT;
	/* cma: CONNECT -> DISCONNECT gives one DISCONNECTED */
	ucma_event_queue(ctx, RDMA_CM_EVENT_DISCONNECTED, 0);
}

static void rx_drep(struct rx *r)
{
	struct ucma_ctx *ctx = conn_of(r);

	if (!ctx || ctx->conn.state != CM_DREQ_SENT)
		return;
	cm_enter_timewait(ctx);
	ucma_event_queue(ctx, RDMA_CM_EVENT_DISCONNECTED, 0);
}

/* ---- SIDR ---------------------------------------------------------------------- */

static void reply_sidr(struct rx *r, uint8_t status)
{
	struct cm_msg rep;

	memset(&rep, 0, sizeof(rep));
	rep.attr_id = CM_ATTR_SIDR_REP;
	rep.tid = r->m->tid;
	rep.request_id = r->m->request_id;
	rep.service_id = r->m->service_id;
	rep.sidr_status = status;
	uroce_gsi_send(r->gsi, &rep, r->from->local_gid, r->from->remote_gid);
}

static void rx_sidr_req(struct rx *r)
{
	const struct cm_msg *m = r->m;
	struct listen_match l;
	struct cm_cma_addrs a;
	struct ucma_ctx *lis, *ctx;
	struct ucma_event *ev;
	struct cm_conn *c;

	if (cm_cma_hdr_unpack(m->private_data, &a)) {
		reply_sidr(r, CM_SIDR_UNSUPPORTED);
		return;
	}
	lis = find_listener(m, &a, &l);
	if (!lis || lis->qp_type != IBV_QPT_UD) {
		reply_sidr(r, CM_SIDR_UNSUPPORTED);
		return;
	}
	if (lis->backlog <= 0)
		return;
	ctx = child_new(r, lis, &a, IBV_QPT_UD);
	if (!ctx)
		return;
	c = &ctx->conn;
	c->remote_id = m->request_id;
	cm_set_state(ctx, CM_SIDR_REQ_RCVD);
	ev = ucma_event_queue(lis, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	if (!ev) {
		ucma_ctx_free(ctx);
		return;
	}
	memcpy(ev->resp.param.ud.private_data, m->private_data + CM_CMA_HDR_SIZE,
	       RDMA_MAX_PRIVATE_DATA);
	ev->resp.param.ud.private_data_len = CM_SIDR_REQ_USER_PRIVATE_DATA_MAX;
	pend_on_listener(lis, ctx, ev);
}

static void rx_sidr_rep(struct rx *r)
{
	const struct cm_msg *m = r->m;
	struct ucma_ctx *ctx = conn_of(r);
	struct ucma_event *ev;
	struct ib_uverbs_ah_attr *ah;

	if (!ctx || ctx->conn.state != CM_SIDR_REQ_SENT)
		return;
	cm_stop_timer(ctx);
	cm_set_state(ctx, CM_IDLE);
	if (m->sidr_status != CM_SIDR_SUCCESS) {
		/* cma_sidr_rep_handler: UNREACHABLE with the SIDR status */
		ucma_event_queue(ctx, RDMA_CM_EVENT_UNREACHABLE, m->sidr_status);
		return;
	}
	ev = ucma_event_queue(ctx, RDMA_CM_EVENT_ESTABLISHED, 0);
	if (!ev)
		return;
	ev->resp.param.ud.qp_num = m->local_qpn;
	ev->resp.param.ud.qkey = m->local_qkey;
	memcpy(ev->resp.param.ud.private_data, m->private_data, CM_SIDR_REP_PRIVATE_DATA_SIZE);
	ev->resp.param.ud.private_data_len = CM_SIDR_REP_PRIVATE_DATA_SIZE;
	ah = &ev->resp.param.ud.ah_attr;
	ah->is_global = 1;
	ah->port_num = 1;
	memcpy(ah->grh.dgid, r->from->remote_gid, 16);
	ah->grh.sgid_index = ctx->dev.gid_index;
	ah->grh.hop_limit = 64;
	ah->grh.traffic_class = ucma_tos(ctx);
}

static const struct {
	uint16_t attr;
	void (*fn)(struct rx *r);
} handlers[] = {
	{ CM_ATTR_REQ, rx_req },
	{ CM_ATTR_MRA, rx_mra },
	{ CM_ATTR_REJ, rx_rej },
	{ CM_ATTR_REP, rx_rep },
	{ CM_ATTR_RTU, rx_rtu },
	{ CM_ATTR_DREQ, rx_dreq },
	{ CM_ATTR_DREP, rx_drep },
	{ CM_ATTR_SIDR_REQ, rx_sidr_req },
	{ CM_ATTR_SIDR_REP, rx_sidr_rep },
};

void conn_rx(void *arg, struct uroce_gsi *gsi, const struct uroce_gsi_peer *from,
	     const struct cm_msg *m)
{
	struct rx r = { .gsi = gsi, .from = from, .m = m };

	if (uroce_debug_cm > 1)
		fprintf(stderr, "uroce cm[%d %.6f]: rx %s comm %08x -> %08x\n", (int)getpid(), uroce_cm_now_ns() / 1e9,
			cm_attr_name(m->attr_id), m->local_comm_id, m->remote_comm_id);
	pthread_mutex_lock(&ucma_lock);
	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (handlers[i].attr == m->attr_id) {
			handlers[i].fn(&r);
			break;
		}
	pthread_mutex_unlock(&ucma_lock);
}

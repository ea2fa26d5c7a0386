// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * What a connection tells its QP: the path of a RoCE id (the kernel's
 * cma_resolve_iboe_route), as ROUTE_QUERY reports it, and the attributes
 * INIT_QP_ATTR gives the QP for each state it moves to (cm.c's
 * cm_init_qp_init_attr, _rtr_ and _rts_; cma_ib_init_qp_attr).
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "cm/conn_int.h"
#include "cm/ucma.h"

/* The kernel's rdma_cm constants (cma.c) for a RoCE path. */
#define CMA_IBOE_PACKET_LIFETIME 18
#define CMA_HOP_LIMIT 64

/* ---- route -------------------------------------------------------------------- */

/* cma_resolve_iboe_route: the path from the addresses, the netdev's MTU and
 * the TOS.  The flow label is the kernel's hash of the ports
 * (rdma_calc_flow_label / cma_ib_... in cma.c): sport * 31 + dport. */
void conn_set_path(struct ucma_ctx *ctx)
{
	struct cm_conn *c = &ctx->conn;
	uint16_t sport = ucma_addr_port((struct sockaddr *)&ctx->src);
	uint16_t dport = ucma_addr_port((struct sockaddr *)&ctx->dst);

	memcpy(c->lgid, ctx->dev.gid, 16);
	ucma_addr_to_gid((struct sockaddr *)&ctx->dst, c->rgid);
	c->path_mtu = ctx->dev.ib_mtu;
	c->hop_limit = CMA_HOP_LIMIT;
	c->tclass = ucma_tos(ctx);
	c->flow_label = ((uint32_t)sport * 31 + dport) & 0xfffff;
	c->plt = CMA_IBOE_PACKET_LIFETIME;
}

void conn_fill_path(struct ucma_ctx *ctx, struct ib_user_path_rec *p)
{
	struct cm_conn *c = &ctx->conn;

	memcpy(p->sgid, c->lgid, 16);
	memcpy(p->dgid, c->rgid, 16);
	p->dlid = p->slid = htons(CM_PERMISSIVE_LID);
	p->flow_label = htonl(c->flow_label);
	p->hop_limit = c->hop_limit;
	p->traffic_class = c->tclass;
	p->reversible = 1;
	p->numb_path = 1;
	p->pkey = htons(0xffff);
	p->sl = c->tclass >> 5;
	p->mtu_selector = 2;
	p->mtu = c->path_mtu;
	p->rate_selector = 2;
	p->rate = 0;
	p->packet_life_time_selector = 2;
	p->packet_life_time = c->plt;
}

/* ---- INIT_QP_ATTR (cm_init_qp_init_attr / _rtr_ / _rts_, cma_ib_init_qp_attr) --- */

uint32_t conn_ud_qkey(const struct ucma_ctx *ctx)
{
	if (ctx->ps == RDMA_PS_UDP || ctx->ps == RDMA_PS_TCP || !ctx->conn.qkey)
		return CM_RDMA_UDP_QKEY;
	return ctx->conn.qkey;
}

int conn_init_qp_attr(struct ucma_ctx *ctx, uint32_t state, struct ib_uverbs_qp_attr *a)
{
	struct cm_conn *c = &ctx->conn;
	bool ud = ctx->qp_type == IBV_QPT_UD;

	a->qp_state = state;
	switch (state) {
	case IBV_QPS_INIT:
		a->qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		a->pkey_index = 0;
		a->port_num = 1;
		if (ud) {
			a->qkey = conn_ud_qkey(ctx);
			a->qp_attr_mask |= IBV_QP_QKEY;
		} else {
			/* Before the exchange no remote access; after it
			 * REMOTE_WRITE, plus READ and atomics with responder
			 * resources. */
			a->qp_attr_mask |= IBV_QP_ACCESS_FLAGS;
			if (c->state != CM_IDLE && c->state != CM_LISTEN) {
				a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
				if (c->resp_res)
					a->qp_access_flags |= IBV_ACCESS_REMOTE_READ |
							      IBV_ACCESS_REMOTE_ATOMIC;
			}
		}
		return 0;
	case IBV_QPS_RTR:
		if (ud) {
			a->qp_attr_mask = IBV_QP_STATE;
			return 0;
		}
		if (c->state != CM_REQ_RCVD && c->state != CM_MRA_REQ_RCVD &&
		    c->state != CM_REP_RCVD && c->state != CM_REP_SENT &&
		    c->state != CM_ESTABLISHED)
			return -EINVAL;
		a->qp_attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		a->ah_attr.is_global = 1;
		memcpy(a->ah_attr.grh.dgid, c->rgid, 16);
		a->ah_attr.grh.sgid_index = ctx->dev.gid_index;
		a->ah_attr.grh.hop_limit = c->hop_limit;
		a->ah_attr.grh.flow_label = c->flow_label;
		a->ah_attr.grh.traffic_class = c->tclass;
		a->ah_attr.sl = c->tclass >> 5;
		a->ah_attr.dlid = 0;
		a->ah_attr.port_num = 1;
		a->path_mtu = c->path_mtu;
		a->dest_qp_num = c->remote_qpn;
		a->rq_psn = c->rq_psn;
		a->max_dest_rd_atomic = c->resp_res;
		a->min_rnr_timer = 0;
		return 0;
	case IBV_QPS_RTS:
		a->qp_attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		a->sq_psn = ud ? 0 : c->sq_psn;
		if (ud)
			return 0;
		if (c->state != CM_REP_RCVD && c->state != CM_REP_SENT &&
		    c->state != CM_ESTABLISHED && c->state != CM_REQ_RCVD &&
		    c->state != CM_MRA_REQ_RCVD)
			return -EINVAL;
		a->qp_attr_mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				   IBV_QP_MAX_QP_RD_ATOMIC;
		a->timeout = ctx->ack_timeout ? ctx->ack_timeout : c->ack_timeout;
		a->retry_cnt = c->retry_cnt;
		a->rnr_retry = c->rnr_retry;
		a->max_rd_atomic = c->init_depth;
		return 0;
	default:
		a->qp_attr_mask = IBV_QP_STATE;
		return 0;
	}
}

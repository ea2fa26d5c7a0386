// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * UD ids: service ID resolution (IBTA 12.11, SIDR_REQ/SIDR_REP) instead of
 * a connection.  The active side's CONNECT sends a SIDR_REQ and reports
 * ESTABLISHED with the peer's QPN, Q_Key and address (cma_sidr_rep_handler);
 * the passive side sees CONNECT_REQUEST and answers with ACCEPT (SIDR_REP
 * success) or REJECT.
 */
#include <errno.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "cm/ucma.h"
#include "cm/conn_int.h"

/* The Q_Key of an id (cma_set_qkey): fixed for the UDP port space. */
static uint32_t ud_qkey(const struct ucma_ctx *ctx, uint32_t asked)
{
	if (ctx->ps == RDMA_PS_UDP || !asked)
		return CM_RDMA_UDP_QKEY;
	return asked;
}

int connect_sidr(struct ucma_ctx *ctx, const struct rdma_ucm_conn_param *p)
{
	struct cm_conn *c = &ctx->conn;
	struct cm_msg m;
	int ret;

	if (p->private_data_len > CM_SIDR_REQ_USER_PRIVATE_DATA_MAX)
		return -EINVAL;
	ret = conn_begin_active(ctx);
	if (ret)
		return ret;
	memset(&m, 0, sizeof(m));
	m.attr_id = CM_ATTR_SIDR_REQ;
	m.tid = c->tid;
	m.request_id = c->local_id;
	m.pkey = 0xffff;
	m.service_id = c->service_id;
	cma_hdr(ctx, m.private_data);
	memcpy(m.private_data + CM_CMA_HDR_SIZE, p->private_data, p->private_data_len);
	m.private_data_len = CM_CMA_HDR_SIZE + p->private_data_len;
	ctx->state = UCMA_CONNECT;
	cm_set_state(ctx, CM_SIDR_REQ_SENT);
	/* cma_resolve_ib_udp: the kernel's response timeout, 15 retries */
	ret = cm_send(ctx, &m, true, cm_timeout_ms(20));
	return ret == -EINVAL ? ret : 0;
}

int conn_sidr_reply(struct ucma_ctx *ctx, uint8_t status, uint32_t qkey, const uint8_t *pd,
		    uint8_t len)
{
	struct cm_conn *c = &ctx->conn;
	struct cm_msg m;

	if (len > CM_SIDR_REP_PRIVATE_DATA_SIZE)
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	m.attr_id = CM_ATTR_SIDR_REP;
	m.tid = c->tid;
	m.request_id = c->remote_id;
	m.sidr_status = status;
	m.service_id = c->service_id;
	if (status == CM_SIDR_SUCCESS) {
		m.local_qpn = c->local_qpn;
		m.local_qkey = qkey;
	}
	if (len) {
		memcpy(m.private_data, pd, len);
		m.private_data_len = len;
	}
	cm_set_state(ctx, CM_IDLE);
	return cm_send(ctx, &m, false, 0) == -EINVAL ? -EINVAL : 0;
}

int conn_accept_sidr(struct ucma_ctx *ctx, const struct rdma_ucm_conn_param *p)
{
	if (ctx->conn.state != CM_SIDR_REQ_RCVD)
		return -EINVAL;
	ctx->conn.local_qpn = p->qp_num;
	ctx->conn.qkey = ud_qkey(ctx, p->qkey);
	return conn_sidr_reply(ctx, CM_SIDR_SUCCESS, ctx->conn.qkey, p->private_data,
			       p->private_data_len);
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The trace hooks that read QPs and WQEs (UROCE_TRACE, docs/trace.md):
 * each turns what the verbs or the engine did to a QP into one record of
 * trace/'s writer (trace/trace.h), which knows nothing of QPs.  The hooks
 * of plain values (packets, receive WRs, CQEs, the CM's) are trace/'s own.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "engine/engine_int.h"
#include "trace/trace.h"

static const char *const wr_names[] = {
	[IBV_WR_RDMA_WRITE] = "RDMA_WRITE", [IBV_WR_RDMA_WRITE_WITH_IMM] = "RDMA_WRITE_WITH_IMM",
	[IBV_WR_SEND] = "SEND", [IBV_WR_SEND_WITH_IMM] = "SEND_WITH_IMM",
	[IBV_WR_RDMA_READ] = "RDMA_READ", [IBV_WR_ATOMIC_CMP_AND_SWP] = "ATOMIC_CMP_AND_SWP",
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = "ATOMIC_FETCH_AND_ADD", [IBV_WR_LOCAL_INV] = "LOCAL_INV",
	[IBV_WR_BIND_MW] = "BIND_MW", [IBV_WR_SEND_WITH_INV] = "SEND_WITH_INV",
};

static const char *const qps_names[] = {
	[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT", [IBV_QPS_RTR] = "RTR",
	[IBV_QPS_RTS] = "RTS", [IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE", [IBV_QPS_ERR] = "ERR",
};

/* ---- verbs ------------------------------------------------------------------------- */

void uroce_trace_sq_posted(struct uroce_qp *qp, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i != to; i++) {
		const struct uroce_send_wqe *w = ring_slot(&qp->sq, i);
		const char *op = UROCE_NAME_OF(wr_names, w->opcode);
		struct uroce_rec r;

		uroce_rec_begin(&r, "post_send", qp->vqp.qp.qp_num);
		uroce_rec_add(&r, "WR", "0x%" PRIx64, w->wr_id);
		uroce_rec_add(&r, "OP", "%s", op);
		uroce_rec_add(&r, "LEN", "%" PRIu64, w->length);
		uroce_rec_add(&r, "FLAGS", "0x%x", w->send_flags);
		uroce_rec_msg(&r, "QP %u ibv_post_send wr_id 0x%" PRIx64 " %s %" PRIu64 " bytes%s",
			      qp->vqp.qp.qp_num, w->wr_id, op, w->length,
			      w->send_flags & IBV_SEND_SIGNALED ? " signaled" : "");
		uroce_rec_end(&r);
	}
}

/* The attributes ibv_modify_qp can change, as a table: mask bit, name,
 * where the value is. */
static const struct {
	int bit;
	const char *name;
	size_t off, size;
} attr_tbl[] = {
#define A(bit, field) { IBV_QP_##bit, #field, offsetof(struct ibv_qp_attr, field), \
			sizeof(((struct ibv_qp_attr *)0)->field) }
	A(PKEY_INDEX, pkey_index), A(QKEY, qkey), A(ACCESS_FLAGS, qp_access_flags),
	A(PATH_MTU, path_mtu), A(DEST_QPN, dest_qp_num), A(RQ_PSN, rq_psn), A(SQ_PSN, sq_psn),
	A(TIMEOUT, timeout), A(RETRY_CNT, retry_cnt), A(RNR_RETRY, rnr_retry),
	A(MIN_RNR_TIMER, min_rnr_timer), A(MAX_QP_RD_ATOMIC, max_rd_atomic),
	A(MAX_DEST_RD_ATOMIC, max_dest_rd_atomic),
#undef A
};

void uroce_trace_modify(struct uroce_qp *qp, int old, const struct ibv_qp_attr *attr, int mask)
{
	enum ibv_qp_type type = qp->vqp.qp.qp_type;
	const char *from = UROCE_NAME_OF(qps_names, old), *to = UROCE_NAME_OF(qps_names, qp->state);
	char attrs[512] = "";
	size_t n = 0;
	struct uroce_rec r;

	for (size_t i = 0; i < sizeof(attr_tbl) / sizeof(attr_tbl[0]) && n < sizeof(attrs); i++) {
		uint64_t v = 0;

		if (!(mask & attr_tbl[i].bit))
			continue;
		/* little endian */
		memcpy(&v, (const char *)attr + attr_tbl[i].off, attr_tbl[i].size);
		n += (size_t)snprintf(attrs + n, sizeof(attrs) - n, "%s%s=%" PRIu64, n ? " " : "",
				      attr_tbl[i].name, v);
	}
	if ((mask & IBV_QP_AV) && n < sizeof(attrs)) {
		char gid[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, attr->ah_attr.grh.dgid.raw, gid, sizeof(gid));
		n += (size_t)snprintf(attrs + n, sizeof(attrs) - n,
				      "%sdgid=%s sgid_index=%u hop_limit=%u", n ? " " : "", gid,
				      attr->ah_attr.grh.sgid_index, attr->ah_attr.grh.hop_limit);
	}
	uroce_rec_begin(&r, "modify", qp->vqp.qp.qp_num);
	uroce_rec_add(&r, "TYPE", "%s", type == IBV_QPT_RC ? "RC" : type == IBV_QPT_UC ? "UC" :
		      type == IBV_QPT_UD ? "UD" : "?");
	uroce_rec_add(&r, "FROM", "%s", from);
	uroce_rec_add(&r, "TO", "%s", to);
	if (mask & IBV_QP_DEST_QPN)
		uroce_rec_add(&r, "DEST", "%u", attr->dest_qp_num);
	uroce_rec_add(&r, "ATTRS", "%s", attrs);
	uroce_rec_msg(&r, "QP %u ibv_modify_qp %s -> %s %s", qp->vqp.qp.qp_num, from, to, attrs);
	uroce_rec_end(&r);
}

/* ---- the engine -------------------------------------------------------------------- */

void uroce_trace_wqe_start(struct uroce_qp *qp, const struct uroce_send_wqe *w)
{
	const struct uroce_qp_eng *qe = qp->engine;
	uint32_t n;
	struct uroce_rec r;

	if (uroce_is_local_op(w->opcode))
		n = 0;
	else if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
		n = 1;
	else
		n = uroce_npkts(qe, w->length);
	uroce_rec_begin(&r, "wqe", qp->vqp.qp.qp_num);
	uroce_rec_add(&r, "WR", "0x%" PRIx64, w->wr_id);
	uroce_rec_add(&r, "OP", "%s", UROCE_NAME_OF(wr_names, w->opcode));
	uroce_rec_add(&r, "LEN", "%" PRIu64, w->length);
	uroce_rec_add(&r, "PSN", "%u", w->first_psn);
	uroce_rec_add(&r, "NPKTS", "%u", n);
	uroce_rec_msg(&r, "QP %u starts wr_id 0x%" PRIx64 ": %u packet(s), PSN %u..%u",
		      qp->vqp.qp.qp_num, w->wr_id, n, w->first_psn,
		      psn_add(w->first_psn, n ? n - 1 : 0));
	uroce_rec_end(&r);
}

void uroce_trace_to_error(struct uroce_qp *qp, int ev)
{
	struct uroce_rec r;

	if (qp->state == IBV_QPS_ERR)
		return;
	uroce_rec_begin(&r, "modify", qp->vqp.qp.qp_num);
	uroce_rec_add(&r, "FROM", "%s", UROCE_NAME_OF(qps_names, qp->state));
	uroce_rec_add(&r, "TO", "ERR");
	uroce_rec_add(&r, "ATTRS", "async_event=%s", ev < 0 ? "none" : ibv_event_type_str(ev));
	uroce_rec_msg(&r, "QP %u goes to the error state (%s)", qp->vqp.qp.qp_num,
		      ev < 0 ? "a completion error" : ibv_event_type_str(ev));
	uroce_rec_end(&r);
}

void uroce_trace_why(struct uroce_qp *qp, enum uroce_why why, uint32_t psn, int64_t arg)
{
	struct uroce_rec r;

	uroce_rec_begin(&r, "why", qp->vqp.qp.qp_num);
	uroce_rec_add(&r, "WHY", "%s", uroce_trace_why_name(why));
	uroce_rec_add(&r, "PSN", "%u", psn);
	if (arg >= 0)
		uroce_rec_add(&r, "ARG", "%" PRId64, arg);
	uroce_rec_msg(&r, "QP %u PSN %u: %s", qp->vqp.qp.qp_num, psn, uroce_trace_why_title(why));
	uroce_rec_end(&r);
}

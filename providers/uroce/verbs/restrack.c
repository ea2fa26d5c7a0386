// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The context's objects as `rdma resource show` lists them: each PD, CQ,
 * QP and MR gets an entry in the context's table in shared memory
 * (device/res.h) when it is made, its QP entry is rewritten by each
 * modify_qp, and it goes when the object goes.  A context whose table
 * could not be made keeps working, unlisted.
 */
#include "device/device.h"
#include "verbs/verbs.h"

static void fill_pd(struct uroce_res_entry *e, const void *obj)
{
	const struct uroce_pd *pd = obj;

	e->kind = UROCE_RES_PD;
	e->id = pd->pdn;
}

static void fill_cq(struct uroce_res_entry *e, const void *obj)
{
	const struct uroce_cq *cq = obj;

	e->kind = UROCE_RES_CQ;
	e->id = cq->res_id;
	e->cqe = cq->vcq.cq.cqe;
}

static void fill_qp(struct uroce_res_entry *e, const void *obj)
{
	const struct uroce_qp *qp = obj;

	e->kind = UROCE_RES_QP;
	e->id = qp->vqp.qp.qp_num;
	e->qp_type = qp->vqp.qp.qp_type;
	e->qp_state = qp->state;
	e->path_mig_state = qp->attr.path_mig_state;
	e->pdn = qp->pd ? qp->pd->pdn : 0;
	e->rqpn = qp->attr.dest_qp_num;
	e->sq_psn = qp->attr.sq_psn;
	e->rq_psn = qp->attr.rq_psn;
	e->scqn = qp->scq ? qp->scq->res_id : 0;
	e->rcqn = qp->rcq ? qp->rcq->res_id : 0;
	e->port = qp->attr.port_num;
}

static void fill_mr(struct uroce_res_entry *e, const void *obj)
{
	const struct uroce_mr *mr = obj;

	e->kind = UROCE_RES_MR;
	e->id = mr->res_id;
	e->pdn = mr->pd->pdn;
	e->lkey = mr->vmr.ibv_mr.lkey;
	e->rkey = mr->vmr.ibv_mr.rkey;
	e->length = mr->length;
}

static void (*const fill[UROCE_RES_KINDS])(struct uroce_res_entry *, const void *) = {
	[UROCE_RES_PD] = fill_pd,
	[UROCE_RES_CQ] = fill_cq,
	[UROCE_RES_QP] = fill_qp,
	[UROCE_RES_MR] = fill_mr,
};

uint32_t uroce_track(struct uroce_context *ctx, enum uroce_res_kind kind, const void *obj,
		     unsigned int *slot)
{
	struct uroce_res_entry e = { 0 };

	fill[kind](&e, obj);
	*slot = uroce_res_add(ctx->res, &e);
	return e.id;
}

void uroce_track_update(struct uroce_context *ctx, enum uroce_res_kind kind, const void *obj,
			unsigned int slot)
{
	struct uroce_res_entry e = { 0 };

	if (!slot)
		return;
	fill[kind](&e, obj);
	uroce_res_set(ctx->res, slot, &e);
}

void uroce_untrack(struct uroce_context *ctx, enum uroce_res_kind kind, unsigned int *slot)
{
	uroce_res_del(ctx->res, *slot, kind);
	*slot = 0;
}

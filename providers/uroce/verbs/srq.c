// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Shared receive queues (IBTA 10.2.9), basic and XRC (xrc.c has the rest). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "trace/trace.h"
#include "verbs/verbs.h"

static struct uroce_srq *srq_new(struct ibv_pd *pd, struct ibv_srq_attr *a)
{
	struct uroce_srq *srq;
	uint32_t size = 1;

	if (a->max_wr < 1 || a->max_wr > UROCE_MAX_SRQ_WR || a->max_sge > UROCE_MAX_SGE ||
	    a->srq_limit > a->max_wr) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	while (size < a->max_wr)
		size <<= 1;
	srq->fork_gen = uroce_fork_gen;
	srq->max_sge = a->max_sge ? a->max_sge : 1;
	srq->rq.size = size;
	srq->rq.stride = (sizeof(struct uroce_recv_wqe) +
			  srq->max_sge * sizeof(struct uroce_sge) + 63) & ~63u;
	srq->rq.buf = uroce_buf_alloc(pd, (size_t)size * srq->rq.stride, UROCE_RES_TYPE_SRQ,
				      &srq->rq.custom_buf);
	if (!srq->rq.buf) {
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	srq->max_wr = size;
	srq->srq_limit = a->srq_limit;
	srq->pd = to_upd(pd);
	if (uroce_srqn_alloc(srq)) {
		uroce_buf_free(pd, srq->rq.buf, UROCE_RES_TYPE_SRQ, srq->rq.custom_buf);
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&srq->lock, NULL);
	/* libibverbs (ibv_create_srq) sets up the mutex and the counter. */
	uroce_evobj_init(&srq->ev, srq, &srq->vsrq.srq.mutex, &srq->vsrq.srq.events_completed, NULL);
	a->max_wr = srq->max_wr;
	a->max_sge = srq->max_sge;
	srq->vsrq.srq_type = IBV_SRQT_BASIC;
	atomic_fetch_add(&srq->pd->users, 1);
	return srq;
}

struct ibv_srq *uroce_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init)
{
	struct uroce_srq *srq = srq_new(pd, &init->attr);

	return srq ? &srq->vsrq.srq : NULL;
}

/*
 * ibv_create_srq_ex(3): basic SRQs, and XRC SRQs, which need a PD, an XRC
 * domain and the CQ their completions go to.  Tag matching SRQs are not
 * offered (EOPNOTSUPP).  libibverbs leaves the generic fields of an
 * extended SRQ to the provider.
 */
struct ibv_srq *uroce_create_srq_ex(struct ibv_context *context,
				    struct ibv_srq_init_attr_ex *ia)
{
	const uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			       IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	enum ibv_srq_type type = (ia->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ? ia->srq_type :
				 IBV_SRQT_BASIC;
	bool xrc = type == IBV_SRQT_XRC;
	struct uroce_srq *srq;
	struct ibv_srq *s;

	if ((ia->comp_mask & ~known) || (type != IBV_SRQT_BASIC && !xrc)) {
		errno = (ia->comp_mask & ~known) >= IBV_SRQ_INIT_ATTR_RESERVED ? EINVAL : EOPNOTSUPP;
		return NULL;
	}
	if (!(ia->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !ia->pd || ia->pd->context != context ||
	    (xrc && (!(ia->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !ia->xrcd ||
		     !(ia->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !ia->cq ||
		     ia->cq->context != context))) {
		errno = EINVAL;
		return NULL;
	}
	srq = srq_new(ia->pd, &ia->attr);
	if (!srq)
		return NULL;
	s = &srq->vsrq.srq;
	s->context = context;
	s->srq_context = ia->srq_context;
	s->pd = ia->pd;
	s->events_completed = 0;
	pthread_mutex_init(&s->mutex, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (xrc) {
		srq->vsrq.srq_type = IBV_SRQT_XRC;
		srq->vsrq.xrcd = (struct verbs_xrcd *)ia->xrcd;
		srq->vsrq.cq = ia->cq;
		srq->xrcd = uroce_xrcd_dom(ia->xrcd);
		srq->cq = to_ucq(ia->cq);
		uroce_xrcd_hold(srq->xrcd, 1);
		atomic_fetch_add(&srq->cq->users, 1);
	}
	return s;
}

int uroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct uroce_srq *srq = to_usrq(ibsrq);
	int err = 0;

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	if (mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP; /* no SRQ resize: IBV_DEVICE_SRQ_RESIZE is not offered */
	pthread_mutex_lock(&srq->lock);
	if (attr->srq_limit > srq->max_wr)
		err = EINVAL;
	else
		srq->srq_limit = attr->srq_limit; /* arms the limit event (0 disarms) */
	pthread_mutex_unlock(&srq->lock);
	return err;
}

int uroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct uroce_srq *srq = to_usrq(ibsrq);

	pthread_mutex_lock(&srq->lock);
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->srq_limit;
	pthread_mutex_unlock(&srq->lock);
	return 0;
}

int uroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct uroce_srq *srq = to_usrq(ibsrq);

	if (uroce_parents(srq->fork_gen))
		return EPERM;
	if (atomic_load(&srq->users) > 0)
		return EBUSY;
	uroce_srqn_free(srq); /* waits for responders using it (xrc.c) */
	if (srq->cq)
		atomic_fetch_sub(&srq->cq->users, 1);
	uroce_xrcd_hold(srq->xrcd, -1);
	atomic_fetch_sub(&srq->pd->users, 1);
	pthread_mutex_destroy(&srq->lock);
	uroce_buf_free(ibsrq->pd, srq->rq.buf, UROCE_RES_TYPE_SRQ, srq->rq.custom_buf);
	uroce_evobj_release(to_uctx(ibsrq->context), &srq->ev);
	return 0;
}

int uroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct uroce_srq *srq = to_usrq(ibsrq);
	int err = 0;

	/* a forked child's copy of its parent's (docs/fork.md) */
	if (uroce_parents(srq->fork_gen)) {
		*bad_wr = wr;
		return EPERM;
	}
	pthread_mutex_lock(&srq->lock);
	for (; wr; wr = wr->next) {
		err = uroce_fill_recv(&srq->rq, srq->max_sge, wr);
		if (err)
			break;
		UROCE_TRACE(uroce_trace_post_recv(0, wr));
	}
	pthread_mutex_unlock(&srq->lock);
	if (err)
		*bad_wr = wr;
	return err;
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Shared receive queues (IBTA 10.2.9). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "qp.h"

struct ibv_srq *uroce_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init)
{
	struct ibv_srq_attr *a = &init->attr;
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
	pthread_mutex_init(&srq->lock, NULL);
	a->max_wr = srq->max_wr;
	a->max_sge = srq->max_sge;
	atomic_fetch_add(&srq->pd->users, 1);
	return &srq->vsrq.srq;
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

	if (atomic_load(&srq->users) > 0)
		return EBUSY;
	atomic_fetch_sub(&srq->pd->users, 1);
	pthread_mutex_destroy(&srq->lock);
	uroce_buf_free(ibsrq->pd, srq->rq.buf, UROCE_RES_TYPE_SRQ, srq->rq.custom_buf);
	free(srq);
	return 0;
}

int uroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct uroce_srq *srq = to_usrq(ibsrq);
	int err = 0;

	pthread_mutex_lock(&srq->lock);
	for (; wr; wr = wr->next) {
		err = uroce_fill_recv(&srq->rq, srq->max_sge, wr);
		if (err)
			break;
	}
	pthread_mutex_unlock(&srq->lock);
	if (err)
		*bad_wr = wr;
	return err;
}

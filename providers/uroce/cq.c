// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Completion queues: a ring of work completions per CQ. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uroce.h"

struct ibv_cq *uroce_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel, int comp_vector)
{
	struct uroce_cq *cq;
	uint32_t size = 1;

	if (cqe < 1 || cqe > UROCE_MAX_CQE || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	if (channel) {
		/* Completion channels come with the event engine. */
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* One slot stays free to tell full from empty. */
	while (size < (uint32_t)cqe + 1)
		size <<= 1;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		goto nomem;
	cq->ring = calloc(size, sizeof(*cq->ring));
	if (!cq->ring)
		goto nomem;
	cq->size = size;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	cq->vcq.cq.cqe = size - 1; /* the actual capacity, >= the request */
	return &cq->vcq.cq;
nomem:
	if (cq)
		free(cq->ring);
	free(cq);
	errno = ENOMEM;
	return NULL;
}

int uroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct uroce_cq *cq = to_ucq(ibcq);

	pthread_spin_destroy(&cq->lock);
	free(cq->ring);
	free(cq);
	return 0;
}

int uroce_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct uroce_cq *cq = to_ucq(ibcq);
	int n = 0;

	if (num_entries < 0)
		return -EINVAL;
	pthread_spin_lock(&cq->lock);
	while (n < num_entries && cq->head != cq->tail) {
		wc[n++] = cq->ring[cq->head];
		cq->head = (cq->head + 1) & (cq->size - 1);
	}
	pthread_spin_unlock(&cq->lock);
	return n;
}

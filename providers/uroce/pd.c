// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Protection domains. */
#include <errno.h>
#include <stdlib.h>

#include "uroce.h"

struct ibv_pd *uroce_alloc_pd(struct ibv_context *context)
{
	struct uroce_context *ctx = to_uctx(context);
	struct uroce_pd *pd = calloc(1, sizeof(*pd));

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&ctx->lock);
	pd->pdn = ++ctx->next_pdn;
	pthread_mutex_unlock(&ctx->lock);
	pd->ibv_pd.handle = pd->pdn;
	atomic_init(&pd->users, 0);
	return &pd->ibv_pd;
}

int uroce_dealloc_pd(struct ibv_pd *ibpd)
{
	struct uroce_pd *pd = to_upd(ibpd);

	/* A PD still holding MRs, QPs, AHs or SRQs cannot go (as on an RNIC). */
	if (atomic_load(&pd->users) > 0)
		return EBUSY;
	free(pd);
	return 0;
}

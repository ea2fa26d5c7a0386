// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Protection domains, thread domains and parent domains
 * (ibv_alloc_parent_domain(3), ibv_alloc_td(3)).
 *
 * A parent domain is a PD whose objects are protected by another PD (its
 * `protection`; to_upd() resolves it, so every key and QP check compares
 * the real PDs) and whose QP, SRQ and CQ rings come from the consumer's
 * allocator, asked with the UROCE_RES_TYPE_* resource types, the page
 * size as alignment, and falling back to ours when it answers
 * IBV_ALLOCATOR_USE_DEFAULT.  A thread domain is a promise that one
 * thread uses the objects; uroce keeps its locks, which costs little, so
 * the promise changes nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "verbs/verbs.h"

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
	uroce_track(ctx, UROCE_RES_PD, pd, &pd->res_slot);
	return &pd->ibv_pd;
}

bool uroce_is_parent_domain(struct ibv_pd *pd)
{
	return ((struct uroce_pd *)pd)->protection != NULL;
}

int uroce_dealloc_pd(struct ibv_pd *ibpd)
{
	struct uroce_pd *pd = (struct uroce_pd *)ibpd; /* itself, not its protection */

	/* A PD still holding MRs, QPs, AHs or SRQs cannot go (as on an RNIC). */
	if (atomic_load(&pd->users) > 0)
		return EBUSY;
	if (pd->protection)
		atomic_fetch_sub(&pd->protection->users, 1);
	else
		uroce_untrack(to_uctx(ibpd->context), UROCE_RES_PD, &pd->res_slot);
	free(pd);
	return 0;
}

struct ibv_td *uroce_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr)
{
	struct ibv_td *td;

	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	td = calloc(1, sizeof(*td));
	if (!td) {
		errno = ENOMEM;
		return NULL;
	}
	td->context = context;
	return td;
}

int uroce_dealloc_td(struct ibv_td *td)
{
	free(td);
	return 0;
}

struct ibv_pd *uroce_alloc_parent_domain(struct ibv_context *context,
					 struct ibv_parent_domain_init_attr *attr)
{
	struct uroce_pd *pd;

	if ((attr->comp_mask & ~(uint32_t)(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
					   IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)) ||
	    !attr->pd || attr->pd->context != context || uroce_is_parent_domain(attr->pd) ||
	    (attr->td && attr->td->context != context) ||
	    ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	     (!attr->alloc || !attr->free))) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->protection = (struct uroce_pd *)attr->pd;
	pd->td = attr->td;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	pd->pdn = pd->protection->pdn;
	pd->ibv_pd.context = context;
	pd->ibv_pd.handle = pd->pdn;
	atomic_fetch_add(&pd->protection->users, 1);
	return &pd->ibv_pd;
}

void *uroce_buf_alloc(struct ibv_pd *ibpd, size_t size, uint64_t type, bool *custom)
{
	struct uroce_pd *pd = (struct uroce_pd *)ibpd;
	void *p;

	*custom = false;
	if (pd && pd->alloc) {
		p = pd->alloc(ibpd, pd->pd_context, size, (size_t)sysconf(_SC_PAGESIZE), type);
		if (p != IBV_ALLOCATOR_USE_DEFAULT) {
			if (!p) {
				errno = ENOMEM;
				return NULL;
			}
			*custom = true;
			return memset(p, 0, size);
		}
	}
	p = calloc(1, size);
	if (!p)
		errno = ENOMEM;
	return p;
}

/* The consumer's free takes back what its alloc gave; ours, the rest. */
void uroce_buf_free(struct ibv_pd *ibpd, void *buf, uint64_t type, bool custom)
{
	struct uroce_pd *pd = (struct uroce_pd *)ibpd;

	if (!buf)
		return;
	if (custom)
		pd->free(ibpd, pd->pd_context, buf, type);
	else
		free(buf);
}

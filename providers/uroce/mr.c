// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Memory regions.  The engine runs inside the application, so a region is
 * a record of a range, its rights and its keys: nothing is pinned.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include "uroce.h"

#define SUPPORTED_ACCESS                                                       \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                    \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |                   \
	 IBV_ACCESS_ZERO_BASED | IBV_ACCESS_RELAXED_ORDERING |                 \
	 IBV_ACCESS_HUGETLB)

/* 0, or the errno reg_mr must fail with for ACCESS. */
static int check_access(int access)
{
	if (access & (IBV_ACCESS_ON_DEMAND | IBV_ACCESS_MW_BIND))
		return EOPNOTSUPP; /* no ODP, no memory windows (max_mw = 0) */
	if (access & ~SUPPORTED_ACCESS)
		return EINVAL;
	/* IBTA 10.6.3.1 (C10-29): remote write or atomic access requires
	 * local write access. */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	return 0;
}

/* A real RNIC pins the pages and fails on unmapped memory; so do we. */
static int range_mapped(void *addr, size_t length)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(page - 1);
	uintptr_t end = (uintptr_t)addr + length;

	if (!length)
		return 1;
	return msync((void *)start, end - start, MS_ASYNC) == 0;
}

struct ibv_mr *uroce_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			    uint64_t hca_va, int access)
{
	struct uroce_context *ctx = to_uctx(ibpd->context);
	struct uroce_mr *mr;
	uint32_t key;
	int err;

	err = check_access(access);
	if (!err && (length > UROCE_MAX_MR_SIZE ||
		     (uintptr_t)addr + length < (uintptr_t)addr))
		err = EINVAL;
	if (!err && !range_mapped(addr, length))
		err = EFAULT;
	if (err) {
		errno = err;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	mr->pd = to_upd(ibpd);
	mr->addr = addr;
	mr->iova = (access & IBV_ACCESS_ZERO_BASED) ? 0 : hca_va;
	mr->length = length;
	mr->access = access;
	key = uroce_keytab_insert(&ctx->mr_keys, mr);
	if (!key) {
		free(mr);
		return NULL;
	}
	mr->vmr.ibv_mr.lkey = key;
	mr->vmr.ibv_mr.rkey = key;
	mr->vmr.ibv_mr.handle = key;
	mr->vmr.mr_type = PABI_MR_TYPE_MR;
	mr->vmr.access = access;
	atomic_fetch_add(&mr->pd->users, 1);
	return &mr->vmr.ibv_mr;
}

int uroce_dereg_mr(struct verbs_mr *vmr)
{
	struct uroce_mr *mr = (struct uroce_mr *)vmr;
	struct uroce_context *ctx = to_uctx(vmr->ibv_mr.context);

	if (uroce_keytab_remove(&ctx->mr_keys, vmr->ibv_mr.lkey))
		return EINVAL;
	atomic_fetch_sub(&mr->pd->users, 1);
	free(mr);
	return 0;
}

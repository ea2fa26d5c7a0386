// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Memory regions.  The engine runs inside the application, so a region is
 * a record of a range, its rights and its keys: nothing is pinned.
 *
 * On-demand paging (IBV_ACCESS_ON_DEMAND) is therefore native: an ODP
 * region need not be mapped when it is registered, and every access
 * checks that the pages it touches are mapped at that moment (mem.c), so
 * memory mapped after registration is reachable and unmapped memory gives
 * an access error, never a fault.  An implicit ODP region (addr NULL,
 * length SIZE_MAX) covers the whole address space, its iova equal to the
 * process's addresses.  See docs/memory.md.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include "engine/engine.h"
#include "verbs/verbs.h"

#define SUPPORTED_ACCESS                                                       \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |                    \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |                   \
	 IBV_ACCESS_ZERO_BASED | IBV_ACCESS_RELAXED_ORDERING |                 \
	 IBV_ACCESS_HUGETLB | IBV_ACCESS_ON_DEMAND | IBV_ACCESS_MW_BIND)

/* 0, or the errno reg_mr must fail with for ACCESS. */
static int check_access(int access)
{
	if (access & ~SUPPORTED_ACCESS)
		return EINVAL;
	/* IBTA 10.6.3.1 (C10-29): remote write or atomic access requires
	 * local write access. */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	return 0;
}

static bool is_implicit(void *addr, size_t length, int access)
{
	return !addr && length == SIZE_MAX && (access & IBV_ACCESS_ON_DEMAND);
}

/* 0, or the errno registering [ADDR, ADDR+LENGTH) with ACCESS fails with. */
static int check_region(void *addr, size_t length, int access)
{
	if (is_implicit(addr, length, access))
		return (access & IBV_ACCESS_ZERO_BASED) ? EINVAL : 0;
	if (length > UROCE_MAX_MR_SIZE || (uintptr_t)addr + length < (uintptr_t)addr)
		return EINVAL;
	/* A real RNIC pins the pages and fails on unmapped memory; so do we,
	 * but for ODP, which maps them when they are used. */
	if (!(access & IBV_ACCESS_ON_DEMAND) && !uroce_mem_mapped(addr, length))
		return EFAULT;
	return 0;
}

/* Where the region's bytes are and the addresses peers use for them. */
static void set_region(struct uroce_mr *mr, void *addr, size_t length,
		       uint64_t hca_va, int access)
{
	mr->addr = addr;
	mr->iova = (access & IBV_ACCESS_ZERO_BASED) ? 0 : hca_va;
	mr->length = is_implicit(addr, length, access) ? UINT64_MAX : length;
}

struct ibv_mr *uroce_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			    uint64_t hca_va, int access)
{
	struct uroce_context *ctx = to_uctx(ibpd->context);
	struct uroce_mr *mr;
	uint32_t key;
	int err;

	err = check_access(access);
	if (!err)
		err = check_region(addr, length, access);
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
	set_region(mr, addr, length, hca_va, access);
	mr->access = access;
	mr->key_kind = UROCE_KEY_MR;
	key = uroce_keytab_insert(&ctx->mr_keys, &mr->key_kind);
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
	mr->res_id = uroce_track(ctx, UROCE_RES_MR, mr, &mr->res_slot);
	return &mr->vmr.ibv_mr;
}

int uroce_dereg_mr(struct verbs_mr *vmr)
{
	struct uroce_mr *mr = (struct uroce_mr *)vmr;
	struct uroce_context *ctx = to_uctx(vmr->ibv_mr.context);

	/* Windows bound to it would point at freed memory: refuse (rxe does too). */
	if (atomic_load(&mr->mw_binds))
		return EBUSY;
	if (uroce_keytab_remove(&ctx->mr_keys, vmr->ibv_mr.lkey))
		return EINVAL;
	uroce_untrack(ctx, UROCE_RES_MR, &mr->res_slot);
	atomic_fetch_sub(&mr->pd->users, 1);
	free(mr);
	return 0;
}

/*
 * ibv_rereg_mr(3): change an MR's translation (address and length; the
 * new address is also its iova), PD or access, in any combination.  The
 * keys stay the same; peers holding the R_Key see the new region.  The
 * change happens under the key table's write lock, so no access is in
 * flight meanwhile.  On failure nothing changes.  libibverbs has checked
 * the flags and updates ibv_mr's pd/addr/length after we succeed.
 */
int uroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *ibpd,
		   void *addr, size_t length, int access)
{
	struct uroce_mr *mr = (struct uroce_mr *)vmr;
	struct uroce_context *ctx = to_uctx(vmr->ibv_mr.context);
	int new_access = (flags & IBV_REREG_MR_CHANGE_ACCESS) ? access : mr->access;
	struct uroce_pd *new_pd = (flags & IBV_REREG_MR_CHANGE_PD) ? to_upd(ibpd) : mr->pd;
	int err = 0;

	if (flags & ~(IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
		      IBV_REREG_MR_CHANGE_ACCESS))
		err = EINVAL;
	else if ((flags & IBV_REREG_MR_CHANGE_PD) &&
		 (!ibpd || ibpd->context != vmr->ibv_mr.context))
		err = EINVAL;
	else if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		err = check_access(access);
	if (!err && (flags & IBV_REREG_MR_CHANGE_TRANSLATION))
		err = check_region(addr, length, new_access);
	/* ZERO_BASED and implicit ODP depend on the region: keep them consistent. */
	if (!err && !(flags & IBV_REREG_MR_CHANGE_TRANSLATION) &&
	    ((new_access ^ mr->access) & (IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND)))
		err = EINVAL;
	if (err) {
		errno = err;
		return err;
	}
	pthread_rwlock_wrlock(&ctx->mr_keys.lock);
	if (atomic_load(&mr->mw_binds)) {
		/* Windows bound to it keep their rights (IBTA 10.6.7). */
		pthread_rwlock_unlock(&ctx->mr_keys.lock);
		errno = EBUSY;
		return EBUSY;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION)
		set_region(mr, addr, length, (uintptr_t)addr, new_access);
	mr->access = new_access;
	vmr->access = new_access;
	if (new_pd != mr->pd) {
		atomic_fetch_add(&new_pd->users, 1);
		atomic_fetch_sub(&mr->pd->users, 1);
		mr->pd = new_pd;
	}
	pthread_rwlock_unlock(&ctx->mr_keys.lock);
	uroce_track_update(ctx, UROCE_RES_MR, mr, mr->res_slot);
	return 0;
}

/*
 * ibv_advise_mr(3): prefetch the pages of ODP MRs.  Every SGE must name an
 * ODP MR of PD and lie inside it (EINVAL otherwise, as the kernel's
 * prefetch refuses non-ODP MRs).  PREFETCH and PREFETCH_WRITE fault the
 * pages in (MADV_POPULATE_READ/WRITE where the kernel has them; an
 * unmapped page gives EFAULT); PREFETCH_NO_FAULT only checks.  The work is
 * done before we return, so IBV_ADVISE_MR_FLAG_FLUSH changes nothing.
 */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

static int prefetch(void *addr, uint64_t len, enum ibv_advise_mr_advice advice)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~(page - 1);
	int how = advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE ? MADV_POPULATE_WRITE
							     : MADV_POPULATE_READ;

	if (!uroce_mem_mapped(addr, len))
		return EFAULT;
	if (advice == IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT || !len)
		return 0;
	if (madvise((void *)start, (uintptr_t)addr + len - start, how) == 0 || errno == EINVAL)
		return 0; /* EINVAL: a kernel before 5.14, nothing to populate with */
	return errno == ENOMEM ? EFAULT : errno;
}

int uroce_advise_mr(struct ibv_pd *ibpd, enum ibv_advise_mr_advice advice,
		    uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge)
{
	struct uroce_context *ctx = to_uctx(ibpd->context);
	int err = 0;

	if (advice > IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT ||
	    (flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) || !num_sge || !sg_list)
		return EINVAL;
	pthread_rwlock_rdlock(&ctx->mr_keys.lock);
	for (uint32_t i = 0; i < num_sge && !err; i++) {
		struct uroce_mr *mr = uroce_key_mr(uroce_keytab_find(&ctx->mr_keys, sg_list[i].lkey));
		uint64_t va = sg_list[i].addr, len = sg_list[i].length;

		if (!mr || mr->pd != to_upd(ibpd) || !(mr->access & IBV_ACCESS_ON_DEMAND) ||
		    va < mr->iova || len > mr->length || va - mr->iova > mr->length - len)
			err = EINVAL;
		else if (advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
			 !(mr->access & IBV_ACCESS_LOCAL_WRITE))
			err = EACCES;
		else
			err = prefetch(mr->addr + (va - mr->iova), len, advice);
	}
	pthread_rwlock_unlock(&ctx->mr_keys.lock);
	return err;
}

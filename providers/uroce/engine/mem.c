// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Checked access to registered memory by key. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "engine/mem.h"

bool uroce_mem_mapped(const void *addr, uint64_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~(page - 1);
	uintptr_t end = (uintptr_t)addr + len;

	if (!len)
		return true;
	if (end < (uintptr_t)addr)
		return false;
	/* msync fails with ENOMEM on any unmapped page of the range. */
	return msync((void *)start, end - start, MS_ASYNC) == 0;
}

void uroce_mem_lock(struct uroce_qp *qp)
{
	pthread_rwlock_rdlock(&qp->ctx->mr_keys.lock);
}

void uroce_mem_unlock(struct uroce_qp *qp)
{
	pthread_rwlock_unlock(&qp->ctx->mr_keys.lock);
}

/* The pointer to [va, va+len) of MR, or NULL if the MR does not hold it;
 * for an ODP MR, the pages must also be mapped now (mr.c). */
static uint8_t *mr_bytes(struct uroce_mr *mr, uint64_t va, uint64_t len)
{
	uint8_t *p;

	if (va < mr->iova || len > mr->length || va - mr->iova > mr->length - len)
		return NULL;
	p = mr->addr + (va - mr->iova);
	if ((mr->access & IBV_ACCESS_ON_DEMAND) && !uroce_mem_mapped(p, len))
		return NULL;
	return p;
}

/* The MR named by L_Key KEY if it belongs to the QP's PD and holds [va, va+len). */
static struct uroce_mr *mr_range(struct uroce_qp *qp, uint32_t key, uint64_t va, uint64_t len)
{
	struct uroce_mr *mr = uroce_key_mr(uroce_keytab_find(&qp->ctx->mr_keys, key));

	if (!mr || mr->pd != qp->pd || !mr_bytes(mr, va, len))
		return NULL;
	return mr;
}

/*
 * Through a memory window (IBTA 10.6.7): the window must be bound, of
 * the QP's PD, a type 2 window bound through this very QP, grant ACCESS,
 * and hold the range; its bytes are the MR's under the window.
 */
static uint8_t *mw_bytes(struct uroce_qp *qp, struct uroce_mw *mw, uint64_t va,
			 uint64_t len, int access)
{
	if (!mw->mr || mw->pd != qp->pd || (mw->access & access) != access)
		return NULL;
	if (mw->ibv_mw.type == IBV_MW_TYPE_2 && mw->qpn != qp->vqp.qp.qp_num)
		return NULL;
	if (va < mw->iova || len > mw->length || va - mw->iova > mw->length - len)
		return NULL;
	return mr_bytes(mw->mr, mw->mr_va + (va - mw->iova), len);
}

uint8_t *uroce_mem_remote(struct uroce_qp *qp, uint32_t rkey, uint64_t va,
			  uint64_t len, int access)
{
	void *k = uroce_keytab_find(&qp->ctx->mr_keys, rkey);
	struct uroce_mw *mw = uroce_key_mw(k);
	struct uroce_mr *mr = uroce_key_mr(k);

	if (mw)
		return mw_bytes(qp, mw, va, len, access);
	if (!mr || mr->pd != qp->pd || (mr->access & access) != access)
		return NULL;
	return mr_bytes(mr, va, len);
}

int uroce_mem_local(struct uroce_qp *qp, const struct uroce_sge *sge, uint32_t nsge,
		    uint64_t off, uint64_t len, int write, struct iovec *iov, int max)
{
	int n = 0;

	for (uint32_t i = 0; i < nsge && len; i++) {
		uint64_t take;
		struct uroce_mr *mr;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		take = sge[i].length - off;
		if (take > len)
			take = len;
		mr = mr_range(qp, sge[i].lkey, sge[i].addr, sge[i].length);
		if (!mr || (write && !(mr->access & IBV_ACCESS_LOCAL_WRITE)))
			return -EACCES;
		if (n == max)
			return -E2BIG;
		iov[n].iov_base = mr->addr + (sge[i].addr - mr->iova) + off;
		iov[n].iov_len = take;
		n++;
		len -= take;
		off = 0;
	}
	return len ? -E2BIG : n;
}

int uroce_mem_scatter(struct uroce_qp *qp, const struct uroce_sge *sge, uint32_t nsge,
		      uint64_t off, const void *data, uint64_t len)
{
	struct iovec iov[UROCE_MAX_SGE];
	const uint8_t *p = data;
	int n = uroce_mem_local(qp, sge, nsge, off, len, 1, iov, UROCE_MAX_SGE);

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		memcpy(iov[i].iov_base, p, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	return 0;
}

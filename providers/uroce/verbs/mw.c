// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Memory windows (IBTA 10.6.7; ibv_alloc_mw(3), ibv_bind_mw(3)).
 *
 * A window lives in the context's key table beside the MRs, under its
 * current R_Key.  Binding and invalidating are send-queue operations
 * executed in order by the requester (req.c calls uroce_mw_local_op when
 * the WQE's turn comes); a SEND with Invalidate invalidates at the
 * responder (resp.c calls uroce_mw_remote_invalidate).  Every change of a
 * window happens under the key table's write lock, so a remote access
 * (which holds the read lock, mem.c) sees a window either before or after.
 *
 * Keys: a bind gives the window a new R_Key whose upper 24 bits are the
 * window's and whose low 8 bits the consumer chose (ibv_inc_rkey); a new
 * key already taken by an MR fails the bind (IBV_WC_MW_BIND_ERR), which
 * the random 32-bit MR keys make a 1-in-2^32-per-MR event.
 *
 * Types: type 1 is bound by ibv_bind_mw and unbound by binding it with
 * length 0; type 2 is type 2B: bound with IBV_WR_BIND_MW to the QP that
 * binds it (only that QP may use it remotely), invalidated by
 * IBV_WR_LOCAL_INV or a SEND with Invalidate, and bound again only once
 * invalid.  Deallocating a window invalidates it.  A window must not be
 * deallocated while a bind of it is still queued (as for any WR's
 * objects, ibv_post_send(3)).
 */
#include <errno.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "verbs/verbs.h"

/* LOCAL_WRITE means nothing for a window, but programs pass it (rdma-core's
 * tests do) and hardware accepts it: allowed, ignored. */
#define MW_ACCESS                                                              \
	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |                    \
	 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE)

struct ibv_mw *uroce_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct uroce_context *ctx = to_uctx(ibpd->context);
	struct uroce_mw *mw;
	uint32_t key;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	mw->key_kind = UROCE_KEY_MW;
	mw->pd = to_upd(ibpd);
	key = uroce_keytab_insert(&ctx->mr_keys, &mw->key_kind);
	if (!key) {
		free(mw);
		return NULL;
	}
	mw->ibv_mw.context = ibpd->context;
	mw->ibv_mw.pd = ibpd;
	mw->key = key;
	mw->ibv_mw.rkey = key;
	mw->ibv_mw.handle = key;
	mw->ibv_mw.type = type;
	atomic_fetch_add(&mw->pd->users, 1);
	return &mw->ibv_mw;
}

/* Make MW free (invalid); with the key table's write lock held. */
static void unbind_locked(struct uroce_mw *mw)
{
	if (mw->mr)
		atomic_fetch_sub(&mw->mr->mw_binds, 1);
	mw->mr = NULL;
	mw->length = 0;
	mw->access = 0;
}

int uroce_dealloc_mw(struct ibv_mw *ibmw)
{
	struct uroce_mw *mw = (struct uroce_mw *)ibmw;
	struct uroce_context *ctx = to_uctx(ibmw->context);

	pthread_rwlock_wrlock(&ctx->mr_keys.lock);
	unbind_locked(mw);
	pthread_rwlock_unlock(&ctx->mr_keys.lock);
	if (uroce_keytab_remove(&ctx->mr_keys, mw->key))
		return EINVAL;
	atomic_fetch_sub(&mw->pd->users, 1);
	free(mw);
	return 0;
}

/* Checks of a bind that need no lock: 0 or an errno. */
static int bind_args_ok(struct ibv_pd *qp_pd, struct ibv_mw *mw,
			const struct ibv_mw_bind_info *b)
{
	struct uroce_mr *mr = (struct uroce_mr *)b->mr;

	/* PDs compared as protection domains (a parent domain stands for its PD). */
	if (!mw || to_upd(mw->pd) != to_upd(qp_pd))
		return EINVAL;
	if (b->mw_access_flags & ~MW_ACCESS)
		return EINVAL;
	if (mw->type == IBV_MW_TYPE_1 && (b->mw_access_flags & IBV_ACCESS_ZERO_BASED))
		return EINVAL; /* type 1 windows are virtually addressed */
	if (!b->length)
		return mw->type == IBV_MW_TYPE_1 ? 0 : EINVAL; /* type 1: unbind */
	if (!mr || mr->pd != to_upd(mw->pd) || !(mr->access & IBV_ACCESS_MW_BIND))
		return EINVAL;
	/* Remote write or atomic rights need a locally writable MR, as for
	 * MRs themselves (IBTA 10.6.3.1, C10-29). */
	if ((b->mw_access_flags & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	if (b->addr < mr->iova || b->length > mr->length || b->addr - mr->iova > mr->length - b->length)
		return EINVAL;
	return 0;
}

/* Execute a bind: the window takes the rights of B under R_Key RKEY. */
static enum ibv_wc_status do_bind(struct uroce_qp *qp, struct uroce_send_wqe *w)
{
	struct uroce_mw *mw = (struct uroce_mw *)w->bind.mw;
	struct uroce_keytab *t = &qp->ctx->mr_keys;
	const struct ibv_mw_bind_info *b = &w->bind.info;
	enum ibv_wc_status st = IBV_WC_SUCCESS;

	if (bind_args_ok(&qp->pd->ibv_pd, w->bind.mw, b))
		return IBV_WC_MW_BIND_ERR;
	pthread_rwlock_wrlock(&t->lock);
	if (mw->ibv_mw.type == IBV_MW_TYPE_2 &&
	    (mw->mr || (w->bind.rkey >> 8) != (mw->key >> 8)))
		st = IBV_WC_MW_BIND_ERR; /* bound already, or not its key */
	else if (uroce_keytab_rekey_locked(t, mw->key, w->bind.rkey))
		st = IBV_WC_MW_BIND_ERR;
	if (st == IBV_WC_SUCCESS) {
		unbind_locked(mw);
		mw->key = w->bind.rkey;
		mw->ibv_mw.rkey = w->bind.rkey;
		if (b->length) {
			mw->mr = (struct uroce_mr *)b->mr;
			atomic_fetch_add(&mw->mr->mw_binds, 1);
			mw->mr_va = b->addr;
			mw->iova = (b->mw_access_flags & IBV_ACCESS_ZERO_BASED) ? 0 : b->addr;
			mw->length = b->length;
			mw->access = (int)b->mw_access_flags;
			mw->qpn = qp->vqp.qp.qp_num;
		}
	}
	pthread_rwlock_unlock(&t->lock);
	return st;
}

/* Invalidate the type 2 window named by RKEY; REMOTE: a SEND with
 * Invalidate, which may only name a window bound through this QP. */
static int invalidate(struct uroce_qp *qp, uint32_t rkey, bool remote)
{
	struct uroce_keytab *t = &qp->ctx->mr_keys;
	struct uroce_mw *mw;
	int ret = 0;

	pthread_rwlock_wrlock(&t->lock);
	mw = uroce_key_mw(uroce_keytab_find(t, rkey));
	/* Our MRs are not fast-registered: their keys cannot be invalidated. */
	if (!mw || mw->ibv_mw.type != IBV_MW_TYPE_2 || mw->pd != qp->pd || !mw->mr ||
	    (remote && mw->qpn != qp->vqp.qp.qp_num))
		ret = -EINVAL;
	else
		unbind_locked(mw);
	pthread_rwlock_unlock(&t->lock);
	return ret;
}

enum ibv_wc_status uroce_mw_local_op(struct uroce_qp *qp, struct uroce_send_wqe *w)
{
	if (w->opcode == IBV_WR_BIND_MW)
		return do_bind(qp, w);
	return invalidate(qp, w->invalidate_rkey, false) ? IBV_WC_LOC_QP_OP_ERR : IBV_WC_SUCCESS;
}

int uroce_mw_remote_invalidate(struct uroce_qp *qp, uint32_t rkey)
{
	return invalidate(qp, rkey, true);
}

/* Fill W, a WQE opened for IBV_WR_BIND_MW (post.c, wr.c, ibv_bind_mw). */
int uroce_wqe_set_bind(struct uroce_qp *qp, struct uroce_send_wqe *w, struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	int err = bind_args_ok(qp->vqp.qp.pd, mw, info);

	if (err)
		return err;
	w->bind.mw = mw;
	w->bind.rkey = rkey;
	w->bind.info = *info;
	return 0;
}

/* ibv_bind_mw(3): a type 1 bind through QP's send queue; the window's
 * R_Key changes now, as the man page has the caller read it back. */
int uroce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct uroce_qp *qp = to_uqp(ibqp);
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct uroce_send_wqe *w;
	int err = 0;

	if (mw->type != IBV_MW_TYPE_1 || ibqp->qp_type == IBV_QPT_UD)
		return EINVAL;
	pthread_mutex_lock(&qp->post_lock);
	pthread_mutex_lock(&qp->lock);
	if (!uroce_sq_state_ok(qp))
		err = EINVAL;
	else if (!(w = uroce_wqe_new(qp, mw_bind->wr_id, IBV_WR_BIND_MW, mw_bind->send_flags)))
		err = ENOMEM;
	else if (!(err = uroce_wqe_set_bind(qp, w, mw, rkey, &mw_bind->bind_info)) &&
		 !(err = uroce_wqe_check(qp, w))) {
		ring_publish(&qp->sq);
		uroce_engine_sq_posted(qp);
	}
	pthread_mutex_unlock(&qp->lock);
	pthread_mutex_unlock(&qp->post_lock);
	if (!err)
		mw->rkey = rkey;
	return err;
}

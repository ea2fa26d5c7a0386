// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * XRC objects (IBTA vol. 1, XRC since 1.2.1): XRC domains
 * (ibv_open_xrcd), XRC SRQs (ibv_create_srq_ex) and the numbers XRCETHs
 * name them by, and the receive QP's choice of SRQ per request.
 *
 * Scope: an XRC domain opened on a file is shared, as the kernel shares it
 * between the processes that open the same inode on one device, but here
 * among the contexts of one process only: the receive QP runs in the
 * process that created it and delivers into that process's memory.  SRQ
 * numbers are unique in the process.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/engine.h"
#include "verbs/verbs.h"

/* One XRC domain; each ibv_open_xrcd of it gives a handle. */
struct uroce_xrcd_dom {
	struct ibv_device *device;
	bool named;                   /* opened on a file: found again by its inode */
	dev_t st_dev;
	ino_t st_ino;
	int opens;                    /* handles (under xrc_lock) */
	atomic_int users;             /* XRC SRQs and receive QPs in it */
	struct uroce_xrcd_dom *next;
};

struct uroce_xrcd {
	struct verbs_xrcd vx;
	struct uroce_xrcd_dom *dom;
};

static pthread_mutex_t xrc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uroce_xrcd_dom *doms;

/* SRQ number -> SRQ.  Responders hold the read lock while they use the SRQ
 * a request named, so destroy_srq (write lock) never frees one in use. */
static pthread_rwlock_t srqn_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct uroce_srq *srqns[UROCE_MAX_SRQ + 1];
static uint32_t srqn_next = 1;

static struct uroce_xrcd_dom *find_dom(struct ibv_device *device, const struct stat *st)
{
	for (struct uroce_xrcd_dom *d = doms; d; d = d->next)
		if (d->named && d->device == device && d->st_dev == st->st_dev &&
		    d->st_ino == st->st_ino)
			return d;
	return NULL;
}

/*
 * ibv_open_xrcd(3), with the kernel's rules (ib_uverbs_open_xrcd): FD and
 * OFLAGS are both required; fd -1 makes a private domain; for a file, an
 * existing domain is opened unless O_EXCL, and a new one is made only with
 * O_CREAT (EINVAL otherwise).
 */
struct ibv_xrcd *uroce_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr)
{
	struct uroce_xrcd_dom *d = NULL;
	struct uroce_xrcd *h;
	struct stat st;
	int err = 0;

	if (attr->comp_mask & ~(IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) ||
	    !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS) ||
	    (attr->oflags & ~(O_CREAT | O_EXCL))) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->fd != -1 && fstat(attr->fd, &st)) {
		errno = EBADF;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&xrc_lock);
	if (attr->fd != -1)
		d = find_dom(context->device, &st);
	if (d && (attr->oflags & O_EXCL))
		err = EINVAL;
	else if (!d && attr->fd != -1 && !(attr->oflags & O_CREAT))
		err = EINVAL;
	else if (!d && !(d = calloc(1, sizeof(*d))))
		err = ENOMEM;
	else if (!d->opens) {
		d->device = context->device;
		d->named = attr->fd != -1;
		if (d->named) {
			d->st_dev = st.st_dev;
			d->st_ino = st.st_ino;
		}
		d->next = doms;
		doms = d;
	}
	if (!err) {
		d->opens++;
		h->dom = d;
	}
	pthread_mutex_unlock(&xrc_lock);
	if (err) {
		free(h);
		errno = err;
		return NULL;
	}
	h->vx.xrcd.context = context;
	return &h->vx.xrcd;
}

/* The last handle of a domain with SRQs or QPs in it is EBUSY (as uverbs). */
int uroce_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct uroce_xrcd *h = (struct uroce_xrcd *)xrcd;
	struct uroce_xrcd_dom *d = h->dom;

	pthread_mutex_lock(&xrc_lock);
	if (d->opens == 1 && atomic_load(&d->users) > 0) {
		pthread_mutex_unlock(&xrc_lock);
		return EBUSY;
	}
	if (--d->opens == 0) {
		for (struct uroce_xrcd_dom **pp = &doms; *pp; pp = &(*pp)->next)
			if (*pp == d) {
				*pp = d->next;
				break;
			}
		free(d);
	}
	pthread_mutex_unlock(&xrc_lock);
	free(h);
	return 0;
}

struct uroce_xrcd_dom *uroce_xrcd_dom(struct ibv_xrcd *xrcd)
{
	return xrcd ? ((struct uroce_xrcd *)xrcd)->dom : NULL;
}

void uroce_xrcd_hold(struct uroce_xrcd_dom *d, int n)
{
	if (d)
		atomic_fetch_add(&d->users, n);
}

/* ---- SRQ numbers ----------------------------------------------------------- */

int uroce_srqn_alloc(struct uroce_srq *srq)
{
	int err = ENOMEM;

	pthread_rwlock_wrlock(&srqn_lock);
	for (uint32_t i = 0; i < UROCE_MAX_SRQ; i++) {
		uint32_t n = srqn_next;

		srqn_next = n == UROCE_MAX_SRQ ? 1 : n + 1;
		if (!srqns[n]) {
			srqns[n] = srq;
			srq->vsrq.srq_num = n;
			err = 0;
			break;
		}
	}
	pthread_rwlock_unlock(&srqn_lock);
	return err;
}

void uroce_srqn_free(struct uroce_srq *srq)
{
	pthread_rwlock_wrlock(&srqn_lock);
	if (srq->vsrq.srq_num <= UROCE_MAX_SRQ && srqns[srq->vsrq.srq_num] == srq)
		srqns[srq->vsrq.srq_num] = NULL;
	pthread_rwlock_unlock(&srqn_lock);
}

int uroce_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	*srq_num = to_usrq(srq)->vsrq.srq_num;
	return 0;
}

/*
 * The receive QP's SRQ for one request.  The XRC SRQ must exist, be of the
 * QP's domain and of its context (whose key table checks the SRQ's
 * buffers).  Its PD then protects the request's memory accesses, and its
 * CQ takes the completion (IBTA: an XRC receive QP has no PD, CQ or
 * receive queue of its own).
 */
bool uroce_xrc_resolve(struct uroce_qp *qp, uint32_t srqn)
{
	struct uroce_srq *srq;

	pthread_rwlock_rdlock(&srqn_lock);
	srq = srqn <= UROCE_MAX_SRQ ? srqns[srqn] : NULL;
	if (!srq || srq->vsrq.srq_type != IBV_SRQT_XRC || srq->xrcd != qp->xrcd ||
	    srq->vsrq.srq.context != qp->vqp.qp.context) {
		pthread_rwlock_unlock(&srqn_lock);
		return false;
	}
	qp->srq = srq;
	qp->rcq = srq->cq;
	qp->pd = srq->pd;
	return true;
}

void uroce_xrc_release(struct uroce_qp *qp)
{
	qp->srq = NULL;
	qp->rcq = NULL;
	qp->pd = NULL;
	pthread_rwlock_unlock(&srqn_lock);
}

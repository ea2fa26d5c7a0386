// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * loopkit (loopkit.h): the verbs layer's part, as small as the engine's
 * tests need it: objects, state changes, posts, and the upcalls.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "device/device.h"
#include "loopkit.h"

#define LK_MAX_SGE 4
#define LK_MAX_WR 64
#define LK_MAX_QPS 16

/* ---- the upcalls (engine/upcalls.h) --------------------------------------- */

static struct {
	const struct uroce_qp *qp;
	int ev;
} events[LK_MAX_QPS];

static int lk_cq_push(struct uroce_cq *cq, const struct ibv_wc *wc, bool solicited)
{
	struct lk_cq *c = (struct lk_cq *)cq;
	uint32_t next;
	int ret = 0;

	(void)solicited;
	pthread_mutex_lock(&c->mu);
	next = (cq->tail + 1) & (cq->size - 1);
	if (next == cq->head) {
		cq->overrun = 1;
		ret = -ENOSPC;
	} else {
		cq->ring[cq->tail].wc = *wc;
		cq->tail = next;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	return ret;
}

static void lk_qp_event_up(struct uroce_qp *qp, enum ibv_event_type type)
{
	for (int i = 0; i < LK_MAX_QPS; i++)
		if (events[i].qp == qp)
			__atomic_store_n(&events[i].ev, (int)type, __ATOMIC_RELEASE);
}

static void lk_obj_event(struct uroce_context *ctx, struct uroce_evobj *o,
			 enum ibv_event_type type, void *element)
{
	(void)ctx, (void)o, (void)type, (void)element;
}

/* No memory windows, XRC or CM here: each asks is refused. */
static enum ibv_wc_status lk_mw_local_op(struct uroce_qp *qp, struct uroce_send_wqe *w)
{
	(void)qp, (void)w;
	return IBV_WC_LOC_QP_OP_ERR;
}

static int lk_mw_remote_invalidate(struct uroce_qp *qp, uint32_t rkey)
{
	(void)qp, (void)rkey;
	return -EINVAL;
}

static bool lk_xrc_resolve(struct uroce_qp *qp, uint32_t srqn)
{
	(void)qp, (void)srqn;
	return false;
}

static void lk_xrc_release(struct uroce_qp *qp)
{
	(void)qp;
}

static int lk_gsi_attach(struct uroce_engine *eng)
{
	(void)eng;
	return 0;
}

static void lk_gsi_detach(struct uroce_engine *eng)
{
	(void)eng;
}

static void lk_gsi_rx(struct uroce_engine *eng, const struct uroce_rx *rx,
		      const struct roce_pkt *pkt)
{
	(void)eng, (void)rx, (void)pkt;
}

static uint16_t lk_gsi_local_port(struct uroce_engine *eng, const void *mad, size_t len,
				  const uint8_t dgid[16])
{
	(void)eng, (void)mad, (void)len, (void)dgid;
	return 0;
}

/* No completion channels here: nothing to hold. */
static void lk_cq_events_hold(bool on)
{
	(void)on;
}

static const struct uroce_upcalls lk_upcalls = {
	.cq_push = lk_cq_push,
	.cq_events_hold = lk_cq_events_hold,
	.qp_event = lk_qp_event_up,
	.obj_event = lk_obj_event,
	.mw_local_op = lk_mw_local_op,
	.mw_remote_invalidate = lk_mw_remote_invalidate,
	.xrc_resolve = lk_xrc_resolve,
	.xrc_release = lk_xrc_release,
	.gsi_attach = lk_gsi_attach,
	.gsi_detach = lk_gsi_detach,
	.gsi_rx = lk_gsi_rx,
	.gsi_local_port = lk_gsi_local_port,
};

void lk_init(void)
{
	uroce_engine_set_upcalls(&lk_upcalls);
	uroce_loop_reset();
}

/* ---- devices, memory, CQs --------------------------------------------------- */

void lk_node_open(struct lk_node *n, const char *name, uint8_t ip_last)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->devname, sizeof(n->devname), "lk_%s", name);
	snprintf(n->netdev, sizeof(n->netdev), "lk%d%s", (int)getpid(), name);
	n->gid.raw[10] = n->gid.raw[11] = 0xff;
	n->gid.raw[12] = 127;
	n->gid.raw[15] = ip_last;
	LK_CHECK(uroce_loop_set_addr(n->netdev, n->gid.raw) == 0, "loop port %s", n->netdev);
	n->port = uroce_loop_port(n->netdev);
	LK_CHECK(uroce_keytab_init(&n->ctx.mr_keys) == 0, "keytab");
	pthread_mutex_init(&n->ctx.lock, NULL);
	n->eng = uroce_engine_get_dev(n->devname, n->netdev, "loop");
	LK_CHECK(n->eng, "engine of %s: %s", n->devname, strerror(errno));
	n->ctx.engine = n->eng;    /* the first QP finds it: no ibv_device needed */
	n->pd.pdn = 1;
}

void lk_node_close(struct lk_node *n)
{
	char nsid[32], path[256];

	snprintf(nsid, sizeof(nsid), "%s", uroce_engine_nsid(n->eng));
	uroce_engine_put(n->eng);
	uroce_keytab_destroy(&n->ctx.mr_keys);
	uroce_qpn_file(path, sizeof(path), nsid, n->netdev, geteuid());
	unlink(path);
}

struct uroce_mr *lk_mr(struct lk_node *n, void *buf, size_t len, int access)
{
	struct uroce_mr *mr = calloc(1, sizeof(*mr));
	uint32_t key;

	LK_CHECK(mr, "calloc");
	mr->key_kind = UROCE_KEY_MR;
	mr->pd = &n->pd;
	mr->addr = buf;
	mr->iova = (uintptr_t)buf;
	mr->length = len;
	mr->access = access;
	key = uroce_keytab_insert(&n->ctx.mr_keys, &mr->key_kind);
	LK_CHECK(key, "key: %s", strerror(errno));
	mr->vmr.ibv_mr.lkey = mr->vmr.ibv_mr.rkey = key;
	mr->vmr.ibv_mr.addr = buf;
	mr->vmr.ibv_mr.length = len;
	return mr;
}

void lk_mr_free(struct lk_node *n, struct uroce_mr *mr)
{
	uroce_keytab_remove(&n->ctx.mr_keys, mr->vmr.ibv_mr.lkey);
	free(mr);
}

struct lk_cq *lk_cq_new(unsigned int size)
{
	struct lk_cq *c = calloc(1, sizeof(*c));
	pthread_condattr_t ca;

	LK_CHECK(c && (size & (size - 1)) == 0, "cq");
	c->cq.size = size;
	c->cq.ring = calloc(size, sizeof(*c->cq.ring));
	LK_CHECK(c->cq.ring, "calloc");
	pthread_mutex_init(&c->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	return c;
}

void lk_cq_free(struct lk_cq *c)
{
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c->cq.ring);
	free(c);
}

static int take(struct lk_cq *c, struct ibv_wc *wc)
{
	if (c->cq.head == c->cq.tail)
		return 0;
	*wc = c->cq.ring[c->cq.head].wc;
	c->cq.head = (c->cq.head + 1) & (c->cq.size - 1);
	return 1;
}

int lk_cq_poll(struct lk_cq *c, struct ibv_wc *wc)
{
	int got;

	pthread_mutex_lock(&c->mu);
	got = take(c, wc);
	pthread_mutex_unlock(&c->mu);
	return got;
}

int lk_cq_wait(struct lk_cq *c, struct ibv_wc *wc, int ms)
{
	struct timespec until;
	int got, err = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&c->mu);
	while (!(got = take(c, wc)) && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&c->cv, &c->mu, &until);
	pthread_mutex_unlock(&c->mu);
	return got;
}

/* ---- QPs ---------------------------------------------------------------------- */

static void ring_init(struct uroce_ring *r, uint32_t size, uint32_t stride)
{
	r->size = size;
	r->stride = stride;
	r->buf = calloc(size, stride);
	LK_CHECK(r->buf, "calloc");
}

struct uroce_qp *lk_qp_new(struct lk_node *n, enum ibv_qp_type type, struct lk_cq *scq,
			   struct lk_cq *rcq)
{
	struct uroce_qp *qp = calloc(1, sizeof(*qp));
	int err;

	LK_CHECK(qp && (type == IBV_QPT_RC || type == IBV_QPT_UC), "qp");
	qp->ctx = &n->ctx;
	pthread_mutex_init(&qp->lock, NULL);
	pthread_mutex_init(&qp->post_lock, NULL);
	qp->vqp.qp.qp_type = type;
	qp->state = IBV_QPS_RESET;
	qp->cap = (struct ibv_qp_cap){
		.max_send_wr = LK_MAX_WR, .max_recv_wr = LK_MAX_WR,
		.max_send_sge = LK_MAX_SGE, .max_recv_sge = LK_MAX_SGE,
	};
	ring_init(&qp->sq, LK_MAX_WR,
		  sizeof(struct uroce_send_wqe) + LK_MAX_SGE * sizeof(struct uroce_sge));
	ring_init(&qp->rq, LK_MAX_WR,
		  sizeof(struct uroce_recv_wqe) + LK_MAX_SGE * sizeof(struct uroce_sge));
	qp->scq = &scq->cq;
	qp->rcq = &rcq->cq;
	qp->pd = &n->pd;
	err = uroce_engine_qp_create(qp);
	LK_CHECK(err == 0, "qp_create: %s", strerror(err));
	for (int i = 0; i < LK_MAX_QPS; i++)
		if (!events[i].qp) {
			events[i].qp = qp;
			events[i].ev = -1;
			break;
		}
	return qp;
}

void lk_qp_free(struct uroce_qp *qp)
{
	uroce_engine_qp_destroy(qp);
	for (int i = 0; i < LK_MAX_QPS; i++)
		if (events[i].qp == qp)
			events[i].qp = NULL;
	free(qp->sq.buf);
	free(qp->rq.buf);
	free(qp);
}

enum ibv_qp_state lk_qp_state(struct uroce_qp *qp)
{
	enum ibv_qp_state st;

	pthread_mutex_lock(&qp->lock);
	st = qp->attr.qp_state;
	pthread_mutex_unlock(&qp->lock);
	return st;
}

int lk_qp_event(const struct uroce_qp *qp)
{
	for (int i = 0; i < LK_MAX_QPS; i++)
		if (events[i].qp == qp)
			return __atomic_load_n(&events[i].ev, __ATOMIC_ACQUIRE);
	return -1;
}

/* As verbs/qp_modify.c, without its checks: both locks, the attributes,
 * the state, then the engine's hook. */
void lk_modify(struct uroce_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	enum ibv_qp_state old;

	pthread_mutex_lock(&qp->post_lock);
	pthread_mutex_lock(&qp->lock);
	old = qp->state;
	uroce_qp_attr_take(&qp->attr, attr, mask);
	if (mask & IBV_QP_STATE) {
		if (attr->qp_state != old)
			uroce_engine_qp_leaving(qp);
		qp->state = qp->attr.qp_state = qp->vqp.qp.state = attr->qp_state;
	}
	uroce_engine_qp_modified(qp, old, mask);
	pthread_mutex_unlock(&qp->lock);
	pthread_mutex_unlock(&qp->post_lock);
}

/* The address vector to PEER from N (uroce_av_from_attr's result). */
static void av_to(struct uroce_av *av, const struct lk_node *n, const struct lk_node *peer)
{
	memset(av, 0, sizeof(*av));
	av->dgid = peer->gid;
	av->sgid = n->gid;
	av->hop_limit = 64;
	av->family = AF_INET;
	av->dst.in4.sin_family = AF_INET;
	av->dst.in4.sin_port = htons(UROCE_XPORT_ROCE_PORT);
	memcpy(&av->dst.in4.sin_addr, peer->gid.raw + 12, 4);
}

static void bring_up(struct uroce_qp *qp, struct lk_node *n, struct uroce_qp *peer,
		     struct lk_node *pn, uint32_t sq_psn, uint32_t rq_psn, const struct lk_conn *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	lk_modify(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS);
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = c->mtu ? c->mtu : IBV_MTU_1024,
		.dest_qp_num = peer->vqp.qp.qp_num,
		.rq_psn = rq_psn,
		.max_dest_rd_atomic = c->rd_atomic ? c->rd_atomic : 16,
		.min_rnr_timer = c->min_rnr_timer ? c->min_rnr_timer : 1,
	};
	pthread_mutex_lock(&qp->lock);
	av_to(&qp->av, n, pn);
	pthread_mutex_unlock(&qp->lock);
	lk_modify(qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV);
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS,
		.sq_psn = sq_psn,
		.timeout = c->timeout ? c->timeout : 14,
		.retry_cnt = c->retry_cnt ? c->retry_cnt : 7,
		.rnr_retry = c->rnr_retry ? c->rnr_retry : 7,
		.max_rd_atomic = c->rd_atomic ? c->rd_atomic : 16,
	};
	lk_modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

void lk_connect(struct uroce_qp *a, struct lk_node *na, struct uroce_qp *b,
		struct lk_node *nb, const struct lk_conn *c)
{
	bring_up(a, na, b, nb, c->psn_a, c->psn_b, c);
	bring_up(b, nb, a, na, c->psn_b, c->psn_a, c);
}

/* ---- posts ---------------------------------------------------------------------- */

/* As verbs/post.c's fill_send for the RC operations, then the engine's
 * hook under the QP's lock (a post that does not defer). */
void lk_post_send(struct uroce_qp *qp, const struct ibv_send_wr *wr)
{
	struct uroce_send_wqe *w;

	pthread_mutex_lock(&qp->post_lock);
	pthread_mutex_lock(&qp->lock);
	LK_CHECK(ring_used(&qp->sq) < qp->sq.size && wr->num_sge <= LK_MAX_SGE, "SQ full");
	w = ring_slot(&qp->sq, qp->sq.prod);
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;
	w->state = UROCE_WQE_POSTED;
	for (int i = 0; i < wr->num_sge; i++) {
		wqe_sges(w)[i] = (struct uroce_sge){
			wr->sg_list[i].addr, wr->sg_list[i].length, wr->sg_list[i].lkey,
		};
		w->length += wr->sg_list[i].length;
	}
	w->num_sge = (uint32_t)wr->num_sge;
	w->imm_data = wr->imm_data;
	if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
	} else {
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	}
	ring_publish(&qp->sq);
	uroce_engine_sq_posted(qp);
	pthread_mutex_unlock(&qp->lock);
	pthread_mutex_unlock(&qp->post_lock);
}

/* As verbs/post.c's uroce_post_recv. */
void lk_post_recv(struct uroce_qp *qp, const struct ibv_recv_wr *wr)
{
	struct uroce_recv_wqe *rw;

	pthread_mutex_lock(&qp->lock);
	LK_CHECK(ring_used(&qp->rq) < qp->rq.size && wr->num_sge <= LK_MAX_SGE, "RQ full");
	rw = ring_slot(&qp->rq, qp->rq.prod);
	rw->wr_id = wr->wr_id;
	rw->num_sge = (uint32_t)wr->num_sge;
	rw->length = 0;
	for (int i = 0; i < wr->num_sge; i++) {
		rw->sge[i] = (struct uroce_sge){
			wr->sg_list[i].addr, wr->sg_list[i].length, wr->sg_list[i].lkey,
		};
		rw->length += wr->sg_list[i].length;
	}
	qp->rq.prod++;
	pthread_mutex_unlock(&qp->lock);
	uroce_engine_rq_posted(qp);
}

/* ---- what the wire saw ------------------------------------------------------------ */

uint64_t lk_stat(const struct lk_node *n, enum uroce_stat s)
{
	const uint64_t *c = uroce_loop_counters(n->netdev);

	return c ? __atomic_load_n(&c[s], __ATOMIC_RELAXED) : 0;
}

void lk_log_get(struct lk_log *log)
{
	size_t n = uroce_loop_log(NULL, 0);

	log->rec = calloc(n ? n : 1, sizeof(*log->rec));
	LK_CHECK(log->rec, "calloc");
	log->n = uroce_loop_log(log->rec, n);
	if (log->n > n)
		log->n = n;
}

void lk_log_put(struct lk_log *log)
{
	free(log->rec);
	log->rec = NULL;
	log->n = 0;
}

size_t lk_log_count(const struct lk_log *log, int from, int kind, int64_t psn, int aeth)
{
	size_t count = 0;

	for (size_t i = 0; i < log->n; i++) {
		const struct uroce_loop_rec *r = &log->rec[i];

		if ((from < 0 || r->from == from) && (kind < 0 || r->kind == kind) &&
		    (psn < 0 || r->psn == psn) &&
		    (aeth < 0 || (r->kind == ROCE_K_ACK && r->syndrome == aeth)))
			count++;
	}
	return count;
}

void lk_log_dump(const struct lk_log *log)
{
	static const char *const acts[] = { "", " DROPPED", " DUPLICATED", " HELD" };

	for (size_t i = 0; i < log->n; i++) {
		const struct uroce_loop_rec *r = &log->rec[i];

		fprintf(stderr, "  %3zu: %d->%d op 0x%02x psn %u qp %u len %u%s syn 0x%02x%s\n", i,
			r->from, r->to, r->opcode, r->psn, r->dqpn, r->len,
			r->ackreq ? " A" : "", r->syndrome, acts[r->act]);
	}
}

void lk_fill(void *buf, size_t len, unsigned int seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

bool lk_holds(const void *buf, size_t len, unsigned int seed)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seed * 131 + i * 7 + (i >> 8)))
			return false;
	return true;
}

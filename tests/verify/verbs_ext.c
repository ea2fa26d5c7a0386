// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * verbs_ext: the extended verbs, through the public API only, with data
 * checks and their error cases: extended CQs and completion timestamps,
 * memory windows (type 1 and 2, local and remote invalidation), on-demand
 * paging (memory mapped after registration, unmapped memory, implicit ODP,
 * ibv_advise_mr), ibv_rereg_mr, parent domains, ATOMIC WRITE and XRC.  One process, RC QP pairs on one device
 * talking over the wire (the GID given); every case that breaks a QP gets
 * a fresh pair.
 *
 *   verbs_ext -d DEV -g GIDX
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "testkit.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static int gidx;
static union ibv_gid gid;
static long pagesz;

/* Two RC QPs, A and B, connected to each other. */
struct pair {
	struct ibv_cq_ex *cqx;       /* A's CQ: an extended CQ with timestamps */
	struct ibv_cq *acq, *bcq;
	struct ibv_qp *a, *b;
};

static struct ibv_qp *rc_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_BIND_MW |
				  IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV
#if UROCE_RDMA_CORE >= 44
				  | IBV_QP_EX_WITH_ATOMIC_WRITE
#endif
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &ia);

	if (!qp)
		DIE("create_qp_ex: %s", strerror(errno));
	return qp;
}

/* RC's attributes for RTR and RTS beyond those every connected QP needs. */
#define RTR_RC (IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_RC (IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)

/* INIT, RTR with RTR_EXTRA, and (RTS_EXTRA not 0) RTS with RTS_EXTRA. */
static void modify_to(struct ibv_qp *qp, uint32_t dqpn, int rtr_extra, int rts_extra)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		DIE("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr = (struct ibv_ah_attr){ .is_global = 1, .port_num = 1,
		.grh = { .dgid = gid, .sgid_index = gidx, .hop_limit = 64 } };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | rtr_extra))
		DIE("RTR: %s", strerror(errno));
	if (!rts_extra)
		return;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | rts_extra))
		DIE("RTS: %s", strerror(errno));
}

static void to_rts(struct ibv_qp *qp, uint32_t dqpn)
{
	modify_to(qp, dqpn, RTR_RC, RTS_RC);
}

static void pair_up(struct pair *p)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS |
		IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK };

	p->cqx = ibv_create_cq_ex(ctx, &ca);
	if (!p->cqx)
		DIE("create_cq_ex: %s", strerror(errno));
	p->acq = ibv_cq_ex_to_cq(p->cqx);
	p->bcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!p->bcq)
		DIE("create_cq");
	p->a = rc_qp(p->acq);
	p->b = rc_qp(p->bcq);
	to_rts(p->a, p->b->qp_num);
	to_rts(p->b, p->a->qp_num);
}

static void pair_down(struct pair *p)
{
	ibv_destroy_qp(p->a);
	ibv_destroy_qp(p->b);
	ibv_destroy_cq(p->acq);
	ibv_destroy_cq(p->bcq);
}

/* One completion from CQ within 10 s (through ibv_poll_cq, also for the
 * extended CQ: both views read one ring). */
static struct ibv_wc poll1(struct ibv_cq *cq)
{
	return poll_wc(cq, 10, "verbs_ext");
}

static int post1(struct ibv_qp *qp, enum ibv_wr_opcode op, void *laddr, uint32_t len,
		 uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sg = { (uintptr_t)laddr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = op, .sg_list = &sg, .num_sge = len ? 1 : 0,
				  .opcode = op, .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (op == IBV_WR_SEND_WITH_INV || op == IBV_WR_LOCAL_INV)
		wr.invalidate_rkey = rkey;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

/* A's RDMA op of LEN bytes at RADDR/RKEY; the completion status. */
static enum ibv_wc_status rdma(struct pair *p, enum ibv_wr_opcode op, void *laddr,
			       uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	if (post1(p->a, op, laddr, len, lkey, raddr, rkey))
		DIE("post_send op %d: %s", op, strerror(errno));
	return poll1(p->acq).status;
}

static void pattern(uint8_t *b, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed + i * 7);
}

static int is_pattern(const uint8_t *b, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != (uint8_t)(seed + i * 7))
			return 0;
	return 1;
}

static uint8_t *page_alloc(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		DIE("mmap");
	memset(p, 0, n);
	return p;
}

/* ---- extended CQ and timestamps --------------------------------------------- */

static uint64_t raw_clock(void)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	if (ibv_query_rt_values_ex(ctx, &v))
		DIE("query_rt_values_ex");
	return (uint64_t)v.raw_clock.tv_sec * 1000000000ULL + (uint64_t)v.raw_clock.tv_nsec;
}

static uint64_t wall_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void test_cq_ex(struct ibv_mr *mr, uint8_t *lbuf, uint8_t *rbuf)
{
	struct ibv_device_attr_ex da;
	struct ibv_cq_init_attr_ex bad = { .cqe = 4, .wc_flags = IBV_WC_EX_WITH_CVLAN };
	struct ibv_poll_cq_attr pa = {};
	struct pair p;
	uint64_t r0, w0, r1, w1;
	int ret;

	CHECK(!ibv_query_device_ex(ctx, NULL, &da) && da.hca_core_clock > 0 &&
	      da.completion_timestamp_mask, "hca_core_clock %lu kHz, timestamp mask %lx",
	      (unsigned long)da.hca_core_clock, (unsigned long)da.completion_timestamp_mask);
	CHECK(!ibv_create_cq_ex(ctx, &bad) && errno == EOPNOTSUPP, "CQ with CVLAN: EOPNOTSUPP (%d)", errno);
	bad = (struct ibv_cq_init_attr_ex){ .cqe = da.orig_attr.max_cqe + 1u };
	CHECK(!ibv_create_cq_ex(ctx, &bad) && errno == EINVAL, "CQ over max_cqe: EINVAL (%d)", errno);
	bad = (struct ibv_cq_init_attr_ex){ .cqe = 4, .comp_vector = 99 };
	CHECK(!ibv_create_cq_ex(ctx, &bad) && errno == EINVAL, "CQ on a bad vector: EINVAL (%d)", errno);

	pair_up(&p);
	CHECK(ibv_start_poll(p.cqx, &pa) == ENOENT, "start_poll on an empty CQ: ENOENT");
	pattern(lbuf, 3000, 1);
	r0 = raw_clock();
	w0 = wall_ns();
	if (post1(p.a, IBV_WR_RDMA_WRITE, lbuf, 3000, mr->lkey, (uintptr_t)rbuf, mr->rkey) ||
	    post1(p.a, IBV_WR_RDMA_READ, lbuf + 4096, 3000, mr->lkey, (uintptr_t)rbuf, mr->rkey))
		DIE("post");
	double t0 = now_ms();
	while ((ret = ibv_start_poll(p.cqx, &pa)) == ENOENT && now_ms() - t0 < 10000)
		;
	CHECK(ret == 0, "start_poll: %d", ret);
	if (ret)
		DIE("no completion");
	r1 = raw_clock();
	w1 = wall_ns();
	CHECK(p.cqx->status == IBV_WC_SUCCESS && ibv_wc_read_opcode(p.cqx) == IBV_WC_RDMA_WRITE &&
	      p.cqx->wr_id == IBV_WR_RDMA_WRITE && ibv_wc_read_qp_num(p.cqx) == p.a->qp_num,
	      "cq_ex: write completion (status %d opcode %d)", p.cqx->status, ibv_wc_read_opcode(p.cqx));
	uint64_t ts = ibv_wc_read_completion_ts(p.cqx), wts = ibv_wc_read_completion_wallclock_ns(p.cqx);
	CHECK(ts >= r0 && ts <= r1, "completion timestamp %lu within [%lu, %lu] of the raw clock",
	      (unsigned long)ts, (unsigned long)r0, (unsigned long)r1);
	CHECK(wts >= w0 && wts <= w1, "wallclock timestamp within the post and the poll");
	while ((ret = ibv_next_poll(p.cqx)) == ENOENT && now_ms() - t0 < 10000)
		;
	CHECK(ret == 0 && p.cqx->status == IBV_WC_SUCCESS &&
	      ibv_wc_read_opcode(p.cqx) == IBV_WC_RDMA_READ && ibv_wc_read_byte_len(p.cqx) == 3000 &&
	      ibv_wc_read_completion_ts(p.cqx) >= ts, "next_poll: read completion, 3000 B, later");
	ibv_end_poll(p.cqx);
	CHECK(is_pattern(rbuf, 3000, 1) && is_pattern(lbuf + 4096, 3000, 1), "cq_ex: data written and read back");
	CHECK(ibv_start_poll(p.cqx, &pa) == ENOENT, "start_poll after the last: ENOENT");
	pair_down(&p);
	NOTE("extended CQ: start/next/end_poll, readers, timestamps, errors");
}

/* ---- memory windows ------------------------------------------------------------ */

static struct ibv_mw *bind2(struct pair *p, struct ibv_qp *qp, struct ibv_mr *mr, void *addr,
			    size_t len, int access, uint32_t *rkey, enum ibv_wc_status *st)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = { .wr_id = 77, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (!mw)
		DIE("alloc_mw type 2: %s", strerror(errno));
	*rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = *rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){ mr, (uintptr_t)addr, len, (unsigned)access };
	if (ibv_post_send(qp, &wr, &bad))
		DIE("post bind");
	*st = poll1(qp == p->a ? p->acq : p->bcq).status;
	return mw;
}

static void test_mw(uint8_t *lbuf, struct ibv_mr *lmr)
{
	uint8_t *tgt = page_alloc(8192);
	struct ibv_mr *mr = ibv_reg_mr(pd, tgt, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	struct ibv_mr *nobind = ibv_reg_mr(pd, tgt, 8192, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_device_attr da;
	enum ibv_wc_status st;
	struct pair p;
	uint32_t rkey;
	struct ibv_mw *mw;

	CHECK(!ibv_query_device(ctx, &da) && da.max_mw > 0 &&
	      (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW), "device offers memory windows");
	if (!mr || !nobind)
		DIE("reg_mr MW_BIND: %s", strerror(errno));
	CHECK(!ibv_alloc_mw(pd, (enum ibv_mw_type)3) && errno == EINVAL, "alloc_mw type 3: EINVAL");

	/* Type 2: bind [4096, 8192) for remote write; write through it. */
	pair_up(&p);
	mw = bind2(&p, p.b, mr, tgt + 4096, 4096, IBV_ACCESS_REMOTE_WRITE, &rkey, &st);
	CHECK(st == IBV_WC_SUCCESS && mw->rkey == rkey, "type 2 bind (%s)", ibv_wc_status_str(st));
	pattern(lbuf, 4096, 9);
	st = rdma(&p, IBV_WR_RDMA_WRITE, lbuf, 4096, lmr->lkey, (uintptr_t)tgt + 4096, rkey);
	CHECK(st == IBV_WC_SUCCESS && is_pattern(tgt + 4096, 4096, 9), "write through a type 2 window");
	CHECK(ibv_dereg_mr(mr) == EBUSY, "dereg_mr with a bound window: EBUSY");
	/* Outside the window (the MR's first page): remote access error. */
	st = rdma(&p, IBV_WR_RDMA_WRITE, lbuf, 16, lmr->lkey, (uintptr_t)tgt, rkey);
	CHECK(st == IBV_WC_REM_ACCESS_ERR && !tgt[0], "write outside the window: %s", ibv_wc_status_str(st));
	pair_down(&p);
	ibv_dealloc_mw(mw);

	/* Local invalidation, then the rkey is refused and memory unchanged. */
	pair_up(&p);
	mw = bind2(&p, p.b, mr, tgt, 8192, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, &rkey, &st);
	CHECK(st == IBV_WC_SUCCESS, "type 2 bind of the whole MR");
	st = rdma(&p, IBV_WR_RDMA_READ, lbuf, 4096, lmr->lkey, (uintptr_t)tgt + 4096, rkey);
	CHECK(st == IBV_WC_SUCCESS && is_pattern(lbuf, 4096, 9), "read through the window");
	if (post1(p.b, IBV_WR_LOCAL_INV, NULL, 0, 0, 0, rkey))
		DIE("post local_inv");
	struct ibv_wc wc = poll1(p.bcq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV, "local invalidate (%s)",
	      ibv_wc_status_str(wc.status));
	pattern(lbuf, 4096, 33);
	st = rdma(&p, IBV_WR_RDMA_WRITE, lbuf, 4096, lmr->lkey, (uintptr_t)tgt + 4096, rkey);
	CHECK(st == IBV_WC_REM_ACCESS_ERR, "write after local invalidate: %s", ibv_wc_status_str(st));
	CHECK(is_pattern(tgt + 4096, 4096, 9), "memory unchanged after the refused write");
	pair_down(&p);
	ibv_dealloc_mw(mw);

	/* Remote invalidation by SEND with Invalidate. */
	pair_up(&p);
	mw = bind2(&p, p.b, mr, tgt, 8192, IBV_ACCESS_REMOTE_WRITE, &rkey, &st);
	struct ibv_sge rsg = { (uintptr_t)lbuf + 8192, 64, lmr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 5, .sg_list = &rsg, .num_sge = 1 }, *rbad;
	if (ibv_post_recv(p.b, &rwr, &rbad))
		DIE("post_recv");
	st = rdma(&p, IBV_WR_SEND_WITH_INV, lbuf, 8, lmr->lkey, 0, rkey);
	wc = poll1(p.bcq);
	CHECK(st == IBV_WC_SUCCESS && wc.status == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_WITH_INV) &&
	      wc.invalidated_rkey == rkey, "SEND with Invalidate received (%s)", ibv_wc_status_str(wc.status));
	st = rdma(&p, IBV_WR_RDMA_WRITE, lbuf, 4096, lmr->lkey, (uintptr_t)tgt + 4096, rkey);
	CHECK(st == IBV_WC_REM_ACCESS_ERR && is_pattern(tgt + 4096, 4096, 9),
	      "write after remote invalidate: %s, memory unchanged", ibv_wc_status_str(st));
	pair_down(&p);
	/* An R_Key it may not invalidate (an MR's): invalid request. */
	pair_up(&p);
	if (ibv_post_recv(p.b, &rwr, &rbad))
		DIE("post_recv");
	st = rdma(&p, IBV_WR_SEND_WITH_INV, lbuf, 8, lmr->lkey, 0, mr->rkey);
	CHECK(st == IBV_WC_REM_INV_REQ_ERR, "SEND with Invalidate of an MR key: %s", ibv_wc_status_str(st));
	pair_down(&p);
	ibv_dealloc_mw(mw);

	/* Type 1 through ibv_bind_mw; unbound by a zero-length bind. */
	pair_up(&p);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	if (!mw)
		DIE("alloc_mw type 1");
	struct ibv_mw_bind mb = { .wr_id = 9, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { mr, (uintptr_t)tgt, 8192, IBV_ACCESS_REMOTE_READ } };
	struct ibv_mw_bind outside = mb;
	outside.bind_info.length = 8193;
	CHECK(ibv_bind_mw(p.b, mw, &outside) == EINVAL, "bind past the MR's end: EINVAL");
	mb.bind_info.mr = nobind;
	CHECK(ibv_bind_mw(p.b, mw, &mb) == EINVAL, "bind to an MR without MW_BIND: EINVAL");
	mb.bind_info.mr = mr;
	CHECK(ibv_bind_mw(p.b, mw, &mb) == 0 && poll1(p.bcq).status == IBV_WC_SUCCESS, "type 1 bind");
	rkey = mw->rkey;
	memset(lbuf, 0, 4096);
	st = rdma(&p, IBV_WR_RDMA_READ, lbuf, 4096, lmr->lkey, (uintptr_t)tgt + 4096, rkey);
	CHECK(st == IBV_WC_SUCCESS && is_pattern(lbuf, 4096, 9), "read through a type 1 window");
	st = rdma(&p, IBV_WR_RDMA_WRITE, lbuf, 16, lmr->lkey, (uintptr_t)tgt + 4096, rkey);
	CHECK(st == IBV_WC_REM_ACCESS_ERR, "write through a read-only window: %s", ibv_wc_status_str(st));
	pair_down(&p);
	pair_up(&p);
	mb.bind_info = (struct ibv_mw_bind_info){ mr, 0, 0, 0 };
	CHECK(ibv_bind_mw(p.b, mw, &mb) == 0 && poll1(p.bcq).status == IBV_WC_SUCCESS, "type 1 unbind");
	st = rdma(&p, IBV_WR_RDMA_READ, lbuf, 16, lmr->lkey, (uintptr_t)tgt + 4096, mw->rkey);
	CHECK(st == IBV_WC_REM_ACCESS_ERR, "read through an unbound window: %s", ibv_wc_status_str(st));
	pair_down(&p);
	CHECK(ibv_dealloc_mw(mw) == 0 && ibv_dereg_mr(mr) == 0 && ibv_dereg_mr(nobind) == 0,
	      "dealloc_mw, then dereg_mr");
	munmap(tgt, 8192);
	NOTE("memory windows: type 1 and 2, bind, local and remote invalidation, errors");
}

/* ---- on-demand paging ---------------------------------------------------------- */

static void test_odp(uint8_t *lbuf, struct ibv_mr *lmr)
{
	size_t n = 4 * (size_t)pagesz;
	struct ibv_device_attr_ex da;
	struct pair p;
	enum ibv_wc_status st;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_ON_DEMAND;

	CHECK(!ibv_query_device_ex(ctx, NULL, &da) &&
	      (da.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
	      (da.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_WRITE), "odp_caps");
	/* A range with nothing mapped: ODP registers it, plain MRs do not. */
	uint8_t *area = mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		DIE("mmap");
	munmap(area, n);
	CHECK(!ibv_reg_mr(pd, area, n, acc & ~IBV_ACCESS_ON_DEMAND) && errno == EFAULT,
	      "plain MR over unmapped memory: EFAULT");
	struct ibv_mr *mr = ibv_reg_mr(pd, area, n, acc);
	CHECK(mr != NULL, "ODP MR over unmapped memory (%s)", strerror(errno));
	if (!mr)
		return;
	struct ibv_sge adv = { (uintptr_t)area, (uint32_t)n, mr->lkey };
	CHECK(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH, &adv, 1) == EFAULT,
	      "advise_mr prefetch of unmapped pages: EFAULT");
	pair_up(&p);
	pattern(lbuf, 256, 5);
	st = rdma(&p, IBV_WR_RDMA_WRITE, lbuf, 256, lmr->lkey, (uintptr_t)area + 100, mr->rkey);
	CHECK(st == IBV_WC_REM_ACCESS_ERR, "write to unmapped ODP memory: %s (no crash)",
	      ibv_wc_status_str(st));
	pair_down(&p);
	/* Map it now: the same MR reaches it. */
	if (mmap(area, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		DIE("mmap fixed");
	CHECK(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH, &adv, 1) == 0,
	      "advise_mr prefetch-write of mapped pages");
	adv.lkey = lmr->lkey;
	adv.addr = (uintptr_t)lbuf;
	adv.length = 64;
	CHECK(ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &adv, 1) == EINVAL,
	      "advise_mr of a non-ODP MR: EINVAL");
	pair_up(&p);
	st = rdma(&p, IBV_WR_RDMA_WRITE, lbuf, 256, lmr->lkey, (uintptr_t)area + 3 * pagesz - 100, mr->rkey);
	CHECK(st == IBV_WC_SUCCESS && is_pattern(area + 3 * pagesz - 100, 256, 5),
	      "write into pages mapped after registration (%s)", ibv_wc_status_str(st));
	/* An ODP MR as the local buffer of a READ. */
	st = rdma(&p, IBV_WR_RDMA_READ, area, 256, mr->lkey, (uintptr_t)area + 3 * pagesz - 100, mr->rkey);
	CHECK(st == IBV_WC_SUCCESS && is_pattern(area, 256, 5), "read into an ODP MR");
	/* Unmap a page again: an access across it fails, the rest is intact. */
	munmap(area + pagesz, pagesz);
	st = rdma(&p, IBV_WR_RDMA_WRITE, lbuf, 256, lmr->lkey, (uintptr_t)area + 2 * pagesz - 100, mr->rkey);
	CHECK(st == IBV_WC_REM_ACCESS_ERR && is_pattern(area, 256, 5) && !area[2 * pagesz],
	      "write across an unmapped page: %s, memory unchanged", ibv_wc_status_str(st));
	pair_down(&p);
	ibv_dereg_mr(mr);
	munmap(area, n);

	/* Implicit ODP: one MR for the whole address space. */
	struct ibv_mr *imr = ibv_reg_mr(pd, NULL, SIZE_MAX, acc);
	CHECK(imr != NULL, "implicit ODP MR (%s)", strerror(errno));
	if (imr) {
		uint8_t *fresh = page_alloc(8192);

		pair_up(&p);
		pattern(lbuf, 5000, 77);
		st = rdma(&p, IBV_WR_RDMA_WRITE, lbuf, 5000, lmr->lkey, (uintptr_t)fresh + 7, imr->rkey);
		CHECK(st == IBV_WC_SUCCESS && is_pattern(fresh + 7, 5000, 77),
		      "write through the implicit MR into memory mapped after it");
		st = rdma(&p, IBV_WR_RDMA_WRITE, lbuf, 8, lmr->lkey, 0, imr->rkey);
		CHECK(st == IBV_WC_REM_ACCESS_ERR, "write to address 0 through it: %s", ibv_wc_status_str(st));
		pair_down(&p);
		ibv_dereg_mr(imr);
		munmap(fresh, 8192);
	}
	NOTE("ODP: mapped after registration, unmapped, implicit, advise_mr");
}

/* ---- rereg ------------------------------------------------------------------------ */

static void test_rereg(uint8_t *lbuf, struct ibv_mr *lmr)
{
	uint8_t *one = page_alloc(4096), *two = page_alloc(4096);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mr *mr = ibv_reg_mr(pd, one, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	uint32_t rkey;
	struct pair p;
	enum ibv_wc_status st;

	if (!mr || !pd2)
		DIE("reg_mr/alloc_pd");
	rkey = mr->rkey;
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, two, 4096, 0) == 0 &&
	      mr->addr == two && mr->rkey == rkey, "rereg translation: same keys, new address");
	pair_up(&p);
	pattern(lbuf, 100, 3);
	st = rdma(&p, IBV_WR_RDMA_WRITE, lbuf, 100, lmr->lkey, (uintptr_t)two, rkey);
	CHECK(st == IBV_WC_SUCCESS && is_pattern(two, 100, 3) && !one[0], "write lands in the new range");
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_REMOTE_WRITE) != 0,
	      "rereg to remote write without local write: refused");
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS | IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE) == 0, "rereg access and PD together");
	pattern(lbuf, 100, 4);
	st = rdma(&p, IBV_WR_RDMA_WRITE, lbuf, 100, lmr->lkey, (uintptr_t)two, rkey);
	CHECK(st == IBV_WC_REM_ACCESS_ERR && is_pattern(two, 100, 3),
	      "write after access and PD changed: %s, memory unchanged", ibv_wc_status_str(st));
	pair_down(&p);
	CHECK(ibv_dealloc_pd(pd2) == EBUSY, "the new PD is in use by the MR");
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
			   IBV_REREG_MR_CHANGE_ACCESS, pd, one, 4096,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) == 0, "rereg all three back");
	pair_up(&p);
	st = rdma(&p, IBV_WR_RDMA_WRITE, lbuf, 100, lmr->lkey, (uintptr_t)one, rkey);
	CHECK(st == IBV_WC_SUCCESS && is_pattern(one, 100, 4), "write after rereg of all three");
	pair_down(&p);
	CHECK(ibv_rereg_mr(mr, 0x80, NULL, NULL, 0, 0) != 0, "rereg with an unknown flag: refused");
	ibv_dereg_mr(mr);
	CHECK(ibv_dealloc_pd(pd2) == 0, "the PD is free again");
	munmap(one, 4096);
	munmap(two, 4096);
	NOTE("rereg_mr: translation, access, PD and combinations");
}

/* ---- parent domains ---------------------------------------------------------------- */

/* ---- ATOMIC WRITE (IBTA 1.5) -------------------------------------------------- */
/* rdma-core 44 named it: a build for 36-43 neither offers nor tests it. */
#if UROCE_RDMA_CORE >= 44

/* kernel uapi IB_UVERBS_DEVICE_ATOMIC_WRITE; rdma-core 44 has no name for it */
#define DEVICE_ATOMIC_WRITE (1ULL << 40)

/* A's ibv_wr_atomic_write of V to RADDR/RKEY; the completion. */
static struct ibv_wc atomic_write_wr(struct pair *p, uint64_t raddr, uint32_t rkey, uint64_t v)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(p->a);

	ibv_wr_start(qx);
	qx->wr_id = 77;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qx, rkey, raddr, &v);
	v = ~v; /* the WR holds its own copy: the buffer may change at once */
	if (ibv_wr_complete(qx))
		DIE("wr_complete atomic_write: %s", strerror(errno));
	return poll1(p->acq);
}

static void test_atomic_write(uint8_t *lbuf, struct ibv_mr *lmr)
{
	uint8_t *tgt = page_alloc(4096);
	uint64_t *w = (uint64_t *)tgt;
	struct ibv_mr *mr = ibv_reg_mr(pd, tgt, 4096, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE);
	struct ibv_mr *ro = ibv_reg_mr(pd, tgt, 4096, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_READ);
	struct ibv_device_attr_ex da;
	const uint64_t v1 = 0x1122334455667788ull, v2 = 0xa5a5a5a50f0f0f0full;
	struct ibv_wc wc;
	struct pair p;

	if (!mr || !ro)
		DIE("reg_mr: %s", strerror(errno));
	CHECK(!ibv_query_device_ex(ctx, NULL, &da) &&
	      (da.device_cap_flags_ex & DEVICE_ATOMIC_WRITE), "device offers ATOMIC WRITE");
	pair_up(&p);
	w[0] = w[1] = w[2] = 0;
	wc = atomic_write_wr(&p, (uintptr_t)&w[1], mr->rkey, v1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_ATOMIC_WRITE && wc.wr_id == 77 &&
	      w[1] == v1 && !w[0] && !w[2], "wr_atomic_write: %s, opcode %d, %#llx",
	      ibv_wc_status_str(wc.status), wc.opcode, (unsigned long long)w[1]);
	/* ibv_post_send takes the 8 bytes from its SGE, the target from wr.rdma. */
	memcpy(lbuf, &v2, 8);
	wc.status = rdma(&p, IBV_WR_ATOMIC_WRITE, lbuf, 8, lmr->lkey, (uintptr_t)&w[1], mr->rkey);
	CHECK(wc.status == IBV_WC_SUCCESS && w[1] == v2 && !w[0] && !w[2],
	      "post_send ATOMIC_WRITE: %s", ibv_wc_status_str(wc.status));
	CHECK(post1(p.a, IBV_WR_ATOMIC_WRITE, lbuf, 4, lmr->lkey, (uintptr_t)&w[1], mr->rkey) == EINVAL,
	      "ATOMIC_WRITE of 4 bytes: EINVAL at post");
	CHECK(post1(p.a, IBV_WR_ATOMIC_WRITE, lbuf, 16, lmr->lkey, (uintptr_t)&w[1], mr->rkey) == EINVAL,
	      "ATOMIC_WRITE of 16 bytes: EINVAL at post");
	pair_down(&p);

	/* A misaligned target is an invalid request; nothing is written. */
	pair_up(&p);
	wc = atomic_write_wr(&p, (uintptr_t)tgt + 12, mr->rkey, v1);
	CHECK(wc.status == IBV_WC_REM_INV_REQ_ERR && w[1] == v2 && !w[2],
	      "misaligned ATOMIC WRITE: %s, memory unchanged", ibv_wc_status_str(wc.status));
	pair_down(&p);

	/* A key without remote write: remote access error, nothing written. */
	pair_up(&p);
	wc = atomic_write_wr(&p, (uintptr_t)&w[1], ro->rkey, v1);
	CHECK(wc.status == IBV_WC_REM_ACCESS_ERR && w[1] == v2,
	      "ATOMIC WRITE without remote write access: %s, memory unchanged",
	      ibv_wc_status_str(wc.status));
	pair_down(&p);

	/* UC and UD have no ATOMIC WRITE (IBTA 1.5: RC only). */
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = p.acq, .recv_cq = p.acq, .qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd, .send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);

	ia.send_cq = ia.recv_cq = cq;
	CHECK(cq && !ibv_create_qp_ex(ctx, &ia) && errno == EOPNOTSUPP,
	      "UC QP with ATOMIC WRITE: EOPNOTSUPP");
	ibv_destroy_cq(cq);
	ibv_dereg_mr(ro);
	ibv_dereg_mr(mr);
	munmap(tgt, 4096);
}
#endif

/* ---- XRC ------------------------------------------------------------------------ */

struct xrc {
	struct ibv_xrcd *xrcd, *other;       /* the QPs' domain; another one */
	struct ibv_cq *scq, *cq1, *cq2, *cq3;
	struct ibv_srq *srq1, *srq2, *srq3;  /* 1, 2 in xrcd; 3 in other */
	uint32_t n1, n2, n3;
	struct ibv_qp *ini, *tgt;
};

static struct ibv_srq *xrc_srq(struct ibv_xrcd *xrcd, struct ibv_cq *cq, uint32_t *num)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 8, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = xrcd, .cq = cq,
	};
	struct ibv_srq *s = ibv_create_srq_ex(ctx, &a);

	if (!s || ibv_get_srq_num(s, num))
		DIE("XRC SRQ: %s", strerror(errno));
	return s;
}

/* A connected XRC send QP and receive QP (in x->xrcd). */
static void xrc_qps(struct xrc *x)
{
	struct ibv_qp_init_attr_ex si = {
		.send_cq = x->scq, .qp_type = IBV_QPT_XRC_SEND,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
	};
	struct ibv_qp_init_attr_ex ri = {
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x->xrcd,
	};

	x->ini = ibv_create_qp_ex(ctx, &si);
	x->tgt = ibv_create_qp_ex(ctx, &ri);
	if (!x->ini || !x->tgt)
		DIE("XRC QPs: %s", strerror(errno));
	/* Each with what the kernel requires of its XRC half: the receive QP
	 * stops at RTR, the send QP needs no responder attributes. */
	modify_to(x->tgt, x->ini->qp_num, RTR_RC, 0);
	modify_to(x->ini, x->tgt->qp_num, 0, RTS_RC);
}

/* The send QP's SEND (or WRITE) of LEN bytes of BUF to XRC SRQ number SRQN. */
static enum ibv_wc_status xrc_post(struct xrc *x, enum ibv_wr_opcode op, uint8_t *buf, uint32_t len,
				   struct ibv_mr *mr, uint32_t srqn, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sg = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 5, .sg_list = &sg, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(x->ini, &wr, &bad))
		DIE("XRC post_send: %s", strerror(errno));
	return poll1(x->scq).status;
}

static void srq_recv(struct ibv_srq *srq, uint8_t *buf, uint32_t len, struct ibv_mr *mr, uint64_t id)
{
	struct ibv_sge sg = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 }, *bad;

	if (ibv_post_srq_recv(srq, &wr, &bad))
		DIE("post_srq_recv");
}

static int cq_empty(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	return ibv_poll_cq(cq, 1, &wc) == 0;
}

static void xrc_down(struct xrc *x)
{
	ibv_destroy_qp(x->ini);
	ibv_destroy_qp(x->tgt);
}

static void test_xrc(uint8_t *lbuf, struct ibv_mr *lmr)
{
	char path[] = "/tmp/uroce-xrcd.XXXXXX";
	int fd = mkstemp(path);
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
					 IBV_XRCD_INIT_ATTR_OFLAGS, .fd = fd, .oflags = 0 };
	uint8_t *rx = lbuf + 49152;          /* receive buffers: 3 x 1 KiB */
	struct ibv_device_attr da;
	struct ibv_xrcd *again;
	struct ibv_recv_wr rwr = {}, *bad;
	struct ibv_wc wc;
	struct xrc x = {};

	if (fd < 0)
		DIE("mkstemp");
	unlink(path);
	CHECK(!ibv_query_device(ctx, &da) && (da.device_cap_flags & IBV_DEVICE_XRC),
	      "device offers XRC");
	/* The domain on a file: found again by its inode, with the kernel's
	 * O_CREAT/O_EXCL rules. */
	CHECK(!ibv_open_xrcd(ctx, &xa) && errno == EINVAL, "open_xrcd of a new file without O_CREAT: EINVAL");
	xa.oflags = O_CREAT;
	x.xrcd = ibv_open_xrcd(ctx, &xa);
	xa.oflags = 0;
	again = ibv_open_xrcd(ctx, &xa);
	CHECK(x.xrcd && again, "open_xrcd O_CREAT, then again without");
	xa.oflags = O_CREAT | O_EXCL;
	CHECK(!ibv_open_xrcd(ctx, &xa) && errno == EINVAL, "open_xrcd O_EXCL of an existing one: EINVAL");
	xa.fd = -1;
	xa.oflags = 0;
	x.other = ibv_open_xrcd(ctx, &xa);
	if (!x.xrcd || !again || !x.other)
		DIE("open_xrcd: %s", strerror(errno));

	x.scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	x.cq1 = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	x.cq2 = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	x.cq3 = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!x.scq || !x.cq1 || !x.cq2 || !x.cq3)
		DIE("create_cq");
	/* SRQ 2 is made through the second handle: the same domain. */
	x.srq1 = xrc_srq(x.xrcd, x.cq1, &x.n1);
	x.srq2 = xrc_srq(again, x.cq2, &x.n2);
	x.srq3 = xrc_srq(x.other, x.cq3, &x.n3);
	CHECK(x.n1 != x.n2 && x.n2 != x.n3 && x.n1 != x.n3, "SRQ numbers %u %u %u", x.n1, x.n2, x.n3);
	CHECK(ibv_close_xrcd(x.other) == EBUSY, "close_xrcd with an SRQ in it: EBUSY");
	xrc_qps(&x);
	CHECK(ibv_post_recv(x.tgt, &rwr, &bad) == EINVAL && ibv_post_recv(x.ini, &rwr, &bad) == EINVAL,
	      "post_recv on XRC QPs: EINVAL");

	/* Each message reaches the SRQ its XRCETH names, and that SRQ's CQ. */
	memset(rx, 0, 3072);
	srq_recv(x.srq1, rx, 1024, lmr, 101);
	srq_recv(x.srq2, rx + 1024, 1024, lmr, 102);
	srq_recv(x.srq3, rx + 2048, 1024, lmr, 103);
	pattern(lbuf, 1000, 21);
	CHECK(xrc_post(&x, IBV_WR_SEND, lbuf, 1000, lmr, x.n2, 0, 0) == IBV_WC_SUCCESS, "XRC send to SRQ 2");
	wc = poll1(x.cq2);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 102 && wc.byte_len == 1000 &&
	      wc.opcode == IBV_WC_RECV && is_pattern(rx + 1024, 1000, 21) && !rx[0] &&
	      cq_empty(x.cq1) && !rx[2048], "SRQ 2 (through the second xrcd handle) got it, SRQ 1 did not");
	pattern(lbuf, 3000, 22);
	srq_recv(x.srq1, rx + 1024, 1024, lmr, 104); /* a second WQE, elsewhere */
	CHECK(xrc_post(&x, IBV_WR_SEND, lbuf, 700, lmr, x.n1, 0, 0) == IBV_WC_SUCCESS, "XRC send to SRQ 1");
	wc = poll1(x.cq1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 101 && wc.byte_len == 700 &&
	      is_pattern(rx, 700, 22) && cq_empty(x.cq2), "SRQ 1 got it, in its first WQE");
	/* RDMA WRITE through XRC: the named SRQ's PD protects the memory. */
	pattern(lbuf, 4096, 23);
	CHECK(xrc_post(&x, IBV_WR_RDMA_WRITE, lbuf, 4096, lmr, x.n1, (uintptr_t)lbuf + 8192,
		       lmr->rkey) == IBV_WC_SUCCESS && is_pattern(lbuf + 8192, 4096, 23),
	      "XRC RDMA WRITE (multi-packet) lands");
	/* An SRQ of another domain: invalid request, nothing delivered. */
	CHECK(xrc_post(&x, IBV_WR_SEND, lbuf, 10, lmr, x.n3, 0, 0) == IBV_WC_REM_INV_REQ_ERR &&
	      cq_empty(x.cq3) && !rx[2048], "XRC send to another domain's SRQ: %s",
	      "remote invalid request, SRQ 3 untouched");
	xrc_down(&x);
	/* An SRQ number that names nothing, and a basic SRQ's number. */
	xrc_qps(&x);
	CHECK(xrc_post(&x, IBV_WR_SEND, lbuf, 10, lmr, 0xfffff0, 0, 0) == IBV_WC_REM_INV_REQ_ERR,
	      "XRC send to no SRQ: remote invalid request");
	xrc_down(&x);
	struct ibv_srq_init_attr bi = { .attr = { .max_wr = 2, .max_sge = 1 } };
	struct ibv_srq *basic = ibv_create_srq(pd, &bi);
	uint32_t bn;

	if (!basic || ibv_get_srq_num(basic, &bn))
		DIE("basic SRQ");
	xrc_qps(&x);
	CHECK(xrc_post(&x, IBV_WR_SEND, lbuf, 10, lmr, bn, 0, 0) == IBV_WC_REM_INV_REQ_ERR,
	      "XRC send to a basic SRQ: remote invalid request");
	xrc_down(&x);
	ibv_destroy_srq(basic);

	/* A message posted while the SRQ has no WQE: delivered once one is
	 * posted (RNR NAKs and retries if it got there first). */
	xrc_qps(&x);
	pattern(lbuf, 512, 24);
	struct ibv_sge sg = { (uintptr_t)lbuf, 512, lmr->lkey };
	struct ibv_send_wr sw = { .wr_id = 6, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *sbad;
	sw.qp_type.xrc.remote_srqn = x.n2;
	if (ibv_post_send(x.ini, &sw, &sbad))
		DIE("post_send");
	srq_recv(x.srq2, rx + 1024, 1024, lmr, 105);
	wc = poll1(x.scq);
	CHECK(wc.status == IBV_WC_SUCCESS, "XRC send posted before its receive: %s", ibv_wc_status_str(wc.status));
	wc = poll1(x.cq2);
	CHECK(wc.wr_id == 105 && is_pattern(rx + 1024, 512, 24), "delivered to SRQ 2");
	xrc_down(&x);

	ibv_destroy_srq(x.srq1);
	ibv_destroy_srq(x.srq2);
	ibv_destroy_srq(x.srq3);
	ibv_destroy_cq(x.scq);
	ibv_destroy_cq(x.cq1);
	ibv_destroy_cq(x.cq2);
	ibv_destroy_cq(x.cq3);
	CHECK(!ibv_close_xrcd(again) && !ibv_close_xrcd(x.xrcd) && !ibv_close_xrcd(x.other),
	      "close_xrcd");
	close(fd);
}

static int n_alloc, n_free;

static void *count_alloc(struct ibv_pd *ppd, void *pd_ctx, size_t size, size_t align, uint64_t type)
{
	void *p = NULL;

	(void)ppd;
	(void)type;
	if (pd_ctx != &n_alloc || posix_memalign(&p, align, size))
		return NULL;
	memset(p, 0xa5, size); /* the provider must not count on zeroed memory */
	n_alloc++;
	return p;
}

static void count_free(struct ibv_pd *ppd, void *pd_ctx, void *ptr, uint64_t type)
{
	(void)ppd;
	(void)pd_ctx;
	(void)type;
	free(ptr);
	n_free++;
}

static void test_parent_domain(uint8_t *lbuf, struct ibv_mr *lmr)
{
	struct ibv_td_init_attr tda = {};
	struct ibv_td *td = ibv_alloc_td(ctx, &tda);
	struct ibv_parent_domain_init_attr pa = { .pd = pd, .td = td, .pd_context = &n_alloc,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = count_alloc, .free = count_free };
	struct ibv_pd *ppd = ibv_alloc_parent_domain(ctx, &pa);
	struct ibv_parent_domain_init_attr nested = { .pd = ppd };

	CHECK(td && ppd, "thread domain and parent domain (%s)", strerror(errno));
	if (!td || !ppd)
		return;
	CHECK(!ibv_alloc_parent_domain(ctx, &nested) && errno == EINVAL,
	      "a parent domain of a parent domain: EINVAL");
	/* A QP of the parent domain reaches an MR of its PD: one protection domain. */
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(ppd, &ia);
	struct ibv_qp *peer = ibv_create_qp(pd, &ia);

	CHECK(qp && peer && n_alloc == 2, "QP of a parent domain: rings from its allocator (%d)", n_alloc);
	if (!qp || !peer)
		DIE("create_qp: %s", strerror(errno));
	to_rts(qp, peer->qp_num);
	to_rts(peer, qp->qp_num);
	pattern(lbuf, 512, 21);
	struct ibv_sge sg = { (uintptr_t)lbuf, 512, lmr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	wr.wr.rdma.remote_addr = (uintptr_t)lbuf + 16384;
	wr.wr.rdma.rkey = lmr->rkey;
	CHECK(!ibv_post_send(qp, &wr, &bad) && poll1(cq).status == IBV_WC_SUCCESS &&
	      is_pattern(lbuf + 16384, 512, 21), "write from a parent domain's QP with its PD's keys");
	CHECK(ibv_dealloc_pd(pd) == EBUSY, "the PD under a parent domain is busy");
	ibv_destroy_qp(qp);
	ibv_destroy_qp(peer);
	ibv_destroy_cq(cq);
	CHECK(n_free == n_alloc, "destroy gives the rings back to the allocator (%d of %d)", n_free, n_alloc);
	CHECK(ibv_dealloc_pd(ppd) == 0 && ibv_dealloc_td(td) == 0, "dealloc parent and thread domain");
	NOTE("parent domain: allocators, protection through its PD");
}

int main(int argc, char **argv)
{
	const char *dev = NULL;

	device_args(argc, argv, &dev, &gidx, NULL);
	alarm(300);
	pagesz = sysconf(_SC_PAGESIZE);
	ctx = open_device(dev);
	if (ibv_query_gid(ctx, 1, gidx, &gid))
		DIE("query_gid");
	pd = ibv_alloc_pd(ctx);
	uint8_t *lbuf = page_alloc(1 << 16);
	struct ibv_mr *lmr = ibv_reg_mr(pd, lbuf, 1 << 16, IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!pd || !lmr)
		DIE("pd/mr");
	test_cq_ex(lmr, lbuf, lbuf + 32768);
	test_mw(lbuf, lmr);
	test_odp(lbuf, lmr);
	test_rereg(lbuf, lmr);
	test_parent_domain(lbuf, lmr);
#if UROCE_RDMA_CORE >= 44
	test_atomic_write(lbuf, lmr);
#endif
	test_xrc(lbuf, lmr);
	printf("%d passed, %d failed\n", passes, failures);
	return failures ? 1 : 0;
}

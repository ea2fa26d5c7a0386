// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * verbs_verify: end-to-end data verification through the public verbs API
 * only (it runs unchanged on rxe or an RNIC).  Two processes, a server and
 * a client, exchange QP numbers, GIDs and buffer keys over TCP, then the
 * client drives every opcode of every QP type with random sizes, SGE
 * counts and alignments, and both sides compare every byte and every
 * atomic result.  Rejected remote accesses must complete with the right
 * status on the requester, flush what follows, and leave the target's
 * memory untouched.
 *
 *   verbs_verify -d DEV -g GIDX -p PORT [-n ITERS] [-s SEED] [-t T] [-U]          (server)
 *   verbs_verify -d DEV -g GIDX -p PORT [-n ITERS] [-s SEED] [-t T] [-U] [-u FILE] HOST  (client)
 *
 * -t sets the RC QPs' local ACK timeout, 4.096 us * 2^T (default 14, 67 ms,
 * perftest's); a path whose packets may wait longer needs more (the RDMA
 * CM derives it from the path's packet lifetime: 16-18 for RoCE).
 *
 * -U (both ends) leaves the UC transfers out, for a path that may lose or
 * reorder packets by design of the machine (UC has no recovery, IBTA 9.8;
 * tests/faults/hostile.sh says where).
 *
 * The RC, UC and UD connections stay up through every round; one round
 * runs, and with -u the client runs more, until FILE exists: a test that
 * attacks or impairs the live connections holds them as long as it needs,
 * whatever the speed of the machine.
 */
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "testkit.h"

enum { BUF = 8 << 20, MAXMSG = 1 << 20, NSGE = 16, DEPTH = 64 };

static int is_client, gidx = 0, iters = 200, ack_timeout = 14, no_uc;
static unsigned int seed = 1;
static struct ibv_context *ctx;
static struct ibv_pd *pd, *pd2;
static uint8_t *buf, *canary;
static struct ibv_mr *mr, *mr_ro, *mr_nowrite, *mr_noatomic, *mr_otherpd;
static union ibv_gid my_gid;


/* ---- deterministic data ------------------------------------------------------ */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static void fill(uint8_t *p, size_t n, uint64_t tag)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)mix(tag * 0x9e3779b97f4a7c15ULL + i);
}

static size_t first_diff(const uint8_t *p, size_t n, uint64_t tag)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)mix(tag * 0x9e3779b97f4a7c15ULL + i))
			return i;
	return n;
}

/* Two generators: rnd() is the sequence both sides share (sizes, flags);
 * rnd_local() shapes one side's SGE lists, which the other cannot know. */
static uint64_t rng_state, rng_local = 12345;
static uint64_t rnd(uint64_t n)
{
	rng_state = mix(rng_state + 0x9e3779b97f4a7c15ULL);
	return n ? rng_state % n : 0;
}

static uint64_t rnd_local(uint64_t n)
{
	rng_local = mix(rng_local + 0x9e3779b97f4a7c15ULL);
	return n ? rng_local % n : 0;
}

/* A random size, often near MTU multiples. */
static uint32_t rnd_size(uint32_t max)
{
	switch (rnd(4)) {
	case 0:
		return (uint32_t)rnd(64) + 1;
	case 1: {
		uint32_t m = 1024u << rnd(3);
		uint32_t v = m * (uint32_t)(rnd(4) + 1) + (uint32_t)rnd(3) - 1;

		return v > max ? max : v;
	}
	default:
		return (uint32_t)rnd(max) + 1;
	}
}

/* Split [addr, addr+len) into K SGEs of random lengths. */
static int make_sges(struct ibv_sge *sg, uint64_t addr, uint32_t len, uint32_t lkey)
{
	int k = (int)rnd_local(NSGE) + 1;
	uint32_t left = len;

	if ((uint32_t)k > len)
		k = len ? (int)len : 1;
	for (int i = 0; i < k; i++) {
		uint32_t l = i == k - 1 ? left : (uint32_t)rnd_local(left / (k - i) * 2 + 1);

		if (l > left)
			l = left;
		sg[i].addr = addr;
		sg[i].length = l;
		sg[i].lkey = lkey;
		addr += l;
		left -= l;
	}
	return k;
}

/* ---- QPs ------------------------------------------------------------------------- */

struct ep {
	uint32_t qpn, psn;
	union ibv_gid gid;
	uint64_t addr;
	uint32_t rkey, rkey_ro, rkey_nowrite, rkey_noatomic, rkey_otherpd;
	uint64_t addr_ro, addr_nowrite, addr_noatomic, addr_otherpd;
};

struct conn {
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_cq *scq, *rcq;
	struct ep me, peer;
	enum ibv_qp_type type;
};

static struct ibv_qp *create_qp(struct conn *c, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = c->scq, .recv_cq = c->rcq, .qp_type = type,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH * 2,
			 .max_send_sge = NSGE, .max_recv_sge = NSGE, .max_inline_data = 256 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM,
	};

	if (type != IBV_QPT_UD)
		ia.send_ops_flags |= IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	if (type == IBV_QPT_RC)
		ia.send_ops_flags |= IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	return ibv_create_qp_ex(ctx, &ia);
}

static void conn_up(struct conn *c, enum ibv_qp_type type)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC,
				 .qkey = 0x11111111 };
	int mask;

	memset(c, 0, sizeof(*c));
	c->type = type;
	c->scq = ibv_create_cq(ctx, DEPTH * 4, NULL, NULL, 0);
	c->rcq = ibv_create_cq(ctx, DEPTH * 4, NULL, NULL, 0);
	if (!c->scq || !c->rcq)
		DIE("create_cq");
	c->qp = create_qp(c, type);
	if (!c->qp)
		DIE("create_qp_ex: %s", strerror(errno));
	c->qpx = ibv_qp_to_qp_ex(c->qp);
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       (type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
	if (ibv_modify_qp(c->qp, &a, mask))
		DIE("INIT");
	c->me = (struct ep){ .qpn = c->qp->qp_num, .psn = (uint32_t)rnd(1 << 24), .gid = my_gid,
			     .addr = (uintptr_t)buf, .rkey = mr->rkey,
			     .addr_ro = (uintptr_t)mr_ro->addr, .rkey_ro = mr_ro->rkey,
			     .addr_nowrite = (uintptr_t)mr_nowrite->addr, .rkey_nowrite = mr_nowrite->rkey,
			     .addr_noatomic = (uintptr_t)mr_noatomic->addr, .rkey_noatomic = mr_noatomic->rkey,
			     .addr_otherpd = (uintptr_t)mr_otherpd->addr, .rkey_otherpd = mr_otherpd->rkey };
	xfer(&c->me, &c->peer, sizeof(c->me));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (type != IBV_QPT_UD) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = c->peer.qpn;
		a.rq_psn = c->peer.psn;
		a.ah_attr = (struct ibv_ah_attr){ .is_global = 1, .port_num = 1,
			.grh = { .dgid = c->peer.gid, .sgid_index = gidx, .hop_limit = 64 } };
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = 16;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (ibv_modify_qp(c->qp, &a, mask))
		DIE("RTR: %s", strerror(errno));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->me.psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (type == IBV_QPT_RC) {
		a.timeout = (uint8_t)ack_timeout;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 16;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (ibv_modify_qp(c->qp, &a, mask))
		DIE("RTS: %s", strerror(errno));
}

static void conn_down(struct conn *c)
{
	ibv_destroy_qp(c->qp);
	ibv_destroy_cq(c->scq);
	ibv_destroy_cq(c->rcq);
}

/* Poll one completion from CQ within POLL_LIMIT_S seconds: long enough
 * for a loaded machine on an impaired wire, short of meson's test bound. */
#define POLL_LIMIT_S 30

static struct ibv_wc poll_one(struct ibv_cq *cq, const char *what)
{
	return poll_wc(cq, POLL_LIMIT_S, what);
}

/* The same, naming the test and the message (in the error if none comes). */
static struct ibv_wc poll_msg(struct ibv_cq *cq, const char *test, int i, const char *what)
{
	char label[96];

	snprintf(label, sizeof(label), "%s #%d: %s", test, i, what);
	return poll_wc(cq, POLL_LIMIT_S, label);
}

static void post_recv_sges(struct conn *c, uint64_t id, uint64_t addr, uint32_t len)
{
	struct ibv_sge sg[NSGE];
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = sg }, *bad;

	wr.num_sge = make_sges(sg, addr, len, mr->lkey);
	if (ibv_post_recv(c->qp, &wr, &bad))
		DIE("post_recv");
}

/* Post one send-side WR through the classic or the extended API. */
struct op {
	enum ibv_wr_opcode opcode;
	uint64_t id;
	struct ibv_sge sg[NSGE];
	int nsge;
	unsigned int flags;
	uint32_t imm;
	uint64_t raddr;
	uint32_t rkey;
	uint64_t cmp, swap;
	struct ibv_ah *ah;
	uint32_t rqpn;
};

static int post(struct conn *c, struct op *o, int new_api)
{
	if (!new_api) {
		struct ibv_send_wr wr = { .wr_id = o->id, .sg_list = o->sg, .num_sge = o->nsge,
					  .opcode = o->opcode, .send_flags = o->flags,
					  .imm_data = htobe32(o->imm) }, *bad;

		if (o->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || o->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.remote_addr = o->raddr;
			wr.wr.atomic.rkey = o->rkey;
			wr.wr.atomic.compare_add = o->cmp;
			wr.wr.atomic.swap = o->swap;
		} else if (o->ah) {
			wr.wr.ud.ah = o->ah;
			wr.wr.ud.remote_qpn = o->rqpn;
			wr.wr.ud.remote_qkey = 0x11111111;
		} else {
			wr.wr.rdma.remote_addr = o->raddr;
			wr.wr.rdma.rkey = o->rkey;
		}
		return ibv_post_send(c->qp, &wr, &bad);
	}
	ibv_wr_start(c->qpx);
	c->qpx->wr_id = o->id;
	c->qpx->wr_flags = o->flags;
	switch (o->opcode) {
	case IBV_WR_SEND: ibv_wr_send(c->qpx); break;
	case IBV_WR_SEND_WITH_IMM: ibv_wr_send_imm(c->qpx, htobe32(o->imm)); break;
	case IBV_WR_RDMA_WRITE: ibv_wr_rdma_write(c->qpx, o->rkey, o->raddr); break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		ibv_wr_rdma_write_imm(c->qpx, o->rkey, o->raddr, htobe32(o->imm));
		break;
	case IBV_WR_RDMA_READ: ibv_wr_rdma_read(c->qpx, o->rkey, o->raddr); break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		ibv_wr_atomic_cmp_swp(c->qpx, o->rkey, o->raddr, o->cmp, o->swap);
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		ibv_wr_atomic_fetch_add(c->qpx, o->rkey, o->raddr, o->cmp);
		break;
	default: break;
	}
	if (o->ah)
		ibv_wr_set_ud_addr(c->qpx, o->ah, o->rqpn, 0x11111111);
	if (o->flags & IBV_SEND_INLINE) {
		struct ibv_data_buf b[NSGE];

		for (int i = 0; i < o->nsge; i++)
			b[i] = (struct ibv_data_buf){ (void *)(uintptr_t)o->sg[i].addr, o->sg[i].length };
		ibv_wr_set_inline_data_list(c->qpx, o->nsge, b);
	} else {
		ibv_wr_set_sge_list(c->qpx, o->nsge, o->sg);
	}
	return ibv_wr_complete(c->qpx);
}

/* Local layout of BUF: [0, 4M) source/target data, [4M, 8M) receive/read space. */
#define SRC(off) (buf + (off))
#define DST_OFF (4u << 20)

/* ---- the tests -------------------------------------------------------------------- */

/* SEND / SEND_WITH_IMM (RC, UC): random sizes, SGEs, inline, both APIs. */
static void test_sends(struct conn *c, const char *name)
{
	uint32_t max = c->type == IBV_QPT_UD ? 1024 : MAXMSG;
	uint64_t base_tag = seed * 1000003ULL + c->type * 7919;

	rng_state = base_tag;
	for (int i = 0; i < iters; i++) {
		uint32_t len = rnd_size(max - (c->type == IBV_QPT_UD ? 0 : 0));
		uint32_t off = (uint32_t)rnd(4096);
		int imm = (int)rnd(2), inl = len <= 256 && rnd(3) == 0, new_api = (int)rnd(2);
		uint64_t tag = base_tag + i;

		if (!is_client) {
			post_recv_sges(c, i, (uintptr_t)buf + DST_OFF + off,
				       c->type == IBV_QPT_UD ? len + 40 : max + 64);
			barrier();
			struct ibv_wc wc = poll_msg(c->rcq, name, i, "recv");
			uint8_t *data = buf + DST_OFF + off + (c->type == IBV_QPT_UD ? 40 : 0);
			size_t d;

			CHECK(wc.status == IBV_WC_SUCCESS, "%s #%d recv status %s", name, i,
			      ibv_wc_status_str(wc.status));
			CHECK(wc.opcode == IBV_WC_RECV, "%s #%d opcode %d", name, i, wc.opcode);
			CHECK(wc.wr_id == (uint64_t)i, "%s #%d wr_id %lu", name, i, (unsigned long)wc.wr_id);
			CHECK(wc.qp_num == c->qp->qp_num, "%s #%d qp_num", name, i);
			CHECK(wc.byte_len == len + (c->type == IBV_QPT_UD ? 40 : 0),
			      "%s #%d byte_len %u, sent %u", name, i, wc.byte_len, len);
			CHECK(!!(wc.wc_flags & IBV_WC_WITH_IMM) == imm &&
			      (!imm || be32toh(wc.imm_data) == (uint32_t)tag),
			      "%s #%d immediate", name, i);
			if (c->type == IBV_QPT_UD) {
				CHECK(wc.wc_flags & IBV_WC_GRH, "%s #%d GRH flag", name, i);
				CHECK(wc.src_qp == c->peer.qpn, "%s #%d src_qp %u", name, i, wc.src_qp);
			}
			d = first_diff(data, len, tag);
			CHECK(d == len, "%s #%d (%u B, %s) data differs at byte %zu", name, i, len,
			      inl ? "inline" : "sge", d);
			barrier();
		} else {
			struct op o = { .opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, .id = i,
					.flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0),
					.imm = (uint32_t)tag };

			fill(SRC(off), len, tag);
			o.nsge = make_sges(o.sg, (uintptr_t)SRC(off), len, mr->lkey);
			if (c->type == IBV_QPT_UD) {
				struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
					.grh = { .dgid = c->peer.gid, .sgid_index = gidx, .hop_limit = 64 } };

				o.ah = ibv_create_ah(pd, &aa);
				o.rqpn = c->peer.qpn;
				if (!o.ah)
					DIE("create_ah");
			}
			barrier();
			if (post(c, &o, new_api))
				DIE("%s #%d post failed", name, i);
			struct ibv_wc wc = poll_msg(c->scq, name, i, "send");

			CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && wc.wr_id == (uint64_t)i,
			      "%s #%d send completion %s", name, i, ibv_wc_status_str(wc.status));
			barrier();
			if (o.ah)
				ibv_destroy_ah(o.ah);
		}
	}
	NOTE("%s: %d messages (random sizes up to %u B, 1-16 SGEs, inline, both APIs)", name, iters, max);
}

/* RDMA WRITE (+IMM) into the server's buffer, verified by the server. */
static void test_writes(struct conn *c, const char *name)
{
	uint64_t base_tag = seed * 7777777ULL + c->type;

	rng_state = base_tag;
	for (int i = 0; i < iters; i++) {
		uint32_t len = rnd_size(MAXMSG), off = (uint32_t)rnd(4096);
		int imm = (int)rnd(2), new_api = (int)rnd(2);
		uint64_t tag = base_tag + i;

		if (!is_client) {
			if (imm)
				post_recv_sges(c, i, (uintptr_t)buf + DST_OFF, 64);
			/* UC: a SEND after the WRITE marks it placed (a UC requester
			 * completes on sending; the order on the QP is kept). */
			if (c->type == IBV_QPT_UC && !imm)
				post_recv_sges(c, i + 1000000, (uintptr_t)buf + (7u << 20), 64);
			memset(buf + DST_OFF + off, 0, len);
			barrier();
			barrier(); /* the client's write completed */
			if (c->type == IBV_QPT_UC && !imm) {
				struct ibv_wc wc = poll_msg(c->rcq, name, i, "uc marker");

				CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)i + 1000000,
				      "%s #%d marker send (%s)", name, i, ibv_wc_status_str(wc.status));
			}
			if (imm) {
				struct ibv_wc wc = poll_msg(c->rcq, name, i, "write imm");

				CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
				      wc.byte_len == len && (wc.wc_flags & IBV_WC_WITH_IMM) &&
				      be32toh(wc.imm_data) == (uint32_t)tag,
				      "%s #%d write-with-imm completion (status %s opcode %d len %u)",
				      name, i, ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
			}
			size_t d = first_diff(buf + DST_OFF + off, len, tag);

			CHECK(d == len, "%s #%d write of %u B differs at byte %zu", name, i, len, d);
		} else {
			struct op o = { .opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
					.id = i, .flags = IBV_SEND_SIGNALED, .imm = (uint32_t)tag,
					.raddr = c->peer.addr + DST_OFF + off, .rkey = c->peer.rkey };

			fill(SRC(off), len, tag);
			o.nsge = make_sges(o.sg, (uintptr_t)SRC(off), len, mr->lkey);
			barrier();
			if (post(c, &o, new_api))
				DIE("%s #%d post failed", name, i);
			struct ibv_wc wc = poll_msg(c->scq, name, i, "write");

			CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE,
			      "%s #%d write completion %s", name, i, ibv_wc_status_str(wc.status));
			if (c->type == IBV_QPT_UC && !imm) {
				struct op m = { .opcode = IBV_WR_SEND, .id = i, .flags = IBV_SEND_SIGNALED,
						.nsge = 1 };

				m.sg[0] = (struct ibv_sge){ (uintptr_t)buf, 8, mr->lkey };
				if (post(c, &m, 0))
					DIE("uc marker post");
				poll_msg(c->scq, name, i, "uc marker");
			}
			barrier();
		}
	}
	NOTE("%s: %d RDMA writes", name, iters);
}

/* RDMA READ of server data, verified by the client. */
static void test_reads(struct conn *c)
{
	uint64_t tag0 = seed * 31337ULL;

	if (!is_client)
		fill(buf, DST_OFF, tag0);
	barrier();
	if (is_client) {
		rng_state = tag0;
		for (int i = 0; i < iters; i++) {
			uint32_t len = rnd_size(MAXMSG), roff = (uint32_t)rnd(DST_OFF - len);
			uint32_t loff = (uint32_t)rnd(4096);
			struct op o = { .opcode = IBV_WR_RDMA_READ, .id = i, .flags = IBV_SEND_SIGNALED,
					.raddr = c->peer.addr + roff, .rkey = c->peer.rkey };
			size_t bad = len;

			memset(buf + DST_OFF + loff, 0xee, len);
			o.nsge = make_sges(o.sg, (uintptr_t)buf + DST_OFF + loff, len, mr->lkey);
			if (post(c, &o, (int)rnd_local(2)))
				DIE("read post");
			struct ibv_wc wc = poll_msg(c->scq, "rc read", i, "read");

			CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ &&
			      wc.byte_len == len, "read #%d completion %s len %u", i,
			      ibv_wc_status_str(wc.status), wc.byte_len);
			/* The server filled byte k of its buffer with fill(tag0)[k]. */
			for (uint32_t k = 0; k < len; k++)
				if (buf[DST_OFF + loff + k] != (uint8_t)mix(tag0 * 0x9e3779b97f4a7c15ULL + roff + k)) {
					bad = k;
					break;
				}
			CHECK(bad == len, "read #%d of %u B at %u differs at byte %zu", i, len, roff, bad);
		}
		NOTE("rc: %d RDMA reads (random sizes, offsets, SGEs)", iters);
	}
	barrier();
}

/* Atomics: fetch-and-add sums and compare-and-swap, results checked. */
static void test_atomics(struct conn *c)
{
	volatile uint64_t *target = (volatile uint64_t *)(buf + 8 * 4096);

	if (!is_client)
		*target = 1000;
	barrier();
	if (is_client) {
		uint64_t expect = 1000, *res = (uint64_t *)(buf + DST_OFF);

		rng_state = seed * 4242;
		for (int i = 0; i < iters; i++) {
			uint64_t add = rnd(1 << 20);
			struct op o = { .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .id = i,
					.flags = IBV_SEND_SIGNALED, .raddr = c->peer.addr + 8 * 4096,
					.rkey = c->peer.rkey, .cmp = add, .nsge = 1 };

			o.sg[0] = (struct ibv_sge){ (uintptr_t)res, 8, mr->lkey };
			*res = 0xdeadbeef;
			if (post(c, &o, (int)rnd_local(2)))
				DIE("atomic post");
			struct ibv_wc wc = poll_msg(c->scq, "rc atomic", i, "fetch_add");

			CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_FETCH_ADD,
			      "fetch_add #%d %s", i, ibv_wc_status_str(wc.status));
			CHECK(*res == expect, "fetch_add #%d returned %lu, expected %lu", i,
			      (unsigned long)*res, (unsigned long)expect);
			expect += add;
		}
		/* compare-and-swap: a miss leaves the value, a hit swaps it */
		struct op o = { .opcode = IBV_WR_ATOMIC_CMP_AND_SWP, .flags = IBV_SEND_SIGNALED,
				.raddr = c->peer.addr + 8 * 4096, .rkey = c->peer.rkey,
				.cmp = expect + 1, .swap = 7, .nsge = 1 };

		o.sg[0] = (struct ibv_sge){ (uintptr_t)res, 8, mr->lkey };
		post(c, &o, 0);
		poll_one(c->scq, "cas miss");
		CHECK(*res == expect, "cmp_swap miss returned %lu", (unsigned long)*res);
		o.cmp = expect;
		o.swap = 0x123456789abcdefULL;
		post(c, &o, 1);
		poll_one(c->scq, "cas hit");
		CHECK(*res == expect, "cmp_swap hit returned %lu", (unsigned long)*res);
		xfer(&expect, &expect, sizeof(expect));
		NOTE("rc: %d fetch-and-adds and compare-and-swaps, every result checked", iters);
	} else {
		uint64_t expect;

		xfer(&expect, &expect, sizeof(expect));
		CHECK(*target == 0x123456789abcdefULL, "atomic target ends at %lx",
		      (unsigned long)*target);
	}
	barrier();
}

/* A rejected remote access: requester error, later WRs flushed, target untouched. */
static void test_violation(const char *what, enum ibv_wr_opcode op, int which,
			   enum ibv_wc_status want)
{
	struct conn c;
	enum { SPAN = 65536 };

	conn_up(&c, IBV_QPT_RC);
	if (!is_client) {
		/* Canary over every region a bad access could aim at. */
		fill(canary, 4 * SPAN, 99);
		memcpy(mr_ro->addr, canary, SPAN);
		memcpy(mr_nowrite->addr, canary + SPAN, SPAN);
		memcpy(mr_noatomic->addr, canary + 2 * SPAN, SPAN);
		memcpy(mr_otherpd->addr, canary + 3 * SPAN, SPAN);
		post_recv_sges(&c, 1, (uintptr_t)buf + DST_OFF, 4096);
	}
	barrier();
	if (is_client) {
		struct op o = { .opcode = op, .id = 1, .flags = IBV_SEND_SIGNALED, .nsge = 1 };
		struct op next = { .opcode = IBV_WR_SEND, .id = 2, .flags = IBV_SEND_SIGNALED, .nsge = 1 };
		struct ep *p = &c.peer;

		o.sg[0] = (struct ibv_sge){ (uintptr_t)buf, op == IBV_WR_RDMA_WRITE ? 4096 : 8, mr->lkey };
		next.sg[0] = (struct ibv_sge){ (uintptr_t)buf, 16, mr->lkey };
		switch (which) {
		case 0: o.raddr = p->addr_noatomic; o.rkey = p->rkey_noatomic ^ 0x5a5a5a5a; break; /* bad key */
		case 1: o.raddr = p->addr_noatomic + SPAN - 100; o.rkey = p->rkey_noatomic; break; /* past the end */
		case 2: o.raddr = p->addr_nowrite; o.rkey = p->rkey_nowrite; break;
		case 3: o.raddr = p->addr_nowrite; o.rkey = p->rkey_nowrite; break;
		case 4: o.raddr = p->addr_noatomic; o.rkey = p->rkey_noatomic; break;
		case 5: o.raddr = p->addr_otherpd; o.rkey = p->rkey_otherpd; break;
		case 6: o.raddr = p->addr_noatomic + 3; o.rkey = p->rkey_noatomic; break; /* unaligned */
		}
		if (which == 6)
			o.rkey = p->rkey; /* an MR that allows atomics: only the alignment is wrong */
		if (which == 6)
			o.raddr = p->addr + 8 * 4096 + 3;
		post(&c, &o, 0);
		post(&c, &next, 0);
		struct ibv_wc wc = poll_one(c.scq, what);

		CHECK(wc.status == want, "%s: requester completion %s, expected %s", what,
		      ibv_wc_status_str(wc.status), ibv_wc_status_str(want));
		wc = poll_one(c.scq, "flush");
		CHECK(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 2,
		      "%s: the next WR flushed (%s)", what, ibv_wc_status_str(wc.status));
	}
	barrier();
	if (!is_client) {
		struct ibv_wc wc = poll_one(c.rcq, "responder flush");

		CHECK(!memcmp(mr_ro->addr, canary, SPAN) &&
		      !memcmp(mr_nowrite->addr, canary + SPAN, SPAN) &&
		      !memcmp(mr_noatomic->addr, canary + 2 * SPAN, SPAN) &&
		      !memcmp(mr_otherpd->addr, canary + 3 * SPAN, SPAN),
		      "%s: target memory changed", what);
		CHECK(wc.status == IBV_WC_WR_FLUSH_ERR, "%s: the target's receive flushed (%s)", what,
		      ibv_wc_status_str(wc.status));
	}
	barrier();
	conn_down(&c);
	NOTE("%s rejected", what);
}

static void test_ud_reply(struct conn *c)
{
	/* The server answers the client through an AH made from the completion. */
	if (!is_client) {
		post_recv_sges(c, 5, (uintptr_t)buf + DST_OFF, 1024 + 40);
		barrier();
		struct ibv_wc wc = poll_one(c->rcq, "ud request");
		struct ibv_ah *ah = ibv_create_ah_from_wc(pd, &wc, (struct ibv_grh *)(buf + DST_OFF), 1);

		CHECK(ah != NULL, "ibv_create_ah_from_wc (%s)", strerror(errno));
		if (ah) {
			struct op o = { .opcode = IBV_WR_SEND, .id = 6, .flags = IBV_SEND_SIGNALED,
					.nsge = 1, .ah = ah, .rqpn = wc.src_qp };

			fill(buf, 100, 4711);
			o.sg[0] = (struct ibv_sge){ (uintptr_t)buf, 100, mr->lkey };
			post(c, &o, 0);
			poll_one(c->scq, "ud reply");
			ibv_destroy_ah(ah);
		}
		barrier();
	} else {
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
			.grh = { .dgid = c->peer.gid, .sgid_index = gidx, .hop_limit = 64 } };
		struct ibv_ah *ah = ibv_create_ah(pd, &aa);
		struct op o = { .opcode = IBV_WR_SEND, .id = 5, .flags = IBV_SEND_SIGNALED,
				.nsge = 1, .ah = ah, .rqpn = c->peer.qpn };

		post_recv_sges(c, 7, (uintptr_t)buf + DST_OFF, 100 + 40);
		o.sg[0] = (struct ibv_sge){ (uintptr_t)buf, 10, mr->lkey };
		barrier();
		post(c, &o, 1);
		poll_one(c->scq, "ud request send");
		struct ibv_wc wc = poll_one(c->rcq, "ud reply");

		CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == 140 &&
		      first_diff(buf + DST_OFF + 40, 100, 4711) == 100,
		      "UD reply through ibv_create_ah_from_wc");
		ibv_destroy_ah(ah);
		barrier();
	}
	NOTE("ud: reply through an AH made from the completion");
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *port = "19876", *host = NULL, *until = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "d:g:p:n:s:t:u:U")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		case 'p': port = optarg; break;
		case 'n': iters = atoi(optarg); break;
		case 's': seed = (unsigned int)atoi(optarg); break;
		case 't': ack_timeout = atoi(optarg); break;
		case 'u': until = optarg; break;
		case 'U': no_uc = 1; break;
		default:
			fprintf(stderr, "usage: %s -d DEV -g GIDX [-p PORT] [-n ITERS] [-s SEED] [-t ACK_TIMEOUT] [-U] [-u FILE] [HOST]\n", argv[0]);
			return 2;
		}
	}
	if (ack_timeout < 1 || ack_timeout > 31) {
		fprintf(stderr, "verbs_verify: -t takes 1..31 (4.096 us * 2^T)\n");
		return 2;
	}
	if (optind < argc)
		host = argv[optind];
	is_client = host != NULL;
	alarm(600);
	ctx = open_device(dev);
	if (ibv_query_gid(ctx, 1, gidx, &my_gid))
		DIE("query_gid");
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, BUF);
	canary = malloc(4 * 65536);
	if (!pd || !pd2 || !buf || !canary)
		DIE("alloc");
	memset(buf, 0, BUF);
	int all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC;
	mr = ibv_reg_mr(pd, buf, BUF, all);
	mr_ro = ibv_reg_mr(pd, aligned_alloc(4096, 65536), 65536, IBV_ACCESS_REMOTE_READ);
	mr_nowrite = ibv_reg_mr(pd, aligned_alloc(4096, 65536), 65536,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	mr_noatomic = ibv_reg_mr(pd, aligned_alloc(4096, 65536), 65536,
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	mr_otherpd = ibv_reg_mr(pd2, aligned_alloc(4096, 65536), 65536, all);
	if (!mr || !mr_ro || !mr_nowrite || !mr_noatomic || !mr_otherpd)
		DIE("reg_mr: %s", strerror(errno));
	tcp_setup(host, port);
	rng_state = seed;

	/* Every QP type's connection is up at once and stays up for all the
	 * rounds: a test that aims at live QPs (hostile.sh) finds them all. */
	struct conn rc, uc, ud;

	conn_up(&rc, IBV_QPT_RC);
	conn_up(&uc, IBV_QPT_UC);
	conn_up(&ud, IBV_QPT_UD);
	for (int round = 1;; round++) {
		char mine, theirs;

		test_sends(&rc, "rc send");
		test_writes(&rc, "rc write");
		test_reads(&rc);
		test_atomics(&rc);
		if (!no_uc) {
			test_sends(&uc, "uc send");
			test_writes(&uc, "uc write");
		}
		test_sends(&ud, "ud send");
		test_ud_reply(&ud);
		/* The client decides, the server follows: another round while
		 * -u's file does not exist yet. */
		mine = is_client && until && access(until, F_OK) != 0;
		xfer(&mine, &theirs, 1);
		if (!(is_client ? mine : theirs))
			break;
		NOTE("round %d done, the QPs held for another", round);
	}
	conn_down(&rc);
	conn_down(&uc);
	conn_down(&ud);

	test_violation("write with a bad rkey", IBV_WR_RDMA_WRITE, 0, IBV_WC_REM_ACCESS_ERR);
	test_violation("write past the end of an MR", IBV_WR_RDMA_WRITE, 1, IBV_WC_REM_ACCESS_ERR);
	test_violation("write without REMOTE_WRITE", IBV_WR_RDMA_WRITE, 2, IBV_WC_REM_ACCESS_ERR);
	test_violation("read without REMOTE_READ", IBV_WR_RDMA_READ, 3, IBV_WC_REM_ACCESS_ERR);
	test_violation("atomic without REMOTE_ATOMIC", IBV_WR_ATOMIC_FETCH_AND_ADD, 4, IBV_WC_REM_ACCESS_ERR);
	test_violation("write to an MR of another PD", IBV_WR_RDMA_WRITE, 5, IBV_WC_REM_ACCESS_ERR);
	test_violation("unaligned atomic", IBV_WR_ATOMIC_FETCH_AND_ADD, 6, IBV_WC_REM_INV_REQ_ERR);

	printf("%d passed, %d failed\n", passes, failures);
	return failures ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * uc_loss: UC and UD under packet loss, through the public verbs API only
 * (it runs unchanged on rxe or an RNIC).  Two processes exchange QP
 * numbers, GIDs and the messages' lengths over TCP, as rc_faults does.
 *
 *   uc_loss -d DEV -g GIDX [-p PORT] [-n N]          (server)
 *   uc_loss -d DEV -g GIDX [-p PORT] [-n N] HOST     (client)
 *
 * For UC, then UD, the server posts N receive WQEs (wr_id 0..N-1) of
 * 16 KiB; the client sends N SEND_WITH_IMMs (UC: 3-12 KiB, several packets
 * at path MTU 1024; UD: 1 KiB datagrams), message i filled with a pattern
 * of (i, byte offset) and carrying i as its immediate data.  Whatever the
 * wire loses, the server checks that
 *   - every completion is SUCCESS, a RECV with immediate data i < N that
 *     was not delivered before and is above the one delivered before
 *     (UC and UD keep the order), its byte_len is the length sent for i
 *     (UD: plus the 40-byte GRH) and its bytes are exactly i's pattern:
 *     a UC message that lost a packet is dropped whole (IBTA 9.8.2), never
 *     delivered partially or mixed with its neighbour;
 *   - the completions' wr_ids are 0, 1, 2, ... in order: a dropped message
 *     consumed no receive WQE;
 *   - the N - delivered WQEs left are still posted and work: the client
 *     sends single-packet messages (indices N, N+1, ...) in rounds until
 *     each of them has completed, right bytes again; then a few more, for
 *     which no completion may come (no WQE left: dropped);
 *   - both QPs are still in RTS (never in the error state).
 * The server prints "uc: delivered D/N" and "ud: delivered D/N" (the first
 * N messages only, not the refill rounds); whether D must be N or less is
 * the caller's business (uc_loss.sh).  Exit status 0 if every check held.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "testkit.h"

static int is_client, gidx, nmsg = 400;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t *buf;
static size_t bufsz;
static uint32_t *lens;
static union ibv_gid my_gid;

enum {
	SLOT = 16384,       /* one receive WQE's buffer; one send buffer */
	SQ_DEPTH = 64,      /* sends in flight, and the client's send slots */
	BATCH = 50,         /* messages between two pauses (see send_batch) */
	REFILL_LEN = 512,   /* single-packet messages of the refill rounds */
	EXTRA = 8,          /* sent when no WQE is left: none may complete */
	MAX_ROUNDS = 60,
	GRH = 40,
	QKEY = 0x11111111,
};



static int tcp_readable(void)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/* ---- messages ------------------------------------------------------------------- */

/* Byte OFF of message I: differs between messages and along a message. */
static uint8_t pattern(uint32_t i, uint32_t off)
{
	uint32_t x = (i + 1) * 0x9e3779b1u + (off >> 2) * 0x85ebca77u;

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return (uint8_t)(x >> (8 * (off & 3)));
}

static void fill(uint8_t *p, uint32_t i, uint32_t len)
{
	for (uint32_t off = 0; off < len; off++)
		p[off] = pattern(i, off);
}

/* The first offset where P is not message I's pattern, or -1. */
static long mismatch(const uint8_t *p, uint32_t i, uint32_t len)
{
	for (uint32_t off = 0; off < len; off++)
		if (p[off] != pattern(i, off))
			return off;
	return -1;
}

static uint32_t len_of(uint32_t i)
{
	return i < (uint32_t)nmsg ? lens[i] : REFILL_LEN;
}

/* ---- a UC or UD QP -------------------------------------------------------------- */

struct ep {
	uint32_t qpn, psn, qkey, pad;
	union ibv_gid gid;
};

struct conn {
	enum ibv_qp_type type;
	const char *name;
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;
	struct ibv_ah *ah;     /* UD: the peer */
	struct ep me, peer;
	int outstanding;       /* client: sends not yet completed */
	/* server */
	uint32_t next_wr;      /* the wr_id the next completion must carry */
	long last_idx;         /* the last index delivered */
	uint32_t delivered;    /* of the first N */
	uint32_t refilled;     /* of the refill rounds */
	uint32_t ncomp;        /* receive completions, good or bad */
	uint8_t *seen;         /* indices < N delivered */
	int bad;               /* completions that failed a check (reported one by one up to 10) */
};

static void conn_up(struct conn *c, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = { .qp_type = type,
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = (uint32_t)nmsg,
			 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	memset(c, 0, sizeof(*c));
	c->type = type;
	c->name = type == IBV_QPT_UC ? "uc" : "ud";
	c->last_idx = -1;
	c->seen = calloc((size_t)nmsg, 1);
	c->scq = ibv_create_cq(ctx, SQ_DEPTH * 2, NULL, NULL, 0);
	c->rcq = ibv_create_cq(ctx, nmsg + 16, NULL, NULL, 0);
	if (!c->scq || !c->rcq || !c->seen)
		DIE("create_cq");
	ia.send_cq = c->scq;
	ia.recv_cq = c->rcq;
	c->qp = ibv_create_qp(pd, &ia);
	if (!c->qp)
		DIE("%s: create_qp: %s", c->name, strerror(errno));
	if (type == IBV_QPT_UD) {
		a.qkey = QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = 0;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if (ibv_modify_qp(c->qp, &a, mask))
		DIE("%s: INIT: %s", c->name, strerror(errno));
	c->me = (struct ep){ .qpn = c->qp->qp_num, .psn = (uint32_t)(random() & 0xffffff),
			     .qkey = QKEY, .gid = my_gid };
	xfer(&c->me, &c->peer, sizeof(c->me));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1,
		.grh = { .dgid = c->peer.gid, .sgid_index = (uint8_t)gidx, .hop_limit = 64 } };
	if (type == IBV_QPT_UC) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = c->peer.qpn;
		a.rq_psn = c->peer.psn;
		a.ah_attr = ah;
		mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	} else {
		mask = IBV_QP_STATE;
	}
	if (ibv_modify_qp(c->qp, &a, mask))
		DIE("%s: RTR: %s", c->name, strerror(errno));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->me.psn;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		DIE("%s: RTS: %s", c->name, strerror(errno));
	if (type == IBV_QPT_UD) {
		c->ah = ibv_create_ah(pd, &ah);
		if (!c->ah)
			DIE("ud: create_ah: %s", strerror(errno));
	}
}

static void conn_down(struct conn *c)
{
	if (c->ah)
		ibv_destroy_ah(c->ah);
	ibv_destroy_qp(c->qp);
	ibv_destroy_cq(c->scq);
	ibv_destroy_cq(c->rcq);
	free(c->seen);
}

static void check_state(struct conn *c)
{
	struct ibv_qp_attr qa = { 0 };
	struct ibv_qp_init_attr qi;
	int rc = ibv_query_qp(c->qp, &qa, IBV_QP_STATE, &qi);

	CHECK(!rc && qa.qp_state == IBV_QPS_RTS, "%s: %s QP state %d (query %d), expected RTS (%d)",
	      c->name, is_client ? "client" : "server", qa.qp_state, rc, IBV_QPS_RTS);
}

/* ---- client: sending ------------------------------------------------------------ */

static void reap_sends(struct conn *c, int keep)
{
	double t0 = now_ms();

	while (c->outstanding > keep) {
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(c->scq, 16, wc);

		if (n < 0)
			DIE("%s: poll_cq (send)", c->name);
		for (int k = 0; k < n; k++)
			CHECK(wc[k].status == IBV_WC_SUCCESS,
			      "%s: send wr_id %lu completed %s", c->name, (unsigned long)wc[k].wr_id,
			      ibv_wc_status_str(wc[k].status));
		c->outstanding -= n;
		if (!n) {
			if (now_ms() - t0 > 10000)
				DIE("%s: %d sends not completed within 10 s", c->name, c->outstanding);
			usleep(20);
		}
	}
}

static void send_one(struct conn *c, uint32_t idx)
{
	uint32_t len = len_of(idx);
	uint8_t *p = buf + (size_t)(idx % SQ_DEPTH) * SLOT;
	struct ibv_sge sg = { (uintptr_t)p, len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = idx, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htonl(idx) }, *bad;

	/* slot idx % SQ_DEPTH is free: at most SQ_DEPTH - 1 sends are in flight */
	reap_sends(c, SQ_DEPTH - 1);
	fill(p, idx, len);
	if (c->type == IBV_QPT_UD) {
		wr.wr.ud.ah = c->ah;
		wr.wr.ud.remote_qpn = c->peer.qpn;
		wr.wr.ud.remote_qkey = c->peer.qkey;
	}
	if (ibv_post_send(c->qp, &wr, &bad))
		DIE("%s: post_send %u: %s", c->name, idx, strerror(errno));
	c->outstanding++;
}

/* Send FROM..TO-1 in batches of BATCH; after each batch (once its sends
 * are done) the client waits over TCP until the server has polled
 * everything that arrived: the wire may lose packets, the receiving
 * process's socket buffer should not (a clean run must deliver all). */
static void send_range(struct conn *c, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to;) {
		uint32_t end = i + BATCH < to ? i + BATCH : to;

		for (; i < end; i++)
			send_one(c, i);
		reap_sends(c, 0);
		char a = i < to ? 'b' : 'd', b;

		xfer(&a, &b, 1);
	}
	if (from == to) {
		char a = 'd', b;

		xfer(&a, &b, 1);
	}
}

/* ---- server: receiving ---------------------------------------------------------- */

static void post_recvs(struct conn *c)
{
	for (int j = 0; j < nmsg; j++) {
		struct ibv_sge sg = { (uintptr_t)buf + (size_t)j * SLOT, SLOT, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)j, .sg_list = &sg, .num_sge = 1 }, *bad;

		if (ibv_post_recv(c->qp, &wr, &bad))
			DIE("%s: post_recv %d: %s", c->name, j, strerror(errno));
	}
	memset(buf, 0, (size_t)nmsg * SLOT);
}

#define BAD(...)                                                                 \
	do {                                                                     \
		if (c->bad++ < 10) {                                             \
			printf("FAIL: %s: ", c->name);                           \
			printf(__VA_ARGS__);                                     \
			putchar('\n');                                           \
		}                                                                \
		failures++;                                                      \
		ok = 0;                                                          \
	} while (0)

static void check_wc(struct conn *c, const struct ibv_wc *wc, uint32_t lo, uint32_t hi)
{
	int ok = 1;
	uint32_t idx = ntohl(wc->imm_data);
	uint32_t hdr = c->type == IBV_QPT_UD ? GRH : 0;

	c->ncomp++;
	if (wc->status != IBV_WC_SUCCESS) {
		BAD("receive wr_id %lu completed %s (vendor_err %u)", (unsigned long)wc->wr_id,
		    ibv_wc_status_str(wc->status), wc->vendor_err);
		c->next_wr++;
		return;
	}
	if (wc->wr_id != c->next_wr)
		BAD("completion for wr_id %lu, expected %u (WQEs complete in order; a dropped message consumes none)",
		    (unsigned long)wc->wr_id, c->next_wr);
	if (wc->wr_id < (uint64_t)nmsg)
		c->next_wr = (uint32_t)wc->wr_id + 1;
	if (wc->opcode != IBV_WC_RECV || !(wc->wc_flags & IBV_WC_WITH_IMM)) {
		BAD("wr_id %lu: opcode %d flags %#x, expected RECV with immediate data",
		    (unsigned long)wc->wr_id, wc->opcode, wc->wc_flags);
		return;
	}
	if (idx < lo || idx >= hi) {
		BAD("wr_id %lu: immediate data %u, not a message of this round (%u..%u)",
		    (unsigned long)wc->wr_id, idx, lo, hi - 1);
		return;
	}
	if (idx < (uint32_t)nmsg && c->seen[idx])
		BAD("message %u delivered twice", idx);
	if ((long)idx <= c->last_idx)
		BAD("message %u delivered after message %ld (out of order)", idx, c->last_idx);
	if (wc->byte_len != len_of(idx) + hdr)
		BAD("message %u: byte_len %u, sent %u%s", idx, wc->byte_len, len_of(idx),
		    hdr ? " (+ 40 bytes GRH)" : "");
	if (wc->wr_id < (uint64_t)nmsg) {
		uint32_t n = wc->byte_len < SLOT ? wc->byte_len : SLOT;
		const uint8_t *p = buf + (size_t)wc->wr_id * SLOT;
		long off;

		if (n > len_of(idx) + hdr)
			n = len_of(idx) + hdr;
		off = n > hdr ? mismatch(p + hdr, idx, n - hdr) : -1;
		if (off >= 0)
			BAD("message %u (wr_id %lu, %u bytes): byte %ld is %#x, expected %#x "
			    "(a partial or mixed message)", idx, (unsigned long)wc->wr_id,
			    len_of(idx), off, p[hdr + off], pattern(idx, (uint32_t)off));
	}
	if (idx < (uint32_t)nmsg)
		c->seen[idx] = 1;
	c->last_idx = idx;
	if (ok)
		passes++;
	if (idx < (uint32_t)nmsg)
		c->delivered++;
	else
		c->refilled++;
}

/* Poll the receive CQ until nothing came for QUIET_MS; completions checked
 * against indices LO..HI-1.  Returns how many came. */
static int drain(struct conn *c, double quiet_ms, uint32_t lo, uint32_t hi)
{
	double last = now_ms();
	int got = 0;

	for (;;) {
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(c->rcq, 16, wc);

		if (n < 0)
			DIE("%s: poll_cq (recv)", c->name);
		for (int k = 0; k < n; k++)
			check_wc(c, &wc[k], lo, hi);
		got += n;
		if (n) {
			last = now_ms();
			continue;
		}
		if (now_ms() - last > quiet_ms)
			return got;
		usleep(50);
	}
}

/* The server's side of send_range: poll while the client sends, and when
 * it pauses, until quiet for 20 ms (1 s after the last batch).  */
static void serve_range(struct conn *c, uint32_t lo, uint32_t hi, double final_quiet_ms)
{
	for (;;) {
		char a = 's', b;

		while (!tcp_readable())
			if (!drain(c, 0, lo, hi))
				usleep(50);
		drain(c, 20, lo, hi);
		xfer(&a, &b, 1);
		if (b == 'd')
			break;
	}
	drain(c, final_quiet_ms, lo, hi);
}

/* Exchange one number with the peer. */
static uint32_t xfer_u32(uint32_t v)
{
	uint32_t out = htonl(v), in;

	xfer(&out, &in, sizeof(in));
	return ntohl(in);
}

/* ---- one phase: UC or UD -------------------------------------------------------- */

static void phase(enum ibv_qp_type type)
{
	struct conn c;
	double t0 = now_ms();

	conn_up(&c, type);
	if (!is_client)
		post_recvs(&c);
	barrier();

	/* 1. N messages */
	if (is_client)
		send_range(&c, 0, (uint32_t)nmsg);
	else
		serve_range(&c, 0, (uint32_t)nmsg, 1000);
	uint32_t delivered = xfer_u32(c.delivered);

	if (!is_client) {
		printf("%s: delivered %u/%d (%d bad completions) in %.0f ms\n", c.name, c.delivered, nmsg,
		       c.bad, now_ms() - t0);
		fflush(stdout);
	} else {
		printf("%s: sent %d, the server got %u\n", c.name, nmsg, delivered);
	}

	/* 2. the WQEs left are still posted: fill them, in rounds of single-packet
	 * messages, until none is left */
	uint32_t next = (uint32_t)nmsg, rounds = 0;

	for (;; rounds++) {
		/* the server's count of WQEs left, on both sides */
		uint32_t left = (uint32_t)nmsg - c.next_wr, srv = xfer_u32(left);

		if (is_client)
			left = srv;

		if (!left)
			break;
		if (rounds >= MAX_ROUNDS) {
			CHECK(0, "%s: %u receive WQEs still posted after %d rounds of refill", c.name,
			      left, MAX_ROUNDS);
			break;
		}
		/* send twice as many as there are WQEs left, so that a few losses
		 * do not cost another round; the surplus finds no WQE and is dropped */
		uint32_t cnt = left * 2;

		if (is_client)
			send_range(&c, next, next + cnt);
		else
			serve_range(&c, next, next + cnt, 100);
		next += cnt;
	}
	if (!is_client) {
		int all = c.next_wr == (uint32_t)nmsg && c.delivered + c.refilled == (uint32_t)nmsg;

		CHECK(all, "%s: %u WQEs completed (%u + %u refill), expected %d", c.name, c.next_wr,
		      c.delivered, c.refilled, nmsg);
		if (all)
			NOTE("%s: the %u WQEs left after the first %d messages completed in %u refill round(s)",
			     c.name, nmsg - c.delivered, nmsg, rounds);
	}

	/* 3. no WQE left: nothing more may complete, the QP must stay healthy */
	if (is_client) {
		send_range(&c, next, next + EXTRA);
	} else {
		uint32_t before = c.ncomp;

		serve_range(&c, next, next + EXTRA, 200);
		CHECK(c.ncomp == before, "%s: %u completion(s) with no receive WQE posted", c.name,
		      c.ncomp - before);
	}
	check_state(&c);
	barrier();
	if (!is_client)
		CHECK(c.bad == 0, "%s: %d bad completion(s)", c.name, c.bad);
	conn_down(&c);
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *port = "19878", *host = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "d:g:p:n:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		case 'p': port = optarg; break;
		case 'n': nmsg = atoi(optarg); break;
		default:
			goto usage;
		}
	}
	if (nmsg < 1 || nmsg > 4000)
		goto usage;
	if (optind < argc)
		host = argv[optind];
	is_client = host != NULL;
	srandom((unsigned int)getpid() ^ (unsigned int)time(NULL));
	alarm(150);
	ctx = open_device(dev);
	if (ibv_query_gid(ctx, 1, gidx, &my_gid))
		DIE("query_gid");
	pd = ibv_alloc_pd(ctx);
	bufsz = (size_t)(nmsg > SQ_DEPTH ? nmsg : SQ_DEPTH) * SLOT;
	buf = aligned_alloc(4096, bufsz);
	lens = calloc((size_t)nmsg, sizeof(*lens));
	if (!pd || !buf || !lens)
		DIE("alloc");
	memset(buf, 0, bufsz);
	mr = ibv_reg_mr(pd, buf, bufsz, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		DIE("reg_mr: %s", strerror(errno));
	tcp_setup(host, port);

	/* the same N on both sides; then the client's lengths (3-12 KiB) */
	if (xfer_u32((uint32_t)nmsg) != (uint32_t)nmsg)
		DIE("the peer sends another number of messages (-n)");
	uint32_t *peer = calloc((size_t)nmsg, sizeof(*peer));

	if (!peer)
		DIE("alloc");
	for (int i = 0; i < nmsg; i++)
		lens[i] = is_client ? htonl(3072 + (uint32_t)(random() % (9 * 1024 + 1))) : 0;
	xfer(lens, peer, (size_t)nmsg * sizeof(*lens));
	for (int i = 0; i < nmsg; i++)
		lens[i] = ntohl(is_client ? lens[i] : peer[i]);
	free(peer);

	phase(IBV_QPT_UC);
	/* UD: 1 KiB datagrams */
	for (int i = 0; i < nmsg; i++)
		lens[i] = 1024;
	phase(IBV_QPT_UD);

	printf("%d passed, %d failed\n", passes, failures);
	fflush(stdout);
	return failures ? 1 : 0;
usage:
	fprintf(stderr, "usage: %s -d DEV -g GIDX [-p PORT] [-n N (1-4000)] [HOST]\n", argv[0]);
	return 2;
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * rc_faults: RC's transport timer and RNR paths, through the public verbs
 * API only (it runs unchanged on rxe or an RNIC).  Two processes exchange
 * QP numbers and GIDs over TCP, as verbs_verify does.
 *
 *   rc_faults -t dead -d DEV -g GIDX -p PORT            (server)
 *   rc_faults -t dead -d DEV -g GIDX -p PORT -x CMD HOST (client)
 *     Once connected, the client runs CMD (which must make the server
 *     unreachable: set its link down, kill it), then posts SEND, WRITE,
 *     SEND, WRITE on a QP with timeout 14 (4.096 us * 2^14 = 67 ms) and
 *     retry_cnt 3.  The first must complete with IBV_WC_RETRY_EXC_ERR no
 *     sooner than half and no later than twice 67 ms * (3 + 1), the others
 *     with IBV_WC_WR_FLUSH_ERR, in order; the QP is then in the error state,
 *     and no asynchronous event was raised (the CQE reports the error).
 *
 *   rc_faults -t rnr -d DEV -g GIDX -p PORT [HOST]
 *     The server's QP has min_rnr_timer 14 (1.28 ms) and no receive posted.
 *     1. rnr_retry 7 (retry for ever): the client's SEND completes
 *        successfully once the server posts a receive ~300 ms later, and
 *        the server receives the right bytes.
 *     2. rnr_retry 2: the SEND completes with IBV_WC_RNR_RETRY_EXC_ERR,
 *        the next WR flushes, the server's receive queue sees nothing.
 */
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "testkit.h"

static int is_client, gidx;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t *buf;
static union ibv_gid my_gid;
enum { BUFSZ = 1 << 20 };



/* ---- an RC connection ------------------------------------------------------------ */

struct ep {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	union ibv_gid gid;
};

struct conn {
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;
	struct ep me, peer;
};

/* Connect an RC QP; the requester side gets TIMEOUT/RETRY/RNR_RETRY, the
 * responder side MIN_RNR_TIMER. */
static void conn_up(struct conn *c, int timeout, int retry_cnt, int rnr_retry, int min_rnr_timer)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };

	memset(c, 0, sizeof(*c));
	c->scq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	c->rcq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!c->scq || !c->rcq)
		DIE("create_cq");
	ia.send_cq = c->scq;
	ia.recv_cq = c->rcq;
	c->qp = ibv_create_qp(pd, &ia);
	if (!c->qp)
		DIE("create_qp: %s", strerror(errno));
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		DIE("INIT: %s", strerror(errno));
	c->me = (struct ep){ .qpn = c->qp->qp_num, .psn = (uint32_t)(random() & 0xffffff),
			     .rkey = mr->rkey, .addr = (uintptr_t)buf, .gid = my_gid };
	xfer(&c->me, &c->peer, sizeof(c->me));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = c->peer.qpn;
	a.rq_psn = c->peer.psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = (uint8_t)min_rnr_timer;
	a.ah_attr = (struct ibv_ah_attr){ .is_global = 1, .port_num = 1,
		.grh = { .dgid = c->peer.gid, .sgid_index = (uint8_t)gidx, .hop_limit = 64 } };
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		DIE("RTR: %s", strerror(errno));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->me.psn;
	a.timeout = (uint8_t)timeout;
	a.retry_cnt = (uint8_t)retry_cnt;
	a.rnr_retry = (uint8_t)rnr_retry;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		DIE("RTS: %s", strerror(errno));
}

static void conn_down(struct conn *c)
{
	ibv_destroy_qp(c->qp);
	ibv_destroy_cq(c->scq);
	ibv_destroy_cq(c->rcq);
}

/* Poll one completion within LIMIT_MS; returns 0 (and leaves *wc alone) if none came. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, double limit_ms)
{
	double t0 = now_ms();

	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n < 0)
			DIE("poll_cq");
		if (n)
			return 1;
		if (now_ms() - t0 > limit_ms)
			return 0;
		usleep(50);
	}
}

static void post_send(struct conn *c, uint64_t id, enum ibv_wr_opcode op, uint32_t len)
{
	struct ibv_sge sg = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (op == IBV_WR_RDMA_WRITE) {
		wr.wr.rdma.remote_addr = c->peer.addr + 65536;
		wr.wr.rdma.rkey = c->peer.rkey;
	}
	if (ibv_post_send(c->qp, &wr, &bad))
		DIE("post_send: %s", strerror(errno));
}

static void post_recv(struct conn *c, uint64_t id, uint32_t len)
{
	struct ibv_sge sg = { (uintptr_t)buf + 131072, len, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 }, *bad;

	if (ibv_post_recv(c->qp, &wr, &bad))
		DIE("post_recv: %s", strerror(errno));
}

static void fill(uint8_t *p, size_t n, unsigned int tag)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + tag * 7 + (i >> 8));
}

/* ---- (a) a dead peer: transport retries exhausted --------------------------------- */

static void test_dead(const char *cmd)
{
	enum { TIMEOUT = 14, RETRY = 3, NWR = 4 };
	struct conn c;
	struct ibv_wc wc;
	/* IBTA: the local ACK timeout is 4.096 us * 2^timeout; the requester
	 * gives up after retry_cnt retries, i.e. retry_cnt + 1 timeouts. */
	double bound = 4.096e-3 * (1 << TIMEOUT) * (RETRY + 1);

	conn_up(&c, TIMEOUT, RETRY, 7, 12);
	if (!is_client) {
		for (int i = 0; i < NWR; i++)
			post_recv(&c, 100 + i, 65536);
		barrier();
		/* The client cuts us off now; wait for it to be done (or for
		 * the shell to stop us), then leave. */
		struct pollfd p = { .fd = sock, .events = POLLIN };

		poll(&p, 1, 30000);
		NOTE("dead peer: server done");
		return;
	}
	barrier();
	if (cmd) {
		int rc = system(cmd);

		if (rc != 0)
			DIE("'%s' failed (%d)", cmd, rc);
		NOTE("ran '%s'", cmd);
	}
	fill(buf, 65536, 1);
	double t0 = now_ms();

	for (int i = 0; i < NWR; i++)
		post_send(&c, i + 1, i % 2 ? IBV_WR_RDMA_WRITE : IBV_WR_SEND, 4096 * (i + 1));
	if (!poll_one(c.scq, &wc, 10000))
		DIE("dead peer: no completion within 10 s (bound %.0f ms)", bound);
	double el = now_ms() - t0;

	printf("dead peer: first completion %s (wr_id %lu) after %.1f ms; "
	       "timeout %d (%.1f ms) * (retry_cnt %d + 1) = %.1f ms\n",
	       ibv_wc_status_str(wc.status), (unsigned long)wc.wr_id, el, TIMEOUT,
	       bound / (RETRY + 1), RETRY, bound);
	CHECK(wc.status == IBV_WC_RETRY_EXC_ERR && wc.wr_id == 1,
	      "dead peer: first completion %s wr_id %lu, expected %s wr_id 1",
	      ibv_wc_status_str(wc.status), (unsigned long)wc.wr_id,
	      ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR));
	CHECK(el <= 2 * bound, "dead peer: retries exhausted after %.1f ms, more than twice %.1f ms",
	      el, bound);
	CHECK(el >= bound / 2, "dead peer: retries exhausted after %.1f ms, less than half %.1f ms",
	      el, bound);
	for (int i = 2; i <= NWR; i++) {
		if (!poll_one(c.scq, &wc, 2000)) {
			CHECK(0, "dead peer: WR %d never completed", i);
			continue;
		}
		CHECK(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == (uint64_t)i,
		      "dead peer: WR %d completed %s (wr_id %lu), expected %s", i,
		      ibv_wc_status_str(wc.status), (unsigned long)wc.wr_id,
		      ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR));
	}
	CHECK(!poll_one(c.scq, &wc, 100), "dead peer: an extra completion (%s wr_id %lu)",
	      ibv_wc_status_str(wc.status), (unsigned long)wc.wr_id);

	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;

	CHECK(!ibv_query_qp(c.qp, &qa, IBV_QP_STATE, &qi) && qa.qp_state == IBV_QPS_ERR,
	      "dead peer: QP state %d, expected IBV_QPS_ERR", qa.qp_state);
	/* A completion error is reported by its CQE alone: no affiliated
	 * asynchronous error (IBTA 11.6.3.1 lists those no CQE can report).
	 * One would have been written before the CQEs polled above.  Port
	 * events may come at any time. */
	struct pollfd ap = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event aev;

	while (poll(&ap, 1, 0) == 1 && !ibv_get_async_event(ctx, &aev)) {
		CHECK(aev.event_type != IBV_EVENT_QP_FATAL && aev.event_type != IBV_EVENT_QP_REQ_ERR &&
		      aev.event_type != IBV_EVENT_QP_ACCESS_ERR,
		      "dead peer: asynchronous event %s after a completion error",
		      ibv_event_type_str(aev.event_type));
		ibv_ack_async_event(&aev);
	}
	NOTE("dead peer: RETRY_EXC_ERR after %.1f ms (bound %.1f ms), %d WRs flushed", el, bound,
	     NWR - 1);
	/* The server is unreachable: no goodbye over TCP. */
}

/* ---- (b) receiver not ready -------------------------------------------------------- */

static void test_rnr(void)
{
	enum { MIN_RNR = 14 /* 1.28 ms */, DELAY_MS = 300, LEN = 3000 };
	struct conn c;
	struct ibv_wc wc;

	/* 1. rnr_retry 7: retried until the receive is there */
	conn_up(&c, 14, 7, 7, MIN_RNR);
	barrier();
	if (!is_client) {
		char posted;

		/* The receive comes DELAY_MS after the client's SEND was posted
		 * (it says so on the side channel), however late that is. */
		if (read(sock, &posted, 1) != 1)
			DIE("rnr 7: the client did not say it posted");
		usleep(DELAY_MS * 1000);
		post_recv(&c, 11, 65536);
		double t0 = now_ms();
		int got = poll_one(c.rcq, &wc, 10000);

		CHECK(got && wc.status == IBV_WC_SUCCESS && wc.wr_id == 11 && wc.byte_len == LEN,
		      "rnr 7: receive %s wr_id %lu len %u", got ? ibv_wc_status_str(wc.status) : "missing",
		      got ? (unsigned long)wc.wr_id : 0UL, got ? wc.byte_len : 0);
		if (got) {
			uint8_t want[LEN];

			fill(want, LEN, 2);
			CHECK(!memcmp(buf + 131072, want, LEN), "rnr 7: received data differs");
			NOTE("rnr 7: the receive completed %.1f ms after it was posted", now_ms() - t0);
		}
	} else {
		fill(buf, LEN, 2);
		double t0 = now_ms();

		post_send(&c, 1, IBV_WR_SEND, LEN);
		if (write(sock, "p", 1) != 1)
			DIE("rnr 7: side channel");
		int got = poll_one(c.scq, &wc, 10000);
		double el = now_ms() - t0;

		CHECK(got && wc.status == IBV_WC_SUCCESS && wc.wr_id == 1,
		      "rnr 7: send completion %s after %.1f ms",
		      got ? ibv_wc_status_str(wc.status) : "missing", el);
		CHECK(el >= DELAY_MS * 0.8, "rnr 7: send completed after %.1f ms, before the receive was posted (%d ms)",
		      el, DELAY_MS);
		NOTE("rnr 7: SEND completed after %.1f ms (the receive was posted after %d ms)", el,
		     DELAY_MS);
	}
	barrier();
	conn_down(&c);

	/* 2. rnr_retry 2: gives up */
	conn_up(&c, 14, 7, 2, MIN_RNR);
	barrier();
	if (is_client) {
		double t0 = now_ms();

		post_send(&c, 1, IBV_WR_SEND, LEN);
		post_send(&c, 2, IBV_WR_SEND, 16);
		int got = poll_one(c.scq, &wc, 10000);
		double el = now_ms() - t0;

		CHECK(got && wc.status == IBV_WC_RNR_RETRY_EXC_ERR && wc.wr_id == 1,
		      "rnr 2: first completion %s (wr_id %lu) after %.1f ms, expected %s",
		      got ? ibv_wc_status_str(wc.status) : "missing", got ? (unsigned long)wc.wr_id : 0UL,
		      el, ibv_wc_status_str(IBV_WC_RNR_RETRY_EXC_ERR));
		printf("rnr 2: first completion after %.1f ms (3 tries, RNR timer 1.28 ms)\n", el);
		got = poll_one(c.scq, &wc, 2000);
		CHECK(got && wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 2,
		      "rnr 2: second completion %s, expected %s",
		      got ? ibv_wc_status_str(wc.status) : "missing",
		      ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR));
		NOTE("rnr 2: RNR_RETRY_EXC_ERR after %.1f ms, next WR flushed", el);
	}
	barrier();
	if (!is_client)
		CHECK(!poll_one(c.rcq, &wc, 100), "rnr 2: the server got a receive completion (%s)",
		      ibv_wc_status_str(wc.status));
	barrier();
	conn_down(&c);
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *port = "19877", *host = NULL, *test = NULL, *cmd = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "d:g:p:t:x:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		case 'p': port = optarg; break;
		case 't': test = optarg; break;
		case 'x': cmd = optarg; break;
		default:
			goto usage;
		}
	}
	if (!test || (strcmp(test, "dead") && strcmp(test, "rnr")))
		goto usage;
	if (optind < argc)
		host = argv[optind];
	is_client = host != NULL;
	srandom((unsigned int)getpid() ^ (unsigned int)time(NULL));
	alarm(120);
	ctx = open_device(dev);
	if (ibv_query_gid(ctx, 1, gidx, &my_gid))
		DIE("query_gid");
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, BUFSZ);
	if (!pd || !buf)
		DIE("alloc");
	memset(buf, 0, BUFSZ);
	mr = ibv_reg_mr(pd, buf, BUFSZ, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ);
	if (!mr)
		DIE("reg_mr: %s", strerror(errno));
	tcp_setup(host, port);
	if (!strcmp(test, "dead"))
		test_dead(cmd);
	else
		test_rnr();
	printf("%d passed, %d failed\n", passes, failures);
	fflush(stdout);
	/* the dead-peer client leaves its error-state QP to the process exit */
	return failures ? 1 : 0;
usage:
	fprintf(stderr, "usage: %s -t dead|rnr -d DEV -g GIDX [-p PORT] [-x CMD] [HOST]\n", argv[0]);
	return 2;
}

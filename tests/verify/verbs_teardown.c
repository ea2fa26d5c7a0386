// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * verbs_teardown: a responder that stops its QP the moment it sees a
 * receive completion has still acknowledged that SEND.  A NIC ACKs a
 * request on receipt; programs end this way (perftest -R takes its last
 * message, then rdma_disconnect moves the QP to Error), and the peer's
 * SEND must complete with success, not with RETRY_EXC_ERR after its
 * retries.
 *
 * Each round: QPs A and B (RC) on one device; A posts a SEND and, in the
 * same list, a 32 KiB RDMA WRITE, so that B's receive burst goes on after
 * the SEND's completion is visible; B busy-polls its CQ and at once moves
 * its QP to Error, to Reset, or destroys it (the three take turns).  The
 * WRITE may then complete either way; the SEND must succeed.
 *
 * Then a QP destroyed with flushed receives still on a CQ it shares takes
 * them along and leaves the other QP's (destroy_cleans).
 *
 *   verbs_teardown -d DEV -g GIDX [-n ROUNDS]
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "testkit.h"

enum { MSG = 64, WRITE_LEN = 32 << 10, BUF_LEN = 64 << 10 };

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t *buf;
static int gidx;

static const char *const stop_name[] = { "Error", "Reset", "destroy" };

static struct ibv_qp *rc_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp)
		DIE("create_qp: %s", strerror(errno));
	return qp;
}

/* A short ACK timeout (16.8 ms) and two retries, so that an ACK that never
 * comes fails the round in about 50 ms. */
static void connect_qp(struct ibv_qp *qp, uint32_t dqpn)
{
	rc_connect_local(qp, dqpn, gidx, IBV_ACCESS_REMOTE_WRITE, 12, 2);
}

static void round_trip(int round)
{
	int stop = round % 3;
	struct ibv_cq *acq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_cq *bcq = ibv_create_cq(ctx, 8, NULL, NULL, 0);

	if (!acq || !bcq)
		DIE("create_cq");
	struct ibv_qp *a = rc_qp(acq), *b = rc_qp(bcq);

	connect_qp(a, b->qp_num);
	connect_qp(b, a->qp_num);

	struct ibv_sge rsg = { (uintptr_t)buf, MSG, mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsg, .num_sge = 1 }, *rbad;

	if (ibv_post_recv(b, &rwr, &rbad))
		DIE("post_recv: %s", strerror(errno));

	struct ibv_sge ssg = { (uintptr_t)buf + MSG, MSG, mr->lkey };
	struct ibv_sge wsg = { (uintptr_t)buf + WRITE_LEN, WRITE_LEN, mr->lkey };
	struct ibv_send_wr write = { .wr_id = 3, .sg_list = &wsg, .num_sge = 1,
				     .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr send = { .wr_id = 2, .next = &write, .sg_list = &ssg, .num_sge = 1,
				    .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *sbad;

	write.wr.rdma.remote_addr = (uintptr_t)buf;
	write.wr.rdma.rkey = mr->rkey;
	if (ibv_post_send(a, &send, &sbad))
		DIE("post_send: %s", strerror(errno));

	struct ibv_wc wc = poll_wc(bcq, 10, "B's receive");

	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 1, "round %d: B's receive: %s",
	      round, ibv_wc_status_str(wc.status));
	if (stop == 2) {
		if (ibv_destroy_qp(b))
			DIE("destroy_qp: %s", strerror(errno));
		b = NULL;
	} else {
		struct ibv_qp_attr st = { .qp_state = stop ? IBV_QPS_RESET : IBV_QPS_ERR };

		if (ibv_modify_qp(b, &st, IBV_QP_STATE))
			DIE("modify to %s: %s", stop_name[stop], strerror(errno));
	}
	wc = poll_wc(acq, 10, "A's send");
	CHECK(wc.wr_id == 2 && wc.status == IBV_WC_SUCCESS,
	      "round %d (B to %s at its receive completion): A's SEND completed %s",
	      round, stop_name[stop], ibv_wc_status_str(wc.status));
	/* The WRITE: done before B stopped, or not acknowledged. */
	wc = poll_wc(acq, 10, "A's send");
	CHECK(wc.wr_id == 3 && (wc.status == IBV_WC_SUCCESS || wc.status == IBV_WC_RETRY_EXC_ERR),
	      "round %d: A's WRITE completed %s", round, ibv_wc_status_str(wc.status));
	if (b)
		ibv_destroy_qp(b);
	ibv_destroy_qp(a);
	ibv_destroy_cq(acq);
	ibv_destroy_cq(bcq);
}

/* A QP destroyed with completions still queued takes them along, and
 * leaves those of the other QPs on its CQ, as hardware providers clean
 * their CQs at destroy: libfabric's ofi_rxm flushes its CQ after closing
 * an endpoint and reposts each receive it finds to that endpoint. */
static void destroy_cleans(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);

	if (!cq)
		DIE("create_cq");
	struct ibv_qp *keep = rc_qp(cq), *gone = rc_qp(cq);
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	uint32_t keep_qpn = keep->qp_num, gone_qpn = gone->qp_num;
	struct ibv_wc wc[8];
	int n = 0, got, kept = 0;

	connect_qp(keep, gone_qpn);
	connect_qp(gone, keep_qpn);
	for (int i = 0; i < 5; i++) {
		struct ibv_sge sg = { (uintptr_t)buf, MSG, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sg, .num_sge = 1 }, *bad;

		if (ibv_post_recv(i < 2 ? keep : gone, &wr, &bad))
			DIE("post_recv: %s", strerror(errno));
	}
	/* Error flushes the five receives into the CQ (IBTA 10.3.1.1), at
	 * once; none is polled before GONE is destroyed. */
	if (ibv_modify_qp(keep, &err, IBV_QP_STATE) || ibv_modify_qp(gone, &err, IBV_QP_STATE))
		DIE("modify to Error: %s", strerror(errno));
	if (ibv_destroy_qp(gone))
		DIE("destroy_qp: %s", strerror(errno));
	while ((got = ibv_poll_cq(cq, 8, wc)) > 0)
		for (int i = 0; i < got; i++, n++)
			kept += wc[i].qp_num == keep_qpn && wc[i].status == IBV_WC_WR_FLUSH_ERR;
	CHECK(got == 0 && n == 2 && kept == 2,
	      "destroy_qp left %d completions on the shared CQ (%d of the live QP's 2 flushes), want only those 2",
	      n, kept);
	ibv_destroy_qp(keep);
	ibv_destroy_cq(cq);
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	int rounds = 60;

	device_args(argc, argv, &dev, &gidx, &rounds);
	alarm(120);
	ctx = open_device(dev);
	pd = ibv_alloc_pd(ctx);
	buf = calloc(1, BUF_LEN);
	mr = pd && buf ? ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (!mr)
		DIE("pd/mr");
	for (int r = 0; r < rounds; r++)
		round_trip(r);
	destroy_cleans();
	printf("%d passed, %d failed\n", passes, failures);
	return failures ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * verbs_threads: several threads post to one RC QP while another thread
 * polls its CQ, as multi-threaded MPI ranks and storage servers do.
 *
 * A post may leave its WQE to the engine's next pass without taking the
 * QP's lock (providers/uroce/verbs/post.c).  A WQE lost in that hand-off
 * never leaves and never completes, so the poller here gives up after 10 s
 * without a completion and says how many are missing.
 *
 * QPs A and B (RC) on one device.  POSTERS threads each post ROUNDS
 * signalled RDMA WRITEs to A, one or two per ibv_post_send, with at most
 * DEPTH of their own outstanding.  Each WRITE fills a slot of its own in
 * B's buffer with a pattern of (thread, sequence).  The main thread polls
 * A's CQ.  Checks:
 *   - every WR completes exactly once, with success;
 *   - each thread's completions come in the order it posted them (one
 *     QP's send completions are in order, IBTA 10.8.3.1);
 *   - B's buffer holds each slot's last pattern (the responder executes
 *     one QP's WRITEs in order).
 *
 *   verbs_threads -d DEV -g GIDX [-n ROUNDS]
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "testkit.h"

enum { POSTERS = 3, DEPTH = 16, SLOTS = 64, LEN = 512, QUIET_MS = 10000 };

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *src_mr, *dst_mr;
static uint8_t *src, *dst;
static int gidx, rounds = 20000;
static struct ibv_qp *qa;

/* Per poster: WRs posted and not yet completed (the poller returns them). */
static atomic_int outstanding[POSTERS];

static uint8_t *slot(uint8_t *base, int thread, int k)
{
	return base + ((size_t)thread * SLOTS + (size_t)k) * LEN;
}

/* The bytes of WRITE SEQ of THREAD: no two (thread, seq) share a byte run. */
static void pattern(uint8_t *p, int thread, int seq)
{
	for (int i = 0; i < LEN; i++)
		p[i] = (uint8_t)(seq * 7 + thread * 131 + i);
}

static struct ibv_qp *rc_qp(struct ibv_cq *cq, int depth)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = depth, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp)
		DIE("create_qp: %s", strerror(errno));
	return qp;
}

/* wr_id: thread in the high 16 bits, sequence below. */
static void *poster(void *arg)
{
	int t = (int)(intptr_t)arg;

	for (int seq = 0; seq < rounds;) {
		int n = seq % 3 == 2 && seq + 1 < rounds ? 2 : 1;
		struct ibv_sge sge[2];
		struct ibv_send_wr wr[2], *bad;

		while (atomic_load(&outstanding[t]) > DEPTH - n)
			;
		for (int i = 0; i < n; i++) {
			int s = seq + i;

			/* The source slot is free: its previous WRITE completed
			 * (DEPTH < SLOTS keeps SLOTS - DEPTH WRITEs between). */
			pattern(slot(src, t, s % SLOTS), t, s);
			sge[i] = (struct ibv_sge){ (uintptr_t)slot(src, t, s % SLOTS), LEN, src_mr->lkey };
			wr[i] = (struct ibv_send_wr){
				.wr_id = ((uint64_t)t << 16 << 16) | (uint32_t)s,
				.sg_list = &sge[i], .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED, .next = i + 1 < n ? &wr[i + 1] : NULL,
				.wr.rdma = { (uintptr_t)slot(dst, t, s % SLOTS), dst_mr->rkey },
			};
		}
		atomic_fetch_add(&outstanding[t], n);
		if (ibv_post_send(qa, wr, &bad))
			DIE("thread %d: post_send of WRITE %d: %s", t, seq, strerror(errno));
		seq += n;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	int next[POSTERS] = { 0 }, bad_status = 0, bad_order = 0, total;
	pthread_t th[POSTERS];
	struct ibv_cq *cq;
	struct ibv_qp *qb;
	double quiet_since;

	device_args(argc, argv, &dev, &gidx, &rounds);
	alarm(240);
	ctx = open_device(dev);
	pd = ibv_alloc_pd(ctx);
	src = calloc(POSTERS * SLOTS, LEN);
	dst = calloc(POSTERS * SLOTS, LEN);
	src_mr = pd && src ? ibv_reg_mr(pd, src, POSTERS * SLOTS * LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
	dst_mr = pd && dst ? ibv_reg_mr(pd, dst, POSTERS * SLOTS * LEN,
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (!src_mr || !dst_mr)
		DIE("pd/mr");
	cq = ibv_create_cq(ctx, POSTERS * DEPTH * 2, NULL, NULL, 0);
	if (!cq)
		DIE("create_cq");
	qa = rc_qp(cq, POSTERS * DEPTH);
	qb = rc_qp(cq, 1);
	rc_connect_local(qa, qb->qp_num, gidx, 0, 14, 7);
	rc_connect_local(qb, qa->qp_num, gidx, IBV_ACCESS_REMOTE_WRITE, 14, 7);

	for (int t = 0; t < POSTERS; t++)
		if (pthread_create(&th[t], NULL, poster, (void *)(intptr_t)t))
			DIE("pthread_create");
	total = 0;
	quiet_since = now_ms();
	while (total < POSTERS * rounds) {
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(cq, 16, wc);

		if (n < 0)
			DIE("poll_cq");
		if (n == 0) {
			if (now_ms() - quiet_since > QUIET_MS)
				DIE("no completion for %d ms: %d of %d WRITEs completed (per thread %d %d %d)",
				    QUIET_MS, total, POSTERS * rounds, next[0], next[1], next[2]);
			continue;
		}
		quiet_since = now_ms();
		for (int i = 0; i < n; i++) {
			int t = (int)(wc[i].wr_id >> 32), seq = (int)(uint32_t)wc[i].wr_id;

			if (wc[i].status != IBV_WC_SUCCESS || wc[i].qp_num != qa->qp_num ||
			    t >= POSTERS) {
				if (bad_status++ < 5)
					printf("completion wr_id 0x%llx: %s, QP %u\n",
					       (unsigned long long)wc[i].wr_id,
					       ibv_wc_status_str(wc[i].status), wc[i].qp_num);
				continue;
			}
			if (seq != next[t] && bad_order++ < 5)
				printf("thread %d: WRITE %d completed where %d was next\n", t, seq, next[t]);
			next[t] = seq + 1;
			atomic_fetch_sub(&outstanding[t], 1);
			total++;
		}
	}
	for (int t = 0; t < POSTERS; t++)
		pthread_join(th[t], NULL);
	CHECK(bad_status == 0, "every WRITE completed with success on QP A (%d did not)", bad_status);
	CHECK(bad_order == 0, "each thread's WRITEs completed in the order it posted them (%d out of order)",
	      bad_order);

	int wrong = 0;

	for (int t = 0; t < POSTERS; t++)
		for (int k = 0; k < SLOTS && k < rounds; k++) {
			uint8_t want[LEN];
			int last = (rounds - 1) - ((rounds - 1 - k) % SLOTS);

			pattern(want, t, last);
			wrong += memcmp(slot(dst, t, k), want, LEN) != 0;
		}
	CHECK(wrong == 0, "B's buffer holds each slot's last WRITE (%d of %d slots wrong)", wrong,
	      POSTERS * SLOTS);
	printf("%d passed, %d failed\n", passes, failures);
	return failures ? 1 : 0;
}

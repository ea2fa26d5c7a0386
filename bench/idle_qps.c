// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * What an idle process with open QPs costs (bench/run.sh, issue 14's CPU
 * goal): open device DEV, connect PAIRS pairs of RC QPs to each other in
 * this process, move one RDMA WRITE over each QP (so every busy-poll and
 * timer the data path starts after activity has been started), then make
 * no verbs call for SECS seconds and report the CPU time the process used
 * meanwhile (getrusage: every thread, the progress thread included).
 *
 *   idle_qps DEV GID_INDEX PAIRS SECS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define DIE(...) do { fprintf(stderr, "idle_qps: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static void to_rts(struct ibv_qp *qp, uint32_t dqpn, const union ibv_gid *gid, int gidx)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		DIE("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		DIE("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		DIE("RTS");
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	union ibv_gid gid;
	int n, gidx, pairs;
	double secs;

	if (argc != 5)
		DIE("usage: idle_qps DEV GID_INDEX PAIRS SECS");
	gidx = atoi(argv[2]);
	pairs = atoi(argv[3]);
	secs = atof(argv[4]);
	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		DIE("no device %s", argv[1]);
	if (ibv_query_gid(ctx, 1, gidx, &gid))
		DIE("GID %d", gidx);

	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4 * pairs + 4, NULL, NULL, 0);
	char *buf = calloc(2 * pairs, 64);
	struct ibv_mr *mr = pd && buf ? ibv_reg_mr(pd, buf, 2 * pairs * 64,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) : NULL;
	struct ibv_qp **qp = calloc(2 * pairs, sizeof(*qp));

	if (!cq || !mr || !qp)
		DIE("setup");
	for (int i = 0; i < 2 * pairs; i++) {
		struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };

		qp[i] = ibv_create_qp(pd, &ia);
		if (!qp[i])
			DIE("create QP %d", i);
	}
	for (int i = 0; i < 2 * pairs; i++)
		to_rts(qp[i], qp[i ^ 1]->qp_num, &gid, gidx);
	for (int i = 0; i < 2 * pairs; i++) {
		struct ibv_sge sge = { (uintptr_t)buf + i * 64, 8, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)buf + (i ^ 1) * 64 + 32, mr->rkey } }, *bad;

		memset(buf + i * 64, 'a' + i % 26, 8);
		if (ibv_post_send(qp[i], &wr, &bad))
			DIE("post");
	}
	double until = wall_s() + 30;
	for (int done = 0; done < 2 * pairs;) {
		struct ibv_wc wc;
		int r = ibv_poll_cq(cq, 1, &wc);

		if (r < 0 || (r && wc.status != IBV_WC_SUCCESS))
			DIE("completion status %d", r < 0 ? -1 : (int)wc.status);
		done += r;
		if (wall_s() > until)
			DIE("writes did not complete");
	}
	for (int i = 0; i < 2 * pairs; i++)
		if (memcmp(buf + (i ^ 1) * 64 + 32, buf + i * 64, 8))
			DIE("data of QP %d not placed", i);

	/* Idle: no verbs call.  The process's CPU time over the interval. */
	double c0 = cpu_s(), w0 = wall_s();

	while (wall_s() - w0 < secs)
		usleep(100000);
	double c = cpu_s() - c0, w = wall_s() - w0;

	printf("qps=%d idle_s=%.2f cpu_s=%.4f cpu_pct=%.2f\n", 2 * pairs, w, c, 100 * c / w);
	for (int i = 0; i < 2 * pairs; i++)
		ibv_destroy_qp(qp[i]);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}

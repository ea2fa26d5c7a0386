// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * verbs_mcast: UD multicast through the public API, with data checks.  A
 * sender's datagram to a group (QPN 0xFFFFFF) reaches every QP attached to
 * it in this process, and a QP of another process (a child, which attaches
 * on its own): each its own copy, with the group as the GRH's destination.
 * Not the QPs not attached, nor one whose Q_Key differs, nor one detached.
 * The error cases of attach/detach (and destroy_qp of an attached QP), and
 * the device attributes.
 *
 *   verbs_mcast -d DEV -g GIDX            the test
 *   verbs_mcast -d DEV -g GIDX -c GROUP   (the child: GROUP an IPv4 address)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "testkit.h"

enum { QKEY = 0x11111111, MSG = 200, GRH = 40, BUF = GRH + 1024 };

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static int gidx;

struct udqp {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static void ud_up(struct udqp *u, uint32_t qkey)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey };

	u->cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	ia.send_cq = ia.recv_cq = u->cq;
	u->qp = u->cq ? ibv_create_qp(pd, &ia) : NULL;
	u->buf = calloc(1, BUF);
	u->mr = ibv_reg_mr(pd, u->buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	if (!u->qp || !u->mr)
		DIE("UD QP: %s", strerror(errno));
	if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		DIE("INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE))
		DIE("RTR");
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		DIE("RTS");
}

static void ud_down(struct udqp *u)
{
	ibv_destroy_qp(u->qp);
	ibv_dereg_mr(u->mr);
	ibv_destroy_cq(u->cq);
	free(u->buf);
}

static void post_recv(struct udqp *u)
{
	struct ibv_sge sg = { (uintptr_t)u->buf, BUF, u->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1 }, *bad;

	memset(u->buf, 0, BUF);
	if (ibv_post_recv(u->qp, &wr, &bad))
		DIE("post_recv");
}

/* A completion of U within 10 s; status -1 if none. */
static struct ibv_wc wait_wc(struct udqp *u)
{
	struct ibv_wc wc = { .status = (enum ibv_wc_status)-1 };
	double t0 = now_ms();

	while (now_ms() - t0 < 10000)
		if (ibv_poll_cq(u->cq, 1, &wc) > 0)
			break;
	return wc;
}

static int cq_empty(struct udqp *u)
{
	struct ibv_wc wc;

	return ibv_poll_cq(u->cq, 1, &wc) == 0;
}

static void pattern(uint8_t *b, uint8_t seed)
{
	for (int i = 0; i < MSG; i++)
		b[i] = (uint8_t)(seed + i * 13);
}

/* A received message with SEED from the group: data behind the GRH area,
 * whose IPv4 header (its last 20 bytes) names the group as destination. */
static int got(struct udqp *u, struct ibv_wc wc, uint8_t seed, const uint8_t grp[4])
{
	uint8_t want[MSG];

	pattern(want, seed);
	return wc.status == IBV_WC_SUCCESS && wc.byte_len == GRH + MSG && wc.qp_num == u->qp->qp_num &&
	       (wc.wc_flags & IBV_WC_GRH) && !memcmp(u->buf + GRH, want, MSG) &&
	       !memcmp(u->buf + 20 + 16, grp, 4);
}

static union ibv_gid group_gid(const uint8_t grp[4])
{
	union ibv_gid g = { .raw = { [10] = 0xff, [11] = 0xff } };

	memcpy(g.raw + 12, grp, 4);
	return g;
}

static void open_all(const char *dev)
{
	ctx = open_device(dev);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		DIE("alloc_pd");
}

/* The child: attach, say so, take one message, check it. */
static int child(const char *dev, const char *grp_s)
{
	uint8_t grp[4];
	union ibv_gid g;
	struct udqp u;

	if (inet_pton(AF_INET, grp_s, grp) != 1)
		return 2;
	open_all(dev);
	g = group_gid(grp);
	ud_up(&u, QKEY);
	post_recv(&u);
	if (ibv_attach_mcast(u.qp, &g, 0))
		return 3;
	printf("ready\n");
	fflush(stdout);
	return got(&u, wait_wc(&u), 1, grp) ? 0 : 4;
}

/* Start the child on FD's write end; wait (10 s at most) for "ready". */
static pid_t spawn_child(char **argv, const char *dev, const char *grp_s)
{
	char line[16] = "";
	struct pollfd p;
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		DIE("pipe");
	pid = fork();
	if (pid == 0) {
		char g[8];

		snprintf(g, sizeof(g), "%d", gidx);
		dup2(fds[1], 1);
		close(fds[0]);
		execl("/proc/self/exe", argv[0], "-d", dev, "-g", g, "-c", grp_s, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	p = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	if (pid < 0 || poll(&p, 1, 10000) != 1 || read(fds[0], line, sizeof(line) - 1) <= 0 ||
	    strncmp(line, "ready", 5))
		DIE("the child did not attach");
	close(fds[0]);
	return pid;
}

static int child_status(pid_t pid)
{
	double t0 = now_ms();
	int st;

	while (now_ms() - t0 < 10000) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
		usleep(10000); /* polling the child's exit, bounded */
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static void send_to(struct udqp *s, struct ibv_ah *ah, uint8_t seed)
{
	struct ibv_sge sg = { (uintptr_t)s->buf, MSG, s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	pattern(s->buf, seed);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0xffffff;
	wr.wr.ud.remote_qkey = QKEY;
	if (ibv_post_send(s->qp, &wr, &bad) || wait_wc(s).status != IBV_WC_SUCCESS)
		DIE("multicast send");
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *child_grp = NULL;
	struct udqp s, a, b, c, d;
	struct ibv_device_attr da;
	union ibv_gid g, uni;
	char grp_s[32];
	uint8_t grp[4];
	int opt;

	while ((opt = getopt(argc, argv, "d:g:c:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		case 'c': child_grp = optarg; break;
		default:
			fprintf(stderr, "usage: %s -d DEV -g GIDX [-c GROUP]\n", argv[0]);
			return 2;
		}
	}
	alarm(120);
	if (child_grp)
		return child(dev, child_grp);
	open_all(dev);
	/* A group of this run's own (239/8: administratively scoped). */
	grp[0] = 239, grp[1] = 201, grp[2] = (getpid() >> 8) & 0xff, grp[3] = getpid() & 0xff;
	inet_ntop(AF_INET, grp, grp_s, sizeof(grp_s));
	g = group_gid(grp);
	CHECK(!ibv_query_device(ctx, &da) && da.max_mcast_grp > 0 && da.max_mcast_qp_attach > 0 &&
	      da.max_total_mcast_qp_attach >= da.max_mcast_qp_attach, "device offers multicast (%d groups)",
	      da.max_mcast_grp);
	if (ibv_query_gid(ctx, 1, gidx, &uni))
		DIE("query_gid");
	ud_up(&s, QKEY);
	ud_up(&a, QKEY);
	ud_up(&b, QKEY);
	ud_up(&c, QKEY);
	ud_up(&d, QKEY + 1);

	/* Error cases. */
	CHECK(ibv_attach_mcast(a.qp, &uni, 0) == EINVAL, "attach to a unicast GID: EINVAL");
	CHECK(ibv_detach_mcast(a.qp, &g, 0) == EINVAL, "detach from a group not attached: EINVAL");
	struct ibv_qp_init_attr rcia = { .send_cq = a.cq, .recv_cq = a.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *rc = ibv_create_qp(pd, &rcia);

	CHECK(rc && ibv_attach_mcast(rc, &g, 0) == EINVAL, "attach an RC QP: EINVAL");
	ibv_destroy_qp(rc);

	CHECK(!ibv_attach_mcast(a.qp, &g, 0) && !ibv_attach_mcast(b.qp, &g, 0) &&
	      !ibv_attach_mcast(d.qp, &g, 0) && !ibv_attach_mcast(a.qp, &g, 0),
	      "attach three QPs to %s (one twice)", grp_s);
	post_recv(&a), post_recv(&b), post_recv(&c), post_recv(&d);
	pid_t pid = spawn_child(argv, dev, grp_s);

	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
		.grh = { .dgid = g, .sgid_index = gidx, .hop_limit = 1 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);

	if (!ah)
		DIE("AH to the group: %s", strerror(errno));
	send_to(&s, ah, 1);
	CHECK(got(&a, wait_wc(&a), 1, grp) && got(&b, wait_wc(&b), 1, grp),
	      "both attached QPs got the datagram, the group in the GRH");
	CHECK(child_status(pid) == 0, "another process's attached QP got its own copy");
	post_recv(&a), post_recv(&b);
	send_to(&s, ah, 2);
	CHECK(got(&a, wait_wc(&a), 2, grp) && got(&b, wait_wc(&b), 2, grp), "a second datagram, to both");
	CHECK(cq_empty(&c) && cq_empty(&d), "nothing for the QP not attached, nor the one with another Q_Key");

	/* Detached: no more copies for it. */
	CHECK(!ibv_detach_mcast(a.qp, &g, 0), "detach");
	post_recv(&a), post_recv(&b);
	send_to(&s, ah, 3);
	CHECK(got(&b, wait_wc(&b), 3, grp) && cq_empty(&a), "after detach only the other QP gets it");

	CHECK(ibv_destroy_qp(b.qp) == EBUSY, "destroy_qp of an attached QP: EBUSY");
	CHECK(!ibv_detach_mcast(b.qp, &g, 0) && !ibv_detach_mcast(d.qp, &g, 0), "detach the others");
	ibv_destroy_ah(ah);
	ud_down(&s), ud_down(&a), ud_down(&b), ud_down(&c), ud_down(&d);
	printf("%d passed, %d failed\n", passes, failures);
	return failures ? 1 : 0;
}

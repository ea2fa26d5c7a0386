// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Completion channels and asynchronous events, through the public verbs
 * API only (run under `uroce run`):
 *  - a thread sleeping in epoll_wait on a non-blocking channel fd wakes
 *    within a millisecond of a completion, and burns no CPU while idle;
 *  - 100 000 arm/complete cycles with two threads lose no event;
 *  - solicited-only arming ignores unsolicited completions;
 *  - SRQ limit and last-WQE-reached events arrive as IBTA 10.2.9.2 and
 *    11.6.3.1 say;
 *  - a QP, SRQ or CQ destroyed while an event naming it is read but not
 *    acknowledged (SRQ_LIMIT_REACHED, QP_LAST_WQE_REACHED, CQ_ERR, a
 *    completion event) is destroyed at once, and the acknowledgement after
 *    it still finds the object (ibv_get_async_event(3)); under ASan a
 *    use after free fails the run.
 * Two RC QPs of one context, connected to each other over GID GIDX.
 * Usage: cq_events DEVICE GIDX [cycles [unacked]]  ("unacked": that test only)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <infiniband/verbs.h>

static int failures, passes;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (cond) {                                                     \
			passes++;                                               \
			printf("ok: ");                                         \
		} else {                                                        \
			failures++;                                             \
			printf("FAIL: ");                                       \
		}                                                               \
		printf(__VA_ARGS__);                                            \
		putchar('\n');                                                  \
		fflush(stdout);                                                 \
	} while (0)

#define DIE(...) do { fprintf(stderr, "fatal: " __VA_ARGS__); fputc('\n', stderr); exit(2); } while (0)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static char *buf;
static int gidx;
enum { BUF = 1 << 16, SLOT = 64 };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct ibv_qp *make_qp(struct ibv_cq *scq, struct ibv_cq *rcq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = rcq, .srq = srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 256, .max_recv_wr = srq ? 0 : 512,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	if (!qp)
		DIE("create_qp: %s", strerror(errno));
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		DIE("INIT");
	return qp;
}

static void connect_qp(struct ibv_qp *qp, uint32_t dqpn)
{
	union ibv_gid gid;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = dqpn,
		.rq_psn = 0, .max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .sgid_index = gidx, .hop_limit = 64 } },
	};

	if (ibv_query_gid(ctx, 1, gidx, &gid))
		DIE("query_gid");
	a.ah_attr.grh.dgid = gid;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		DIE("RTR: %s", strerror(errno));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		DIE("RTS: %s", strerror(errno));
}

/* A and B, connected to each other. */
static void connect_pair(struct ibv_qp *a, struct ibv_qp *b)
{
	connect_qp(a, b->qp_num);
	connect_qp(b, a->qp_num);
}

static void post_recv(struct ibv_qp *qp, struct ibv_srq *srq, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)buf + BUF / 2 + (id % 64) * SLOT, SLOT, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (srq ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(qp, &wr, &bad))
		DIE("post_recv");
}

static void post_send(struct ibv_qp *qp, uint64_t id, int flags)
{
	struct ibv_sge sge = { (uintptr_t)buf + (id % 64) * SLOT, 8, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = flags }, *bad;

	if (ibv_post_send(qp, &wr, &bad))
		DIE("post_send: %s", strerror(errno));
}

/* Wait up to MS for the channel fd to become readable. */
static int channel_ready(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd p = { ch->fd, POLLIN, 0 };

	return poll(&p, 1, ms) == 1;
}

static void drain_send(struct ibv_cq *cq, int n)
{
	struct ibv_wc wc;
	double end = now_s() + 10;

	while (n > 0 && now_s() < end) {
		int k = ibv_poll_cq(cq, 1, &wc);

		if (k < 0 || (k && wc.status != IBV_WC_SUCCESS))
			DIE("send completion: %s", k < 0 ? "poll error" : ibv_wc_status_str(wc.status));
		n -= k;
	}
	if (n > 0)
		DIE("send completions missing");
}

/* ---- wake-up latency and idle CPU -------------------------------------------- */

static void test_wakeup(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *scq, *rcq, *ev_cq;
	struct ibv_qp *a, *b;
	struct epoll_event ev = { .events = EPOLLIN }, out;
	double worst = 0, lat[20], cpu0, t0;
	void *ev_ctx;
	int ep;

	CHECK(ch != NULL, "ibv_create_comp_channel (errno %d)", ch ? 0 : errno);
	if (!ch)
		exit(1);
	scq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 256, NULL, ch, 0);
	if (!scq || !rcq)
		DIE("create_cq with channel: %s", strerror(errno));
	a = make_qp(scq, scq, NULL);
	b = make_qp(scq, rcq, NULL);
	connect_pair(a, b);
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	ep = epoll_create1(0);
	epoll_ctl(ep, EPOLL_CTL_ADD, ch->fd, &ev);

	for (int i = 0; i < 20; i++) {
		struct ibv_wc wc;

		post_recv(b, NULL, i);
		if (ibv_req_notify_cq(rcq, 0))
			DIE("req_notify_cq");
		t0 = now_s();
		post_send(a, i, IBV_SEND_SIGNALED);
		if (epoll_wait(ep, &out, 1, 2000) != 1)
			DIE("no completion event within 2 s (cycle %d)", i);
		lat[i] = now_s() - t0;
		if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx) || ev_cq != rcq)
			DIE("get_cq_event");
		ibv_ack_cq_events(ev_cq, 1);
		if (ibv_poll_cq(rcq, 1, &wc) != 1 || wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)i)
			DIE("receive completion after the event");
		drain_send(scq, 1);
	}
	for (int i = 0; i < 20; i++)
		worst = lat[i] > worst ? lat[i] : worst;
	/* sort for the median */
	for (int i = 0; i < 20; i++)
		for (int j = i + 1; j < 20; j++)
			if (lat[j] < lat[i]) {
				double t = lat[i];

				lat[i] = lat[j];
				lat[j] = t;
			}
	CHECK(lat[10] < 1e-3, "epoll wakes within 1 ms of the send (median %.0f us, worst %.0f us)",
	      lat[10] * 1e6, worst * 1e6);

	/* Idle: armed, nothing happens; the process must sleep. */
	ibv_req_notify_cq(rcq, 0);
	cpu0 = cpu_s();
	t0 = now_s();
	int n = epoll_wait(ep, &out, 1, 500);
	double cpu = cpu_s() - cpu0, wall = now_s() - t0;
	CHECK(n == 0, "no event while idle");
	CHECK(cpu < 0.05 * wall, "idle CPU %.1f ms over %.0f ms of sleep", cpu * 1e3, wall * 1e3);

	/* The armed CQ still fires once, and once only. */
	post_recv(b, NULL, 100);
	post_send(a, 100, IBV_SEND_SIGNALED);
	CHECK(channel_ready(ch, 2000), "armed CQ fires");
	ibv_get_cq_event(ch, &ev_cq, &ev_ctx);
	ibv_ack_cq_events(ev_cq, 1);
	post_recv(b, NULL, 101);
	post_send(a, 101, IBV_SEND_SIGNALED);
	drain_send(scq, 2);
	CHECK(!channel_ready(ch, 100), "no second event without re-arming");
	{
		struct ibv_wc wc[4];
		int got = 0;
		double end = now_s() + 2;

		while (got < 2 && now_s() < end)
			got += ibv_poll_cq(rcq, 4, wc);
	}

	/* Solicited-only: an unsolicited completion does not fire; a solicited one does. */
	ibv_req_notify_cq(rcq, 1);
	post_recv(b, NULL, 102);
	post_send(a, 102, IBV_SEND_SIGNALED);
	drain_send(scq, 1);
	CHECK(!channel_ready(ch, 150), "solicited-only arming ignores an unsolicited SEND");
	post_recv(b, NULL, 103);
	post_send(a, 103, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	drain_send(scq, 1);
	CHECK(channel_ready(ch, 2000), "solicited-only arming fires on a solicited SEND");
	ibv_get_cq_event(ch, &ev_cq, &ev_ctx);
	ibv_ack_cq_events(ev_cq, 1);

	close(ep);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	CHECK(ibv_destroy_comp_channel(ch) == 0, "destroy the channel");
}

/* ---- two threads, many cycles ------------------------------------------------ */

struct cycles {
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *a, *b;
	long n;
	long got, events;
};

static void *sender(void *arg)
{
	struct cycles *c = arg;
	long inflight = 0;

	for (long i = 0; i < c->n; i++) {
		struct ibv_wc wc[32];

		while (inflight >= 128) {
			int k = ibv_poll_cq(c->scq, 32, wc);

			for (int j = 0; j < k; j++)
				if (wc[j].status != IBV_WC_SUCCESS)
					DIE("send %s", ibv_wc_status_str(wc[j].status));
			inflight -= k;
		}
		post_send(c->a, i, IBV_SEND_SIGNALED);
		inflight++;
	}
	drain_send(c->scq, (int)inflight);
	return NULL;
}

static void test_cycles(long n)
{
	struct cycles c = { .n = n };
	pthread_t t;
	double t0 = now_s();

	c.ch = ibv_create_comp_channel(ctx);
	c.scq = ibv_create_cq(ctx, 1024, NULL, NULL, 0);
	c.rcq = ibv_create_cq(ctx, 1024, NULL, c.ch, 0);
	if (!c.ch || !c.scq || !c.rcq)
		DIE("cycles setup");
	c.a = make_qp(c.scq, c.scq, NULL);
	c.b = make_qp(c.scq, c.rcq, NULL);
	connect_pair(c.a, c.b);
	for (int i = 0; i < 512; i++)
		post_recv(c.b, NULL, i);
	pthread_create(&t, NULL, sender, &c);
	/* The receiving thread: poll, arm, poll again, sleep for the event. */
	while (c.got < n) {
		struct ibv_wc wc[64];
		struct ibv_cq *ev_cq;
		void *ev_ctx;
		int k = ibv_poll_cq(c.rcq, 64, wc);

		if (k < 0)
			DIE("poll_cq");
		for (int j = 0; j < k; j++) {
			if (wc[j].status != IBV_WC_SUCCESS)
				DIE("recv %s", ibv_wc_status_str(wc[j].status));
			post_recv(c.b, NULL, wc[j].wr_id + 512);
		}
		c.got += k;
		if (k)
			continue;
		if (ibv_req_notify_cq(c.rcq, 0))
			DIE("req_notify_cq");
		k = ibv_poll_cq(c.rcq, 64, wc); /* completions that beat the arming */
		if (k > 0) {
			for (int j = 0; j < k; j++)
				post_recv(c.b, NULL, wc[j].wr_id + 512);
			c.got += k;
			continue;
		}
		if (!channel_ready(c.ch, 5000))
			DIE("lost wake-up: no event within 5 s after %ld of %ld completions", c.got, n);
		if (ibv_get_cq_event(c.ch, &ev_cq, &ev_ctx))
			DIE("get_cq_event");
		ibv_ack_cq_events(ev_cq, 1);
		c.events++;
	}
	pthread_join(t, NULL);
	CHECK(c.got == n, "%ld completions through %ld events with two threads, none lost (%.1f s)",
	      c.got, c.events, now_s() - t0);
	/* Any event still queued belongs to the last arming. */
	while (channel_ready(c.ch, 0)) {
		struct ibv_cq *ev_cq;
		void *ev_ctx;

		ibv_get_cq_event(c.ch, &ev_cq, &ev_ctx);
		ibv_ack_cq_events(ev_cq, 1);
	}
	ibv_destroy_qp(c.a);
	ibv_destroy_qp(c.b);
	ibv_destroy_cq(c.scq);
	ibv_destroy_cq(c.rcq);
	ibv_destroy_comp_channel(c.ch);
}

/* ---- asynchronous events: SRQ limit, last WQE reached -------------------------- */

static int next_async(enum ibv_event_type want, void *element, int ms)
{
	struct pollfd p = { ctx->async_fd, POLLIN, 0 };
	double end = now_s() + ms / 1000.0;

	while (now_s() < end) {
		struct ibv_async_event ev;
		int hit;

		if (poll(&p, 1, (int)((end - now_s()) * 1000) + 1) != 1)
			return 0;
		if (ibv_get_async_event(ctx, &ev))
			return 0;
		hit = ev.event_type == want && (!element || ev.element.srq == element ||
						ev.element.qp == element);
		printf("  async event: %s\n", ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
		if (hit)
			return 1;
	}
	return 0;
}

/* *A sends to *B, which receives into SRQ (N receives posted); both use CQ. */
static void srq_pair(struct ibv_cq *cq, struct ibv_srq *srq, int n, struct ibv_qp **a,
		     struct ibv_qp **b)
{
	*a = make_qp(cq, cq, NULL);
	*b = make_qp(cq, cq, srq);
	connect_pair(*a, *b);
	for (int i = 0; i < n; i++)
		post_recv(NULL, srq, i);
}

static void test_srq_events(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_cq *cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	struct ibv_srq_attr lim = { .srq_limit = 5 };
	struct ibv_qp *a, *b;
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };

	if (!srq || !cq)
		DIE("srq setup: %s", strerror(errno));
	srq_pair(cq, srq, 10, &a, &b);
	CHECK(ibv_modify_srq(srq, &lim, IBV_SRQ_LIMIT) == 0, "arm the SRQ limit at 5");
	for (int i = 0; i < 4; i++)
		post_send(a, i, IBV_SEND_SIGNALED);
	drain_send(cq, 8); /* 4 sends and their 4 receives: 4 SRQ WQEs consumed */
	CHECK(!next_async(IBV_EVENT_SRQ_LIMIT_REACHED, srq, 100),
	      "no SRQ limit event with 6 WQEs left");
	for (int i = 4; i < 6; i++)
		post_send(a, i, IBV_SEND_SIGNALED);
	CHECK(next_async(IBV_EVENT_SRQ_LIMIT_REACHED, srq, 2000),
	      "SRQ_LIMIT_REACHED when fewer than 5 WQEs are left");
	ibv_query_srq(srq, &lim);
	CHECK(lim.srq_limit == 0, "the limit is disarmed after firing (srq_limit %u)", lim.srq_limit);
	CHECK(ibv_modify_qp(b, &err, IBV_QP_STATE) == 0, "QP with SRQ to ERR");
	CHECK(next_async(IBV_EVENT_QP_LAST_WQE_REACHED, b, 2000),
	      "QP_LAST_WQE_REACHED for a QP with an SRQ going to error");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
}

/* ---- objects destroyed before their events are acknowledged ----------------- */

/* Read the next asynchronous event of type WANT (others are acknowledged)
 * into *EV, not acknowledged. */
static int get_async(enum ibv_event_type want, struct ibv_async_event *ev, int ms)
{
	struct pollfd p = { ctx->async_fd, POLLIN, 0 };
	double end = now_s() + ms / 1000.0;

	while (now_s() < end) {
		if (poll(&p, 1, (int)((end - now_s()) * 1000) + 1) != 1 || ibv_get_async_event(ctx, ev))
			return 0;
		if (ev->event_type == want)
			return 1;
		ibv_ack_async_event(ev);
	}
	return 0;
}

static void test_unacked_events(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_cq *tiny = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	struct ibv_cq *chcq = ch ? ibv_create_cq(ctx, 64, NULL, ch, 0) : NULL;
	struct ibv_srq_attr lim = { .srq_limit = 4 };
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct ibv_async_event lim_ev, wqe_ev, cqerr_ev;
	struct ibv_cq *ev_cq = NULL;
	struct ibv_qp *a, *b, *c, *d;
	void *ev_ctx;
	int n;

	if (!srq || !cq || !tiny || !chcq)
		DIE("unacked-events setup: %s", strerror(errno));
	/* SRQ_LIMIT_REACHED and QP_LAST_WQE_REACHED: b receives into the SRQ. */
	srq_pair(cq, srq, 4, &a, &b);
	if (ibv_modify_srq(srq, &lim, IBV_SRQ_LIMIT))
		DIE("arm the SRQ limit");
	post_send(a, 0, IBV_SEND_SIGNALED);
	drain_send(cq, 2);
	if (!get_async(IBV_EVENT_SRQ_LIMIT_REACHED, &lim_ev, 2000) || lim_ev.element.srq != srq)
		DIE("no SRQ_LIMIT_REACHED");
	if (ibv_modify_qp(b, &err, IBV_QP_STATE) ||
	    !get_async(IBV_EVENT_QP_LAST_WQE_REACHED, &wqe_ev, 2000) || wqe_ev.element.qp != b)
		DIE("no QP_LAST_WQE_REACHED");
	/* CQ_ERR: c sends into a CQ of one entry, three completions overrun it. */
	c = make_qp(tiny, cq, NULL);
	d = make_qp(chcq, chcq, NULL);
	connect_pair(c, d);
	for (int i = 0; i < 4; i++)
		post_recv(d, NULL, i);
	for (int i = 0; i < 3; i++)
		post_send(c, i, IBV_SEND_SIGNALED);
	if (!get_async(IBV_EVENT_CQ_ERR, &cqerr_ev, 2000) || cqerr_ev.element.cq != tiny)
		DIE("no CQ_ERR");
	/* A completion event: d's receives complete into the channel's CQ. */
	if (ibv_req_notify_cq(chcq, 0))
		DIE("arm the channel's CQ");
	post_send(c, 3, 0);
	if (!channel_ready(ch, 2000) || ibv_get_cq_event(ch, &ev_cq, &ev_ctx) || ev_cq != chcq)
		DIE("no completion event");

	/* Destroy everything the events name, then acknowledge.  (Over the
	 * kernel, destroy would wait for these acknowledgements and this one
	 * thread would never get past it; uroce keeps the memory instead, so a
	 * program written for the kernel, which acknowledges from another
	 * thread, works the same.) */
	n = !ibv_destroy_qp(a) + !ibv_destroy_qp(b) + !ibv_destroy_qp(c) + !ibv_destroy_qp(d);
	n += !ibv_destroy_srq(srq) + !ibv_destroy_cq(tiny) + !ibv_destroy_cq(chcq) + !ibv_destroy_cq(cq);
	CHECK(n == 8, "unacked: SRQ_LIMIT_REACHED, QP_LAST_WQE_REACHED, CQ_ERR and a completion "
	      "event read; QPs, SRQ and CQs destroyed before the acknowledgements (%d of 8)", n);
	ibv_ack_async_event(&lim_ev);
	ibv_ack_async_event(&wqe_ev);
	ibv_ack_async_event(&cqerr_ev);
	ibv_ack_cq_events(ev_cq, 1);
	/* libibverbs counted each acknowledgement into its object, which must
	 * still be there (ASan reports a freed one here). */
	CHECK(lim_ev.element.srq->events_completed == 1, "unacked: SRQ event acknowledged after destroy");
	CHECK(wqe_ev.element.qp->events_completed == 1, "unacked: QP event acknowledged after destroy");
	CHECK(cqerr_ev.element.cq->async_events_completed == 1,
	      "unacked: CQ_ERR acknowledged after destroy");
	CHECK(ev_cq->comp_events_completed == 1, "unacked: completion event acknowledged after destroy");
	CHECK(ibv_destroy_comp_channel(ch) == 0, "unacked: the channel is destroyed after its CQ");
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	long cycles = argc > 3 ? atol(argv[3]) : 100000;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEVICE GIDX [cycles]\n", argv[0]);
		return 2;
	}
	alarm(300);
	gidx = atoi(argv[2]);
	list = ibv_get_device_list(NULL);
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		DIE("cannot open %s", argv[1]);
	pd = ibv_alloc_pd(ctx);
	buf = aligned_alloc(4096, BUF);
	mr = pd && buf ? ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (!mr)
		DIE("pd/mr");
	if (argc > 4 && !strcmp(argv[4], "unacked")) {
		test_unacked_events();
	} else {
		test_wakeup();
		test_cycles(cycles);
		test_srq_events();
		test_unacked_events();
	}
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("%d passed, %d failed\n", passes, failures);
	return failures ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * reorder: an NFQUEUE program that reorders and delays packets, for
 * tests/faults/impair (this kernel has no netem).
 *
 *   reorder --queue N [--percent P] [--delay-ms D] [--hold-ms H]
 *           [--attach FAMILY:TABLE:CHAIN] [--seed S]
 *
 * Every packet the kernel queues to queue N is delayed by D ms (0: passed
 * on at once, in order).  With probability P% a packet is held instead,
 * and released after the next 1-3 packets have gone by (so it arrives out
 * of order) or after H ms more (default 5, or D when D > 0), whichever
 * comes first.  At most 64 packets are held and 4096 queued in all; past
 * that a packet is passed on at once.  The verdict is always NF_ACCEPT.
 *
 * --attach (may be repeated) appends the rule that feeds the queue, `xt NFQUEUE num N bypass`
 * (nftables' own `queue` statement needs nft_queue, which some kernels
 * lack; the xtables NFQUEUE target through nft_compat is always there
 * where xtables is), to an existing chain, e.g. bridge:impairq:q.  With
 * bypass, packets flow on untouched once this program is gone.
 *
 * SIGUSR1 prints the counters; SIGTERM/SIGINT release everything held,
 * print the counters and exit 0.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nf_tables_compat.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netfilter/x_tables.h>
#include <linux/netfilter/xt_NFQUEUE.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

enum { MAXHELD = 64, CAP = 4096 };

struct held {
	uint32_t id;
	uint64_t seq, deadline;
	int after, overtaken;
};

static struct nfq_q_handle *qh;
static int percent, delay_ms, hold_ms = -1;
static volatile sig_atomic_t stop, report;
static uint64_t rng = 88172645463325252ULL;
static uint64_t n_seen, n_held, n_reordered, n_timeout, n_delayed, n_overflow, n_verdict_err;

/* arrival-ordered FIFO of packets not held */
static struct { uint32_t id; uint64_t seq, deadline; } fifo[CAP];
static unsigned int fhead, flen;
static struct held held[MAXHELD];
static int nheld;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

static void accept_id(uint32_t id)
{
	if (nfq_set_verdict(qh, id, NF_ACCEPT, 0, NULL) < 0)
		n_verdict_err++;
}

static void release_held(int i, int by_timer)
{
	accept_id(held[i].id);
	if (held[i].overtaken)
		n_reordered++;
	else if (by_timer)
		n_timeout++;
	held[i] = held[--nheld];
}

/* Pass on the oldest packet of the FIFO; held packets it overtakes count down. */
static void release_fifo_head(void)
{
	uint64_t seq = fifo[fhead].seq;

	accept_id(fifo[fhead].id);
	fhead = (fhead + 1) % CAP;
	flen--;
	for (int i = 0; i < nheld;) {
		if (held[i].seq < seq) {
			held[i].overtaken++;
			if (--held[i].after <= 0) {
				release_held(i, 0);
				continue;
			}
		}
		i++;
	}
}

/* Release whatever is due; returns the poll timeout (ms) until the next deadline. */
static int release_due(int all)
{
	uint64_t t = now_ns(), next = UINT64_MAX;

	while (flen && (all || fifo[fhead].deadline <= t))
		release_fifo_head();
	for (int i = 0; i < nheld;) {
		if (all || held[i].deadline <= t) {
			release_held(i, 1);
			continue;
		}
		if (held[i].deadline < next)
			next = held[i].deadline;
		i++;
	}
	if (flen && fifo[fhead].deadline < next)
		next = fifo[fhead].deadline;
	if (next == UINT64_MAX)
		return 1000;
	return next <= t ? 0 : (int)((next - t + 999999) / 1000000);
}

static int on_packet(struct nfq_q_handle *q, struct nfgenmsg *m, struct nfq_data *d, void *arg)
{
	struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(d);
	uint64_t t = now_ns(), seq = ++n_seen;
	uint32_t id;

	(void)q, (void)m, (void)arg;
	if (!ph)
		return 0;
	id = ntohl(ph->packet_id);
	if (percent && nheld < MAXHELD && (int)rnd(100) < percent) {
		held[nheld++] = (struct held){ .id = id, .seq = seq, .after = 1 + (int)rnd(3),
			.deadline = t + (uint64_t)(delay_ms + hold_ms) * 1000000ULL };
		n_held++;
		return 0;
	}
	if (flen == CAP) {
		n_overflow++;
		release_fifo_head();
	}
	unsigned int tail = (fhead + flen) % CAP;

	fifo[tail].id = id;
	fifo[tail].seq = seq;
	fifo[tail].deadline = t + (uint64_t)delay_ms * 1000000ULL;
	flen++;
	if (delay_ms)
		n_delayed++;
	return 0;
}

static void print_counters(const char *when)
{
	printf("reorder %s: seen %llu held %llu reordered %llu held-timeout %llu delayed %llu overflow %llu verdict-errors %llu\n",
	       when, (unsigned long long)n_seen, (unsigned long long)n_held,
	       (unsigned long long)n_reordered, (unsigned long long)n_timeout,
	       (unsigned long long)n_delayed, (unsigned long long)n_overflow,
	       (unsigned long long)n_verdict_err);
	fflush(stdout);
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		report = 1;
	else
		stop = 1;
}

/* ---- attaching `xt NFQUEUE num N bypass` to an nftables chain ------------------ */

struct nlbuf {
	char b[4096];
	size_t len;
};

static struct nlmsghdr *msg_begin(struct nlbuf *nb, uint16_t type, uint16_t flags, uint8_t family,
				  uint16_t res_id, uint32_t seq)
{
	struct nlmsghdr *h = (struct nlmsghdr *)(nb->b + nb->len);
	struct nfgenmsg *g;

	h->nlmsg_len = NLMSG_LENGTH(sizeof(*g));
	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST | flags;
	h->nlmsg_seq = seq;
	h->nlmsg_pid = 0;
	g = NLMSG_DATA(h);
	g->nfgen_family = family;
	g->version = NFNETLINK_V0;
	g->res_id = htons(res_id);
	nb->len += NLMSG_ALIGN(h->nlmsg_len);
	return h;
}

static struct nlattr *attr_put(struct nlbuf *nb, struct nlmsghdr *h, uint16_t type, const void *data,
			       size_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));
	size_t total = NLA_ALIGN(NLA_HDRLEN + len);

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	memset((char *)a + NLA_HDRLEN + len, 0, total - NLA_HDRLEN - len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + (uint32_t)total;
	nb->len = (size_t)((char *)h - nb->b) + NLMSG_ALIGN(h->nlmsg_len);
	return a;
}

static struct nlattr *nest_start(struct nlbuf *nb, struct nlmsghdr *h, uint16_t type)
{
	return attr_put(nb, h, type | NLA_F_NESTED, NULL, 0);
}

static void nest_end(struct nlmsghdr *h, struct nlattr *a)
{
	a->nla_len = (uint16_t)((char *)h + h->nlmsg_len - (char *)a);
}

static int attach(const char *spec, int queue)
{
	char fam[32], table[128], chain[128];
	uint8_t family;
	struct nlbuf nb = { .len = 0 };
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	uint32_t seq = (uint32_t)time(NULL);
	int fd, err = -1;

	if (sscanf(spec, "%31[^:]:%127[^:]:%127s", fam, table, chain) != 3) {
		fprintf(stderr, "reorder: --attach FAMILY:TABLE:CHAIN\n");
		return -1;
	}
	if (!strcmp(fam, "bridge"))
		family = NFPROTO_BRIDGE;
	else if (!strcmp(fam, "ip"))
		family = NFPROTO_IPV4;
	else if (!strcmp(fam, "ip6"))
		family = NFPROTO_IPV6;
	else if (!strcmp(fam, "inet"))
		family = NFPROTO_INET;
	else {
		fprintf(stderr, "reorder: unknown family %s\n", fam);
		return -1;
	}

	msg_begin(&nb, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES, seq);
	struct nlmsghdr *h = msg_begin(&nb, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE,
				       NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, family, 0, seq + 1);
	attr_put(&nb, h, NFTA_RULE_TABLE, table, strlen(table) + 1);
	attr_put(&nb, h, NFTA_RULE_CHAIN, chain, strlen(chain) + 1);
	struct nlattr *exprs = nest_start(&nb, h, NFTA_RULE_EXPRESSIONS);
	struct nlattr *elem = nest_start(&nb, h, NFTA_LIST_ELEM);
	attr_put(&nb, h, NFTA_EXPR_NAME, "target", sizeof("target"));
	struct nlattr *data = nest_start(&nb, h, NFTA_EXPR_DATA);
	struct xt_NFQ_info_v3 info = { .queuenum = (uint16_t)queue, .queues_total = 1,
				       .flags = NFQ_FLAG_BYPASS };
	char infobuf[XT_ALIGN(sizeof(info))] = { 0 };
	uint32_t rev = htonl(3);

	memcpy(infobuf, &info, sizeof(info));
	attr_put(&nb, h, NFTA_TARGET_NAME, "NFQUEUE", sizeof("NFQUEUE"));
	attr_put(&nb, h, NFTA_TARGET_REV, &rev, sizeof(rev));
	attr_put(&nb, h, NFTA_TARGET_INFO, infobuf, sizeof(infobuf));
	nest_end(h, data);
	nest_end(h, elem);
	nest_end(h, exprs);
	msg_begin(&nb, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES, seq + 2);

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("reorder: netlink");
		goto out;
	}
	if (sendto(fd, nb.b, nb.len, 0, (struct sockaddr *)&(struct sockaddr_nl){ .nl_family = AF_NETLINK },
		   sizeof(struct sockaddr_nl)) != (ssize_t)nb.len) {
		perror("reorder: netlink send");
		goto out;
	}
	for (;;) {
		char rb[8192];
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 2000) <= 0) {
			fprintf(stderr, "reorder: no answer from nf_tables\n");
			goto out;
		}
		n = recv(fd, rb, sizeof(rb), 0);
		if (n < 0) {
			perror("reorder: netlink recv");
			goto out;
		}
		for (struct nlmsghdr *r = (struct nlmsghdr *)rb; NLMSG_OK(r, (size_t)n); r = NLMSG_NEXT(r, n)) {
			if (r->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(r);

				if (e->error) {
					fprintf(stderr, "reorder: adding `xt NFQUEUE num %d` to %s: %s\n",
						queue, spec, strerror(-e->error));
					goto out;
				}
				if (r->nlmsg_seq == seq + 1) {
					err = 0;
					goto out;
				}
			}
		}
	}
out:
	if (fd >= 0)
		close(fd);
	return err;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "queue", required_argument, NULL, 'q' },
		{ "percent", required_argument, NULL, 'p' },
		{ "delay-ms", required_argument, NULL, 'd' },
		{ "hold-ms", required_argument, NULL, 'H' },
		{ "attach", required_argument, NULL, 'a' },
		{ "seed", required_argument, NULL, 's' },
		{ 0 }
	};
	const char *attach_spec[8];
	int nattach = 0, queue = -1, opt, fd, one = 1;
	struct nfq_handle *h;
	struct sigaction sa = { .sa_handler = on_signal };
	char buf[65536] __attribute__((aligned));

	rng ^= (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL ^ now_ns();
	while ((opt = getopt_long(argc, argv, "q:p:d:H:a:s:", opts, NULL)) != -1) {
		switch (opt) {
		case 'q': queue = atoi(optarg); break;
		case 'p': percent = atoi(optarg); break;
		case 'd': delay_ms = atoi(optarg); break;
		case 'H': hold_ms = atoi(optarg); break;
		case 'a':
			if (nattach < 8)
				attach_spec[nattach++] = optarg;
			break;
		case 's': rng = strtoull(optarg, NULL, 0) | 1; break;
		default:
			fprintf(stderr, "usage: %s --queue N [--percent P] [--delay-ms D] [--hold-ms H] "
				"[--attach FAMILY:TABLE:CHAIN] [--seed S]\n", argv[0]);
			return 2;
		}
	}
	if (queue < 0 || queue > 65535 || percent < 0 || percent > 100 || delay_ms < 0 ||
	    delay_ms > 10000) {
		fprintf(stderr, "reorder: need --queue 0..65535, --percent 0..100, --delay-ms 0..10000\n");
		return 2;
	}
	if (hold_ms < 0)
		hold_ms = delay_ms ? delay_ms : 5;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);

	h = nfq_open();
	if (!h) {
		perror("reorder: nfq_open");
		return 1;
	}
	qh = nfq_create_queue(h, (uint16_t)queue, on_packet, NULL);
	if (!qh) {
		fprintf(stderr, "reorder: cannot bind queue %d (in use?): %s\n", queue, strerror(errno));
		return 1;
	}
	if (nfq_set_mode(qh, NFQNL_COPY_META, 0) < 0) {
		perror("reorder: nfq_set_mode");
		return 1;
	}
	nfq_set_queue_maxlen(qh, CAP * 2);
	/* a full queue lets packets through rather than dropping them */
	nfq_set_queue_flags(qh, NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_FAIL_OPEN);
	fd = nfq_fd(h);
	nfnl_rcvbufsiz(nfq_nfnlh(h), 8 << 20);
	setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));

	for (int i = 0; i < nattach; i++)
		if (attach(attach_spec[i], queue))
			return 1;
	printf("reorder: queue %d, percent %d, delay %d ms, hold %d ms\n", queue, percent, delay_ms,
	       hold_ms);
	fflush(stdout);

	while (!stop) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int timeout = release_due(0);

		if (report) {
			report = 0;
			print_counters("now");
		}
		if (poll(&p, 1, timeout) < 0) {
			if (errno == EINTR)
				continue;
			perror("reorder: poll");
			break;
		}
		if (!(p.revents & POLLIN))
			continue;
		/* drain what is there, then release in arrival order */
		for (int i = 0; i < 256; i++) {
			ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

			if (n < 0) {
				if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
				    errno != ENOBUFS)
					perror("reorder: recv");
				break;
			}
			nfq_handle_packet(h, buf, (int)n);
		}
	}
	release_due(1);
	print_counters("exit");
	nfq_destroy_queue(qh);
	nfq_close(h);
	return 0;
}

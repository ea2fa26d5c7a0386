// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The loop transport (loop.h): the ports of one in-process bus, the
 * rules that drop, duplicate and reorder what crosses it, and its log.
 * One lock covers the bus; a port's fd is an eventfd that is readable
 * while its queue holds packets (transport.h: level-triggered).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/eventfd.h>

#include "transport/loop/loop.h"
#include "wire/wire.h"

#define LOOP_PORTS 8
#define LOOP_RULES 32
#define LOOP_BURST 64

/* A packet on the bus: in a port's queue, held back by a rule, or given
 * out by the port's last recv. */
struct lpkt {
	struct lpkt *next;
	struct uroce_path path;
	int to;
	unsigned int wait;           /* held: packets to its port that pass it first */
	uint32_t len;
	uint8_t buf[UROCE_XPORT_MAX_PKT];
};

struct loop_xport {
	struct uroce_xport head;
	int port;
	uint64_t *counters;
	struct lpkt *q_head, **q_tail;
	struct lpkt *taken[LOOP_BURST];
	unsigned int ntaken;
};

struct loop_port {
	char netdev[IF_NAMESIZE];
	uint8_t addr[16];
	bool has_addr;
	struct loop_xport *open;
};

struct loop_rule {
	struct uroce_loop_rule r;
	char from[IF_NAMESIZE];
	unsigned int matched, hits;
};

static struct {
	pthread_mutex_t lock;
	struct loop_port ports[LOOP_PORTS];
	int nports;
	struct loop_rule rules[LOOP_RULES];
	int nrules;
	struct lpkt *held;
	struct uroce_loop_rec *log;
	size_t nlog;
} bus = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int port_of(const char *netdev)
{
	for (int i = 0; i < bus.nports; i++)
		if (!strcmp(bus.ports[i].netdev, netdev))
			return i;
	return -1;
}

/* NETDEV's port, made if new (bus.lock held); -1: no room. */
static int port_get(const char *netdev)
{
	int i = port_of(netdev);

	if (i >= 0 || bus.nports == LOOP_PORTS)
		return i;
	i = bus.nports++;
	snprintf(bus.ports[i].netdev, sizeof(bus.ports[i].netdev), "%s", netdev);
	return i;
}

static int port_at(const uint8_t *gid)
{
	for (int i = 0; i < bus.nports; i++)
		if (bus.ports[i].has_addr && !memcmp(bus.ports[i].addr, gid, 16))
			return i;
	return -1;
}

/* Queue P at its port, or free it if that port is closed (bus.lock held). */
static void enqueue(struct lpkt *p)
{
	struct loop_xport *lx = bus.ports[p->to].open;
	uint64_t one = 1;

	if (!lx) {
		free(p);
		return;
	}
	p->next = NULL;
	*lx->q_tail = p;
	lx->q_tail = &p->next;
	if (write(lx->head.fd, &one, sizeof(one)) < 0)
		(void)0;   /* the counter is already non-zero: still readable */
}

/* A packet reached port TO: the held packets it was to overtake follow. */
static void deliver(struct lpkt *p)
{
	int to = p->to;

	enqueue(p);
	for (struct lpkt **pp = &bus.held; *pp;) {
		struct lpkt *h = *pp;

		if (h->to == to && --h->wait == 0) {
			*pp = h->next;
			enqueue(h);
		} else {
			pp = &h->next;
		}
	}
}

static bool rule_matches(const struct loop_rule *lr, int from, const struct roce_pkt *pkt,
			 bool parsed)
{
	const struct uroce_loop_rule *r = &lr->r;

	if (lr->from[0] && strcmp(lr->from, bus.ports[from].netdev))
		return false;
	if (r->kind == UROCE_LOOP_ANY && r->opcode == UROCE_LOOP_ANY && r->psn == UROCE_LOOP_ANY &&
	    r->aeth == UROCE_LOOP_ANY)
		return true;
	if (!parsed)
		return false;
	return (r->kind == UROCE_LOOP_ANY || r->kind == (int)pkt->kind) &&
	       (r->opcode == UROCE_LOOP_ANY || r->opcode == pkt->opcode) &&
	       (r->psn == UROCE_LOOP_ANY || r->psn == pkt->psn) &&
	       (r->aeth == UROCE_LOOP_ANY ||
		(pkt->kind == ROCE_K_ACK && r->aeth == (pkt->syndrome & ROCE_AETH_TYPE_MASK)));
}

/* What the rules do to a packet from port FROM (bus.lock held). */
static enum uroce_loop_act judge(int from, const struct roce_pkt *pkt, bool parsed,
				 unsigned int *after)
{
	for (int i = 0; i < bus.nrules; i++) {
		struct loop_rule *lr = &bus.rules[i];
		unsigned int nth = lr->r.nth ? lr->r.nth : 1;

		if (!rule_matches(lr, from, pkt, parsed))
			continue;
		lr->matched++;
		if (lr->matched < nth || (lr->r.count && lr->matched >= nth + lr->r.count))
			continue;
		lr->hits++;
		*after = lr->r.after;
		return lr->r.act;
	}
	return UROCE_LOOP_PASS;
}

static void log_rec(int from, const struct lpkt *p, const struct roce_pkt *pkt, bool parsed,
		    enum uroce_loop_act act)
{
	struct uroce_loop_rec *rec;

	if (!bus.log)
		bus.log = calloc(UROCE_LOOP_LOG_MAX, sizeof(*bus.log));
	if (!bus.log || bus.nlog == UROCE_LOOP_LOG_MAX)
		return;
	rec = &bus.log[bus.nlog++];
	*rec = (struct uroce_loop_rec){
		.from = from, .to = p->to, .len = p->len, .act = act,
		.kind = parsed ? (int)pkt->kind : -1, .opcode = p->buf[0],
	};
	if (parsed) {
		rec->psn = pkt->psn;
		rec->dqpn = pkt->dqpn;
		rec->syndrome = pkt->syndrome;
		rec->ackreq = pkt->ackreq;
	}
}

/* Keep P back until AFTER later packets reached its port (bus.lock held). */
static void hold(struct lpkt *p, unsigned int after)
{
	struct lpkt **pp = &bus.held;

	while (*pp)             /* at the end: released in the order held */
		pp = &(*pp)->next;
	p->wait = after;
	p->next = NULL;
	*pp = p;
}

/* One packet from port FROM onto the bus (bus.lock held). */
static void cross(int from, struct lpkt *p)
{
	struct roce_pkt pkt;
	bool parsed = roce_parse(p->buf, p->len, &pkt) == ROCE_OK;
	unsigned int after = 0;
	enum uroce_loop_act act = judge(from, &pkt, parsed, &after);
	struct lpkt *copy;

	p->to = port_at(p->path.dst);
	log_rec(from, p, &pkt, parsed, act);
	if (p->to < 0 || act == UROCE_LOOP_DROP) {
		free(p);
		return;
	}
	switch (act) {
	case UROCE_LOOP_HOLD:
		hold(p, after ? after : 1);
		return;
	case UROCE_LOOP_DUP:
		copy = malloc(sizeof(*copy));
		if (copy) {
			memcpy(copy, p, sizeof(*copy));
			if (after)
				hold(copy, after);
			else
				deliver(copy);
		}
		break;
	default:
		break;
	}
	deliver(p);
}

static int loop_send(struct uroce_xport *x, const struct uroce_txpkt *pkts, unsigned int n)
{
	struct loop_xport *lx = (struct loop_xport *)x;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct lpkt *p;
		uint32_t at = 0;

		if (pkts[i].len > UROCE_XPORT_MAX_PKT)
			break;
		p = malloc(sizeof(*p));
		if (!p)
			break;
		for (uint32_t k = 0; k < pkts[i].iovcnt; k++) {
			memcpy(p->buf + at, pkts[i].iov[k].iov_base, pkts[i].iov[k].iov_len);
			at += (uint32_t)pkts[i].iov[k].iov_len;
		}
		p->len = at;
		p->path = *pkts[i].path;
		pthread_mutex_lock(&bus.lock);
		cross(lx->port, p);
		pthread_mutex_unlock(&bus.lock);
	}
	if (i == 0 && n)
		return pkts[0].len > UROCE_XPORT_MAX_PKT ? -EMSGSIZE : -ENOBUFS;
	return (int)i;
}

static void rx_of(struct uroce_rx *rx, struct lpkt *p)
{
	const struct uroce_path *path = &p->path;

	*rx = (struct uroce_rx){
		.buf = p->buf, .len = p->len, .family = path->family,
		.src_port = path->sport, .dst_port = path->dport,
		.tos = path->tclass, .ttl = path->hop_limit ? path->hop_limit : 64,
		.flow = path->flow_label,
		/* As the engine built the ICRC: IPv4 ID 0, DF (transport.h). */
		.ip_id = 0, .ip_id_exact = true, .df = true,
	};
	memcpy(rx->src_ip, path->src, 16);
	memcpy(rx->dst_ip, path->dst, 16);
}

static int loop_recv(struct uroce_xport *x, struct uroce_rx *pkts, unsigned int max,
		     unsigned int flags)
{
	struct loop_xport *lx = (struct loop_xport *)x;
	unsigned int n = 0;
	uint64_t cnt;

	(void)flags;
	if (max > LOOP_BURST)
		max = LOOP_BURST;
	pthread_mutex_lock(&bus.lock);
	for (unsigned int i = 0; i < lx->ntaken; i++)
		free(lx->taken[i]);
	lx->ntaken = 0;
	while (n < max && lx->q_head) {
		struct lpkt *p = lx->q_head;

		lx->q_head = p->next;
		if (!lx->q_head)
			lx->q_tail = &lx->q_head;
		lx->taken[lx->ntaken++] = p;
		rx_of(&pkts[n++], p);
	}
	if (!lx->q_head && read(x->fd, &cnt, sizeof(cnt)) < 0)
		(void)0;   /* already 0: not readable */
	pthread_mutex_unlock(&bus.lock);
	return (int)n;
}

static void free_list(struct lpkt *p)
{
	while (p) {
		struct lpkt *next = p->next;

		free(p);
		p = next;
	}
}

static int loop_open(const struct uroce_xport_conf *conf, struct uroce_xport **out)
{
	struct loop_xport *lx = calloc(1, sizeof(*lx));
	int port, err = 0;

	if (!lx)
		return -ENOMEM;
	lx->head.ops = &uroce_loop_ops;
	lx->head.caps = (struct uroce_xport_caps){
		.max_burst = LOOP_BURST, .max_payload = UROCE_XPORT_MAX_PKT,
	};
	lx->head.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	lx->counters = conf->counters;
	lx->q_tail = &lx->q_head;
	pthread_mutex_lock(&bus.lock);
	port = port_get(conf->netdev);
	if (port < 0)
		err = -ENOSPC;
	else if (bus.ports[port].open)
		err = -EADDRINUSE;
	else if (lx->head.fd < 0)
		err = -errno;
	if (!err) {
		lx->port = port;
		bus.ports[port].open = lx;
	}
	pthread_mutex_unlock(&bus.lock);
	if (err) {
		if (lx->head.fd >= 0)
			close(lx->head.fd);
		free(lx);
		return err;
	}
	*out = &lx->head;
	return 0;
}

static void loop_close(struct uroce_xport *x)
{
	struct loop_xport *lx = (struct loop_xport *)x;

	pthread_mutex_lock(&bus.lock);
	bus.ports[lx->port].open = NULL;
	for (struct lpkt **pp = &bus.held; *pp;) {
		struct lpkt *h = *pp;

		if (h->to == lx->port) {
			*pp = h->next;
			free(h);
		} else {
			pp = &h->next;
		}
	}
	pthread_mutex_unlock(&bus.lock);
	for (unsigned int i = 0; i < lx->ntaken; i++)
		free(lx->taken[i]);
	free_list(lx->q_head);
	close(x->fd);
	free(lx);
}

const struct uroce_xport_ops uroce_loop_ops = {
	.name = "loop",
	.open = loop_open,
	.close = loop_close,
	.send = loop_send,
	.recv = loop_recv,
};

/* ---- what tests ask of the bus (loop.h) -------------------------------------- */

struct uroce_loop_rule uroce_loop_match_any(void)
{
	return (struct uroce_loop_rule){
		.kind = UROCE_LOOP_ANY, .opcode = UROCE_LOOP_ANY, .psn = UROCE_LOOP_ANY,
		.aeth = UROCE_LOOP_ANY,
	};
}

int uroce_loop_set_addr(const char *netdev, const uint8_t *gid)
{
	int port;

	pthread_mutex_lock(&bus.lock);
	port = port_get(netdev);
	if (port >= 0) {
		memcpy(bus.ports[port].addr, gid, 16);
		bus.ports[port].has_addr = true;
	}
	pthread_mutex_unlock(&bus.lock);
	return port < 0 ? -ENOSPC : 0;
}

int uroce_loop_port(const char *netdev)
{
	int port;

	pthread_mutex_lock(&bus.lock);
	port = port_of(netdev);
	pthread_mutex_unlock(&bus.lock);
	return port;
}

const uint64_t *uroce_loop_counters(const char *netdev)
{
	const uint64_t *c = NULL;
	int port;

	pthread_mutex_lock(&bus.lock);
	port = port_of(netdev);
	if (port >= 0 && bus.ports[port].open)
		c = bus.ports[port].open->counters;
	pthread_mutex_unlock(&bus.lock);
	return c;
}

int uroce_loop_rule_add(const struct uroce_loop_rule *r)
{
	int id = -ENOSPC;

	pthread_mutex_lock(&bus.lock);
	if (bus.nrules < LOOP_RULES) {
		id = bus.nrules++;
		bus.rules[id] = (struct loop_rule){ .r = *r };
		if (r->from)
			snprintf(bus.rules[id].from, sizeof(bus.rules[id].from), "%s", r->from);
		bus.rules[id].r.from = NULL;
	}
	pthread_mutex_unlock(&bus.lock);
	return id;
}

unsigned int uroce_loop_rule_hits(int id)
{
	unsigned int hits = 0;

	pthread_mutex_lock(&bus.lock);
	if (id >= 0 && id < bus.nrules)
		hits = bus.rules[id].hits;
	pthread_mutex_unlock(&bus.lock);
	return hits;
}

static void release_locked(void)
{
	struct lpkt *h = bus.held;

	bus.held = NULL;
	while (h) {
		struct lpkt *next = h->next;

		enqueue(h);
		h = next;
	}
}

void uroce_loop_release(void)
{
	pthread_mutex_lock(&bus.lock);
	release_locked();
	pthread_mutex_unlock(&bus.lock);
}

void uroce_loop_reset(void)
{
	pthread_mutex_lock(&bus.lock);
	release_locked();
	bus.nrules = 0;
	bus.nlog = 0;
	pthread_mutex_unlock(&bus.lock);
}

size_t uroce_loop_log(struct uroce_loop_rec *out, size_t max)
{
	size_t n;

	pthread_mutex_lock(&bus.lock);
	n = bus.nlog;
	if (out && bus.log)
		memcpy(out, bus.log, (max < n ? max : n) * sizeof(*out));
	pthread_mutex_unlock(&bus.lock);
	return n;
}

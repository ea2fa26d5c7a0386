// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The udp transport's receive path: the sockets epoll reports are drained
 * with recvmmsg, up to RX_MSGS datagrams a call.  With UDP_GRO the kernel
 * may hand over a run of datagrams of one flow as one, with the segment
 * size in a control message; it is cut back into packets at that size
 * (only the last may be shorter).  A datagram whose packets do not all fit
 * in the caller's array stays pending and is handed out first by the next
 * call, before anything new is read into the buffers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/udp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <uroce/stats.h>

#include "transport/udp/udp.h"

#define RX_MSGS 16
#define RX_EVENTS 16
#define GRO_BUF 65536

struct udp_rxstate {
	uint32_t buf_size;
	uint8_t *bufs[RX_MSGS];
	struct mmsghdr msgs[RX_MSGS];
	struct iovec iov[RX_MSGS];
	struct sockaddr_storage from[RX_MSGS];
	union {
		char buf[CMSG_SPACE(sizeof(int)) * 6];
		struct cmsghdr align;
	} ctl[RX_MSGS];
	/* Per received datagram: its addresses and fields, where its packets
	 * start (after a forwarding header) and the GRO segment size (0: one). */
	struct uroce_rx tmpl[RX_MSGS];
	uint32_t start[RX_MSGS];
	uint32_t gso[RX_MSGS];
	/* Datagrams [pj, pn) not yet handed out; pj's next byte is poff. */
	unsigned int pj, pn;
	uint32_t poff;
	/* Sockets epoll reported and not yet drained: evs[evi..nev). */
	struct epoll_event evs[RX_EVENTS];
	int evi, nev;
	/* The socket the last datagram came from (its epoll index), which a
	 * spinning caller reads without asking epoll first (HOT_CALLS). */
	uint64_t hot_idx;
	bool hot;
	unsigned int since_epoll;
	/* The last direct read of the hot socket found a datagram; it asked
	 * for one and got it; reads after an empty one ask for one. */
	bool hot_found, hot_single_hit, hot_single;
};

/* An application busy-polling one flow (a ping-pong) reads that flow's
 * socket directly on HOT_CALLS - 1 calls in HOT_CALLS, saving the
 * epoll_wait before each recvmmsg (ib_send_lat: docs/performance.md,
 * "Latency"); every HOT_CALLS-th call asks epoll, so the device's other
 * sockets wait at most that many calls.  The progress thread, woken by
 * epoll, always asks it.
 *
 * A recvmmsg for more than one datagram that gets one goes on to look for
 * a second, which costs a ping-pong 0.27 us one way on lo
 * (docs/performance.md).  So when the direct reads that follow an empty
 * one find one datagram (a ping-pong), they ask for one, and a call that
 * got it reads no more.  When the read after such a single one finds more
 * (a queue: ACKs of a stream), they ask for a batch again. */
#define HOT_CALLS 4

int udp_rx_init(struct udp_xport *u)
{
	struct udp_rxstate *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	u->rx = st;
	st->buf_size = (u->gro ? GRO_BUF : UROCE_XPORT_MAX_PKT) + sizeof(struct udp_fwd_hdr);
	for (int i = 0; i < RX_MSGS; i++) {
		st->bufs[i] = malloc(st->buf_size);
		if (!st->bufs[i])
			return -ENOMEM;
	}
	return 0;
}

void udp_rx_fini(struct udp_xport *u)
{
	if (!u->rx)
		return;
	for (int i = 0; i < RX_MSGS; i++)
		free(u->rx->bufs[i]);
	free(u->rx);
	u->rx = NULL;
}

static void sockaddr_to_rx(const struct sockaddr_storage *ss, struct uroce_rx *rx)
{
	memset(rx->src_ip, 0, 16);
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)ss;

		rx->src_ip[10] = rx->src_ip[11] = 0xff;
		memcpy(rx->src_ip + 12, &s->sin_addr, 4);
		rx->src_port = ntohs(s->sin_port);
	} else {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		memcpy(rx->src_ip, &s6->sin6_addr, 16);
		rx->src_port = ntohs(s6->sin6_port);
	}
}

/* TOS/traffic class, TTL/hop limit, flow label and the GRO segment size
 * from the control messages recvmsg() filled in (bound_socket's options). */
static uint32_t cmsgs_to_rx(struct msghdr *mh, struct uroce_rx *rx)
{
	uint32_t gso = 0;

	rx->tos = 0;
	rx->ttl = UDP_DEFAULT_TTL;
	rx->flow = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		int v = 0;
		uint32_t fl;

		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
			rx->tos = *CMSG_DATA(c);
		} else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			rx->ttl = v;
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			rx->tos = v;
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			rx->ttl = v;
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_FLOWINFO) {
			memcpy(&fl, CMSG_DATA(c), sizeof(fl));
			rx->flow = ntohl(fl) & 0xfffff;
		} else if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			gso = v > 0 ? (uint32_t)v : 0;
		}
	}
	return gso;
}

/* Datagram J came through the forwarding socket: its header says what
 * the first process saw. */
static void fwd_to_rx(struct udp_xport *u, struct udp_rxstate *st, unsigned int j)
{
	struct uroce_rx *rx = &st->tmpl[j];
	struct udp_fwd_hdr h;

	st->gso[j] = 0;
	if (st->msgs[j].msg_len < sizeof(h)) {
		st->start[j] = st->msgs[j].msg_len;   /* nothing to hand out */
		return;
	}
	memcpy(&h, st->bufs[j], sizeof(h));
	st->start[j] = sizeof(h);
	rx->family = h.family;
	rx->src_port = h.src_port;
	rx->dst_port = h.dst_port;
	memcpy(rx->src_ip, h.src_ip, 16);
	memcpy(rx->dst_ip, h.dst_ip, 16);
	rx->tos = h.tos;
	rx->ttl = h.ttl & UDP_FWD_TTL ? h.ttl & 0xff : UDP_DEFAULT_TTL;
	rx->flow = 0;   /* not passed on */
	/* Sent here directly by a process of this device: as from the wire
	 * (it may be forwarded once; forwarded_in does not count it, so
	 * tx_packets = rx_packets - forwarded_in still holds). */
	rx->forwarded = !(h.ttl & UDP_FWD_DIRECT);
	if (rx->forwarded)
		uroce_stat_add(u->counters, UROCE_STAT_FORWARDED_IN, 1);
}

/* Hand out pending packets into PKTS[0..MAX); returns how many. */
static unsigned int emit(struct udp_rxstate *st, struct uroce_rx *pkts, unsigned int max)
{
	unsigned int out = 0;

	while (st->pj < st->pn && out < max) {
		unsigned int j = st->pj;
		uint32_t len = st->msgs[j].msg_len, seg = st->gso[j] ? st->gso[j] : len;

		if (st->poff < st->start[j])
			st->poff = st->start[j];
		/* An empty datagram is one (truncated) packet: the parser counts it. */
		if (len == 0 && !st->tmpl[j].forwarded) {
			pkts[out] = st->tmpl[j];
			pkts[out].buf = st->bufs[j];
			pkts[out++].len = 0;
		}
		while (st->poff < len && out < max) {
			uint32_t l = len - st->poff < seg ? len - st->poff : seg;
			struct uroce_rx *rx = &pkts[out++];

			*rx = st->tmpl[j];
			rx->buf = st->bufs[j] + st->poff;
			rx->len = l;
			/* A GSO sender numbers its segments' IPv4 IDs from 0. */
			rx->ip_id = (uint16_t)((st->poff - st->start[j]) / seg);
			st->poff += l;
		}
		if (st->poff >= len) {
			st->pj++;
			st->poff = 0;
		}
	}
	return out;
}

/* The socket of epoll index IDX and the address it is bound to. */
static int idx_socket(struct udp_xport *u, uint64_t idx, const struct udp_sock **rs)
{
	*rs = NULL;
	if (idx == UDP_FWD_IDX)
		return u->fwd_fd;
	if (idx >= UDP_CONN_BASE && idx - UDP_CONN_BASE < UDP_MAX_CONN)
		*rs = &u->conns[idx - UDP_CONN_BASE];
	else if (idx >= UDP_MCAST_BASE && idx - UDP_MCAST_BASE < UDP_MAX_MCAST)
		*rs = &u->mcast[idx - UDP_MCAST_BASE];
	else if (idx < (uint64_t)u->n_rx)
		*rs = &u->rx_addr[idx];
	return *rs ? (*rs)->fd : -1;
}

/* Read up to K datagrams from FD into the state's buffers FIRST.. (not
 * holding packets handed out by this call); the count. */
static int read_socket(struct udp_xport *u, int fd, const struct udp_sock *rs,
		       unsigned int first, unsigned int k)
{
	struct udp_rxstate *st = u->rx;
	int n;

	for (unsigned int i = first; i < first + k; i++) {
		st->iov[i] = (struct iovec){ st->bufs[i], st->buf_size };
		memset(&st->msgs[i].msg_hdr, 0, sizeof(st->msgs[i].msg_hdr));
		st->msgs[i].msg_hdr.msg_iov = &st->iov[i];
		st->msgs[i].msg_hdr.msg_iovlen = 1;
		st->msgs[i].msg_hdr.msg_name = &st->from[i];
		st->msgs[i].msg_hdr.msg_namelen = sizeof(st->from[i]);
		st->msgs[i].msg_hdr.msg_control = st->ctl[i].buf;
		st->msgs[i].msg_hdr.msg_controllen = sizeof(st->ctl[i].buf);
	}
	n = recvmmsg(fd, st->msgs + first, k, MSG_DONTWAIT, NULL);
	for (unsigned int j = first; n > 0 && j < first + (unsigned int)n; j++) {
		struct uroce_rx *rx = &st->tmpl[j];

		memset(rx, 0, sizeof(*rx));
		if (!rs) {
			fwd_to_rx(u, st, j);
			continue;
		}
		if (st->msgs[j].msg_hdr.msg_flags & MSG_TRUNC)
			uroce_stat_add(u->counters, UROCE_STAT_RX_TRUNCATED, 1);
		sockaddr_to_rx(&st->from[j], rx);
		st->gso[j] = cmsgs_to_rx(&st->msgs[j].msg_hdr, rx);
		st->start[j] = 0;
		rx->family = rs->family;
		memcpy(rx->dst_ip, rs->ip, 16);
		rx->dst_port = UROCE_XPORT_ROCE_PORT;
	}
	return n;
}

/* After a direct read of the hot socket that got N (SINGLE: asked for
 * one): how the next ones ask (HOT_CALLS above). */
static void hot_learn(struct udp_rxstate *st, bool single, int n)
{
	if (!single && !st->hot_found && n > 0)
		st->hot_single = n == 1;
	else if (st->hot_single_hit && n > 0)
		st->hot_single = false;
	st->hot_single_hit = single && n > 0;
	st->hot_found = n > 0;
}

int udp_recv(struct uroce_xport *x, struct uroce_rx *pkts, unsigned int max, unsigned int flags)
{
	struct udp_xport *u = to_udp(x);
	struct udp_rxstate *st = u->rx;
	unsigned int out = 0, used = 0;
	bool polled = false, direct = false, single = false;

	/* What the last call left: its buffers are not refilled in this one. */
	if (st->pj < st->pn)
		return (int)emit(st, pkts, max);
	pthread_mutex_lock(&u->conn_lock);
	while (out < max && used < RX_MSGS) {
		const struct udp_sock *rs;
		unsigned int k = max - out < RX_MSGS - used ? max - out : RX_MSGS - used;
		int fd, n;

		if (st->evi >= st->nev) {
			if (polled)
				break;
			polled = true;
			st->evi = 0;
			if (st->hot && (flags & UROCE_RX_SPINNING) && ++st->since_epoll < HOT_CALLS) {
				st->evs[0].data.u64 = st->hot_idx;
				st->nev = 1;
				direct = true;
				single = !st->hot_found && st->hot_single;
			} else {
				st->since_epoll = 0;
				st->nev = epoll_wait(x->fd, st->evs, RX_EVENTS, 0);
				if (st->nev <= 0) {
					st->nev = 0;
					break;
				}
			}
		}
		fd = idx_socket(u, st->evs[st->evi].data.u64, &rs);
		n = fd > 0 ? read_socket(u, fd, rs, used, single ? 1 : k) : 0;
		if (direct)
			hot_learn(st, single, n);
		if (n > 0) {
			st->hot_idx = st->evs[st->evi].data.u64;
			st->hot = true;
		}
		/* Empty (or an ICMP error on a connected socket), or drained:
		 * epoll reports the socket again when more arrives. */
		if (n < (int)k)
			st->evi++;
		if (n <= 0)
			continue;
		st->pj = used;
		st->pn = used + (unsigned int)n;
		st->poff = 0;
		used += (unsigned int)n;
		out += emit(st, pkts + out, max - out);
		if (st->pj < st->pn || single)
			break;
	}
	pthread_mutex_unlock(&u->conn_lock);
	return (int)out;
}

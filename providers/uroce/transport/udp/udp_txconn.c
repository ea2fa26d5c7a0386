// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Connected send sockets: an IPv4 path's packets leave through a socket
 * connected to its destination, so that the kernel keeps the route.
 *
 * Why: a datagram sent with a destination address (an unconnected socket,
 * or any IP-level control message, which the kernel takes as the same)
 * looks its route up on every send.  On lo that lookup is on the path of
 * every one-way trip: a UDP ping-pong of two GSO segments took 4.32-4.36
 * us one way unconnected and 3.90-3.97 connected, and ib_send_lat
 * 3.94-4.06 against 3.55-3.70 (docs/performance.md, "Connected sends").
 * The traffic class and TTL become the socket's options.
 *
 * The price is the IPv4 ID, which the ICRC covers (IBTA A17.4.5.1): an
 * unconnected socket writes 0 on a DF datagram, a connected one counts
 * from a random start that no socket option tells.  So each connected
 * socket learns it: it sends one empty datagram to a socket of ours on
 * this host (never to the peer) with software transmit timestamps on,
 * and the kernel loops that datagram, headers and all, back to its error
 * queue.  From its ID on, every datagram the socket sends takes the next
 * ID (a GSO datagram one, its segments that one plus their index), which
 * udp_send writes into each packet's ICRC.  A send that fails may or may
 * not have taken an ID: the socket learns again before its next send.
 * Where the looped datagram carries no headers (net.core.tstamp_allow_data
 * 0 for an unprivileged process) or anything else fails, the path keeps
 * the unconnected socket.  UROCE_TX_CONNECT=0 switches it off.
 *
 * IPv6 keeps its unconnected sockets: it has no ID, and the route lookup
 * there was not measured.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>

#include "transport/udp/udp.h"
#include "knob/knob.h"
#include "wire/wire.h"

/* Connected sockets per transport: a direct-mapped table of paths.  A path
 * whose slot another holds sends unconnected. */
#define TXCONN_SLOTS 64
/* How long the looped probe may take to reach the error queue. */
#define PROBE_WAIT_MS 20

enum txconn_state { TXCONN_LEARN, TXCONN_READY, TXCONN_BROKEN };

struct udp_txconn {
	pthread_mutex_t lock;        /* held from the ID's use to the send's end */
	enum txconn_state state;
	int fd;
	uint16_t next_id;            /* the ID of the socket's next datagram */
	struct uroce_path path;      /* what it is connected for (family 0: free slot) */
};

int udp_txconn_init(struct udp_xport *u)
{
	u->txconn_sink = -1;
	if (!uroce_knob_on(UROCE_KNOB_TX_CONNECT))
		return 0;
	/* The probes go to a socket of ours alone (no other program's ever
	 * gets one), off the QPs' source ports; what reaches it is read and
	 * dropped after each probe, and its buffer is the smallest.  Without
	 * it nothing can learn: every path sends unconnected. */
	u->txconn_sink = udp_sink_socket(&u->txconn_sink_port);
	if (u->txconn_sink < 0)
		return 0;
	setsockopt(u->txconn_sink, SOL_SOCKET, SO_RCVBUF, &(int){ 1 }, sizeof(int));
	u->txconn = calloc(TXCONN_SLOTS, sizeof(*u->txconn));
	if (!u->txconn)
		return -ENOMEM;
	for (int i = 0; i < TXCONN_SLOTS; i++) {
		pthread_mutex_init(&u->txconn[i].lock, NULL);
		u->txconn[i].fd = -1;
	}
	return 0;
}

void udp_txconn_fini(struct udp_xport *u)
{
	if (u->txconn_sink >= 0)
		close(u->txconn_sink);
	u->txconn_sink = -1;
	if (!u->txconn)
		return;
	for (int i = 0; i < TXCONN_SLOTS; i++) {
		if (u->txconn[i].fd >= 0)
			close(u->txconn[i].fd);
		pthread_mutex_destroy(&u->txconn[i].lock);
	}
	free(u->txconn);
	u->txconn = NULL;
}

static unsigned int slot_of(const struct uroce_path *p)
{
	uint32_t h = roce_v4_endpoint_hash(p->dst, p->sport);

	return (h ^ p->tclass ^ (uint32_t)p->hop_limit << 8) % TXCONN_SLOTS;
}

/* Unicast IPv4 only (multicast and broadcast keep the shared sockets). */
static bool connectable(const struct uroce_path *p)
{
	uint8_t first = p->dst[12];

	return p->family == AF_INET && first < 224 && first != 0 &&
	       memcmp(p->dst + 12, "\xff\xff\xff\xff", 4);
}

static void drain_sink(struct udp_xport *u)
{
	char b[64];

	while (recv(u->txconn_sink, b, sizeof(b), MSG_DONTWAIT) >= 0)
		;
}

/* The IPv4 ID of the datagram the kernel looped back to FD's error queue
 * (waiting up to WAIT_MS for it): from the frame's start, an Ethernet
 * header then the IP header.  -1: none, -2: one without headers. */
static int looped_id(int fd, int wait_ms)
{
	uint8_t data[128];
	char ctl[512];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct pollfd pfd = { .fd = fd, .events = 0 };
	ssize_t n;

	n = recvmsg(fd, &h, MSG_ERRQUEUE | MSG_DONTWAIT);
	if (n < 0 && errno == EAGAIN && wait_ms && poll(&pfd, 1, wait_ms) > 0)
		n = recvmsg(fd, &h, MSG_ERRQUEUE | MSG_DONTWAIT);
	if (n < 0)
		return -1;
	if (n < 14 + 20 || data[12] != 0x08 || data[13] != 0x00 || data[14] >> 4 != 4)
		return -2;
	return data[14 + 4] << 8 | data[14 + 5];
}

/* Learn C's next ID (the comment at the top); false: it cannot. */
static bool learn(struct udp_xport *u, struct udp_txconn *c)
{
	int on = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE, off = 0;
	int id = -1;
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(u->txconn_sink_port) };

	memcpy(&to.sin_addr, c->path.src + 12, 4);
	/* What an earlier probe left (a late timestamp) goes first. */
	while (looped_id(c->fd, 0) != -1)
		;
	if (!setsockopt(c->fd, SOL_SOCKET, SO_TIMESTAMPING, &on, sizeof(on)) &&
	    sendto(c->fd, "", 0, 0, (struct sockaddr *)&to, sizeof(to)) == 0)
		id = looped_id(c->fd, PROBE_WAIT_MS);
	setsockopt(c->fd, SOL_SOCKET, SO_TIMESTAMPING, &off, sizeof(off));
	drain_sink(u);
	if (id < 0)
		return false;
	c->next_id = (uint16_t)(id + 1);
	return true;
}

/* A socket bound as the path's shared one, its IP fields set, connected. */
static int open_connected(struct udp_xport *u, const struct uroce_path *p)
{
	struct sockaddr_storage to;
	socklen_t len = uroce_xport_sockaddr(p->family, p->dst, p->dport, u->ifindex, &to);
	int fd = udp_bound_socket(p->family, p->src, p->sport, u->ifindex), tos = p->tclass;
	int ttl = p->hop_limit;

	if (fd < 0)
		return fd;
	if ((tos && setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos))) ||
	    (ttl && setsockopt(fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl))) ||
	    connect(fd, (struct sockaddr *)&to, len)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

struct udp_txconn *udp_txconn_lock(struct udp_xport *u, const struct uroce_path *p)
{
	struct udp_txconn *c;

	if (!u->txconn || !connectable(p))
		return NULL;
	c = &u->txconn[slot_of(p)];
	pthread_mutex_lock(&c->lock);
	if (c->path.family && !uroce_path_same(&c->path, p)) {
		pthread_mutex_unlock(&c->lock);
		return NULL;
	}
	if (!c->path.family) {
		c->path = *p;
		c->fd = open_connected(u, p);
		c->state = c->fd >= 0 ? TXCONN_LEARN : TXCONN_BROKEN;
	}
	if (c->state == TXCONN_LEARN)
		c->state = learn(u, c) ? TXCONN_READY : TXCONN_BROKEN;
	if (c->state == TXCONN_READY)
		return c;
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int udp_txconn_fd(const struct udp_txconn *c)
{
	return c->fd;
}

uint16_t udp_txconn_next_id(const struct udp_txconn *c)
{
	return c->next_id;
}

void udp_txconn_unlock(struct udp_txconn *c, unsigned int datagrams, bool failed)
{
	c->next_id = (uint16_t)(c->next_id + datagrams);
	if (failed)
		c->state = TXCONN_LEARN;
	pthread_mutex_unlock(&c->lock);
}

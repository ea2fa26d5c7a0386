// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Source ports: the sending socket of each (source address, source port),
 * made at first use and found by port, and the port a QP sends from when
 * another program holds the one predicted for it (claim_port,
 * transport.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <uroce/stats.h>

#include "transport/udp/udp.h"

/* The tx socket of (FAMILY, IP, PORT), or -1 (tx_lock held). */
static int tx_lookup(struct udp_xport *u, int family, const uint8_t *ip, uint16_t port)
{
	for (int i = u->tx_by_port[port] - 1; i >= 0; i = u->tx[i].next - 1)
		if (u->tx[i].family == family && !memcmp(u->tx[i].ip, ip, 16))
			return i;
	return -1;
}

/* Enter FD, bound to (FAMILY, IP, PORT), in the table (tx_lock held):
 * DF, and (unconnected) IPv4 ID 0, what the ICRC was computed for.
 * EXCLUSIVE: a port taken by a QP whose own was held (udp_claim_port).
 * FD or -errno (then FD is closed). */
static int tx_add(struct udp_xport *u, int fd, int family, const uint8_t *ip, uint16_t port,
		  bool exclusive)
{
	/* Every RC/UC QP sends from a port of its own (A17.3.1 entropy, and
	 * the peer steers by it): the table grows with the QPs.  A fixed 64
	 * made QP 65 and later fail every send (issue 14: -q 128). */
	if (u->n_tx == u->cap_tx) {
		int cap = u->cap_tx ? 2 * u->cap_tx : 64;
		struct udp_sock *t = realloc(u->tx, cap * sizeof(*t));

		if (!t) {
			close(fd);
			return -ENOMEM;
		}
		u->tx = t;
		u->cap_tx = cap;
	}
	udp_tx_options(fd, family);
	u->tx[u->n_tx] = (struct udp_sock){ .fd = fd, .family = family, .port = port,
					    .next = u->tx_by_port[port], .exclusive = exclusive };
	memcpy(u->tx[u->n_tx].ip, ip, 16);
	u->tx_by_port[port] = ++u->n_tx;
	return fd;
}

static bool tx_table(struct udp_xport *u)
{
	/* Looked up by port (each QP has its own): every send looks, and a
	 * scan of the table cost 128 compares a packet at -q 128. */
	return u->tx_by_port || (u->tx_by_port = calloc(65536, sizeof(*u->tx_by_port)));
}

int udp_tx_socket(struct udp_xport *u, int family, const uint8_t *ip, uint16_t port)
{
	int fd, i;

	pthread_mutex_lock(&u->tx_lock);
	if (!tx_table(u))
		fd = -ENOMEM;
	else if ((i = tx_lookup(u, family, ip, port)) >= 0)
		fd = u->tx[i].fd;
	else if ((fd = udp_rx_bound_socket(family, ip, port, u->ifindex, 0)) >= 0)
		fd = tx_add(u, fd, family, ip, port, false);
	pthread_mutex_unlock(&u->tx_lock);
	return fd;
}

/*
 * The source port a QP sends from on IP: WANT (uroce_xport_sport), made
 * ready now, unless another program holds WANT on IP (a resolver's
 * ephemeral port: the kernel's range overlaps 0xC000-0xFFFF).  Then a port of this
 * process alone, below 0xC000 where no QP's predicted port lies, bound
 * without SO_REUSEPORT so that nothing joins it later.  The peer learns it
 * from the first packet (a uroce peer connects its socket again:
 * conn_resteers; rxe does not look).  The port, or -errno.
 */
int udp_claim_port(struct uroce_xport *x, int family, const uint8_t *ip, uint16_t want)
{
	struct udp_xport *u = to_udp(x);
	int fd = udp_tx_socket(u, family, ip, want), i, ret;
	uint16_t port;

	if (fd != -EADDRINUSE) {
		pthread_mutex_lock(&u->tx_lock);
		i = fd >= 0 ? tx_lookup(u, family, ip, want) : -1;
		/* Not another QP's exclusive port (taken when the kernel chose
		 * it, after 64 tries below 0xC000). */
		ret = fd < 0 ? fd : i >= 0 && u->tx[i].exclusive ? -EADDRINUSE : want;
		pthread_mutex_unlock(&u->tx_lock);
		if (ret != -EADDRINUSE)
			return ret;
	}
	fd = udp_rx_socket(family, 0, 0);
	if (fd < 0)
		return fd;
	ret = udp_bind_exclusive(fd, family, ip, u->ifindex, (uint32_t)want * 2654435761u);
	port = ret ? 0 : udp_bound_port(fd);
	if (!port) {
		close(fd);
		return ret ? ret : -EADDRNOTAVAIL;
	}
	pthread_mutex_lock(&u->tx_lock);
	ret = tx_add(u, fd, family, ip, port, true);
	pthread_mutex_unlock(&u->tx_lock);
	if (ret < 0)
		return ret;
	uroce_stat_add(u->counters, UROCE_STAT_SPORT_TAKEN, 1);
	if (!__atomic_exchange_n(&u->told_port_taken, true, __ATOMIC_RELAXED))
		fprintf(stderr, "uroce: %s: UDP port %u is held by another program: that QP sends "
			"from port %u (sport_taken counts them)\n", u->devname, want, port);
	return port;
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The udp transport: RoCEv2 packets are UDP datagrams to port 4791 (IBTA
 * A17.2); the kernel writes the IP and UDP headers.
 *
 * Several processes share a device and its addresses.  Each binds
 * ADDR:4791 with SO_REUSEPORT, so the kernel hands a flow to any one of
 * them; a packet whose destination QP lives in another process is passed
 * on to that process's forwarding socket (UDP on the device's first
 * address, an ephemeral port published in the QPN table).  After a
 * connection's first packet its owner opens a socket connected to the
 * peer, which the kernel prefers: forwarding is the exception.  The kernel
 * lets only sockets of one effective uid share ADDR:4791, so the processes
 * on a device's addresses are one user's at a time: another user's
 * engine fails with EADDRINUSE and says so (docs/security.md).
 *
 * Packets leave through unconnected sockets bound to (source GID address,
 * the QP's UDP source port), with IP_PMTUDISC_DO: the kernel then writes
 * IPv4 DF and ID 0, the values the ICRC was computed for (see docs/wire.md).
 *
 * This file opens and closes the transport (the address sockets, the
 * forwarding socket, the epoll set) and holds its ops table; udp.h says
 * which file does the rest.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/udp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <uroce/stats.h>

#include "transport/udp/udp.h"
#include "knob/knob.h"
#include "wire/wire.h"

extern const struct uroce_xport_ops uroce_udp_ops;

/*
 * ADDR:4791 is bound by a socket we may not join.  SO_REUSEPORT groups
 * only sockets of one effective uid, so the processes of two users cannot
 * share a device's address (docs/security.md); any other owner (rdma_rxe's
 * *:4791, a program's socket) shares it with no one (docs/transport.md,
 * "Port 4791").  Say which, once, in one line.
 */
static int addr_in_use(struct udp_xport *u, int family, const uint8_t *ip16)
{
	char addr[INET6_ADDRSTRLEN] = "?";
	struct uroce_port_owner o;
	int found = uroce_port_owner(family, ip16, UROCE_XPORT_ROCE_PORT, 0, &o) > 0;

	inet_ntop(family, family == AF_INET ? ip16 + 12 : ip16, addr, sizeof(addr));
	if (found && o.uid != (long)geteuid() && (o.uroce || o.kind == UROCE_OWNER_UID))
		fprintf(stderr, "uroce: %s: %s port %d is in use by processes of uid %ld; "
			"processes of different users cannot share a device address "
			"(see uroce's docs/security.md)\n", u->devname, addr, UROCE_XPORT_ROCE_PORT, o.uid);
	else if (found)
		uroce_port_owner_say(u->devname, ip16, UROCE_XPORT_ROCE_PORT, &o);
	else
		fprintf(stderr, "uroce: %s: %s port %d is in use by a socket uroce cannot "
			"share (another user's, or not SO_REUSEPORT)\n", u->devname, addr,
			UROCE_XPORT_ROCE_PORT);
	return -EADDRINUSE;
}

/*
 * The kernel gives a datagram for ADDR:4791 to one socket of the address's
 * SO_REUSEPORT group, and with connected sockets in the group (steering)
 * always to the same one: a process's shared socket takes every CM MAD
 * of the other processes of its address, and one that comes between the
 * last read and the close is lost.  Connected to this process's own
 * forwarding port, which sends to no 4791, the socket matches no sender
 * from then on, and the kernel picks another member (engine_put retires,
 * drains, then closes; at exit with the device open the engine retires
 * and passes the other processes' packets on, docs/engine.md).
 */
static void udp_retire(struct uroce_xport *x)
{
	struct udp_xport *u = to_udp(x);

	for (int i = 0; i < u->n_rx; i++) {
		struct sockaddr_storage self;
		socklen_t sl = uroce_xport_sockaddr(u->rx_addr[i].family, u->rx_addr[i].ip,
						    x->fwd_port, u->ifindex, &self);

		/* (One that cannot be connected takes datagrams to its close,
		 * as before.) */
		connect(u->rx_addr[i].fd, (struct sockaddr *)&self, sl);
	}
}

static void udp_close(struct uroce_xport *x)
{
	struct udp_xport *u = to_udp(x);

	for (int i = 0; i < u->n_rx; i++)
		close(u->rx_addr[i].fd);
	for (uint32_t q = 0; u->conns && q < UDP_MAX_CONN; q++)
		if (u->conns[q].fd > 0)
			close(u->conns[q].fd);
	for (int g = 0; g < UDP_MAX_MCAST; g++)
		if (u->mcast[g].fd > 0)
			close(u->mcast[g].fd);
	if (u->fwd_fd >= 0)
		close(u->fwd_fd);
	for (int i = 0; i < u->n_tx; i++)
		close(u->tx[i].fd);
	free(u->tx);
	free(u->tx_by_port);
	if (x->fd >= 0)
		close(x->fd);
	udp_rx_fini(u);
	udp_txconn_fini(u);
	pthread_mutex_destroy(&u->conn_lock);
	pthread_mutex_destroy(&u->tx_lock);
	free(u->conns);
	free(u);
}

int udp_epoll_add(struct udp_xport *u, int fd, uint64_t idx)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = idx };

	return epoll_ctl(u->x.fd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int udp_open(const struct uroce_xport_conf *conf, struct uroce_xport **out)
{
	struct udp_xport *u = calloc(1, sizeof(*u));
	struct uroce_netdev nd;
	int ret;

	if (!u)
		return -ENOMEM;
	u->x.ops = &uroce_udp_ops;
	u->x.fd = u->fwd_fd = -1;
	snprintf(u->devname, sizeof(u->devname), "%s", conf->devname);
	snprintf(u->netdev, sizeof(u->netdev), "%s", conf->netdev);
	u->counters = conf->counters;
	u->gso = uroce_knob_on(UROCE_KNOB_GSO);
	u->gro = uroce_knob_on(UROCE_KNOB_GRO);
	u->conn_ip_fields = conf->rx_ip_fields_always;
	pthread_mutex_init(&u->conn_lock, NULL);
	pthread_mutex_init(&u->tx_lock, NULL);
	u->conns = calloc(UDP_MAX_CONN, sizeof(*u->conns));
	u->x.fd = epoll_create1(EPOLL_CLOEXEC);
	u->txconn_sink = -1;
	ret = !u->conns ? -ENOMEM : u->x.fd < 0 ? -errno : udp_rx_init(u);
	if (!ret)
		ret = udp_txconn_init(u);
	if (ret)
		goto fail;
	ret = uroce_netdev_query(u->netdev, &nd);
	if (ret)
		goto fail;
	u->ifindex = nd.ifindex;
	for (int i = 0; i < nd.n_addrs && u->n_rx < UROCE_GID_TBL_LEN; i++) {
		int family = roce_gid_family(nd.addrs[i]);
		int fd = udp_rx_bound_socket(family, nd.addrs[i], UROCE_XPORT_ROCE_PORT, nd.ifindex,
				      RX_IP_FIELDS | (u->gro ? RX_GRO : 0));

		if (fd == -EADDRINUSE) {
			ret = addr_in_use(u, family, nd.addrs[i]);
			goto fail;
		}
		if (fd < 0)
			continue; /* e.g. a tentative IPv6 address: not usable yet */
		u->rx_addr[u->n_rx].fd = fd;
		u->rx_addr[u->n_rx].family = family;
		memcpy(u->rx_addr[u->n_rx].ip, nd.addrs[i], 16);
		udp_epoll_add(u, fd, u->n_rx++);
	}
	ret = -EADDRNOTAVAIL;
	if (u->n_rx == 0)
		goto fail;

	/* The forwarding socket: the first address. */
	u->fwd_fd = udp_fwd_socket(u->rx_addr[0].family, u->rx_addr[0].ip, nd.ifindex);
	ret = u->fwd_fd;
	if (ret < 0)
		goto fail;
	ret = -EADDRNOTAVAIL;
	u->x.fwd_port = udp_bound_port(u->fwd_fd);
	if (!u->x.fwd_port)
		goto fail;
	udp_epoll_add(u, u->fwd_fd, UDP_FWD_IDX);
	u->x.caps = (struct uroce_xport_caps){
		.max_burst = UDP_BURST,
		.max_payload = nd.mtu - (u->rx_addr[0].family == AF_INET ? 20 : 40) - 8,
		.tx_segmentation = u->gso,
		.rx_coalescing = u->gro,
	};
	*out = &u->x;
	return 0;
fail:
	udp_close(&u->x);
	return ret;
}

const struct uroce_xport_ops uroce_udp_ops = {
	.name = "udp",
	.open = udp_open,
	.close = udp_close,
	.send = udp_send,
	.recv = udp_recv,
	.forward = udp_forward,
	.steer = udp_steer,
	.claim_port = udp_claim_port,
	.unsteer = udp_unsteer,
	.send_local = udp_send_local,
	.mcast_join = udp_mcast_join,
	.mcast_leave = udp_mcast_leave,
	.retire = udp_retire,
};

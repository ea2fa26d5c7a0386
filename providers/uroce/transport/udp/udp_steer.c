// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Steering (ops->steer and unsteer): a connected QP's own receiving
 * socket, bound to (local address, 4791) and connected to its peer, which
 * the kernel prefers to the SO_REUSEPORT group, so that the connection's
 * packets reach the owning process without being forwarded.
 */
#include <errno.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "transport/udp/udp.h"

static void unsteer_locked(struct udp_xport *u, uint32_t qpn)
{
	int fd = u->conns[qpn].fd;

	if (fd <= 0)
		return;
	u->conns[qpn].fd = 0;
	epoll_ctl(u->x.fd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
}

void udp_unsteer(struct uroce_xport *x, uint32_t qpn)
{
	struct udp_xport *u = to_udp(x);

	if (qpn >= UDP_MAX_CONN)
		return;
	pthread_mutex_lock(&u->conn_lock);
	unsteer_locked(u, qpn);
	pthread_mutex_unlock(&u->conn_lock);
}

/* A socket bound to (LOCAL, 4791) and connected to (PEER, PORT): the kernel
 * prefers it to the SO_REUSEPORT group, so the connection's packets reach
 * this process directly. */
int udp_steer(struct uroce_xport *x, uint32_t qpn, int family, const uint8_t *local,
	      const uint8_t *peer, uint16_t port)
{
	struct udp_xport *u = to_udp(x);
	struct sockaddr_storage to;
	socklen_t sl = uroce_xport_sockaddr(family, peer, port, u->ifindex, &to);
	int fd;

	if (qpn >= UDP_MAX_CONN)
		return -EINVAL;
	pthread_mutex_lock(&u->conn_lock);
	unsteer_locked(u, qpn);
	fd = udp_rx_bound_socket(family, local, UROCE_XPORT_ROCE_PORT, u->ifindex,
			  (u->conn_ip_fields ? RX_IP_FIELDS : 0) | (u->gro ? RX_GRO : 0));
	if (fd >= 0 && connect(fd, (struct sockaddr *)&to, sl)) {
		int err = -errno;

		close(fd);
		fd = err;
	}
	if (fd >= 0) {
		u->conns[qpn].family = family;
		memcpy(u->conns[qpn].ip, local, 16);
		u->conns[qpn].fd = fd;
		udp_epoll_add(u, fd, UDP_CONN_BASE + qpn);
	}
	pthread_mutex_unlock(&u->conn_lock);
	return fd < 0 ? fd : 0;
}

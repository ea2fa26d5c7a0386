// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Multicast groups (IBTA A17.4.x, docs/verbs_ext.md): a receiving socket
 * per group, bound to GROUP:4791 and a member of the group on the
 * device's netdev (ops->mcast_join and mcast_leave).
 */
#include <errno.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "transport/udp/udp.h"

/*
 * RoCEv2 multicast (IBTA A17.4.x: the MGID is an IP multicast address): a
 * socket of its own per group, bound to GROUP:4791 so that it receives the
 * group's datagrams and nothing else, and a member of the group on the
 * device's netdev.  SO_REUSEADDR: every process on the host that joins
 * gets its own copy (the kernel delivers a multicast datagram to every
 * socket bound to its address and port).  Senders need nothing special:
 * their sockets are bound to a unicast source address, which picks the
 * outgoing device without a route for 224.0.0.0/4.
 */
static int mcast_socket(struct udp_xport *u, int family, const uint8_t *group)
{
	struct sockaddr_storage ss;
	socklen_t sl = uroce_xport_sockaddr(family, group, UROCE_XPORT_ROCE_PORT, u->ifindex, &ss);
	int fd = udp_rx_socket(family, SO_REUSEADDR, RX_IP_FIELDS), ret;

	if (fd < 0)
		return fd;
	if (family == AF_INET6) {
		struct ipv6_mreq m = { .ipv6mr_interface = (unsigned int)u->ifindex };

		/* Interface- and link-local scopes (ff01::, ff02::) need one. */
		((struct sockaddr_in6 *)&ss)->sin6_scope_id = (uint32_t)u->ifindex;
		memcpy(&m.ipv6mr_multiaddr, group, 16);
		ret = bind(fd, (struct sockaddr *)&ss, sl) ||
		      setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &m, sizeof(m));
	} else {
		struct ip_mreqn m = { .imr_ifindex = u->ifindex };

		memcpy(&m.imr_multiaddr, group + 12, 4);
		ret = bind(fd, (struct sockaddr *)&ss, sl) ||
		      setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m));
	}
	if (ret) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

int udp_mcast_join(struct uroce_xport *x, int family, const uint8_t *group)
{
	struct udp_xport *u = to_udp(x);
	int g, fd = -ENOSPC;

	pthread_mutex_lock(&u->conn_lock);
	for (g = 0; g < UDP_MAX_MCAST && u->mcast[g].fd > 0; g++)
		;
	if (g < UDP_MAX_MCAST)
		fd = mcast_socket(u, family, group);
	if (fd >= 0) {
		u->mcast[g].fd = fd;
		u->mcast[g].family = family;
		memcpy(u->mcast[g].ip, group, 16);
		udp_epoll_add(u, fd, UDP_MCAST_BASE + (uint64_t)g);
	}
	pthread_mutex_unlock(&u->conn_lock);
	return fd < 0 ? fd : 0;
}

/* Closing the socket leaves the group. */
void udp_mcast_leave(struct uroce_xport *x, const uint8_t *group)
{
	struct udp_xport *u = to_udp(x);

	pthread_mutex_lock(&u->conn_lock);
	for (int g = 0; g < UDP_MAX_MCAST; g++)
		if (u->mcast[g].fd > 0 && !memcmp(u->mcast[g].ip, group, 16)) {
			epoll_ctl(u->x.fd, EPOLL_CTL_DEL, u->mcast[g].fd, NULL);
			close(u->mcast[g].fd);
			u->mcast[g].fd = 0;
			break;
		}
	pthread_mutex_unlock(&u->conn_lock);
}

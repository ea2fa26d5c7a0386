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
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/udp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <uroce/stats.h>

#include "udp.h"

#define SOCK_BUF (32 << 20)

extern const struct uroce_xport_ops uroce_udp_ops;


static void big_buffers(int fd)
{
	int sz = SOCK_BUF;

	/* Beyond net.core.rmem_max only with CAP_NET_ADMIN; else the max. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
}

static int gid_family(const uint8_t *gid)
{
	static const uint8_t v4_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(gid, v4_prefix, 12) ? AF_INET6 : AF_INET;
}

socklen_t uroce_udp_sockaddr(int family, const uint8_t *ip16, uint16_t port,
			     int ifindex, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		memcpy(&s->sin_addr, ip16 + 12, 4);
		return sizeof(*s);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	memcpy(&s6->sin6_addr, ip16, 16);
	if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr))
		s6->sin6_scope_id = ifindex;
	return sizeof(*s6);
}

/* A socket bound to (IP16, PORT); GRO: it takes coalesced datagrams. */
static int bound_socket(int family, const uint8_t *ip16, uint16_t port, int ifindex, bool gro)
{
	struct sockaddr_storage ss;
	socklen_t sl = uroce_udp_sockaddr(family, ip16, port, ifindex, &ss);
	int one = 1, fd;

	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	/* The receive path rebuilds the IP header for UD GRH areas: ask for
	 * the fields a UDP socket does not otherwise show. */
	if (family == AF_INET6) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_FLOWINFO, &one, sizeof(one));
	} else {
		setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one));
	}
	if (gro)
		setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one));
	big_buffers(fd);
	if (bind(fd, (struct sockaddr *)&ss, sl)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* The uid of a socket bound to IP16:PORT in this namespace (from
 * /proc/net/udp[6], which prints each 32-bit word as the host reads it);
 * -1 if none is found. */
static long bound_uid(int family, const uint8_t *ip16, uint16_t port)
{
	char want[64], line[512], local[64];
	const uint8_t *ip = family == AF_INET ? ip16 + 12 : ip16;
	int words = family == AF_INET ? 1 : 4, n = 0;
	unsigned long uid;
	long found = -1;
	FILE *f;

	for (int i = 0; i < words; i++) {
		uint32_t w;

		memcpy(&w, ip + 4 * i, 4);
		n += snprintf(want + n, sizeof(want) - n, "%08X", w);
	}
	snprintf(want + n, sizeof(want) - n, ":%04X", port);
	f = fopen(family == AF_INET ? "/proc/net/udp" : "/proc/net/udp6", "re");
	if (!f)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %63s %*s %*s %*s %*s %*s %lu", local, &uid) == 2 &&
		    !strcmp(local, want))
			found = (long)uid;
	fclose(f);
	return found;
}

/*
 * ADDR:4791 is bound by sockets we may not join: SO_REUSEPORT groups only
 * sockets of one effective uid, so the processes of two users cannot share
 * a device's address (docs/security.md).  Say so once, in one line.
 */
static int addr_in_use(struct udp_xport *u, int family, const uint8_t *ip16)
{
	char addr[INET6_ADDRSTRLEN] = "?";
	long uid = bound_uid(family, ip16, UROCE_XPORT_ROCE_PORT);

	inet_ntop(family, family == AF_INET ? ip16 + 12 : ip16, addr, sizeof(addr));
	if (uid >= 0 && uid != (long)geteuid())
		fprintf(stderr, "uroce: %s: %s port %d is in use by processes of uid %ld; "
			"processes of different users cannot share a device address "
			"(see uroce's docs/security.md)\n", u->devname, addr, UROCE_XPORT_ROCE_PORT, uid);
	else
		fprintf(stderr, "uroce: %s: %s port %d is in use by a socket uroce cannot "
			"share (another user's, or not SO_REUSEPORT)\n", u->devname, addr,
			UROCE_XPORT_ROCE_PORT);
	return -EADDRINUSE;
}

/* UROCE_GSO / UROCE_GRO: "0" switches the offload off (default on). */
static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return !v || !*v || *v != '0';
}

static void udp_close(struct uroce_xport *x)
{
	struct udp_xport *u = to_udp(x);

	for (int i = 0; i < u->n_rx; i++)
		close(u->rx_addr[i].fd);
	for (uint32_t q = 0; u->conns && q < UDP_MAX_CONN; q++)
		if (u->conns[q].fd > 0)
			close(u->conns[q].fd);
	if (u->fwd_fd >= 0)
		close(u->fwd_fd);
	for (int i = 0; i < u->n_tx; i++)
		close(u->tx[i].fd);
	if (x->fd >= 0)
		close(x->fd);
	udp_rx_fini(u);
	pthread_mutex_destroy(&u->conn_lock);
	pthread_mutex_destroy(&u->tx_lock);
	free(u->conns);
	free(u);
}

static int epoll_add(struct udp_xport *u, int fd, uint64_t idx)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = idx };

	return epoll_ctl(u->x.fd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int udp_open(const struct uroce_xport_conf *conf, struct uroce_xport **out)
{
	struct udp_xport *u = calloc(1, sizeof(*u));
	struct uroce_netdev nd;
	struct sockaddr_storage ss;
	socklen_t sl;
	int ret;

	if (!u)
		return -ENOMEM;
	u->x.ops = &uroce_udp_ops;
	u->x.fd = u->fwd_fd = -1;
	snprintf(u->devname, sizeof(u->devname), "%s", conf->devname);
	snprintf(u->netdev, sizeof(u->netdev), "%s", conf->netdev);
	u->counters = conf->counters;
	u->gso = env_on("UROCE_GSO");
	u->gro = env_on("UROCE_GRO");
	pthread_mutex_init(&u->conn_lock, NULL);
	pthread_mutex_init(&u->tx_lock, NULL);
	u->conns = calloc(UDP_MAX_CONN, sizeof(*u->conns));
	u->x.fd = epoll_create1(EPOLL_CLOEXEC);
	ret = !u->conns ? -ENOMEM : u->x.fd < 0 ? -errno : udp_rx_init(u);
	if (ret)
		goto fail;
	ret = uroce_netdev_query(u->netdev, &nd);
	if (ret)
		goto fail;
	u->ifindex = nd.ifindex;
	for (int i = 0; i < nd.n_addrs && u->n_rx < UROCE_GID_TBL_LEN; i++) {
		int family = gid_family(nd.addrs[i]);
		int fd = bound_socket(family, nd.addrs[i], UROCE_XPORT_ROCE_PORT, nd.ifindex, u->gro);

		if (fd == -EADDRINUSE) {
			ret = addr_in_use(u, family, nd.addrs[i]);
			goto fail;
		}
		if (fd < 0)
			continue; /* e.g. a tentative IPv6 address: not usable yet */
		u->rx_addr[u->n_rx].fd = fd;
		u->rx_addr[u->n_rx].family = family;
		memcpy(u->rx_addr[u->n_rx].ip, nd.addrs[i], 16);
		epoll_add(u, fd, u->n_rx++);
	}
	ret = -EADDRNOTAVAIL;
	if (u->n_rx == 0)
		goto fail;

	/* The forwarding socket: the first address, any port. */
	u->fwd_fd = bound_socket(u->rx_addr[0].family, u->rx_addr[0].ip, 0, nd.ifindex, false);
	ret = u->fwd_fd;
	if (ret < 0)
		goto fail;
	sl = sizeof(ss);
	ret = -errno;
	if (getsockname(u->fwd_fd, (struct sockaddr *)&ss, &sl))
		goto fail;
	u->x.fwd_port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
			      ((struct sockaddr_in6 *)&ss)->sin6_port);
	epoll_add(u, u->fwd_fd, UDP_FWD_IDX);
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

int udp_tx_socket(struct udp_xport *u, int family, const uint8_t *ip, uint16_t port)
{
	int fd = -1, pmtu;

	pthread_mutex_lock(&u->tx_lock);
	for (int i = 0; i < u->n_tx; i++)
		if (u->tx[i].port == port && u->tx[i].family == family &&
		    !memcmp(u->tx[i].ip, ip, 16)) {
			fd = u->tx[i].fd;
			goto out;
		}
	if (u->n_tx == (int)(sizeof(u->tx) / sizeof(u->tx[0]))) {
		fd = -EMFILE;
		goto out;
	}
	fd = bound_socket(family, ip, port, u->ifindex, false);
	if (fd < 0)
		goto out;
	/* DF, and (unconnected) IPv4 ID 0: what the ICRC was computed for. */
	if (family == AF_INET) {
		pmtu = IP_PMTUDISC_DO;
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	} else {
		pmtu = IPV6_PMTUDISC_DO;
		setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	}
	u->tx[u->n_tx].family = family;
	u->tx[u->n_tx].port = port;
	memcpy(u->tx[u->n_tx].ip, ip, 16);
	u->tx[u->n_tx++].fd = fd;
out:
	pthread_mutex_unlock(&u->tx_lock);
	return fd;
}

static int udp_forward(struct uroce_xport *x, uint16_t port, const struct uroce_rx *rx)
{
	struct udp_xport *u = to_udp(x);
	struct udp_fwd_hdr h = {
		.family = rx->family, .src_port = rx->src_port, .dst_port = rx->dst_port,
		.tos = rx->tos, .ttl = UDP_FWD_TTL | rx->ttl,
	};
	struct iovec iov[2] = { { &h, sizeof(h) }, { rx->buf, rx->len } };
	struct sockaddr_storage to;
	struct msghdr msg = { .msg_name = &to, .msg_iov = iov, .msg_iovlen = 2 };

	if (!port)
		return -ENOENT;
	memcpy(h.src_ip, rx->src_ip, 16);
	memcpy(h.dst_ip, rx->dst_ip, 16);
	msg.msg_namelen = uroce_udp_sockaddr(u->rx_addr[0].family, u->rx_addr[0].ip, port,
					     u->ifindex, &to);
	return sendmsg(u->fwd_fd, &msg, MSG_DONTWAIT) < 0 ? -errno : 0;
}

static void unsteer_locked(struct udp_xport *u, uint32_t qpn)
{
	int fd = u->conns[qpn].fd;

	if (fd <= 0)
		return;
	u->conns[qpn].fd = 0;
	epoll_ctl(u->x.fd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
}

static void udp_unsteer(struct uroce_xport *x, uint32_t qpn)
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
static int udp_steer(struct uroce_xport *x, uint32_t qpn, int family, const uint8_t *local,
		     const uint8_t *peer, uint16_t port)
{
	struct udp_xport *u = to_udp(x);
	struct sockaddr_storage to;
	socklen_t sl = uroce_udp_sockaddr(family, peer, port, u->ifindex, &to);
	int fd;

	if (qpn >= UDP_MAX_CONN)
		return -EINVAL;
	pthread_mutex_lock(&u->conn_lock);
	unsteer_locked(u, qpn);
	fd = bound_socket(family, local, UROCE_XPORT_ROCE_PORT, u->ifindex, u->gro);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&to, sl)) {
		int err = -errno;

		close(fd);
		fd = err;
	}
	if (fd >= 0) {
		u->conns[qpn].family = family;
		memcpy(u->conns[qpn].ip, local, 16);
		u->conns[qpn].fd = fd;
		epoll_add(u, fd, UDP_CONN_BASE + qpn);
	}
	pthread_mutex_unlock(&u->conn_lock);
	return fd < 0 ? fd : 0;
}

const struct uroce_xport_ops uroce_udp_ops = {
	.name = "udp",
	.open = udp_open,
	.close = udp_close,
	.send = udp_send,
	.recv = udp_recv,
	.forward = udp_forward,
	.steer = udp_steer,
	.unsteer = udp_unsteer,
};

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
#include <sys/epoll.h>
#include <sys/socket.h>

#include "engine.h"

#define ROCE_PORT 4791
#define RX_BATCH 32
#define SOCK_BUF (32 << 20)

struct fwd_hdr {
	uint8_t family;
	uint8_t tos;
	uint16_t src_port;
	uint16_t dst_port;
	uint16_t ttl;                /* FWD_TTL | TTL; 0 from builds before it */
	uint8_t src_ip[16];
	uint8_t dst_ip[16];
};
#define FWD_TTL 0x100
#ifndef IPV6_FLOWINFO
#define IPV6_FLOWINFO 11   /* linux/in6.h: receive the flow label as a cmsg */
#endif

/* What a packet's IP header said where the socket cannot tell: the values
 * every uroce and rxe sender writes unless told otherwise. */
enum { DEFAULT_TTL = 64 };

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

static int bound_socket(int family, const uint8_t *ip16, uint16_t port, int ifindex)
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
static int addr_in_use(struct uroce_engine *eng, int family, const uint8_t *ip16)
{
	char addr[INET6_ADDRSTRLEN] = "?";
	long uid = bound_uid(family, ip16, ROCE_PORT);

	inet_ntop(family, family == AF_INET ? ip16 + 12 : ip16, addr, sizeof(addr));
	if (uid >= 0 && uid != (long)geteuid())
		fprintf(stderr, "uroce: %s: %s port %d is in use by processes of uid %ld; "
			"processes of different users cannot share a device address "
			"(see uroce's docs/security.md)\n", eng->devname, addr, ROCE_PORT, uid);
	else
		fprintf(stderr, "uroce: %s: %s port %d is in use by a socket uroce cannot "
			"share (another user's, or not SO_REUSEPORT)\n", eng->devname, addr, ROCE_PORT);
	return -EADDRINUSE;
}

int uroce_udp_open(struct uroce_engine *eng)
{
	struct uroce_netdev nd;
	struct sockaddr_storage ss;
	socklen_t sl;
	int ret;

	ret = uroce_netdev_query(eng->netdev, &nd);
	if (ret)
		return ret;
	for (int i = 0; i < nd.n_addrs && eng->n_rx < UROCE_GID_TBL_LEN; i++) {
		int family = gid_family(nd.addrs[i]);
		int fd = bound_socket(family, nd.addrs[i], ROCE_PORT, nd.ifindex);
		struct epoll_event ev = { .events = EPOLLIN };

		if (fd == -EADDRINUSE)
			return addr_in_use(eng, family, nd.addrs[i]);
		if (fd < 0)
			continue; /* e.g. a tentative IPv6 address: not usable yet */
		ev.data.u64 = eng->n_rx;
		eng->rx_addr[eng->n_rx].fd = fd;
		eng->rx_addr[eng->n_rx].family = family;
		memcpy(eng->rx_addr[eng->n_rx].ip, nd.addrs[i], 16);
		eng->rx_fds[eng->n_rx++] = fd;
		epoll_ctl(eng->epfd, EPOLL_CTL_ADD, fd, &ev);
	}
	if (eng->n_rx == 0)
		return -EADDRNOTAVAIL;

	/* The forwarding socket: the first address, any port. */
	eng->fwd_fd = bound_socket(eng->rx_addr[0].family, eng->rx_addr[0].ip, 0, nd.ifindex);
	if (eng->fwd_fd < 0)
		return eng->fwd_fd;
	sl = sizeof(ss);
	if (getsockname(eng->fwd_fd, (struct sockaddr *)&ss, &sl))
		return -errno;
	eng->fwd_port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
			      ((struct sockaddr_in6 *)&ss)->sin6_port);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = UROCE_GID_TBL_LEN };
	epoll_ctl(eng->epfd, EPOLL_CTL_ADD, eng->fwd_fd, &ev);
	return 0;
}

void uroce_udp_close(struct uroce_engine *eng)
{
	for (int i = 0; i < eng->n_rx; i++)
		close(eng->rx_fds[i]);
	eng->n_rx = 0;
	for (uint32_t q = 0; eng->conns && q < UROCE_MAX_QP; q++)
		if (eng->conns[q].fd > 0)
			close(eng->conns[q].fd);
	if (eng->fwd_fd >= 0)
		close(eng->fwd_fd);
	for (int i = 0; i < eng->n_tx; i++)
		close(eng->tx[i].fd);
	eng->n_tx = eng->cap_tx = 0;
	free(eng->tx);
	eng->tx = NULL;
}

/* The socket packets from (ip, port) leave through; created on first use. */
static int tx_socket(struct uroce_engine *eng, int family, const uint8_t *ip, uint16_t port)
{
	int fd = -1, pmtu;

	pthread_mutex_lock(&eng->tx_lock);
	for (int i = 0; i < eng->n_tx; i++)
		if (eng->tx[i].port == port && eng->tx[i].family == family &&
		    !memcmp(eng->tx[i].ip, ip, 16)) {
			fd = eng->tx[i].fd;
			goto out;
		}
	/* Every RC/UC QP sends from a port of its own (A17.3.1 entropy, and
	 * the peer steers by it): the table grows with the QPs.  A fixed 64
	 * made QP 65 and later fail every send (issue 14: -q 128). */
	if (eng->n_tx == eng->cap_tx) {
		int cap = eng->cap_tx ? 2 * eng->cap_tx : 64;
		struct uroce_txsock *t = realloc(eng->tx, cap * sizeof(*t));

		if (!t) {
			fd = -ENOMEM;
			goto out;
		}
		eng->tx = t;
		eng->cap_tx = cap;
	}
	fd = bound_socket(family, ip, port, if_nametoindex(eng->netdev));
	if (fd < 0)
		goto out;
	if (family == AF_INET) {
		pmtu = IP_PMTUDISC_DO;
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	} else {
		pmtu = IPV6_PMTUDISC_DO;
		setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	}
	eng->tx[eng->n_tx].family = family;
	eng->tx[eng->n_tx].port = port;
	memcpy(eng->tx[eng->n_tx].ip, ip, 16);
	eng->tx[eng->n_tx++].fd = fd;
out:
	pthread_mutex_unlock(&eng->tx_lock);
	return fd;
}

int uroce_udp_send(struct uroce_engine *eng, const struct uroce_av *av,
		   uint16_t sport, const struct iovec *iov, int iovcnt)
{
	int fd = tx_socket(eng, av->family, av->sgid.raw, sport);
	struct msghdr msg = {
		.msg_name = (void *)&av->dst,
		.msg_namelen = av->family == AF_INET ? sizeof(av->dst.in4) : sizeof(av->dst.in6),
		.msg_iov = (struct iovec *)iov,
		.msg_iovlen = iovcnt,
	};
	ssize_t n;

	if (fd < 0)
		return fd;
	n = sendmsg(fd, &msg, 0);
	return n < 0 ? -errno : 0;
}

int uroce_udp_forward(struct uroce_engine *eng, uint16_t port, const struct uroce_rx *rx)
{
	struct fwd_hdr h = {
		.family = rx->family, .src_port = rx->src_port, .dst_port = rx->dst_port,
		.tos = rx->tos, .ttl = FWD_TTL | rx->ttl,
	};
	struct iovec iov[2] = { { &h, sizeof(h) }, { rx->buf, rx->len } };
	struct sockaddr_storage to;
	struct msghdr msg = { .msg_name = &to, .msg_iov = iov, .msg_iovlen = 2 };

	if (!port)
		return -ENOENT;
	memcpy(h.src_ip, rx->src_ip, 16);
	memcpy(h.dst_ip, rx->dst_ip, 16);
	msg.msg_namelen = uroce_udp_sockaddr(eng->rx_addr[0].family, eng->rx_addr[0].ip, port,
					if_nametoindex(eng->netdev), &to);
	return sendmsg(eng->fwd_fd, &msg, MSG_DONTWAIT) < 0 ? -errno : 0;
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

/* TOS/traffic class, TTL/hop limit and flow label from the control
 * messages recvmsg() filled in (the options set in bound_socket()). */
static void cmsgs_to_rx(struct msghdr *mh, struct uroce_rx *rx)
{
	rx->tos = 0;
	rx->ttl = DEFAULT_TTL;
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
		}
	}
}

uint16_t uroce_udp_sport(uint32_t from_qpn, uint32_t to_qpn)
{
	uint32_t h = from_qpn * 0x9E3779B1u ^ to_qpn * 0x85EBCA6Bu;

	h ^= h >> 15;
	h *= 0x2C1B3C6Du;
	h ^= h >> 12;
	return 0xC000 | (h & 0x3fff); /* RoCEv2 source ports: 0xC000-0xFFFF (A17.3.1) */
}

int uroce_udp_connect(struct uroce_engine *eng, uint32_t qpn, int family,
		      const uint8_t *local, const uint8_t *peer, uint16_t port)
{
	struct sockaddr_storage to;
	int ifindex = if_nametoindex(eng->netdev);
	socklen_t sl = uroce_udp_sockaddr(family, peer, port, ifindex, &to);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = UROCE_CONN_BASE + qpn };
	int fd;

	if (qpn >= UROCE_MAX_QP)
		return -EINVAL;
	uroce_udp_disconnect(eng, qpn);
	fd = bound_socket(family, local, ROCE_PORT, ifindex);
	if (fd < 0)
		return fd;
	if (connect(fd, (struct sockaddr *)&to, sl)) {
		int err = -errno;

		close(fd);
		return err;
	}
	eng->conns[qpn].family = family;
	memcpy(eng->conns[qpn].ip, local, 16);
	eng->conns[qpn].fd = fd;
	epoll_ctl(eng->epfd, EPOLL_CTL_ADD, fd, &ev);
	return 0;
}

void uroce_udp_disconnect(struct uroce_engine *eng, uint32_t qpn)
{
	int fd;

	if (qpn >= UROCE_MAX_QP || eng->conns[qpn].fd <= 0)
		return;
	fd = eng->conns[qpn].fd;
	eng->conns[qpn].fd = 0;
	epoll_ctl(eng->epfd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
}

void uroce_udp_poll(struct uroce_engine *eng, uint64_t idx)
{
	static __thread uint8_t bufs[RX_BATCH][UROCE_MAX_PKT + sizeof(struct fwd_hdr)];
	static __thread uint8_t ctl[RX_BATCH][CMSG_SPACE(sizeof(int)) * 3];
	struct sockaddr_storage from[RX_BATCH];
	struct mmsghdr msgs[RX_BATCH];
	struct iovec iov[RX_BATCH];
	bool fwd = idx == UROCE_GID_TBL_LEN;
	const struct uroce_rxsock *rs = NULL;
	int fd = -1;

	if (fwd)
		fd = eng->fwd_fd;
	else if (idx >= UROCE_CONN_BASE && idx - UROCE_CONN_BASE < UROCE_MAX_QP)
		rs = &eng->conns[idx - UROCE_CONN_BASE];
	else if (idx < (uint64_t)eng->n_rx)
		rs = &eng->rx_addr[idx];
	else
		return;
	if (rs) {
		fd = rs->fd;
		if (fd <= 0)
			return;
	}

	for (int round = 0; round < 64; round++) {
		int n;

		for (int i = 0; i < RX_BATCH; i++) {
			iov[i].iov_base = bufs[i];
			iov[i].iov_len = sizeof(bufs[i]);
			memset(&msgs[i].msg_hdr, 0, sizeof(msgs[i].msg_hdr));
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
			msgs[i].msg_hdr.msg_name = &from[i];
			msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
			msgs[i].msg_hdr.msg_control = ctl[i];
			msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
		}
		n = recvmmsg(fd, msgs, RX_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			return; /* empty, or an ICMP error on a connected socket */
		for (int i = 0; i < n; i++) {
			struct uroce_rx rx = { .buf = bufs[i], .len = msgs[i].msg_len };

			if (fwd) {
				struct fwd_hdr h;

				if (rx.len < sizeof(h))
					continue;
				memcpy(&h, bufs[i], sizeof(h));
				rx.buf += sizeof(h);
				rx.len -= sizeof(h);
				rx.family = h.family;
				rx.src_port = h.src_port;
				rx.dst_port = h.dst_port;
				memcpy(rx.src_ip, h.src_ip, 16);
				memcpy(rx.dst_ip, h.dst_ip, 16);
				rx.tos = h.tos;
				rx.ttl = h.ttl & FWD_TTL ? h.ttl & 0xff : DEFAULT_TTL;
				rx.flow = 0;   /* not passed on */
				rx.forwarded = true;
				uroce_count(eng, UROCE_STAT_FORWARDED_IN, 1);
			} else {
				sockaddr_to_rx(&from[i], &rx);
				cmsgs_to_rx(&msgs[i].msg_hdr, &rx);
				rx.family = rs->family;
				memcpy(rx.dst_ip, rs->ip, 16);
				rx.dst_port = ROCE_PORT;
			}
			uroce_engine_rx(eng, &rx);
		}
		if (n < RX_BATCH)
			return;
	}
}

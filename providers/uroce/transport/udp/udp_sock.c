// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The udp transport's sockets as it makes them: receiving sockets and
 * what they are asked for (GRO, the IP fields), sending sockets (DF, so
 * that the kernel writes the IPv4 ID the ICRC was computed for), big
 * buffers, ports no other socket can join, and the file-descriptor limit
 * a process with many QPs needs raised.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/udp.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "transport/udp/udp.h"

#define SOCK_BUF (32 << 20)

static void big_buffers(int fd)
{
	int sz = SOCK_BUF;

	/* Beyond net.core.rmem_max only with CAP_NET_ADMIN; else the max. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
}

/*
 * Out of file descriptors: every RC/UC QP holds two sockets (its source
 * port's and its connected receive socket), so ib_write_bw -q 512 needs
 * more than the 1024 a session gets by default (systemd's soft limit),
 * and its sends failed until the QPs ran out of retries.  Raise the soft
 * limit towards the hard one, as a program that needs many sockets does,
 * and say so once.  True if there is more room now.
 */
static bool more_files(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static bool told;
	struct rlimit rl;
	bool more = false;

	pthread_mutex_lock(&lock);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rlim_t was = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max - was < was ? rl.rlim_max :
			      2 * was;
		more = setrlimit(RLIMIT_NOFILE, &rl) == 0;
		if (more && !told) {
			told = true;
			fprintf(stderr, "uroce: out of file descriptors (2 per QP): soft limit raised "
				"from %llu to %llu\n", (unsigned long long)was,
				(unsigned long long)rl.rlim_cur);
		}
	}
	pthread_mutex_unlock(&lock);
	return more;
}

/* Sockets are not all a process opens: the device's files (its GID table,
 * read at each AV's modify) and netlink sockets fail on EMFILE too, with
 * an error the program sees (ib_write_bw -q 512 failed a modify to RTR
 * with EINVAL when one more socket, udp_txconn.c's, moved the limit from
 * a socket to a file).  So the limit is raised once a socket's number
 * comes within FD_HEADROOM of it, not only when a socket fails. */
#define FD_HEADROOM 64

static void keep_headroom(int fd)
{
	static _Atomic long soft = -1;
	long lim = atomic_load_explicit(&soft, memory_order_relaxed);
	struct rlimit rl;

	if (lim < 0 || fd + FD_HEADROOM >= lim) {
		if (lim >= 0 && fd + FD_HEADROOM >= lim)
			more_files();
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
			atomic_store_explicit(&soft, rl.rlim_cur == RLIM_INFINITY ? LONG_MAX :
					      (long)rl.rlim_cur, memory_order_relaxed);
	}
}

/* A receiving socket of FAMILY with REUSE (SO_REUSEPORT, SO_REUSEADDR or
 * 0: none), not bound yet; OPTS: enum rx_opts. */
int udp_rx_socket(int family, int reuse, unsigned int opts)
{
	int one = 1, fd;

	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 && errno == EMFILE && more_files())
		fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	keep_headroom(fd);
	if (reuse)
		setsockopt(fd, SOL_SOCKET, reuse, &one, sizeof(one));
	if (family == AF_INET6) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (opts & RX_IP_FIELDS) {
			setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one));
			setsockopt(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof(one));
			setsockopt(fd, IPPROTO_IPV6, IPV6_FLOWINFO, &one, sizeof(one));
		}
	} else if (opts & RX_IP_FIELDS) {
		setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one));
	}
	if (opts & RX_GRO)
		setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one));
	big_buffers(fd);
	return fd;
}

/* A socket bound to (IP16, PORT); OPTS: enum rx_opts. */
int udp_rx_bound_socket(int family, const uint8_t *ip16, uint16_t port, int ifindex,
			unsigned int opts)
{
	struct sockaddr_storage ss;
	socklen_t sl = uroce_xport_sockaddr(family, ip16, port, ifindex, &ss);
	int fd = udp_rx_socket(family, SO_REUSEPORT, opts);

	if (fd < 0)
		return fd;
	if (bind(fd, (struct sockaddr *)&ss, sl)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* What a sending socket is set to: DF, so that the kernel writes IPv4 ID 0
 * (unconnected) or counts its own (connected), as the ICRC assumes. */
void udp_tx_options(int fd, int family)
{
	int pmtu = family == AF_INET ? IP_PMTUDISC_DO : IPV6_PMTUDISC_DO;

	if (family == AF_INET)
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	else
		setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu));
}

int udp_bound_socket(int family, const uint8_t *ip, uint16_t port, int ifindex)
{
	int fd = udp_rx_bound_socket(family, ip, port, ifindex, 0);

	if (fd >= 0)
		udp_tx_options(fd, family);
	return fd;
}

/* Bind FD to (IP16, a port of 32768..49151 that no other socket holds):
 * 64 tries from SEED on, then whatever the kernel gives.  No caller sets
 * SO_REUSEPORT, so no socket can join FD's port later.  0 or -errno. */
int udp_bind_exclusive(int fd, int family, const uint8_t *ip16, int ifindex, uint32_t seed)
{
	struct sockaddr_storage ss;

	for (int i = 0; i <= 64; i++) {
		uint16_t port = i < 64 ? 32768 + (seed + i * 7919u) % 16384 : 0;
		socklen_t sl = uroce_xport_sockaddr(family, ip16, port, ifindex, &ss);

		if (bind(fd, (struct sockaddr *)&ss, sl) == 0)
			return 0;
		if (errno != EADDRINUSE)
			break;
	}
	return -errno;
}

/* The port FD is bound to, or 0. */
uint16_t udp_bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		return 0;
	return ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
		     ((struct sockaddr_in6 *)&ss)->sin6_port);
}

int udp_sink_socket(uint16_t *port)
{
	static const uint8_t any[16];
	int fd = udp_rx_socket(AF_INET, 0, 0), ret;

	if (fd < 0)
		return fd;
	ret = udp_bind_exclusive(fd, AF_INET, any, 0, (uint32_t)getpid() * 2654435761u);
	*port = ret ? 0 : udp_bound_port(fd);
	if (!*port) {
		close(fd);
		return ret ? ret : -EADDRNOTAVAIL;
	}
	return fd;
}

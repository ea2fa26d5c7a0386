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
#include "wire/wire.h"

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

/* What a receiving socket is asked for. */
enum rx_opts {
	RX_GRO = 1u << 0,        /* it takes coalesced datagrams */
	/* It reads the IP fields a UDP socket does not otherwise show (the
	 * receive path rebuilds the IP header for UD GRH areas).  Each is a
	 * control message per datagram: on lo they cost a ping-pong 0.26 us
	 * one way (docs/performance.md), so sockets whose packets never
	 * reach a UD QP go without. */
	RX_IP_FIELDS = 1u << 1,
};

/* A receiving socket of FAMILY with REUSE (SO_REUSEPORT, SO_REUSEADDR or
 * 0: none), not bound yet; OPTS: enum rx_opts. */
static int rx_socket(int family, int reuse, unsigned int opts)
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
static int bound_socket(int family, const uint8_t *ip16, uint16_t port, int ifindex,
			unsigned int opts)
{
	struct sockaddr_storage ss;
	socklen_t sl = uroce_xport_sockaddr(family, ip16, port, ifindex, &ss);
	int fd = rx_socket(family, SO_REUSEPORT, opts);

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
static void tx_options(int fd, int family)
{
	int pmtu = family == AF_INET ? IP_PMTUDISC_DO : IPV6_PMTUDISC_DO;

	if (family == AF_INET)
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	else
		setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu));
}

int udp_bound_socket(int family, const uint8_t *ip, uint16_t port, int ifindex)
{
	int fd = bound_socket(family, ip, port, ifindex, 0);

	if (fd >= 0)
		tx_options(fd, family);
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

static int epoll_add(struct udp_xport *u, int fd, uint64_t idx)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = idx };

	return epoll_ctl(u->x.fd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/*
 * The forwarding socket: on ADDR, at a port no other socket may join and
 * no QP sends from.  A QP's TX socket (transport.h: ports 0xC000-0xFFFF)
 * binds with SO_REUSEPORT; had it the forwarding socket's port, it joined
 * its group and took a share of the packets forwarded to this process,
 * which nothing reads (issue 14: a QP of 8 x 64 ran out of retries while
 * every packet reached its owner's port).  So: no SO_REUSEPORT here, and a
 * port below 0xC000 (of the kernel's usual ephemeral range), else any.
 */
/* Bind FD to (IP16, a port of 32768..49151 that no other socket holds):
 * 64 tries from SEED on, then whatever the kernel gives.  No caller sets
 * SO_REUSEPORT, so no socket can join FD's port later.  0 or -errno. */
static int bind_exclusive(int fd, int family, const uint8_t *ip16, int ifindex, uint32_t seed)
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
static uint16_t bound_port(int fd)
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
	int fd = rx_socket(AF_INET, 0, 0), ret;

	if (fd < 0)
		return fd;
	ret = bind_exclusive(fd, AF_INET, any, 0, (uint32_t)getpid() * 2654435761u);
	*port = ret ? 0 : bound_port(fd);
	if (!*port) {
		close(fd);
		return ret ? ret : -EADDRNOTAVAIL;
	}
	return fd;
}

static int fwd_socket(int family, const uint8_t *ip16, int ifindex)
{
	int fd = rx_socket(family, 0, 0), ret;

	if (fd < 0)
		return fd;
	ret = bind_exclusive(fd, family, ip16, ifindex, (uint32_t)getpid() * 2654435761u);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
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
	u->gso = env_on("UROCE_GSO");
	u->gro = env_on("UROCE_GRO");
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
		int fd = bound_socket(family, nd.addrs[i], UROCE_XPORT_ROCE_PORT, nd.ifindex,
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
		epoll_add(u, fd, u->n_rx++);
	}
	ret = -EADDRNOTAVAIL;
	if (u->n_rx == 0)
		goto fail;

	/* The forwarding socket: the first address. */
	u->fwd_fd = fwd_socket(u->rx_addr[0].family, u->rx_addr[0].ip, nd.ifindex);
	ret = u->fwd_fd;
	if (ret < 0)
		goto fail;
	ret = -EADDRNOTAVAIL;
	u->x.fwd_port = bound_port(u->fwd_fd);
	if (!u->x.fwd_port)
		goto fail;
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
	tx_options(fd, family);
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
	else if ((fd = bound_socket(family, ip, port, u->ifindex, 0)) >= 0)
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
static int udp_claim_port(struct uroce_xport *x, int family, const uint8_t *ip, uint16_t want)
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
	fd = rx_socket(family, 0, 0);
	if (fd < 0)
		return fd;
	ret = bind_exclusive(fd, family, ip, u->ifindex, (uint32_t)want * 2654435761u);
	port = ret ? 0 : bound_port(fd);
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

/* H and IOV[0..IOVCNT) as one datagram to the forwarding socket at PORT. */
static int fwd_send(struct udp_xport *u, uint16_t port, struct udp_fwd_hdr *h,
		    const struct iovec *iov, unsigned int iovcnt)
{
	struct iovec v[UROCE_XPORT_MAX_IOV + 1];
	struct sockaddr_storage to;
	struct msghdr msg = { .msg_name = &to, .msg_iov = v, .msg_iovlen = iovcnt + 1 };

	if (!port)
		return -ENOENT;
	if (iovcnt > UROCE_XPORT_MAX_IOV)
		return -EINVAL;
	v[0] = (struct iovec){ h, sizeof(*h) };
	memcpy(v + 1, iov, iovcnt * sizeof(*iov));
	msg.msg_namelen = uroce_xport_sockaddr(u->rx_addr[0].family, u->rx_addr[0].ip, port,
					     u->ifindex, &to);
	return sendmsg(u->fwd_fd, &msg, MSG_DONTWAIT) < 0 ? -errno : 0;
}

static int udp_forward(struct uroce_xport *x, uint16_t port, const struct uroce_rx *rx)
{
	struct udp_fwd_hdr h = {
		.family = rx->family, .src_port = rx->src_port, .dst_port = rx->dst_port,
		.tos = rx->tos, .ttl = UDP_FWD_TTL | rx->ttl,
	};
	struct iovec iov = { rx->buf, rx->len };

	memcpy(h.src_ip, rx->src_ip, 16);
	memcpy(h.dst_ip, rx->dst_ip, 16);
	return fwd_send(to_udp(x), port, &h, &iov, 1);
}

/*
 * Both directions of a flow between two processes of one device hash to
 * one socket of the SO_REUSEPORT group, and the process holding it must
 * pass the other's packets on; when it exits first, what was queued there
 * is lost.  So a packet for a process of this device goes straight to its
 * forwarding socket, marked FWD_DIRECT, with the IP fields the wire would
 * show from our sockets (TOS 0, the default TTL, no flow label).
 */
static int udp_send_local(struct uroce_xport *x, uint16_t port, const struct uroce_txpkt *pkt)
{
	struct udp_xport *u = to_udp(x);
	const struct uroce_path *p = pkt->path;
	struct udp_fwd_hdr h = {
		.family = p->family, .src_port = p->sport, .dst_port = p->dport,
		.ttl = UDP_FWD_TTL | UDP_FWD_DIRECT | UDP_DEFAULT_TTL,
	};
	int i;

	for (i = 0; i < u->n_rx; i++)
		if (!memcmp(u->rx_addr[i].ip, p->dst, 16))
			break;
	if (i == u->n_rx)
		return -EADDRNOTAVAIL;
	memcpy(h.src_ip, p->src, 16);
	memcpy(h.dst_ip, p->dst, 16);
	return fwd_send(u, port, &h, pkt->iov, pkt->iovcnt);
}

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
	int fd = rx_socket(family, SO_REUSEADDR, RX_IP_FIELDS), ret;

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

static int udp_mcast_join(struct uroce_xport *x, int family, const uint8_t *group)
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
		epoll_add(u, fd, UDP_MCAST_BASE + (uint64_t)g);
	}
	pthread_mutex_unlock(&u->conn_lock);
	return fd < 0 ? fd : 0;
}

/* Closing the socket leaves the group. */
static void udp_mcast_leave(struct uroce_xport *x, const uint8_t *group)
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
	socklen_t sl = uroce_xport_sockaddr(family, peer, port, u->ifindex, &to);
	int fd;

	if (qpn >= UDP_MAX_CONN)
		return -EINVAL;
	pthread_mutex_lock(&u->conn_lock);
	unsteer_locked(u, qpn);
	fd = bound_socket(family, local, UROCE_XPORT_ROCE_PORT, u->ifindex,
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
	.claim_port = udp_claim_port,
	.unsteer = udp_unsteer,
	.send_local = udp_send_local,
	.mcast_join = udp_mcast_join,
	.mcast_leave = udp_mcast_leave,
};

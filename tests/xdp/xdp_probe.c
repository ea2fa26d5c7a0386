// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * xdp_probe: drives the xdp transport (providers/uroce/transport/xdp)
 * through its ops alone, for tests/xdp.  Packets are RoCEv2 UD SEND-only
 * packets built by the wire module (ICRC included), payload byte i of
 * packet k = (k * 131 + i) & 0xff, so the receiver checks every byte.
 *
 *   xdp_probe send IFACE SRC DST QPN COUNT SIZE [ROUNDS]
 *                                                  through AF_XDP; ROUNDS > 1:
 *                      COUNT again after 1.2 s (past the neighbour cache's life)
 *   xdp_probe recv IFACE QPN COUNT SECONDS         through AF_XDP
 *   xdp_probe udpsend SRC DST QPN COUNT SIZE       kernel UDP socket (ID 0, DF)
 *   xdp_probe udprecv ADDR COUNT SECONDS           kernel UDP socket on ADDR:4791
 *   xdp_probe hold IFACE                           attach, say "ready", wait
 *   xdp_probe attach IFACE                         the program only (no socket), wait
 *   xdp_probe reopen IFACE                         open, close and at once open again:
 *                      "reopened", or the second open's error and exit 1
 *   xdp_probe remove IFACE                         detach uroce's XDP program
 *   xdp_probe rawsend IFACE SRC DST DMAC QPN COUNT SIZE
 *                      a bare AF_XDP sender (bench/run.sh's raw figure):
 *                      the frames are built once in a UMEM of its own,
 *                      then only descriptors, kicks and completions, 64 a
 *                      burst; not the transport, no program on IFACE
 *
 * The transport table of this program has no udp transport, so the xdp
 * transport runs alone: only frames for the steered QPN reach it.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "transport/transport.h"
#include "wire/wire.h"
#include "device/registry.h"
#include "transport/xdp/xdp_load.h"
#include "transport/xdp/xdp_frame.h"
#include <xdp/xsk.h>
#include <sys/mman.h>

#define QKEY 0x11111111u
#define SQPN 0x17

extern const struct uroce_xport_ops uroce_xdp_ops;

const struct uroce_xport_ops *uroce_xport_lookup(const char *name)
{
	return !strcmp(name, "xdp") ? &uroce_xdp_ops : NULL;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int gid(const char *s, uint8_t g[16])
{
	memset(g, 0, 16);
	if (inet_pton(AF_INET6, s, g) == 1)
		return AF_INET6;
	g[10] = g[11] = 0xff;
	if (inet_pton(AF_INET, s, g + 12) == 1)
		return AF_INET;
	fprintf(stderr, "xdp_probe: bad address %s\n", s);
	exit(2);
}

/* Packet K to QPN: BTH+DETH, payload, pad, ICRC for (FAMILY, SRC->DST). */
static uint32_t build(uint8_t *buf, uint32_t cap, int family, const uint8_t *src,
		      const uint8_t *dst, uint16_t sport, uint32_t qpn, uint32_t k, uint32_t size)
{
	struct roce_pkt p = { .dqpn = qpn, .psn = k & 0xffffff, .pkey = 0xffff,
			      .qkey = QKEY, .sqpn = SQPN };
	uint32_t pad = roce_padlen(size), crc;
	struct roce_net net;
	struct iovec iov;
	int h;

	p.opcode = (uint8_t)roce_opcode(ROCE_TR_UD, ROCE_K_SEND, true, true, false, false);
	h = roce_build(buf, cap, &p, size);
	if (h < 0 || h + size + pad + 4 > cap)
		exit(2);
	for (uint32_t i = 0; i < size; i++)
		buf[h + i] = (uint8_t)(k * 131 + i);
	memset(buf + h + size, 0, pad);
	roce_net_from_socket(&net, family, src, dst, sport, ROCE_UDP_PORT);
	iov = (struct iovec){ buf + h, size };
	crc = htole32(roce_icrc(&net, buf, h, &iov, size ? 1 : 0, pad));
	memcpy(buf + h + size + pad, &crc, 4);
	return h + size + pad + 4;
}

/* Check one received packet: parse, ICRC with the IP fields seen, bytes. */
static int check(const uint8_t *buf, uint32_t len, struct roce_net *net, uint32_t qpn)
{
	struct roce_pkt p;

	if (roce_parse(buf, len, &p) != ROCE_OK || p.dqpn != qpn)
		return -1;
	if (roce_icrc_check(net, buf, len) != ROCE_OK)
		return -2;
	for (uint32_t i = 0; i < p.paylen; i++)
		if (p.payload[i] != (uint8_t)(p.psn * 131 + i))
			return -3;
	return 0;
}

static struct uroce_xport *open_xdp(const char *iface)
{
	static uint64_t counters[256];
	struct uroce_xport_conf conf = { .devname = "xdp_probe", .netdev = iface,
					 .counters = counters };
	struct uroce_xport *x;
	int ret = uroce_xdp_ops.open(&conf, &x);

	if (ret) {
		fprintf(stderr, "xdp_probe: open %s: %s\n", iface, strerror(-ret));
		exit(1);
	}
	return x;
}

static int do_send(char **a)
{
	struct uroce_xport *x = open_xdp(a[0]);
	struct uroce_path path = { .dport = ROCE_UDP_PORT, .sport = 0xC123 };
	uint32_t qpn = strtoul(a[3], NULL, 0), count = strtoul(a[4], NULL, 0);
	uint32_t size = strtoul(a[5], NULL, 0), sent = 0;
	uint32_t rounds = a[6] ? strtoul(a[6], NULL, 0) : 1;
	static uint8_t bufs[64][4200];
	uint64_t t0 = now_ms();

	path.family = gid(a[1], path.src);
	gid(a[2], path.dst);
	for (uint32_t round = 0; round < rounds; round++) {
		uint32_t end = sent + count;

		if (round)
			usleep(1200 * 1000);
		while (sent < end) {
			struct uroce_txpkt pk[64];
			struct iovec iov[64];
			uint32_t n = end - sent < 64 ? end - sent : 64;
			int r;

			for (uint32_t i = 0; i < n; i++) {
				iov[i].iov_base = bufs[i];
				iov[i].iov_len = build(bufs[i], sizeof(bufs[i]), path.family, path.src,
						       path.dst, path.sport, qpn, sent + i, size);
				pk[i] = (struct uroce_txpkt){ &path, &iov[i], 1,
							      (uint32_t)iov[i].iov_len };
			}
			r = x->ops->send(x, pk, n);
			if (r < 0 && r != -EAGAIN) {
				fprintf(stderr, "xdp_probe: send: %s\n", strerror(-r));
				return 1;
			}
			sent += r > 0 ? r : 0;
		}
	}
	printf("sent %u in %llu ms\n", sent, (unsigned long long)(now_ms() - t0));
	x->ops->close(x);
	return 0;
}

/* The MAC address of IFACE from sysfs into MAC; 0 or -1. */
static int iface_mac(const char *iface, uint8_t mac[6])
{
	char path[128], line[32];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", iface);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fgets(line, sizeof(line), f) ? sscanf(line, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0],
						 &mac[1], &mac[2], &mac[3], &mac[4], &mac[5]) : 0;
	fclose(f);
	return n == 6 ? 0 : -1;
}

enum { RAW_FRAMES = 2048, RAW_FRAME = 2048, RAW_BURST = 64 };

/* A bare AF_XDP sender: what the kernel's copy mode costs per frame with
 * nothing of ours in the loop but ring indexes and kicks. */
static int do_rawsend(char **a)
{
	struct uroce_path path = { .dport = ROCE_UDP_PORT, .sport = 0xC123 };
	struct xsk_socket_config cfg = { .tx_size = RAW_FRAMES,
					 .libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD };
	struct xsk_umem_config ucfg = { .fill_size = 64, .comp_size = RAW_FRAMES,
					.frame_size = RAW_FRAME };
	uint32_t qpn = strtoul(a[4], NULL, 0), count = strtoul(a[5], NULL, 0);
	uint32_t size = strtoul(a[6], NULL, 0), sent = 0, done = 0, len = 0, next = 0;
	uint8_t smac[6], dmac[6], pkt[RAW_FRAME];
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	uint8_t *area;
	uint64_t t0;
	int ret;

	path.family = gid(a[1], path.src);
	gid(a[2], path.dst);
	if (iface_mac(a[0], smac) || sscanf(a[3], "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &dmac[0], &dmac[1],
					    &dmac[2], &dmac[3], &dmac[4], &dmac[5]) != 6) {
		fprintf(stderr, "xdp_probe: no MAC of %s, or bad DMAC %s\n", a[0], a[3]);
		return 2;
	}
	area = mmap(NULL, (size_t)RAW_FRAMES * RAW_FRAME, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return 1;
	ret = xsk_umem__create(&umem, area, (uint64_t)RAW_FRAMES * RAW_FRAME, &fq, &cq, &ucfg);
	if (!ret)
		ret = xsk_socket__create(&xsk, a[0], 0, umem, NULL, &tx, &cfg);
	if (ret) {
		fprintf(stderr, "xdp_probe: AF_XDP socket on %s: %s\n", a[0], strerror(-ret));
		return 1;
	}
	/* Frame K carries packet K (its PSN and bytes), so the receiver's
	 * check passes for every frame however often it is sent again. */
	for (uint32_t k = 0; k < RAW_FRAMES; k++) {
		uint32_t hlen = uroce_frame_hlen(path.family);
		struct iovec frame = { area + (size_t)k * RAW_FRAME, 0 };

		len = build(pkt, sizeof(pkt) - hlen, path.family, path.src, path.dst, path.sport, qpn,
			    k, size);
		memcpy((uint8_t *)frame.iov_base + hlen, pkt, len);
		frame.iov_len = hlen + len;
		uroce_frame_build(&frame, 1, smac, dmac, &path, len);
		len = (uint32_t)frame.iov_len;
	}
	t0 = now_ms();
	while (done < count) {
		if (now_ms() - t0 > 30000) {
			fprintf(stderr, "xdp_probe: rawsend: %u of %u sent after 30 s\n", done, count);
			return 1;
		}
		uint32_t want = count - sent < RAW_BURST ? count - sent : RAW_BURST, idx, n;

		n = want ? xsk_ring_prod__reserve(&tx, want, &idx) : 0;
		for (uint32_t i = 0; i < n; i++) {
			struct xdp_desc *d = xsk_ring_prod__tx_desc(&tx, idx + i);

			d->addr = (uint64_t)next * RAW_FRAME;
			d->len = len;
			d->options = 0;
			next = (next + 1) % RAW_FRAMES;
		}
		xsk_ring_prod__submit(&tx, n);
		sent += n;
		if (sendto(xsk_socket__fd(xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
		    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS) {
			perror("xdp_probe: sendto");
			return 1;
		}
		/* Never more completions than descriptors given. */
		n = xsk_ring_cons__peek(&cq, sent - done, &idx);
		xsk_ring_cons__release(&cq, n);
		done += n;
	}
	printf("sent %u in %llu ms\n", done, (unsigned long long)(now_ms() - t0));
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	return 0;
}

static int do_recv(char **a)
{
	struct uroce_xport *x = open_xdp(a[0]);
	uint32_t qpn = strtoul(a[1], NULL, 0), count = strtoul(a[2], NULL, 0);
	uint64_t deadline = now_ms() + strtoul(a[3], NULL, 0) * 1000, t0 = 0;
	uint32_t got = 0, bad = 0;
	struct uroce_rx rx[64];
	uint8_t any[16] = { 0 };

	if (x->ops->steer(x, qpn, AF_INET, any, any, 0))
		return 1;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (got < count && now_ms() < deadline) {
		struct pollfd pfd = { .fd = x->fd, .events = POLLIN };
		int n;

		poll(&pfd, 1, 100);
		n = x->ops->recv(x, rx, 64, 0);
		for (int i = 0; i < n; i++) {
			struct roce_net net;

			roce_net_from_socket(&net, rx[i].family, rx[i].src_ip, rx[i].dst_ip,
					     rx[i].src_port, rx[i].dst_port);
			net.ip_id = rx[i].ip_id;
			net.df = rx[i].df;
			if (check(rx[i].buf, rx[i].len, &net, qpn))
				bad++;
			if (!t0)
				t0 = now_ms();
			got++;
		}
	}
	printf("received %u bad %u (id exact %d) in %llu ms\n", got, bad,
	       got ? rx[0].ip_id_exact : 0, (unsigned long long)(t0 ? now_ms() - t0 : 0));
	x->ops->unsteer(x, qpn);
	x->ops->close(x);
	return got == count && bad == 0 ? 0 : 1;
}

static int udp_socket(int family, const uint8_t *ip, uint16_t port)
{
	struct sockaddr_storage ss = { .ss_family = family };
	socklen_t sl;
	int fd = socket(family, SOCK_DGRAM, 0), pmtu, buf = 32 << 20;

	if (family == AF_INET) {
		struct sockaddr_in *s = (void *)&ss;

		s->sin_port = htons(port);
		memcpy(&s->sin_addr, ip + 12, 4);
		sl = sizeof(*s);
		pmtu = IP_PMTUDISC_DO;
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	} else {
		struct sockaddr_in6 *s6 = (void *)&ss;

		s6->sin6_port = htons(port);
		memcpy(&s6->sin6_addr, ip, 16);
		sl = sizeof(*s6);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, sl)) {
		perror("xdp_probe: udp bind");
		exit(1);
	}
	return fd;
}

static int do_udpsend(char **a)
{
	uint8_t src[16], dst[16], buf[4200];
	int family = gid(a[0], src), fd = udp_socket(family, src, 0xC321);
	uint32_t qpn = strtoul(a[2], NULL, 0), count = strtoul(a[3], NULL, 0);
	uint32_t size = strtoul(a[4], NULL, 0);
	struct sockaddr_storage to = { .ss_family = family };
	socklen_t tl;

	gid(a[1], dst);
	if (family == AF_INET) {
		((struct sockaddr_in *)&to)->sin_port = htons(ROCE_UDP_PORT);
		memcpy(&((struct sockaddr_in *)&to)->sin_addr, dst + 12, 4);
		tl = sizeof(struct sockaddr_in);
	} else {
		((struct sockaddr_in6 *)&to)->sin6_port = htons(ROCE_UDP_PORT);
		memcpy(&((struct sockaddr_in6 *)&to)->sin6_addr, dst, 16);
		tl = sizeof(struct sockaddr_in6);
	}
	for (uint32_t k = 0; k < count; k++) {
		uint32_t len = build(buf, sizeof(buf), family, src, dst, 0xC321, qpn, k, size);

		while (sendto(fd, buf, len, 0, (struct sockaddr *)&to, tl) < 0)
			if (errno != ENOBUFS && errno != EAGAIN) {
				perror("xdp_probe: sendto");
				return 1;
			}
	}
	printf("sent %u\n", count);
	return 0;
}

static int do_udprecv(char **a)
{
	uint8_t me[16], buf[4200];
	int family = gid(a[0], me), fd = udp_socket(family, me, ROCE_UDP_PORT);
	uint32_t count = strtoul(a[1], NULL, 0), got = 0, bad = 0;
	uint64_t deadline = now_ms() + strtoul(a[2], NULL, 0) * 1000;

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (got < count && now_ms() < deadline) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		uint8_t peer[16] = { 0 };
		struct roce_net net;
		struct roce_pkt p;
		ssize_t n;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (n <= 0)
			continue;
		if (family == AF_INET) {
			peer[10] = peer[11] = 0xff;
			memcpy(peer + 12, &((struct sockaddr_in *)&from)->sin_addr, 4);
		} else {
			memcpy(peer, &((struct sockaddr_in6 *)&from)->sin6_addr, 16);
		}
		roce_net_from_socket(&net, family, peer, me, ntohs(((struct sockaddr_in *)&from)->sin_port),
				     ROCE_UDP_PORT);
		net.id_unknown = family == AF_INET;
		if (roce_parse(buf, n, &p) != ROCE_OK || check(buf, n, &net, p.dqpn))
			bad++;
		got++;
	}
	printf("received %u bad %u\n", got, bad);
	return got == count && bad == 0 ? 0 : 1;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	stop = 1;
}

/* A user of the program that takes no queue: its counters outlive the
 * processes that come and go. */
static int do_attach(char **a)
{
	struct uroce_xdp_prog p;
	char err[256], nsdir[4096], nsid[64] = "0";

	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	if (uroce_ns_dir(nsdir, sizeof(nsdir)) == 0)   /* the users' file the engines use */
		snprintf(nsid, sizeof(nsid), "%s", strrchr(nsdir, '/') + 1);
	if (uroce_xdp_prog_get(nsid, a[0], &p, err, sizeof(err))) {
		fprintf(stderr, "xdp_probe: %s\n", err);
		return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!stop)
		pause();
	printf("redirected %llu\n", (unsigned long long)uroce_xdp_prog_stat(&p, UROCE_XDP_REDIRECTED));
	uroce_xdp_prog_put(nsid, a[0], &p);
	return 0;
}

static int do_hold(char **a)
{
	struct uroce_xport *x;

	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	x = open_xdp(a[0]);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!stop)
		pause();
	x->ops->close(x);
	return 0;
}

/* The kernel frees a closed socket's queue some milliseconds late; the
 * second open must wait for that, not fail (xport_xdp.c, open_queue). */
static int do_reopen(char **a)
{
	static uint64_t counters[256];
	struct uroce_xport_conf conf = { .devname = "xdp_probe", .netdev = a[0],
					 .counters = counters };
	struct uroce_xport *x = open_xdp(a[0]);
	uint64_t t0;
	int ret;

	x->ops->close(x);
	t0 = now_ms();
	ret = uroce_xdp_ops.open(&conf, &x);
	if (ret) {
		printf("second open: %s after %llu ms\n", strerror(-ret),
		       (unsigned long long)(now_ms() - t0));
		return 1;
	}
	printf("reopened in %llu ms\n", (unsigned long long)(now_ms() - t0));
	x->ops->close(x);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int args; int (*fn)(char **); } cmds[] = {
		{ "send", 6, do_send }, { "recv", 4, do_recv }, { "udpsend", 5, do_udpsend },
		{ "udprecv", 3, do_udprecv }, { "hold", 1, do_hold }, { "attach", 1, do_attach },
		{ "reopen", 1, do_reopen }, { "rawsend", 7, do_rawsend },
	};

	if (argc == 3 && !strcmp(argv[1], "remove")) {
		int r = uroce_xdp_prog_remove(argv[2]);

		printf("removed %d\n", r);
		return r < 0;
	}
	for (size_t i = 0; argc > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name) &&
		    (argc == cmds[i].args + 2 || (cmds[i].fn == do_send && argc == cmds[i].args + 3)))
			return cmds[i].fn(argv + 2);
	fprintf(stderr, "usage: see the comment at the top of tests/xdp/xdp_probe.c\n");
	return 2;
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * sockpp: a plain TCP (or UDP) program, the kind rsockets' preload carries
 * over RDMA unmodified.  It opens nothing before its first socket, so that
 * socket is fd 3 when the shell left 0-2 only (issue 48, fault 1).
 *
 *   sockpp -s [-u] -p PORT                  server: echo, then hash a stream
 *   sockpp -c ADDR [-u] -p PORT -n N -m MIB client: N ping-pongs, MIB MiB
 *
 * TCP: N messages of 1..4096 bytes, each checked byte for byte when it
 * comes back, then MIB MiB of a pattern, whose FNV-1a hash the server
 * sends back and the client compares.  UDP (-u): N datagrams echoed and
 * checked; no stream.  Exit 0 only when every check held.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAXMSG 4096

static uint8_t pattern(uint64_t i)
{
	uint64_t x = i * 0x9e3779b97f4a7c15ull;

	return (uint8_t)(x >> 56);
}

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static int full(ssize_t (*op)(int, void *, size_t, int), int fd, void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = op(fd, (uint8_t *)buf + done, n - done, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += r;
	}
	return 0;
}

static ssize_t sendv(int fd, void *b, size_t n, int f) { return send(fd, b, n, f | MSG_NOSIGNAL); }
#define SEND(fd, b, n) full(sendv, fd, b, n)
#define RECV(fd, b, n) full(recv, fd, b, n)

static int die(const char *what)
{
	fprintf(stderr, "sockpp: %s: %s\n", what, strerror(errno));
	return 1;
}

/* The message of round R: its length and bytes. */
static size_t msg(uint32_t r, uint8_t *b)
{
	size_t len = 1 + (r * 977u) % MAXMSG;

	for (size_t i = 0; i < len; i++)
		b[i] = pattern((uint64_t)r << 20 | i);
	return len;
}

static int server_tcp(int s)
{
	uint8_t buf[65536];
	uint32_t hdr[2];
	uint64_t h = 0xcbf29ce484222325ull, left;
	int c = accept(s, NULL, NULL);

	if (c < 0)
		return die("accept");
	/* rounds: length, then bytes, echoed */
	for (;;) {
		if (RECV(c, hdr, 4))
			return die("recv length");
		if (!hdr[0])
			break;
		if (hdr[0] > MAXMSG || RECV(c, buf, hdr[0]) || SEND(c, buf, hdr[0]))
			return die("echo");
	}
	if (RECV(c, &left, 8))
		return die("recv stream size");
	while (left) {
		size_t n = left < sizeof(buf) ? left : sizeof(buf);

		if (RECV(c, buf, n))
			return die("recv stream");
		h = fnv(h, buf, n);
		left -= n;
	}
	if (SEND(c, &h, 8))
		return die("send hash");
	/* the client's close: end of stream (rsockets learns of a peer that
	 * exits without closing only when it next sends, as TCP would) */
	if (recv(c, buf, 1, 0) != 0)
		return die("no end of stream");
	close(c);
	close(s);
	printf("sockpp server: done\n");
	return 0;
}

static int client_tcp(int s, uint32_t rounds, uint64_t mib)
{
	static uint8_t buf[65536], back[MAXMSG];
	uint64_t h = 0xcbf29ce484222325ull, total = mib << 20, sent = 0, theirs;
	uint32_t len;

	for (uint32_t r = 1; r <= rounds; r++) {
		len = msg(r, buf);
		if (SEND(s, &len, 4) || SEND(s, buf, len) || RECV(s, back, len))
			return die("ping-pong");
		if (memcmp(buf, back, len)) {
			fprintf(stderr, "sockpp: round %u: the echo differs\n", r);
			return 1;
		}
	}
	len = 0;
	if (SEND(s, &len, 4) || SEND(s, &total, 8))
		return die("send stream size");
	while (sent < total) {
		size_t n = total - sent < sizeof(buf) ? total - sent : sizeof(buf);

		for (size_t i = 0; i < n; i++)
			buf[i] = pattern(sent + i);
		if (SEND(s, buf, n))
			return die("send stream");
		h = fnv(h, buf, n);
		sent += n;
	}
	if (RECV(s, &theirs, 8))
		return die("recv hash");
	if (theirs != h) {
		fprintf(stderr, "sockpp: stream hash %016llx, the server's %016llx\n",
			(unsigned long long)h, (unsigned long long)theirs);
		return 1;
	}
	close(s);
	printf("sockpp: %u ping-pongs checked, %llu MiB stream hash %016llx matches\n", rounds,
	       (unsigned long long)mib, (unsigned long long)h);
	return 0;
}

/* UDP: echo until a zero-length datagram. */
static int server_udp(int s)
{
	uint8_t buf[MAXMSG];
	struct sockaddr_storage from;

	for (;;) {
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(s, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

		if (n < 0)
			return die("recvfrom");
		if (sendto(s, buf, n, 0, (struct sockaddr *)&from, fl) != n)
			return die("sendto");
		if (n == 1 && buf[0] == 0)
			break;
	}
	printf("sockpp server: done\n");
	return 0;
}

static int client_udp(int s, uint32_t rounds)
{
	uint8_t buf[MAXMSG], back[MAXMSG];
	struct pollfd p = { .fd = s, .events = POLLIN };

	for (uint32_t r = 1; r <= rounds + 1; r++) {
		size_t len = r <= rounds ? msg(r, buf) % 1024 + 1 : 1;
		int tries = 0;
		ssize_t n;

		if (r > rounds)
			buf[0] = 0;
		else
			buf[0] |= 1;
		do {
			if (send(s, buf, len, 0) != (ssize_t)len)
				return die("send");
		} while (poll(&p, 1, 1000) == 0 && ++tries < 5);
		n = recv(s, back, sizeof(back), 0);
		if (n != (ssize_t)len || memcmp(buf, back, len)) {
			fprintf(stderr, "sockpp: datagram %u: the echo differs (%zd of %zu bytes)\n", r, n, len);
			return 1;
		}
	}
	printf("sockpp: %u datagrams checked\n", rounds);
	return 0;
}

int main(int argc, char **argv)
{
	const char *addr = NULL;
	uint32_t rounds = 1000;
	uint64_t mib = 8;
	int opt, server = 0, udp = 0, port = 0, one = 1, s;
	struct addrinfo hints = { 0 }, *ai;
	char ports[16];

	while ((opt = getopt(argc, argv, "sc:up:n:m:")) != -1) {
		switch (opt) {
		case 's': server = 1; break;
		case 'c': addr = optarg; break;
		case 'u': udp = 1; break;
		case 'p': port = atoi(optarg); break;
		case 'n': rounds = strtoul(optarg, NULL, 0); break;
		case 'm': mib = strtoull(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: sockpp -s|-c ADDR [-u] -p PORT [-n N] [-m MIB]\n");
			return 2;
		}
	}
	if (server == !!addr || !port)
		return 2;
	hints.ai_family = AF_INET;
	hints.ai_socktype = udp ? SOCK_DGRAM : SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | (server ? AI_PASSIVE : 0);
	snprintf(ports, sizeof(ports), "%d", port);
	if (getaddrinfo(addr, ports, &hints, &ai))
		return die("getaddrinfo");
	s = socket(ai->ai_family, ai->ai_socktype, 0);
	if (s < 0)
		return die("socket");
	printf("sockpp: first socket is fd %d\n", s);
	fflush(stdout);
	if (server) {
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s, ai->ai_addr, ai->ai_addrlen))
			return die("bind");
		if (!udp && listen(s, 4))
			return die("listen");
		printf("sockpp server: listening on port %d\n", port);
		fflush(stdout);
		return udp ? server_udp(s) : server_tcp(s);
	}
	if (connect(s, ai->ai_addr, ai->ai_addrlen))
		return die("connect");
	return udp ? client_udp(s, rounds) : client_tcp(s, rounds, mib);
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * A stream-socket ping-pong and stream with blocking calls: the program
 * bench/run.sh runs over kernel TCP and, unchanged, over RDMA through
 * rdma-core's rsockets (librspreload.so under `uroce run`), so that the
 * two figures come from the same code.  One job: move bytes over a
 * SOCK_STREAM socket the plain way an application does.
 *
 *   tcp_peer pong PORT SIZE               echo messages of SIZE bytes
 *   tcp_peer ping ADDR PORT SIZE ITERS    ping-pong: one-way latency
 *   tcp_peer sink PORT                    receive a stream, report its rate
 *   tcp_peer stream ADDR PORT SIZE SECS   send SIZE-byte writes for SECS
 *
 * The listening side prints "ready" once it listens (rsockets' listeners
 * are not the kernel's: ss does not see them).  Every command ends with a
 * line of key=value pairs; ping's are udp_peer's (peer_util.h).  TCP_NODELAY
 * on both sides: a ping-pong's small writes leave at once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "peer_util.h"

enum { STREAM_BUF = 1 << 20 };

static void nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		die("TCP_NODELAY");
}

/* Listen on PORT, say so, and take one connection. */
static int accept_one(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1, fd;

	if (lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1))
		die("bind/listen");
	printf("ready\n");
	fflush(stdout);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept");
	close(lfd);
	nodelay(fd);
	return fd;
}

/* Connect to ADDR:PORT, trying for up to 10 s while the listener starts. */
static int connect_to(const char *addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	uint64_t t0 = now_ns();

	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "tcp_peer: bad address %s\n", addr);
		exit(2);
	}
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			die("socket");
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			nodelay(fd);
			return fd;
		}
		close(fd);
		if (now_ns() - t0 > 10000000000ull)
			die("connect");
		usleep(50000);
	}
}

/* Move exactly LEN bytes; 0 at the peer's end of stream, -1 on error. */
static int full(int fd, char *buf, size_t len, int writing)
{
	for (size_t done = 0; done < len;) {
		ssize_t r = writing ? write(fd, buf + done, len - done) : read(fd, buf + done, len - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 ? 0 : -1;
		done += (size_t)r;
	}
	return 1;
}

static int pong(int port, size_t size)
{
	int fd = accept_one(port), r;
	char *buf = calloc(1, size);
	uint64_t n = 0;

	if (!buf)
		die("calloc");
	while ((r = full(fd, buf, size, 0)) > 0) {
		if (full(fd, buf, size, 1) <= 0)
			die("write");
		n++;
	}
	if (r < 0)
		die("read");
	printf("echoed=%llu cpu_s=%.3f\n", (unsigned long long)n, cpu_s());
	close(fd);
	return 0;
}

static int ping(const char *addr, int port, size_t size, int iters)
{
	int fd = connect_to(addr, port), warm = iters / 10 + 1;
	uint64_t *rtt = calloc(iters, sizeof(*rtt));
	char *buf = calloc(1, size);
	double c0 = 0;

	if (!rtt || !buf)
		die("calloc");
	/* A tenth more round trips first, untimed: connection set-up and
	 * the first buffers are not the steady state. */
	for (int i = -warm; i < iters; i++) {
		uint64_t t0;

		if (i == 0)
			c0 = cpu_s();
		t0 = now_ns();
		buf[0] = (char)i;
		if (full(fd, buf, size, 1) <= 0 || full(fd, buf, size, 0) <= 0)
			die("ping-pong");
		if (buf[0] != (char)i) {
			fprintf(stderr, "tcp_peer: echo %d came back wrong\n", i);
			return 1;
		}
		if (i >= 0)
			rtt[i] = now_ns() - t0;
	}
	close(fd);
	return pingpong_report(rtt, iters, cpu_s() - c0);
}

static int sink(int port)
{
	int fd = accept_one(port);
	char *buf = malloc(STREAM_BUF);
	uint64_t bytes = 0, t0 = 0, t1 = 0;
	double c0 = cpu_s();
	ssize_t r;

	if (!buf)
		die("malloc");
	while ((r = read(fd, buf, STREAM_BUF)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("read");
		if (!t0)
			t0 = now_ns();
		bytes += (uint64_t)r;
		t1 = now_ns();
	}
	printf("bytes=%llu gbit_s=%.4f cpu_s=%.3f\n", (unsigned long long)bytes,
	       t1 > t0 ? bytes * 8.0 / (t1 - t0) : 0.0, cpu_s() - c0);
	close(fd);
	return 0;
}

static int stream(const char *addr, int port, size_t size, double secs)
{
	int fd = connect_to(addr, port);
	char *buf = calloc(1, size);
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(secs * 1e9), bytes = 0;
	double c0 = cpu_s();

	if (!buf)
		die("calloc");
	while (now_ns() < end) {
		if (full(fd, buf, size, 1) <= 0)
			die("write");
		bytes += size;
	}
	close(fd);
	printf("sent_bytes=%llu cpu_s=%.3f\n", (unsigned long long)bytes, cpu_s() - c0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "pong"))
		return pong(atoi(argv[2]), (size_t)atoi(argv[3]));
	if (argc == 6 && !strcmp(argv[1], "ping"))
		return ping(argv[2], atoi(argv[3]), (size_t)atoi(argv[4]), atoi(argv[5]));
	if (argc == 3 && !strcmp(argv[1], "sink"))
		return sink(atoi(argv[2]));
	if (argc == 6 && !strcmp(argv[1], "stream"))
		return stream(argv[2], atoi(argv[3]), (size_t)atoi(argv[4]), atof(argv[5]));
	fprintf(stderr, "usage: tcp_peer pong PORT SIZE | ping ADDR PORT SIZE ITERS |\n"
			"       sink PORT | stream ADDR PORT SIZE SECS\n");
	return 2;
}

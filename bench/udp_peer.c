// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The kernel-UDP peers of bench/run.sh: what the same path does with plain
 * UDP sockets, measured in the same run as uroce.  One job: move UDP
 * datagrams as fast as the kernel lets a simple program move them, and
 * report what that cost.
 *
 *   udp_peer pong PORT [MODE]                echo datagrams (busy poll)
 *   udp_peer ping ADDR PORT SIZE ITERS [MODE]  ping-pong: one-way latency
 *   (MODE: hop, two, block, chan or sleeper; none: both sides busy-poll)
 *   udp_peer sink PORT [gro]                 receive a stream, report its rate
 *   udp_peer stream ADDR PORT SIZE SECS mmsg|gso   send a stream
 *
 * Every command ends with one line of key=value pairs on stdout, among them
 * cpu_s (user + system seconds of this process, getrusage).  Busy polling
 * means non-blocking receives in a loop (and SO_BUSY_POLL where the
 * driver has a NAPI context to poll: not lo or veth), the way a latency
 * benchmark of kernel UDP is best case.
 *
 * "hop": each side's datagrams are received by a second thread that sleeps
 * in a blocking recv() and publishes each arrival in memory, while the
 * main thread spins on that memory and sends the next datagram: one
 * thread hop per one-way message, woken by the kernel while another thread
 * spins.  That is the shape of ib_write_lat and ib_read_lat over any
 * software RNIC whose application spins on memory (docs/performance.md):
 * the latency such a design cannot go below on this machine.
 *
 * "two": each way carries two datagrams of SIZE, as a reliable RoCE
 * ping-pong does (the message, and the ACK of the peer's last one, IBTA
 * 9.7.5.1): sent with one sendmsg as two UDP_SEGMENT (GSO) segments and
 * taken by one recvmmsg from a UDP_GRO socket, the system calls uroce's
 * udp transport makes for it.  What that shape costs on the kernel's path,
 * before any protocol work.
 *
 * "block": both sides sleep in a blocking recv() for each datagram, as an
 * event-driven program does: the peer of a verbs program that sleeps on a
 * completion channel (ib_send_lat -e).  One wake-up per one-way message.
 *
 * "chan": as "hop", but the main thread sleeps too: the receiving thread
 * writes 8 bytes into a pipe for each datagram, and the main thread waits
 * in a blocking read() of that pipe.  That is the completion channel as
 * libibverbs reads it: ibv_get_cq_event is a read() of the channel's fd,
 * made by libibverbs itself, so no provider code runs in the sleeping
 * thread, and a provider that is not the kernel must take the datagram on
 * another thread and wake the reader.  Two wake-ups per one-way message:
 * the least such a design costs here (docs/performance.md, "Event path").
 *
 * "sleeper": pong sleeps in a blocking recv() ("block") while ping
 * busy-polls: the shape of ib_read_lat, whose requester spins on its CQ
 * while the responder's process makes no call and its receiving thread is
 * woken for every request (docs/performance.md, "ib_read_lat").
 *
 * ping prints the median, mean, p99 and p99.9 of the one-way times; with
 * BENCH_SAMPLES=FILE it also writes every one-way time (µs, sorted, one
 * a line) into FILE, for bench/report.py's distribution plot.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "peer_util.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

enum { BATCH = 64, MAX_DGRAM = 65507, IDLE_END_NS = 500000000 };

static int udp_socket(int port)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), sz = 32 << 20, usec = 50;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };

	if (fd < 0)
		die("socket");
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &usec, sizeof(usec)); /* best effort */
	if (port && bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("bind");
	return fd;
}

enum pp_mode { PP_BUSY, PP_HOP, PP_TWO, PP_BLOCK, PP_CHAN, PP_SLEEPER };

static enum pp_mode pp_mode(const char *arg)
{
	if (!arg)
		return PP_BUSY;
	if (!strcmp(arg, "hop"))
		return PP_HOP;
	if (!strcmp(arg, "two"))
		return PP_TWO;
	if (!strcmp(arg, "block"))
		return PP_BLOCK;
	if (!strcmp(arg, "chan"))
		return PP_CHAN;
	if (!strcmp(arg, "sleeper"))
		return PP_SLEEPER;
	fprintf(stderr, "udp_peer: unknown ping-pong mode %s\n", arg);
	exit(2);
}

/* Send LEN bytes of BUF; SEG (below LEN): as segments of SEG bytes in one
 * datagram that the kernel cuts up (UDP_SEGMENT). */
static ssize_t pp_send(int fd, const char *buf, size_t len, size_t seg,
		       const struct sockaddr_in *to, socklen_t tolen)
{
	char ctl[CMSG_SPACE(sizeof(uint16_t))] = { 0 };
	struct iovec v = { (void *)buf, len };
	struct msghdr m = { .msg_name = (void *)to, .msg_namelen = tolen, .msg_iov = &v,
			    .msg_iovlen = 1 };
	struct cmsghdr *c;
	uint16_t s16 = (uint16_t)seg;

	/* One datagram: the plain ping-pong's own call, unchanged. */
	if (!seg || seg >= len)
		return sendto(fd, buf, len, 0, (const struct sockaddr *)to, tolen);
	m.msg_control = ctl;
	m.msg_controllen = sizeof(ctl);
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(s16));
	memcpy(CMSG_DATA(c), &s16, sizeof(s16));
	return sendmsg(fd, &m, 0);
}

/* Receive without waiting (PP_BLOCK: waiting, up to the socket's
 * SO_RCVTIMEO): in PP_TWO mode with recvmmsg and the GRO
 * control message, as uroce's udp transport does; *SEG: the size of the
 * segments the kernel coalesced into this datagram (0: one datagram). */
static ssize_t pp_recv(int fd, char *buf, size_t cap, enum pp_mode mode, struct sockaddr_in *from,
		       socklen_t *fromlen, size_t *seg)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec v = { buf, cap };
	struct mmsghdr mm = { .msg_hdr = { .msg_name = from, .msg_namelen = fromlen ? *fromlen : 0,
					   .msg_iov = &v, .msg_iovlen = 1, .msg_control = ctl,
					   .msg_controllen = sizeof(ctl) } };
	struct cmsghdr *c;

	*seg = 0;
	if (mode != PP_TWO)
		return recvfrom(fd, buf, cap, mode == PP_BLOCK ? 0 : MSG_DONTWAIT,
				(struct sockaddr *)from, fromlen);
	if (recvmmsg(fd, &mm, 1, MSG_DONTWAIT, NULL) != 1)
		return -1;
	if (fromlen)
		*fromlen = mm.msg_hdr.msg_namelen;
	for (c = CMSG_FIRSTHDR(&mm.msg_hdr); c; c = CMSG_NXTHDR(&mm.msg_hdr, c)) {
		int gso;

		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			memcpy(&gso, CMSG_DATA(c), sizeof(gso));
			*seg = (size_t)gso;
		}
	}
	return mm.msg_len;
}

/* WAIT_NS: how long a PP_BLOCK receive sleeps at most (then EAGAIN). */
static int pp_socket(int port, enum pp_mode mode, uint64_t wait_ns)
{
	int fd = udp_socket(port), one = 1;
	struct timeval tv = { .tv_sec = (time_t)(wait_ns / 1000000000u),
			      .tv_usec = (long)(wait_ns % 1000000000u / 1000) };

	if (mode == PP_TWO && setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)))
		die("UDP_GRO");
	if (mode == PP_BLOCK && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		die("SO_RCVTIMEO");
	return fd;
}

static struct sockaddr_in peer_addr(const char *addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };

	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "udp_peer: bad address %s\n", addr);
		exit(2);
	}
	return sa;
}

/* hop and chan modes: the receiving thread.  Sleeps in recvfrom() and
 * publishes each datagram (length and sender) through ARRIVED, which the
 * main thread spins on (hop) or learns of from the pipe (chan); one
 * datagram at a time, as a ping-pong has. */
struct hop {
	int fd;
	int pipe_r, pipe_w;          /* chan: one 8-byte word per wake-up; else -1 */
	_Atomic uint64_t arrived;    /* datagrams received so far */
	ssize_t len;
	struct sockaddr_in from;
	socklen_t fl;
	char buf[MAX_DGRAM];
};

static void *hop_receiver(void *arg)
{
	struct hop *h = arg;
	struct timeval tv = { .tv_sec = 1 };

	/* Blocking, but not forever: the process ends when the peer stops. */
	setsockopt(h->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (;;) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t r = recvfrom(h->fd, h->buf, sizeof(h->buf), 0, (struct sockaddr *)&from, &fl);

		if (r < 0 && errno != EAGAIN && errno != EINTR)
			die("recvfrom");
		if (r >= 0) {
			h->len = r;
			h->from = from;
			h->fl = fl;
			atomic_fetch_add_explicit(&h->arrived, 1, memory_order_release);
		}
		/* chan: the reader is woken for a datagram, and once a second
		 * without one, to look at its clock. */
		if (h->pipe_w >= 0 && (r >= 0 || errno == EAGAIN)) {
			uint64_t word = 1;

			if (write(h->pipe_w, &word, sizeof(word)) != sizeof(word))
				die("write");
		}
	}
	return NULL;
}

static struct hop *hop_start(int fd, enum pp_mode mode)
{
	struct hop *h = calloc(1, sizeof(*h));
	int p[2] = { -1, -1 };
	pthread_t t;

	if (!h)
		die("calloc");
	if (mode == PP_CHAN && pipe(p))
		die("pipe");
	h->fd = fd;
	h->pipe_r = p[0];
	h->pipe_w = p[1];
	if (pthread_create(&t, NULL, hop_receiver, h))
		die("pthread_create");
	return h;
}

/* hop mode: spin until datagram number N (from 1) has arrived, or TIMEOUT_NS
 * passed (chan: sleep in read() on the pipe meanwhile); its length, or -1. */
static ssize_t hop_wait(struct hop *h, uint64_t n, uint64_t timeout_ns)
{
	uint64_t t0 = now_ns(), word;

	while (atomic_load_explicit(&h->arrived, memory_order_acquire) < n) {
		if (now_ns() - t0 > timeout_ns)
			return -1;
		if (h->pipe_r >= 0 && read(h->pipe_r, &word, sizeof(word)) < 0 && errno != EINTR)
			die("read");
	}
	return h->len;
}

/* Echo every datagram to its sender until ITERS were echoed or the peer
 * has been silent for a while after it started. */
static int pong(int port, enum pp_mode mode)
{
	int fd, hopping = mode == PP_HOP || mode == PP_CHAN;
	char buf[MAX_DGRAM];
	uint64_t last = 0, n = 0;
	struct hop *h;

	/* sleeper: this side sleeps in recv() */
	if (mode == PP_SLEEPER)
		mode = PP_BLOCK;
	fd = pp_socket(port, mode, IDLE_END_NS);
	h = hopping ? hop_start(fd, mode) : NULL;
	size_t seg = 0;

	printf("ready\n");
	fflush(stdout);
	for (;;) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t r;

		if (h) {
			r = hop_wait(h, n + 1, last ? IDLE_END_NS : 60ull * 1000000000);
			if (r < 0)
				break;
			memcpy(buf, h->buf, r);
			from = h->from;
			fl = h->fl;
		} else {
			r = pp_recv(fd, buf, sizeof(buf), mode, &from, &fl, &seg);
		}

		if (r < 0) {
			if (errno != EAGAIN && errno != EINTR)
				die("recvfrom");
			if (last && now_ns() - last > IDLE_END_NS)
				break;
			continue;
		}
		last = now_ns();
		/* Echoed as it came: coalesced segments go back as segments. */
		if (pp_send(fd, buf, r, seg, &from, fl) < 0)
			die("sendto");
		n++;
	}
	printf("echoed=%llu cpu_s=%.3f\n", (unsigned long long)n, cpu_s());
	return 0;
}

/* Ping-pong ITERS datagrams of SIZE bytes; half the round trip is the
 * one-way latency (median, as perftest's "typical"). */
static int ping(const char *addr, int port, int size, int iters, enum pp_mode mode)
{
	struct sockaddr_in sa = peer_addr(addr, port);
	int fd, hopping = mode == PP_HOP || mode == PP_CHAN;
	uint64_t *rtt = calloc(iters, sizeof(*rtt)), t0, got;
	char buf[MAX_DGRAM] = { 0 };
	struct hop *h;
	double c0;
	/* Each way's bytes: PP_TWO sends two segments of SIZE. */
	size_t len = mode == PP_TWO ? 2 * (size_t)size : (size_t)size;
	size_t seg = mode == PP_TWO ? (size_t)size : 0, unused;

	/* sleeper: this side busy-polls; the pong sleeps */
	if (mode == PP_SLEEPER)
		mode = PP_BUSY;
	fd = pp_socket(0, mode, 100000000);
	if (!rtt || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("connect");
	/* Until the first echo comes back the server may not be there yet. */
	for (int tries = 0;; tries++) {
		if (tries > 100) {
			fprintf(stderr, "udp_peer: no echo from %s:%d\n", addr, port);
			return 1;
		}
		pp_send(fd, buf, len, seg, NULL, 0);
		t0 = now_ns();
		while (now_ns() - t0 < 100000000)
			if (pp_recv(fd, buf, sizeof(buf), mode, NULL, NULL, &unused) >= 0)
				goto warm;
	}
warm:
	/* Late echoes of the warm-up tries are drained before timing. */
	usleep(100000);
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		;
	h = hopping ? hop_start(fd, mode) : NULL;
	got = 0;
	c0 = cpu_s();
	for (int i = 0; i < iters; i++) {
		t0 = now_ns();
		if (pp_send(fd, buf, len, seg, NULL, 0) < 0)
			die("send");
		if (h) {
			if (hop_wait(h, ++got, 10ull * 1000000000) < 0) {
				fprintf(stderr, "udp_peer: echo %d lost\n", i);
				return 1;
			}
		} else {
			/* The whole echo: a path that did not keep the two
			 * segments together delivers them one by one. */
			for (size_t back = 0; back < len;) {
				ssize_t r = pp_recv(fd, buf, sizeof(buf), mode, NULL, NULL, &unused);

				if (r >= 0)
					back += (size_t)r;
				else if (errno != EAGAIN && errno != EINTR)
					die("recv");
			}
		}
		rtt[i] = now_ns() - t0;
	}
	return pingpong_report(rtt, iters, cpu_s() - c0);
}

/* Count what arrives; the stream ends when nothing came for a while.  With
 * GRO, one receive returns several datagrams: the control message says the
 * size of each. */
static int sink(int port, int gro)
{
	int fd = udp_socket(port), one = 1;
	static char bufs[BATCH][MAX_DGRAM];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	char ctl[BATCH][CMSG_SPACE(sizeof(int))];
	uint64_t bytes = 0, dgrams = 0, first = 0, last = 0;
	double c0 = 0;

	if (gro && setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)))
		die("UDP_GRO");
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ bufs[i], MAX_DGRAM };
			msgs[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1,
				.msg_control = ctl[i], .msg_controllen = sizeof(ctl[i]) };
		}
		int n = recvmmsg(fd, msgs, BATCH, MSG_DONTWAIT, NULL);

		if (n < 0) {
			if (errno != EAGAIN)
				die("recvmmsg");
			if (first && now_ns() - last > IDLE_END_NS)
				break;
			if (!first)
				usleep(1000); /* not started yet: do not burn the sender's CPU */
			continue;
		}
		if (!first) {
			first = now_ns();
			c0 = cpu_s();
		}
		last = now_ns();
		for (int i = 0; i < n; i++) {
			unsigned len = msgs[i].msg_len, seg = len;

			for (struct cmsghdr *c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c;
			     c = CMSG_NXTHDR(&msgs[i].msg_hdr, c))
				if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO)
					memcpy(&seg, CMSG_DATA(c), sizeof(int));
			bytes += len;
			dgrams += seg ? (len + seg - 1) / seg : 1;
		}
	}
	double secs = (last - first) / 1e9;

	if (secs <= 0)
		secs = 1e-9;
	printf("bytes=%llu dgrams=%llu secs=%.3f gbit_s=%.3f mpps=%.4f cpu_s=%.3f\n",
	       (unsigned long long)bytes, (unsigned long long)dgrams, secs, bytes * 8 / secs / 1e9,
	       dgrams / secs / 1e6, cpu_s() - c0);
	return 0;
}

/* Send SIZE-byte datagrams for SECS seconds: BATCH per sendmmsg, or with GSO
 * one send of as many SIZE-byte segments as fit in 64 KiB. */
static int stream(const char *addr, int port, int size, double secs, int gso)
{
	struct sockaddr_in sa = peer_addr(addr, port);
	int fd = udp_socket(0), segs = gso ? 65000 / size : 1;
	static char buf[BATCH][MAX_DGRAM];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	uint64_t end, sent = 0, calls = 0;
	double c0 = cpu_s();

	if (size <= 0 || size > (gso ? 8192 : MAX_DGRAM) || segs < 1) {
		fprintf(stderr, "udp_peer: bad size %d\n", size);
		return 2;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("connect");
	if (gso && setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &size, sizeof(size)))
		die("UDP_SEGMENT");
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ buf[i], (size_t)size * segs };
		msgs[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1 };
	}
	end = now_ns() + (uint64_t)(secs * 1e9);
	while (now_ns() < end) {
		int n = gso ? (send(fd, buf[0], (size_t)size * segs, 0) < 0 ? -1 : 1)
			    : sendmmsg(fd, msgs, BATCH, 0);

		calls++;
		if (n < 0) {
			if (errno == ENOBUFS || errno == EAGAIN || errno == ECONNREFUSED)
				continue; /* a full queue, or the sink not yet there */
			die("send");
		}
		sent += (uint64_t)n * segs;
	}
	printf("sent_dgrams=%llu syscalls=%llu cpu_s=%.3f\n", (unsigned long long)sent,
	       (unsigned long long)calls, cpu_s() - c0);
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "pong"))
		return pong(atoi(argv[2]), pp_mode(argc == 4 ? argv[3] : NULL));
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "ping"))
		return ping(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]),
			    pp_mode(argc == 7 ? argv[6] : NULL));
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "sink"))
		return sink(atoi(argv[2]), argc == 4 && !strcmp(argv[3], "gro"));
	if (argc == 7 && !strcmp(argv[1], "stream"))
		return stream(argv[2], atoi(argv[3]), atoi(argv[4]), atof(argv[5]),
			      !strcmp(argv[6], "gso"));
	fprintf(stderr, "usage: udp_peer pong PORT [MODE] | ping ADDR PORT SIZE ITERS [MODE] |\n"
			"       (MODE: hop, two, block, chan or sleeper) |\n"
			"       sink PORT [gro] | stream ADDR PORT SIZE SECS mmsg|gso\n");
	return 2;
}

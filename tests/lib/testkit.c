// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <netdb.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "testkit.h"

int passes, failures;
int sock = -1;

static int side_open(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res;
	int one = 1, ls, s = -1;

	if (getaddrinfo(host, port, &hints, &res))
		return -1;
	if (host) {
		for (int tries = 0; tries < 600; tries++) { /* the server may start slowly: 60 s */
			s = socket(res->ai_family, SOCK_STREAM, 0);
			if (!connect(s, res->ai_addr, res->ai_addrlen))
				break;
			close(s);
			s = -1;
			usleep(100000);
		}
	} else {
		ls = socket(res->ai_family, SOCK_STREAM, 0);
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(ls, res->ai_addr, res->ai_addrlen) && !listen(ls, 1))
			s = accept(ls, NULL, NULL);
		close(ls);
	}
	freeaddrinfo(res);
	return s;
}

void tcp_setup(const char *host, const char *port)
{
	sock = side_open(host, port);
	if (sock < 0)
		DIE("tcp side channel %s:%s", host ? host : "*", port);
}

void xfer(void *out, void *in, size_t n)
{
	if (write(sock, out, n) != (ssize_t)n)
		DIE("tcp write");
	for (size_t got = 0; got < n;) {
		ssize_t r = read(sock, (char *)in + got, n - got);

		if (r <= 0)
			DIE("tcp read (peer gone?)");
		got += r;
	}
}

void barrier(void)
{
	char a = 'b', b;

	xfer(&a, &b, 1);
}

double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

struct ibv_wc poll_wc(struct ibv_cq *cq, int limit_s, const char *what)
{
	double t0 = now_ms();
	struct ibv_wc wc;

	for (;;) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			DIE("poll_cq: %d (%s)", n, what);
		if (n)
			return wc;
		if (now_ms() - t0 > limit_s * 1e3)
			DIE("no completion within %d s (%s)", limit_s, what);
	}
}

struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i] && !ctx; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx)
		DIE("no device %s", name ? name : "");
	return ctx;
}

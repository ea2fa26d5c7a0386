// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "testkit.h"

int passes, failures;
int sock = -1;

/* A socket listening on PORT of every address: IPv6 and IPv4 (mapped) in
 * one where the namespace has IPv6, else IPv4 only; -1 on failure. */
static int listen_any(const char *port)
{
	struct sockaddr_in6 any6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT,
				     .sin6_port = htons((uint16_t)atoi(port)) };
	struct sockaddr_in any4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY),
				    .sin_port = any6.sin6_port };
	int one = 1, off = 0, ls;

	ls = socket(AF_INET6, SOCK_STREAM, 0);
	if (ls >= 0) {
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		setsockopt(ls, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
		if (!bind(ls, (struct sockaddr *)&any6, sizeof(any6)) && !listen(ls, 1))
			return ls;
		close(ls);
	}
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0)
		return -1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (!bind(ls, (struct sockaddr *)&any4, sizeof(any4)) && !listen(ls, 1))
		return ls;
	close(ls);
	return -1;
}

/* A connected side channel: to HOST:PORT, or, HOST NULL, the first peer
 * to connect to PORT.  -1 on failure. */
static int side_open(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	int ls, s = -1;

	if (!host) {
		ls = listen_any(port);
		if (ls < 0)
			return -1;
		s = accept(ls, NULL, NULL);
		close(ls);
		return s;
	}
	if (getaddrinfo(host, port, &hints, &res))
		return -1;
	for (int tries = 0; tries < 600; tries++) { /* the server may start slowly: 60 s */
		s = socket(res->ai_family, SOCK_STREAM, 0);
		if (!connect(s, res->ai_addr, res->ai_addrlen))
			break;
		close(s);
		s = -1;
		usleep(100000);
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

void device_args(int argc, char **argv, const char **dev, int *gidx, int *n)
{
	int opt;

	while ((opt = getopt(argc, argv, n ? "d:g:n:" : "d:g:")) != -1) {
		switch (opt) {
		case 'd': *dev = optarg; break;
		case 'g': *gidx = atoi(optarg); break;
		case 'n': *n = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s -d DEV -g GIDX%s\n", argv[0], n ? " [-n N]" : "");
			exit(2);
		}
	}
}

void rc_connect_local(struct ibv_qp *qp, uint32_t dqpn, int gidx, int access, int timeout,
		      int retry_cnt)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = access };
	union ibv_gid gid;

	if (ibv_query_gid(qp->context, 1, gidx, &gid))
		DIE("query_gid %d", gidx);
	if (qp->state == IBV_QPS_RESET &&
	    ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		DIE("INIT: %s", strerror(errno));
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = dqpn,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = gid, .sgid_index = (uint8_t)gidx, .hop_limit = 64 } },
	};
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		DIE("RTR: %s", strerror(errno));
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = (uint8_t)timeout,
				  .retry_cnt = (uint8_t)retry_cnt, .rnr_retry = 7, .max_rd_atomic = 1 };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		DIE("RTS: %s", strerror(errno));
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

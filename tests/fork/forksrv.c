// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * forksrv: a server that forks a child per client, in the shape of issue
 * 48's fault 3.  The parent accepts TCP connections on PORT; for each it
 * forks a child that creates an rdma CM id, binds INADDR_ANY port 0,
 * listens, and only then sends the port it got over the TCP connection.
 * The client connects to that port, sends one message, gets it back, and
 * disconnects.  With -P the parent has used the rdma CM and verbs itself
 * before it forks (an event channel and a listening id of its own, kept
 * open), so that its children inherit uroce's state.
 *
 *   forksrv -s -p PORT [-P] [-n CLIENTS]   serve CLIENTS clients, then exit
 *   forksrv -c ADDR -p PORT [-n CLIENTS]   connect CLIENTS times in a row
 *
 * Exit 0 only when every client connected (no REJECTED) and every echo
 * matched; a child that fails exits non-zero and the parent reports it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MSG 64

static int fail(int n, const char *what)
{
	fprintf(stderr, "forksrv: client %d: %s: %s\n", n, what, strerror(errno));
	return 1;
}

static void fill(uint8_t *b, int n)
{
	for (int i = 0; i < MSG; i++)
		b[i] = (uint8_t)(n * 131 + i * 7);
}

/* One connection's QP, buffer and messages: echo (server) or ping. */
static int exchange(struct rdma_cm_id *id, int n, int server)
{
	struct ibv_qp_init_attr qa = { .cap = { 1, 1, 1, 1, 0 }, .qp_type = IBV_QPT_RC,
				       .sq_sig_all = 1 };
	uint8_t buf[MSG], want[MSG];
	struct ibv_mr *mr;
	struct ibv_wc wc;

	if (rdma_create_qp(id, NULL, &qa))
		return fail(n, "rdma_create_qp");
	mr = rdma_reg_msgs(id, buf, sizeof(buf));
	if (!mr)
		return fail(n, "rdma_reg_msgs");
	memset(buf, 0, sizeof(buf));
	if (rdma_post_recv(id, NULL, buf, sizeof(buf), mr))
		return fail(n, "rdma_post_recv");
	if (server ? rdma_accept(id, NULL) : rdma_connect(id, NULL))
		return fail(n, server ? "rdma_accept" : "rdma_connect (REJECTED?)");
	fill(want, n);
	if (!server) {
		uint8_t out[MSG];
		struct ibv_mr *omr;

		memcpy(out, want, sizeof(out));
		omr = rdma_reg_msgs(id, out, sizeof(out));
		if (!omr || rdma_post_send(id, NULL, out, sizeof(out), omr, 0) ||
		    rdma_get_send_comp(id, &wc) <= 0 || wc.status)
			return fail(n, "send");
		if (rdma_get_recv_comp(id, &wc) <= 0 || wc.status)
			return fail(n, "receive the echo");
		if (memcmp(buf, want, MSG)) {
			fprintf(stderr, "forksrv: client %d: the echo differs\n", n);
			return 1;
		}
		rdma_dereg_mr(omr);
	} else {
		if (rdma_get_recv_comp(id, &wc) <= 0 || wc.status)
			return fail(n, "receive");
		if (memcmp(buf, want, MSG)) {
			fprintf(stderr, "forksrv: child %d: the message differs\n", n);
			return 1;
		}
		if (rdma_post_send(id, NULL, buf, sizeof(buf), mr, 0) ||
		    rdma_get_send_comp(id, &wc) <= 0 || wc.status)
			return fail(n, "echo");
	}
	rdma_disconnect(id);
	rdma_dereg_mr(mr);
	rdma_destroy_qp(id);
	return 0;
}

static int child(int c, int n)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct rdma_cm_id *lid, *id;
	uint16_t port;

	if (rdma_create_id(NULL, &lid, NULL, RDMA_PS_TCP))
		return fail(n, "rdma_create_id");
	if (rdma_bind_addr(lid, (struct sockaddr *)&a))
		return fail(n, "rdma_bind_addr");
	if (rdma_listen(lid, 1))
		return fail(n, "rdma_listen");
	port = rdma_get_src_port(lid);
	if (write(c, &port, sizeof(port)) != sizeof(port))
		return fail(n, "send the port");
	if (rdma_get_request(lid, &id))
		return fail(n, "rdma_get_request");
	if (exchange(id, n, 1))
		return 1;
	rdma_destroy_id(id);
	rdma_destroy_id(lid);
	close(c);
	return 0;
}

/* What a parent that used the CM before forking holds: kept open. */
static void parent_uses_cm(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;

	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(id, (struct sockaddr *)&a) || rdma_listen(id, 1)) {
		perror("forksrv: the parent's own listener");
		exit(1);
	}
}

static int server(int port, int clients, int use_cm)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, bad = 0;

	if (use_cm)
		parent_uses_cm();
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 16))
		return fail(0, "tcp listen");
	printf("forksrv: listening on port %d\n", port);
	fflush(stdout);
	for (int n = 1; n <= clients; n++) {
		int c = accept(s, NULL, NULL), st;
		pid_t pid;

		if (c < 0)
			return fail(n, "accept");
		pid = fork();
		if (pid == 0)
			_exit(child(c, n));
		close(c);
		if (pid < 0)
			return fail(n, "fork");
		/* one at a time: the clients come in a row */
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "forksrv: child %d failed (status %#x)\n", n, st);
			bad++;
		}
	}
	printf("forksrv: served %d clients, %d children failed\n", clients, bad);
	return bad != 0;
}

static int client(const char *addr, int port, int clients)
{
	for (int n = 1; n <= clients; n++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
		struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai;
		struct rdma_cm_id *id;
		char ports[8];
		uint16_t rport;
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		inet_pton(AF_INET, addr, &a.sin_addr);
		if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)))
			return fail(n, "tcp connect");
		if (read(s, &rport, sizeof(rport)) != sizeof(rport))
			return fail(n, "read the port");
		snprintf(ports, sizeof(ports), "%u", ntohs(rport));
		if (rdma_getaddrinfo(addr, ports, &hints, &ai))
			return fail(n, "rdma_getaddrinfo");
		if (rdma_create_ep(&id, ai, NULL, NULL))
			return fail(n, "rdma_create_ep");
		rdma_freeaddrinfo(ai);
		if (exchange(id, n, 0))
			return 1;
		rdma_destroy_ep(id);
		close(s);
	}
	printf("forksrv: %d clients connected, every echo checked\n", clients);
	return 0;
}

int main(int argc, char **argv)
{
	const char *addr = NULL;
	int opt, srv = 0, port = 0, clients = 200, use_cm = 0;

	while ((opt = getopt(argc, argv, "sc:p:n:P")) != -1) {
		switch (opt) {
		case 's': srv = 1; break;
		case 'c': addr = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'n': clients = atoi(optarg); break;
		case 'P': use_cm = 1; break;
		default: return 2;
		}
	}
	if (srv == !!addr || !port) {
		fprintf(stderr, "usage: forksrv -s -p PORT [-P] [-n N] | -c ADDR -p PORT [-n N]\n");
		return 2;
	}
	setvbuf(stderr, NULL, _IONBF, 0);
	return srv ? server(port, clients, use_cm) : client(addr, port, clients);
}

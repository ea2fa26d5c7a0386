// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The rdma_cm port table (providers/uroce/cm/cm_ports.c) against the
 * kernel's rules (cma.c: cma_check_port, cma_bind_listen): conflicts by
 * address and reuse, listeners found by exact address or wildcard,
 * ephemeral ports, a dead process's bindings reclaimed, one winner among
 * threads racing for a port.  As root it runs in a network namespace of
 * its own (so a private table file, removed at the end); otherwise on
 * the namespace's table with random ports and addresses nobody uses.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "cm/gsi.h"
#include "device/registry.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

#define TCP CM_RDMA_PS_TCP
#define UDP CM_RDMA_PS_UDP

static void ip4(uint8_t ip[16], uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	memset(ip, 0, 16);
	ip[10] = ip[11] = 0xff;
	ip[12] = a, ip[13] = b, ip[14] = c, ip[15] = d;
}

static int bind_(uint16_t ps, const uint8_t *ip, uint16_t port, bool reuse, uint32_t *h)
{
	uint16_t p = port;

	return uroce_gsi_port_bind(ps, ip, &p, reuse, h);
}

struct race { const uint8_t *ip; uint16_t port; int ok; };

static void *racer(void *arg)
{
	struct race *r = arg;
	uint32_t h;

	if (bind_(TCP, r->ip, r->port, false, &h) == 0)
		__atomic_add_fetch(&r->ok, 1, __ATOMIC_RELAXED);
	return NULL;
}

int main(void)
{
	static const uint8_t any[16];
	uint8_t a[16], b[16], c[16], d[16], e[16];
	uint32_t h1, h2, h3, h4, h5;
	uint16_t base, p1 = 0, p2 = 0;
	char nsdir[PATH_MAX], file[PATH_MAX + 64] = "";
	bool private_ns = unshare(CLONE_NEWNET) == 0;

	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	base = 20000 + rand() % 10000;
	uint8_t net = 200 + rand() % 50;

	ip4(a, 10, net, 7, 1);
	ip4(b, 10, net, 7, 2);
	ip4(c, 10, net, 7, 3);
	ip4(d, 10, net, 7, 4);
	ip4(e, 10, net, 7, 5);
	if (private_ns && uroce_ns_dir(nsdir, sizeof(nsdir)) == 0)
		uroce_cm_ports_file(file, sizeof(file), strrchr(nsdir, '/') + 1, geteuid());
	printf("port table: %s\n", private_ns ? file : "the namespace's (not root)");

	/* 1. conflicts (cma_check_port) */
	CHECK(bind_(TCP, a, base, false, &h1) == 0, "bind A:P");
	CHECK(bind_(TCP, a, base, false, &h2) == -EADDRINUSE, "second bind A:P is not EADDRINUSE");
	CHECK(bind_(TCP, b, base, false, &h2) == 0, "bind B:P beside A:P");
	CHECK(bind_(TCP, any, base, false, &h3) == -EADDRNOTAVAIL, "wildcard bind beside A:P");
	CHECK(bind_(UDP, a, base, false, &h3) == 0, "the UDP port space is another");
	uroce_gsi_port_release(h3);

	/* 2. listeners */
	CHECK(uroce_gsi_port_listen(h1) == 0, "listen A:P");
	CHECK(uroce_gsi_port_lookup_listener(TCP, a, base) == getpid(), "listener A:P not found");
	CHECK(uroce_gsi_port_lookup_listener(TCP, b, base) == 0, "B:P is bound, not listening");
	CHECK(uroce_gsi_port_lookup_listener(UDP, a, base) == 0, "listener in the wrong space");
	CHECK(uroce_gsi_port_lookup_listener(TCP, c, base) == 0, "C:P has no listener");

	/* 3. reuseaddr: two may bind, one may listen (cma_bind_listen) */
	CHECK(bind_(TCP, d, base + 1, true, &h3) == 0, "reuse bind 1");
	CHECK(bind_(TCP, d, base + 1, true, &h4) == 0, "reuse bind 2");
	CHECK(bind_(TCP, d, base + 1, false, &h5) == -EADDRINUSE, "a bind without reuse joins");
	CHECK(uroce_gsi_port_listen(h3) == 0, "reuse listen 1");
	CHECK(uroce_gsi_port_listen(h4) == -EADDRINUSE, "a second listener on a reused port");

	/* 4. release */
	CHECK(uroce_gsi_port_release(h1) == 0, "release A:P");
	CHECK(uroce_gsi_port_lookup_listener(TCP, a, base) == 0, "released listener still found");
	CHECK(bind_(TCP, a, base, false, &h1) == 0, "A:P after release");
	CHECK(uroce_gsi_port_release(h1) == 0 && uroce_gsi_port_release(h1) == -EINVAL,
	      "a handle is released once");

	/* 5. ephemeral ports */
	CHECK(uroce_gsi_port_bind(TCP, a, &p1, false, &h1) == 0 &&
	      uroce_gsi_port_bind(TCP, a, &p2, false, &h2) == 0, "ephemeral binds");
	CHECK(p1 >= 32768 && p1 <= 60999 && p2 >= 32768 && p2 <= 60999 && p1 != p2,
	      "ephemeral ports %u %u", p1, p2);

	/* 6. a wildcard listener serves every address */
	CHECK(bind_(TCP, any, base + 2, false, &h5) == 0 && uroce_gsi_port_listen(h5) == 0,
	      "wildcard listen");
	CHECK(uroce_gsi_port_lookup_listener(TCP, e, base + 2) == getpid(), "wildcard not found");

	/* 7. a process killed without releasing: its binding is taken back */
	int pfd[2];
	uint32_t child_h = 0;

	CHECK(pipe(pfd) == 0, "pipe");
	pid_t pid = fork();

	if (pid == 0) {
		uint32_t h;

		if (bind_(TCP, e, base + 3, false, &h) || uroce_gsi_port_listen(h))
			h = 0;
		if (write(pfd[1], &h, sizeof(h)) != sizeof(h))
			_exit(2);
		pause();
		_exit(0);
	}
	CHECK(read(pfd[0], &child_h, sizeof(child_h)) == sizeof(child_h) && child_h,
	      "the child's listen");
	CHECK(uroce_gsi_port_lookup_listener(TCP, e, base + 3) == pid, "the child listens");
	CHECK(bind_(TCP, e, base + 3, false, &h1) == -EADDRINUSE, "the child's port is taken");
	CHECK(uroce_gsi_port_release(child_h) == -EINVAL, "released another process's binding");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK(uroce_gsi_port_lookup_listener(TCP, e, base + 3) == 0, "a dead process listens");
	CHECK(bind_(TCP, e, base + 3, false, &h1) == 0, "a dead process's port is not taken back");

	/* 8. threads racing for one port: one wins */
	struct race r = { c, base + 4, 0 };
	pthread_t t[8];

	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, racer, &r);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	CHECK(r.ok == 1, "%d of 8 racing binds won", r.ok);

	if (file[0])
		unlink(file);
	printf("%s\n", failures ? "FAILED" : "port table: all checks passed");
	return failures ? 1 : 0;
}

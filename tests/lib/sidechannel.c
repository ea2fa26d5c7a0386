// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include <netdb.h>
#include <unistd.h>
#include <sys/socket.h>

#include "sidechannel.h"

int side_open(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res;
	int one = 1, ls, sock = -1;

	if (getaddrinfo(host, port, &hints, &res))
		return -1;
	if (host) {
		for (int tries = 0; tries < 100; tries++) {
			sock = socket(res->ai_family, SOCK_STREAM, 0);
			if (!connect(sock, res->ai_addr, res->ai_addrlen))
				break;
			close(sock);
			sock = -1;
			usleep(100000);
		}
	} else {
		ls = socket(res->ai_family, SOCK_STREAM, 0);
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(ls, res->ai_addr, res->ai_addrlen) && !listen(ls, 1))
			sock = accept(ls, NULL, NULL);
		close(ls);
	}
	freeaddrinfo(res);
	return sock;
}

int side_xfer(int sock, const void *out, void *in, size_t n)
{
	if (write(sock, out, n) != (ssize_t)n)
		return -1;
	for (size_t got = 0; got < n;) {
		ssize_t r = read(sock, (char *)in + got, n - got);

		if (r <= 0)
			return -1;
		got += r;
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The kernel's part of an answer, where the kernel has RDMA netlink
 * (docs/netlink.md, "Merged with the kernel").  Each request goes to the
 * kernel on a socket of its own, opened, used and closed within the call:
 * the emulated socket holds no kernel state, so there is nothing to leak
 * or share across fork.  Every reply message of the request's sequence is
 * copied into the answer with the emulated socket's port id, except the
 * end (NLMSG_DONE of a dump, the ack of a request), which the caller
 * writes after adding uroce's part.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "preload/next.h"
#include "preload/nl.h"

/* A kernel that takes longer than this to answer is taken as gone. */
#define NL_KERNEL_TIMEOUT_MS 5000
#define NL_KERNEL_BUF (64 * 1024)

static int kernel_socket(void)
{
	int (*sock)(int, int, int) = NEXT(int (*)(int, int, int), "socket");
	int (*bnd)(int, const struct sockaddr *, socklen_t) =
		NEXT(int (*)(int, const struct sockaddr *, socklen_t), "bind");
	struct sockaddr_nl local = { .nl_family = AF_NETLINK };
	int fd = sock(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);

	if (fd >= 0 && bnd(fd, (struct sockaddr *)&local, sizeof(local))) {
		NEXT(int (*)(int), "close")(fd);
		fd = -1;
	}
	return fd;
}

int nl_kernel_has_rdma(void)
{
	int fd = kernel_socket();

	if (fd < 0)
		return 0;
	NEXT(int (*)(int), "close")(fd);
	return 1;
}

/* Copy the messages of one datagram; 1 once the end came, 0 for more. */
static int take(struct nl_out *o, const struct nlmsghdr *req, const uint8_t *buf,
		int len, int *status)
{
	const struct nlmsghdr *h = (const struct nlmsghdr *)buf;

	for (; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
		if (h->nlmsg_seq != req->nlmsg_seq)
			continue;
		if (h->nlmsg_type == NLMSG_DONE) {
			*status = 0;
			return 1;
		}
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			*status = h->nlmsg_len >= NLMSG_LENGTH(sizeof(int)) ? e->error : -EPROTO;
			return 1;
		}
		nl_out_raw(o, h, h->nlmsg_len);
	}
	return 0;
}

int nl_kernel_ask(const struct nlmsghdr *req, struct nl_out *o)
{
	ssize_t (*snd)(int, const void *, size_t, int) =
		NEXT(ssize_t (*)(int, const void *, size_t, int), "send");
	ssize_t (*rcv)(int, void *, size_t, int) =
		NEXT(ssize_t (*)(int, void *, size_t, int), "recv");
	int fd = kernel_socket(), status = -ETIMEDOUT, done = 0;
	struct nlmsghdr *copy;
	uint8_t *buf;

	if (fd < 0)
		return -errno;
	buf = malloc(NL_KERNEL_BUF);
	copy = malloc(req->nlmsg_len);
	if (!buf || !copy) {
		status = -ENOMEM;
		goto out;
	}
	/* Always an ack, so that the end of a request is known; the caller
	 * passes it on only if the program asked for one. */
	memcpy(copy, req, req->nlmsg_len);
	copy->nlmsg_pid = 0;
	if (!(copy->nlmsg_flags & NLM_F_DUMP))
		copy->nlmsg_flags |= NLM_F_ACK;
	if (snd(fd, copy, copy->nlmsg_len, 0) < 0) {
		status = -errno;
		goto out;
	}
	while (!done) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, NL_KERNEL_TIMEOUT_MS) <= 0)
			break;
		n = rcv(fd, buf, NL_KERNEL_BUF, 0);
		if (n < 0) {
			status = -errno;
			break;
		}
		done = take(o, req, buf, n, &status);
	}
out:
	free(copy);
	free(buf);
	NEXT(int (*)(int), "close")(fd);
	return status;
}

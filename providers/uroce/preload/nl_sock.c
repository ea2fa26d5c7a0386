// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The socket calls on an emulated NETLINK_RDMA socket (docs/netlink.md).
 *
 * libibverbs finds devices by asking the kernel over RDMA netlink
 * (rdma-core libibverbs/ibdev_nl.c) before it reads SYSFS_PATH, and
 * iproute2's rdma tool knows no other way.  Where SYSFS_PATH is a uroce
 * tree, socket(AF_NETLINK, *, NETLINK_RDMA) gives an AF_UNIX datagram
 * socket connected to itself; bind and getsockname speak sockaddr_nl; a
 * request sent on it is answered at once (nl_answer.c) by datagrams
 * written to the socket itself, which recvmsg then reads, the sender's
 * address given as the kernel's (port 0).  Whether the kernel has RDMA
 * netlink is found at socket(): its answers are then merged in.
 *
 * An fd is ours while the table says so and it is still the socket we
 * made (its inode): a number closed behind close()'s back and reused is
 * never mistaken for ours.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "preload/next.h"
#include "preload/nl.h"

#define EXPORT __attribute__((visibility("default")))
#define NL_MAX_FD 65536

static struct nl_fd {
	atomic_uchar on;
	uint8_t kernel;        /* the kernel has RDMA netlink: merge */
	uint32_t pid;          /* our port id; 0 until bound */
	ino_t ino;
} fds[NL_MAX_FD];

static atomic_int next_pid = -4096;

static struct nl_fd *ours(int fd)
{
	struct stat st;
	struct nl_fd *f;

	if (fd < 0 || fd >= NL_MAX_FD)
		return NULL;
	f = &fds[fd];
	if (!atomic_load_explicit(&f->on, memory_order_acquire))
		return NULL;
	if (fstat(fd, &st) || st.st_ino != f->ino) {
		atomic_store(&f->on, 0);
		return NULL;
	}
	return f;
}

void uroce_nl_forget(int fd)
{
	if (fd >= 0 && fd < NL_MAX_FD && atomic_load_explicit(&fds[fd].on, memory_order_relaxed))
		atomic_store(&fds[fd].on, 0);
}

ssize_t nl_real_send(int fd, const void *buf, size_t len, int flags)
{
	return NEXT(ssize_t (*)(int, const void *, size_t, int), "send")(fd, buf, len, flags);
}

/* The kernel's autobind: the process id first, then negative numbers. */
static uint32_t autobind(void)
{
	static atomic_int pid_taken;

	if (!atomic_exchange(&pid_taken, 1))
		return getpid();
	return (uint32_t)atomic_fetch_sub(&next_pid, 1);
}

/* A datagram socket connected to itself, as an emulated NETLINK_RDMA one. */
static int emulated(int type, int kernel)
{
	int (*sock)(int, int, int) = NEXT(int (*)(int, int, int), "socket");
	struct sockaddr_un_min { sa_family_t family; } any = { AF_UNIX };
	struct sockaddr_storage self;
	socklen_t len = sizeof(self);
	int sndbuf = NL_SNDBUF, fd;
	struct stat st;

	fd = sock(AF_UNIX, SOCK_DGRAM | (type & (SOCK_CLOEXEC | SOCK_NONBLOCK)), 0);
	if (fd < 0)
		return -1;
	/* Autobind to a fresh abstract address, then connect to it. */
	if (bind(fd, (struct sockaddr *)&any, sizeof(any)) ||
	    getsockname(fd, (struct sockaddr *)&self, &len) ||
	    connect(fd, (struct sockaddr *)&self, len) || fstat(fd, &st))
		goto fail;
	NEXT(int (*)(int, int, int, const void *, socklen_t), "setsockopt")
		(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (fd >= NL_MAX_FD) {
		errno = EMFILE;
		goto fail;
	}
	fds[fd].kernel = kernel;
	fds[fd].pid = 0;
	fds[fd].ino = st.st_ino;
	atomic_store_explicit(&fds[fd].on, 1, memory_order_release);
	return fd;
fail:
	NEXT(int (*)(int), "close")(fd);
	return -1;
}

EXPORT int socket(int domain, int type, int protocol)
{
	int (*sock)(int, int, int) = NEXT(int (*)(int, int, int), "socket");
	int fd, kernel;

	if (domain != AF_NETLINK || protocol != NETLINK_RDMA || !nl_devs_present())
		return sock(domain, type, protocol);
	/* Opening it loads ib_core where the kernel has it as a module. */
	fd = sock(domain, type, protocol);
	kernel = fd >= 0;
	if (kernel)
		NEXT(int (*)(int), "close")(fd);
	return emulated(type, kernel);
}

EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	const struct sockaddr_nl *nl = (const struct sockaddr_nl *)addr;
	struct nl_fd *f = ours(fd);

	if (!f)
		return NEXT(int (*)(int, const struct sockaddr *, socklen_t), "bind")(fd, addr, len);
	if (len < sizeof(*nl) || nl->nl_family != AF_NETLINK) {
		errno = EINVAL;
		return -1;
	}
	f->pid = nl->nl_pid ? nl->nl_pid : autobind();
	return 0;
}

EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	if (!ours(fd))
		return NEXT(int (*)(int, const struct sockaddr *, socklen_t), "connect")(fd, addr, len);
	/* Connecting to the kernel (port 0) is what it is already. */
	if (len < sizeof(struct sockaddr_nl) || addr->sa_family != AF_NETLINK) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

static void put_addr(void *addr, socklen_t *len, uint32_t pid)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK, .nl_pid = pid };

	if (!addr || !len)
		return;
	memcpy(addr, &nl, *len < sizeof(nl) ? *len : sizeof(nl));
	*len = sizeof(nl);
}

EXPORT int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct nl_fd *f = ours(fd);

	if (!f)
		return NEXT(int (*)(int, struct sockaddr *, socklen_t *), "getsockname")(fd, addr, len);
	put_addr(addr, len, f->pid);
	return 0;
}

EXPORT int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	int (*next)(int, int, int, const void *, socklen_t) =
		NEXT(int (*)(int, int, int, const void *, socklen_t), "setsockopt");

	if (!ours(fd))
		return next(fd, level, name, val, len);
	/* NETLINK_EXT_ACK, CAP_ACK, ADD_MEMBERSHIP...: accepted; no events
	 * are ever sent (docs/netlink.md).  Buffer sizes stay ours. */
	if (level == SOL_NETLINK ||
	    (level == SOL_SOCKET && (name == SO_SNDBUF || name == SO_RCVBUF ||
				     name == SO_SNDBUFFORCE || name == SO_RCVBUFFORCE)))
		return 0;
	return next(fd, level, name, val, len);
}

EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	int (*next)(int, int, int, void *, socklen_t *) =
		NEXT(int (*)(int, int, int, void *, socklen_t *), "getsockopt");
	int v;

	if (!ours(fd) || level != SOL_SOCKET || !val || !len || *len < sizeof(int))
		return next(fd, level, name, val, len);
	switch (name) {
	case SO_DOMAIN: v = AF_NETLINK; break;
	case SO_PROTOCOL: v = NETLINK_RDMA; break;
	case SO_TYPE: v = SOCK_RAW; break;
	default: return next(fd, level, name, val, len);
	}
	memcpy(val, &v, sizeof(v));
	*len = sizeof(v);
	return 0;
}

/* Answer every request in BUF; what sendmsg returns. */
static ssize_t requests(int fd, struct nl_fd *f, const void *buf, size_t len)
{
	const struct nlmsghdr *h = buf;
	int left = len;

	if (!f->pid)
		f->pid = autobind(); /* as the kernel binds on a first send */
	for (; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left))
		if (h->nlmsg_flags & NLM_F_REQUEST)
			nl_answer(fd, f->pid, f->kernel, h);
	return len;
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct nl_fd *f = ours(fd);
	uint8_t small[NL_DGRAM], *buf = small;
	size_t len = 0, at = 0;
	ssize_t ret;

	if (!f)
		return NEXT(ssize_t (*)(int, const struct msghdr *, int), "sendmsg")(fd, msg, flags);
	for (size_t i = 0; i < msg->msg_iovlen; i++)
		len += msg->msg_iov[i].iov_len;
	/* Requests are a few dozen bytes; a larger batch is copied to the heap. */
	if (len > sizeof(small) && !(buf = malloc(len))) {
		errno = ENOBUFS;
		return -1;
	}
	for (size_t i = 0; i < msg->msg_iovlen; i++) {
		memcpy(buf + at, msg->msg_iov[i].iov_base, msg->msg_iov[i].iov_len);
		at += msg->msg_iov[i].iov_len;
	}
	ret = requests(fd, f, buf, len);
	if (buf != small)
		free(buf);
	return ret;
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
		      const struct sockaddr *addr, socklen_t alen)
{
	struct nl_fd *f = ours(fd);

	if (!f)
		return NEXT(ssize_t (*)(int, const void *, size_t, int, const struct sockaddr *,
					socklen_t), "sendto")(fd, buf, len, flags, addr, alen);
	return requests(fd, f, buf, len);
}

EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	struct nl_fd *f = ours(fd);

	if (!f)
		return nl_real_send(fd, buf, len, flags);
	return requests(fd, f, buf, len);
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	ssize_t ret = NEXT(ssize_t (*)(int, struct msghdr *, int), "recvmsg")(fd, msg, flags);

	if (ret >= 0 && ours(fd))
		put_addr(msg->msg_name, &msg->msg_namelen, 0);
	return ret;
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
			struct sockaddr *addr, socklen_t *alen)
{
	ssize_t ret = NEXT(ssize_t (*)(int, void *, size_t, int, struct sockaddr *, socklen_t *),
			   "recvfrom")(fd, buf, len, flags, addr, alen);

	if (ret >= 0 && ours(fd))
		put_addr(addr, alen, 0);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * liburoce-preload.so, part two: the rdma_cm character device, emulated
 * in-process for stock librdmacm (docs/cm.md).
 *
 * librdmacm reaches the kernel's UCMA only through open(), fstat(),
 * write() and close() on /dev/infiniband/rdma_cm, all through the PLT.
 * We answer them: opening the path gives an fd of the provider's UCMA
 * layer (an eventfd, so poll/epoll/O_NONBLOCK work natively), fstat on it
 * says "character device", write() runs the command, close() tears the
 * file's ids down.  A dup of such an fd (dup, dup2, dup3, fcntl
 * F_DUPFD) is one more descriptor of the same file, and close_range()
 * closes what it closes, as with the kernel's file.  Every other call
 * goes to the next definition (dlsym RTLD_NEXT), untouched.
 *
 * Where the kernel has its own rdma_cm (rdma_ucm loaded), a file starts
 * undecided, with the kernel's file open beside it: its ids are made in
 * both, with the kernel's numbers, until the first command that names an
 * address (bind, resolve, join, listen) decides the file.  On a uroce
 * device's address it stays ours; on any other the kernel's file takes
 * the fd number over (dup3) and the program talks to the kernel from then
 * on, ours torn down (docs/cm.md, "Beside the kernel's rdma CM").
 */
/* We define open and open64 (fstat and fstat64) separately: no renaming. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <linux/close_range.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <rdma/rdma_user_cm.h>

#include "cm/cm.h"
#include "preload/next.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_TRACKED_FD 65536

static const struct uroce_ucma_ops *_Atomic ucma;
/* One byte per fd number: is it an rdma_cm file of ours (CM_OURS), or one
 * a forked child inherited from its parent (CM_PARENTS)?  Tested on every
 * write() of the process, so it is one load. */
enum { CM_NOT, CM_OURS, CM_PARENTS, CM_UNDECIDED };
static atomic_uchar cm_fd[MAX_TRACKED_FD];
static atomic_int cm_fd_max = -1;
/* The kernel's rdma_cm file beside ours, + 1 (0: none).  An undecided
 * file's ids are made in it too; a file decided ours keeps it open, so
 * the kernel hands none of our ids' numbers to another of its ids. */
static atomic_int cm_kfd[MAX_TRACKED_FD];

/* A forked child: the parent's rdma_cm files are the parent's.  Their
 * ids, connections and events live in the parent's memory, and closing
 * the child's copy must not tear down the parent's connections (the
 * kernel's file would live on in the parent too).  So a write on one
 * fails with EPERM and close() only closes the descriptor (docs/fork.md).
 * Async-signal-safe: plain stores. */
static void forget_parents_files(void)
{
	int max = atomic_load_explicit(&cm_fd_max, memory_order_relaxed);

	for (int fd = 0; fd <= max; fd++)
		if (atomic_load_explicit(&cm_fd[fd], memory_order_relaxed) == CM_OURS ||
		    atomic_load_explicit(&cm_fd[fd], memory_order_relaxed) == CM_UNDECIDED)
			atomic_store_explicit(&cm_fd[fd], CM_PARENTS, memory_order_relaxed);
}

__attribute__((constructor)) static void preload_cm_init(void)
{
	pthread_atfork(NULL, NULL, forget_parents_files);
}

EXPORT void uroce_preload_set_ucma(const struct uroce_ucma_ops *ops)
{
	atomic_store(&ucma, ops);
}

/* What FD is: CM_NOT, or the kind of rdma_cm file of ours. */
static int is_cm_fd(int fd)
{
	return fd >= 0 && fd < MAX_TRACKED_FD ?
	       atomic_load_explicit(&cm_fd[fd], memory_order_relaxed) : CM_NOT;
}

static int is_cm_path(const char *path)
{
	return path && atomic_load(&ucma) && !strcmp(path, UROCE_RDMA_CM_PATH);
}

/* FD is an rdma_cm fd of KIND now. */
static void cm_mark(int fd, int kind)
{
	int max = atomic_load(&cm_fd_max);

	atomic_store(&cm_fd[fd], kind);
	while (fd > max && !atomic_compare_exchange_weak(&cm_fd_max, &max, fd))
		;
}

/* FD, an rdma_cm fd, is closed (or about to be, or replaced by a dup2):
 * it is no longer ours, and the UCMA layer lets go of it (the file goes
 * with its last fd).  An inherited one was never the child's to tear
 * down. */
static void cm_forget(int fd)
{
	int kind = atomic_load_explicit(&cm_fd[fd], memory_order_relaxed), kfd;

	if (!kind)
		return;
	atomic_store(&cm_fd[fd], CM_NOT);
	if (kind == CM_OURS || kind == CM_UNDECIDED)
		atomic_load(&ucma)->close(fd);
	kfd = atomic_exchange(&cm_kfd[fd], 0) - 1;
	if (kfd >= 0) /* a forked child's: only its descriptor */
		NEXT(int (*)(int), "close")(kfd);
}

/* The kernel's rdma_cm, opened as the program opens ours; -1 if none. */
static int kernel_open(int flags)
{
	static atomic_int muxing;
	int kfd = NEXT(int (*)(const char *, int, ...), "open")(UROCE_RDMA_CM_PATH,
			O_RDWR | O_CLOEXEC | (flags & O_NONBLOCK));

	if (kfd >= 0 && !atomic_exchange(&muxing, 1))
		atomic_load(&ucma)->mux();
	return kfd;
}

static int cm_open(int flags)
{
	const struct uroce_ucma_ops *ops = atomic_load(&ucma);
	int err = errno, kfd = kernel_open(flags), fd;

	errno = err;
	fd = ops->open(flags);
	if (fd >= MAX_TRACKED_FD || (fd < 0 && kfd >= 0)) {
		err = fd >= 0 ? EMFILE : errno;
		if (fd >= 0) {
			ops->close(fd);
			NEXT(int (*)(int), "close")(fd);
		}
		if (kfd >= 0)
			NEXT(int (*)(int), "close")(kfd);
		errno = err;
		return -1;
	}
	if (fd >= 0) {
		atomic_store(&cm_kfd[fd], kfd + 1);
		cm_mark(fd, kfd >= 0 ? CM_UNDECIDED : CM_OURS);
	}
	return fd;
}

/* open(2)'s optional third argument, present with O_CREAT or O_TMPFILE. */
#define OPEN_MODE(flags, mode)                                   \
	do {                                                     \
		if ((flags) & (O_CREAT | O_TMPFILE)) {           \
			va_list ap_;                             \
			va_start(ap_, flags);                    \
			mode = va_arg(ap_, int);                 \
			va_end(ap_);                             \
		}                                                \
	} while (0)

EXPORT int open(const char *path, int flags, ...)
{
	int mode = 0;

	OPEN_MODE(flags, mode);
	if (is_cm_path(path))
		return cm_open(flags);
	return NEXT(int (*)(const char *, int, ...), "open")(path, flags, mode);
}

EXPORT int open64(const char *path, int flags, ...)
{
	int mode = 0;

	OPEN_MODE(flags, mode);
	if (is_cm_path(path))
		return cm_open(flags);
	return NEXT(int (*)(const char *, int, ...), "open64")(path, flags, mode);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	int mode = 0;

	OPEN_MODE(flags, mode);
	if (is_cm_path(path))
		return cm_open(flags);
	return NEXT(int (*)(int, const char *, int, ...), "openat")(dirfd, path, flags, mode);
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	int mode = 0;

	OPEN_MODE(flags, mode);
	if (is_cm_path(path))
		return cm_open(flags);
	return NEXT(int (*)(int, const char *, int, ...), "openat64")(dirfd, path, flags, mode);
}

/* _FORTIFY_SOURCE's checked variants. */
EXPORT int __open_2(const char *path, int flags)
{
	if (is_cm_path(path))
		return cm_open(flags);
	return NEXT(int (*)(const char *, int), "__open_2")(path, flags);
}

EXPORT int __open64_2(const char *path, int flags)
{
	if (is_cm_path(path))
		return cm_open(flags);
	return NEXT(int (*)(const char *, int), "__open64_2")(path, flags);
}

/* What the kernel's misc device looks like to fstat. */
static void cm_stat(struct stat *st)
{
	st->st_mode = S_IFCHR | 0666;
	st->st_rdev = makedev(UROCE_RDMA_CM_MAJOR, UROCE_RDMA_CM_MINOR);
	st->st_size = 0;
}

EXPORT int fstat(int fd, struct stat *st)
{
	int ret = NEXT(int (*)(int, struct stat *), "fstat")(fd, st);

	if (!ret && is_cm_fd(fd))
		cm_stat(st);
	return ret;
}

EXPORT int fstat64(int fd, struct stat64 *st)
{
	int ret = NEXT(int (*)(int, struct stat64 *), "fstat64")(fd, st);

	if (!ret && is_cm_fd(fd))
		cm_stat((struct stat *)st); /* same layout on 64-bit */
	return ret;
}

/* Binaries built against glibc < 2.33 call the versioned stat entry points. */
EXPORT int __fxstat(int ver, int fd, struct stat *st)
{
	int ret = NEXT(int (*)(int, int, struct stat *), "__fxstat")(ver, fd, st);

	if (!ret && is_cm_fd(fd))
		cm_stat(st);
	return ret;
}

EXPORT int __fxstat64(int ver, int fd, struct stat64 *st)
{
	int ret = NEXT(int (*)(int, int, struct stat64 *), "__fxstat64")(ver, fd, st);

	if (!ret && is_cm_fd(fd))
		cm_stat((struct stat *)st);
	return ret;
}

static ssize_t real_write(int fd, const void *buf, size_t len)
{
	return NEXT(ssize_t (*)(int, const void *, size_t), "write")(fd, buf, len);
}

/* A command to our file; one that waited while the kernel's file took
 * the fd over (a GET_EVENT) is written again, to the kernel. */
static ssize_t ours(int fd, const void *buf, size_t len)
{
	ssize_t ret = atomic_load(&ucma)->write(fd, buf, len);

	if (ret < 0 && errno == EREMCHG)
		return real_write(fd, buf, len);
	return ret;
}

/* The file is the kernel's from now on: its file takes FD's number, with
 * FD's flags; ours goes, waking its waiters to write again. */
static int to_kernel(int fd)
{
	int kfd = atomic_load(&cm_kfd[fd]) - 1;
	int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);

	if (fl >= 0)
		fcntl(kfd, F_SETFL, (fcntl(kfd, F_GETFL) & ~O_NONBLOCK) | (fl & O_NONBLOCK));
	if (NEXT(int (*)(int, int, int), "dup3")(kfd, fd,
					       fdfl >= 0 && (fdfl & FD_CLOEXEC) ? O_CLOEXEC : 0) < 0)
		return -1;
	atomic_store(&cm_fd[fd], CM_NOT);
	atomic_store(&cm_kfd[fd], 0);
	NEXT(int (*)(int), "close")(kfd);
	atomic_load(&ucma)->detach(fd);
	return 0;
}

/* The addresses a command names, for the mux; whether it names any. */
static int cmd_addrs(uint32_t cmd, const void *body, size_t len, struct sockaddr_storage *src,
		     struct sockaddr_storage *dst, int *has_src, int *has_dst)
{
	union {
		struct rdma_ucm_bind_ip bind_ip;
		struct rdma_ucm_bind bind;
		struct rdma_ucm_resolve_ip resolve_ip;
		struct rdma_ucm_resolve_addr resolve_addr;
		struct rdma_ucm_join_ip_mcast join_ip;
		struct rdma_ucm_join_mcast join;
	} c;

	memset(&c, 0, sizeof(c));
	memcpy(&c, body, len < sizeof(c) ? len : sizeof(c));
	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	*has_src = *has_dst = 0;
#define TAKE(to, from, flag) (memcpy(to, &(from), sizeof(from) < sizeof(*to) ? sizeof(from) : sizeof(*to)), *flag = 1)
	switch (cmd) {
	case RDMA_USER_CM_CMD_BIND_IP:
		TAKE(src, c.bind_ip.addr, has_src);
		return 1;
	case RDMA_USER_CM_CMD_BIND:
		TAKE(src, c.bind.addr, has_src);
		return 1;
	case RDMA_USER_CM_CMD_RESOLVE_IP:
		TAKE(src, c.resolve_ip.src_addr, has_src);
		TAKE(dst, c.resolve_ip.dst_addr, has_dst);
		return 1;
	case RDMA_USER_CM_CMD_RESOLVE_ADDR:
		TAKE(src, c.resolve_addr.src_addr, has_src);
		TAKE(dst, c.resolve_addr.dst_addr, has_dst);
		return 1;
	case RDMA_USER_CM_CMD_JOIN_IP_MCAST:
		TAKE(dst, c.join_ip.addr, has_dst);
		return 1;
	case RDMA_USER_CM_CMD_JOIN_MCAST:
		TAKE(dst, c.join.addr, has_dst);
		return 1;
	case RDMA_USER_CM_CMD_LISTEN:
		return 1; /* an id not bound: the wildcard */
	}
#undef TAKE
	return 0;
}

/* A command on an undecided file (see the top of this file). */
static ssize_t undecided(int fd, const void *buf, size_t len)
{
	const struct uroce_ucma_ops *ops = atomic_load(&ucma);
	int kfd = atomic_load(&cm_kfd[fd]) - 1, has_src, has_dst, route;
	struct sockaddr_storage src, dst;
	struct rdma_ucm_cmd_hdr hdr;
	const uint8_t *body = (const uint8_t *)buf + sizeof(hdr);
	size_t blen;
	ssize_t ret;

	if (len < sizeof(hdr))
		return ours(fd, buf, len);
	memcpy(&hdr, buf, sizeof(hdr));
	blen = hdr.in < len - sizeof(hdr) ? hdr.in : len - sizeof(hdr);
	switch (hdr.cmd) {
	case RDMA_USER_CM_CMD_CREATE_ID: {
		struct rdma_ucm_create_id cmd = { 0 };
		struct rdma_ucm_create_id_resp resp;

		/* the kernel's first: the id is its number in both */
		ret = real_write(kfd, buf, len);
		if (ret < 0)
			return ret;
		memcpy(&cmd, body, blen < sizeof(cmd) ? blen : sizeof(cmd));
		memcpy(&resp, (void *)(uintptr_t)cmd.response, sizeof(resp));
		ret = ops->write_as(fd, buf, len, resp.id);
		if (ret < 0) {
			int err = errno;
			struct {
				struct rdma_ucm_cmd_hdr hdr;
				struct rdma_ucm_destroy_id cmd;
			} d = { { RDMA_USER_CM_CMD_DESTROY_ID, sizeof(d.cmd),
				  sizeof(struct rdma_ucm_destroy_id_resp) },
				{ cmd.response, resp.id, 0 } };

			real_write(kfd, &d, sizeof(d));
			errno = err;
		}
		return ret;
	}
	case RDMA_USER_CM_CMD_DESTROY_ID:
	case RDMA_USER_CM_CMD_SET_OPTION:
		real_write(kfd, buf, len); /* both; ours answers */
		return ours(fd, buf, len);
	}
	if (!cmd_addrs(hdr.cmd, body, blen, &src, &dst, &has_src, &has_dst))
		return ours(fd, buf, len);
	route = ops->route(has_src ? (struct sockaddr *)&src : NULL,
			   has_dst ? (struct sockaddr *)&dst : NULL);
	if (route == 0 && !to_kernel(fd))
		return real_write(fd, buf, len);
	if (route == 1)
		atomic_store(&cm_fd[fd], CM_OURS);
	/* AF_IB (-1): ours refuses it, the file stays undecided */
	return ours(fd, buf, len);
}

/* A file decided ours destroys the kernel's id of the same number too. */
static ssize_t decided_ours(int fd, const void *buf, size_t len)
{
	int kfd = atomic_load(&cm_kfd[fd]) - 1;
	struct rdma_ucm_cmd_hdr hdr;

	if (kfd >= 0 && len >= sizeof(hdr) + sizeof(struct rdma_ucm_destroy_id)) {
		struct rdma_ucm_destroy_id d;

		memcpy(&hdr, buf, sizeof(hdr));
		memcpy(&d, (const uint8_t *)buf + sizeof(hdr), sizeof(d));
		if (hdr.cmd == RDMA_USER_CM_CMD_DESTROY_ID && d.id < UROCE_UCMA_OWN_BASE)
			real_write(kfd, buf, len);
	}
	return ours(fd, buf, len);
}

EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	switch (is_cm_fd(fd)) {
	case CM_OURS:
		return decided_ours(fd, buf, len);
	case CM_UNDECIDED:
		return undecided(fd, buf, len);
	case CM_PARENTS:
		errno = EPERM;
		return -1;
	}
	return real_write(fd, buf, len);
}

EXPORT int close(int fd)
{
	uroce_nl_forget(fd);
	if (is_cm_fd(fd))
		cm_forget(fd);
	return NEXT(int (*)(int), "close")(fd);
}

/*
 * Dups.  The next definition makes the descriptor (libc's, or another
 * preload's: rsockets' dup2 closes an rsocket NEWFD itself, through
 * close() above); then, if OLDFD was an rdma_cm fd, NEWFD is one more
 * descriptor of its file.  dup2/dup3 onto an rdma_cm fd first lets go of
 * that one, as the kernel closes NEWFD.  No lock of ours is held across
 * the next call.
 */

/* RET, the new fd of a dup of OLDFD (of KIND), is tracked: RET, or -1
 * (then RET is closed) if it cannot be. */
static int cm_dup_done(int oldfd, int kind, int ret)
{
	if (ret < 0 || !kind)
		return ret;
	/* The mux cannot give a file of several fds to the kernel's file
	 * (docs/cm.md): a dup of an undecided one decides it ours. */
	if (kind == CM_UNDECIDED) {
		atomic_store(&cm_fd[oldfd], CM_OURS);
		kind = CM_OURS;
	}
	if (ret >= MAX_TRACKED_FD ||
	    (kind == CM_OURS && atomic_load(&ucma)->dup(oldfd, ret))) {
		int err = ret >= MAX_TRACKED_FD ? EMFILE : errno;

		NEXT(int (*)(int), "close")(ret);
		errno = err;
		return -1;
	}
	cm_mark(ret, kind);
	return ret;
}

/* NEWFD, which dup2/dup3 just made (RET == NEWFD) a copy of OLDFD: what
 * it was before is let go of. */
static void dup_replaced(int oldfd, int newfd, int ret)
{
	if (ret != newfd || oldfd == newfd)
		return;
	uroce_nl_forget(newfd);
	if (is_cm_fd(newfd))
		cm_forget(newfd);
}

EXPORT int dup(int oldfd)
{
	int kind = is_cm_fd(oldfd);

	return cm_dup_done(oldfd, kind, NEXT(int (*)(int), "dup")(oldfd));
}

EXPORT int dup2(int oldfd, int newfd)
{
	int kind = is_cm_fd(oldfd);
	int ret = NEXT(int (*)(int, int), "dup2")(oldfd, newfd);

	if (oldfd == newfd)
		return ret;
	dup_replaced(oldfd, newfd, ret);
	return cm_dup_done(oldfd, kind, ret);
}

EXPORT int dup3(int oldfd, int newfd, int flags)
{
	int kind = is_cm_fd(oldfd);
	int ret = NEXT(int (*)(int, int, int), "dup3")(oldfd, newfd, flags);

	dup_replaced(oldfd, newfd, ret);
	return cm_dup_done(oldfd, kind, ret);
}

/* fcntl's third argument is an int or a pointer; passed on as a pointer,
 * as glibc's own fcntl reads it. */
#define FCNTL_WRAPPER(name)                                                        \
	EXPORT int name(int fd, int cmd, ...)                                      \
	{                                                                          \
		int kind = (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) ? is_cm_fd(fd) : 0; \
		va_list ap;                                                        \
		void *arg;                                                         \
                                                                                   \
		va_start(ap, cmd);                                                 \
		arg = va_arg(ap, void *);                                          \
		va_end(ap);                                                        \
		return cm_dup_done(fd, kind,                                       \
				   NEXT(int (*)(int, int, ...), #name)(fd, cmd, arg)); \
	}
FCNTL_WRAPPER(fcntl)
FCNTL_WRAPPER(fcntl64)

/* close_range(2) and closefrom(3) close without close(): the rdma_cm
 * (and netlink) fds in the range go as close() would let them go. */
static void forget_range(unsigned int first, unsigned int last)
{
	int max = atomic_load(&cm_fd_max);

	for (unsigned int fd = first; fd <= last && fd < MAX_TRACKED_FD; fd++) {
		uroce_nl_forget((int)fd);
		if ((int)fd <= max && is_cm_fd((int)fd))
			cm_forget((int)fd);
	}
}

EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	int ret = NEXT(int (*)(unsigned int, unsigned int, int), "close_range")(first, last, flags);

	/* CLOSE_RANGE_CLOEXEC only marks them */
	if (!ret && !(flags & CLOSE_RANGE_CLOEXEC))
		forget_range(first, last);
	return ret;
}

EXPORT void closefrom(int lowfd)
{
	NEXT(void (*)(int), "closefrom")(lowfd);
	if (lowfd >= 0)
		forget_range((unsigned int)lowfd, ~0u);
}

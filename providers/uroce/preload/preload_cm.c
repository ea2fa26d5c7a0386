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

#include "cm/cm.h"
#include "preload/next.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_TRACKED_FD 65536

static const struct uroce_ucma_ops *_Atomic ucma;
/* One byte per fd number: is it an rdma_cm file of ours (CM_OURS), or one
 * a forked child inherited from its parent (CM_PARENTS)?  Tested on every
 * write() of the process, so it is one load. */
enum { CM_NOT, CM_OURS, CM_PARENTS };
static atomic_uchar cm_fd[MAX_TRACKED_FD];
static atomic_int cm_fd_max = -1;

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
		if (atomic_load_explicit(&cm_fd[fd], memory_order_relaxed) == CM_OURS)
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

static int is_cm_fd(int fd)
{
	return fd >= 0 && fd < MAX_TRACKED_FD &&
	       atomic_load_explicit(&cm_fd[fd], memory_order_relaxed);
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
	int kind = atomic_load_explicit(&cm_fd[fd], memory_order_relaxed);

	if (!kind)
		return;
	atomic_store(&cm_fd[fd], CM_NOT);
	if (kind == CM_OURS)
		atomic_load(&ucma)->close(fd);
}

static int cm_open(int flags)
{
	const struct uroce_ucma_ops *ops = atomic_load(&ucma);
	int fd = ops->open(flags);

	if (fd >= MAX_TRACKED_FD) {
		ops->close(fd);
		NEXT(int (*)(int), "close")(fd);
		errno = EMFILE;
		return -1;
	}
	if (fd >= 0)
		cm_mark(fd, CM_OURS);
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

EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	switch (is_cm_fd(fd)) {
	case CM_OURS:
		return atomic_load(&ucma)->write(fd, buf, len);
	case CM_PARENTS:
		errno = EPERM;
		return -1;
	}
	return NEXT(ssize_t (*)(int, const void *, size_t), "write")(fd, buf, len);
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

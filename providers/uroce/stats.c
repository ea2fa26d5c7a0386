// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Where the counters live (docs/stats.md).  Each process using a device
 * publishes one record file, NSDIR/stats/DEV/PID (PID.N if that name is
 * taken), mapped shared: the engine counts straight into it and `uroce
 * stat` reads it.  When the engine stops, the record is folded into the
 * device's "retired" record and removed; a record whose writer died
 * without doing so (its pid gone, or reused: the start time differs) is
 * folded by the next attach or `uroce stat`.  Every fold happens under
 * flock(LOCK_EX) on the retired file, and readers sum under the same
 * lock, so a process's counts are never seen twice or not at all.
 *
 * Compiled into the provider and (with UROCE_STATS_NO_ENGINE) into the
 * uroce command, which uses the functions declared in <uroce/stats.h>.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <uroce/stats.h>

#include "registry.h"
#ifndef UROCE_STATS_NO_ENGINE
#include "engine.h"
#endif

#define HDR_LEN offsetof(struct uroce_stats_shm, counters)

const char *uroce_stat_name(enum uroce_stat e)
{
	static const char *const names[UROCE_STAT_COUNT] = {
#define STAT_NAME(e, n) [UROCE_STAT_##e] = n,
		UROCE_STAT_LIST(STAT_NAME)
#undef STAT_NAME
	};

	return (unsigned)e < UROCE_STAT_COUNT ? names[e] : "unknown";
}

/* Is the writer of a record with PID and start time ST still running? */
static bool writer_alive(int32_t pid, uint64_t st)
{
	uint64_t now;

	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH))
		return false;
	now = uroce_proc_starttime(pid);
	/* /proc hidden (hidepid) but kill() says it exists: believe it. */
	return now == 0 || now == st;
}

int uroce_stats_dir(char *buf, size_t len, const char *nsdir, const char *dev)
{
	int n = snprintf(buf, len, "%s/stats/%s", nsdir, dev);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int uroce_stats_mkdir(const char *nsdir, const char *dev)
{
	char path[PATH_MAX];
	int ret;

	if (snprintf(path, sizeof(path), "%s/stats", nsdir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if ((ret = uroce_mkdirs(path, 0755)))
		return ret;
	if ((ret = uroce_stats_dir(path, sizeof(path), nsdir, dev)))
		return ret;
	if (mkdir(path, 01777))
		return errno == EEXIST ? 0 : -errno;
	/* Every user of the device writes its record here; the sticky bit
	 * keeps them from removing each other's (the umask would not). */
	return chmod(path, 01777) ? -errno : 0;
}

/* Open DIR's retired file (creating it if CREATE; read-only if that is all
 * the caller may) and lock it, waiting a second at most: a stuck holder
 * must not stop programs from opening the device.  fd or -errno. */
static int lock_retired(const char *dir, bool create, bool *writable)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	if (snprintf(path, sizeof(path), "%s/" UROCE_STATS_RETIRED, dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	*writable = true;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (create ? O_CREAT : 0), 0666);
	if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS)) {
		*writable = false;
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		close(fd);
		return -EINVAL;
	}
	/* Whoever folds a record writes it: all users (as the QPN table). */
	if (*writable && st.st_uid == geteuid() && (st.st_mode & 07777) != 0666)
		fchmod(fd, 0666);
	for (int i = 0; flock(fd, LOCK_EX | LOCK_NB); i++) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		if ((errno != EWOULDBLOCK && errno != EINTR) || i >= 200) {
			close(fd);
			return -EWOULDBLOCK;
		}
		nanosleep(&ts, NULL);
	}
	return fd;
}

/* The retired record of FD (its lock held); a fresh one if it has none yet
 * (or one of another layout version). */
static void retired_load(int fd, struct uroce_stats_shm *r, const char *dev)
{
	ssize_t n = pread(fd, r, sizeof(*r), 0);

	if (n < (ssize_t)HDR_LEN || r->magic != UROCE_STATS_MAGIC ||
	    r->version != UROCE_STATS_VERSION) {
		memset(r, 0, sizeof(*r));
		r->magic = UROCE_STATS_MAGIC;
		r->version = UROCE_STATS_VERSION;
		snprintf(r->device, sizeof(r->device), "%s", dev);
	} else if ((size_t)n < sizeof(*r)) {
		memset((char *)r + n, 0, sizeof(*r) - n);
	}
	/* A newer writer may have more counters: keep them (not rewritten). */
	if (r->ncounters < UROCE_STAT_COUNT)
		r->ncounters = UROCE_STAT_COUNT;
}

static int retired_add(int fd, const char *dev, const uint64_t c[UROCE_STAT_COUNT])
{
	struct uroce_stats_shm r;

	retired_load(fd, &r, dev);
	for (int i = 0; i < UROCE_STAT_COUNT; i++)
		r.counters[i] += c[i];
	return pwrite(fd, &r, sizeof(r), 0) == (ssize_t)sizeof(r) ? 0 : -EIO;
}

/* Map record NAME of DIRFD read-only, if it is one. */
static struct uroce_stats_shm *map_record(int dirfd, const char *name, size_t *len)
{
	struct uroce_stats_shm *m;
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < (off_t)HDR_LEN) {
		close(fd);
		return NULL;
	}
	*len = st.st_size;
	m = mmap(NULL, *len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	if (m->magic != UROCE_STATS_MAGIC || m->version != UROCE_STATS_VERSION ||
	    HDR_LEN + (size_t)m->ncounters * sizeof(uint64_t) > *len) {
		munmap(m, *len);
		return NULL;
	}
	return m;
}

/* A copy of record M: header, and its counters loaded one by one. */
static void snapshot(struct uroce_stats_shm *m, struct uroce_stats_shm *out)
{
	uint32_t n = m->ncounters < UROCE_STAT_COUNT ? m->ncounters : UROCE_STAT_COUNT;

	memset(out, 0, sizeof(*out));
	memcpy(out, m, HDR_LEN);
	out->device[sizeof(out->device) - 1] = 0;
	for (uint32_t i = 0; i < n; i++)
		out->counters[i] = __atomic_load_n(&m->counters[i], __ATOMIC_RELAXED);
}

/* The work of uroce_stats_collect with LFD (the retired file, locked and
 * WRITABLE, or -1: read what is there, fold nothing). */
static int collect_locked(int lfd, bool writable, const char *dir, uint64_t total[UROCE_STAT_COUNT],
			  void (*each)(const struct uroce_stats_shm *rec, void *arg), void *arg)
{
	const char *dev = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	struct uroce_stats_shm r;
	struct dirent *e;
	int dirfd;
	DIR *d;

	memset(total, 0, UROCE_STAT_COUNT * sizeof(total[0]));
	if (lfd >= 0) {
		retired_load(lfd, &r, dev);
		memcpy(total, r.counters, UROCE_STAT_COUNT * sizeof(total[0]));
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return -ENOMEM;
	}
	while ((e = readdir(d))) {
		struct uroce_stats_shm *m;
		size_t len;
		bool alive;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue; /* ".", "..", retired */
		m = map_record(dirfd, e->d_name, &len);
		if (!m)
			continue;
		snapshot(m, &r);
		munmap(m, len);
		alive = writer_alive(r.pid, r.starttime);
		/* A dead writer's record: fold it, if we may remove it (else
		 * it is still counted, as it is). */
		if (!alive && lfd >= 0 && writable && unlinkat(dirfd, e->d_name, 0) == 0)
			retired_add(lfd, dev, r.counters);
		for (int i = 0; i < UROCE_STAT_COUNT; i++)
			total[i] += r.counters[i];
		if (alive && each)
			each(&r, arg);
	}
	closedir(d);
	return 0;
}

int uroce_stats_collect(const char *dir, uint64_t total[UROCE_STAT_COUNT],
			void (*each)(const struct uroce_stats_shm *rec, void *arg), void *arg)
{
	bool writable = false;
	int lfd = lock_retired(dir, false, &writable);
	int ret;

	/* No retired file yet: no process has attached, or it was removed;
	 * unlocked, read what there is all the same. */
	ret = collect_locked(lfd, writable, dir, total, each, arg);
	if (lfd >= 0)
		close(lfd);
	return ret;
}

#ifndef UROCE_STATS_NO_ENGINE

/* The engines' published records: where each one's file is. */
struct published {
	struct published *next;
	const struct uroce_engine *eng;
	char path[PATH_MAX];
	char dir[PATH_MAX];
	dev_t dev;
	ino_t ino;
};
static struct published *published;
static pthread_mutex_t published_lock = PTHREAD_MUTEX_INITIALIZER;

/* Create and map ENG's record file; 0 or -errno. */
static int publish(struct uroce_engine *eng)
{
	struct published *p = calloc(1, sizeof(*p));
	struct uroce_stats_shm init = {
		.magic = UROCE_STATS_MAGIC,
		.version = UROCE_STATS_VERSION,
		.ncounters = UROCE_STAT_COUNT,
		.pid = getpid(),
	};
	char nsdir[PATH_MAX];
	uint64_t total[UROCE_STAT_COUNT];
	bool writable;
	struct stat st;
	void *m;
	int ret, lfd, fd = -1;

	if (!p)
		return -ENOMEM;
	if ((ret = uroce_ns_dir(nsdir, sizeof(nsdir))) ||
	    (ret = uroce_stats_dir(p->dir, sizeof(p->dir), nsdir, eng->devname)))
		goto out;
	/* Made by `uroce link add`; for older registries, by the first user
	 * that may (a user that may not keeps its counters private). */
	if (access(p->dir, F_OK) && (ret = uroce_stats_mkdir(nsdir, eng->devname)))
		goto out;
	lfd = lock_retired(p->dir, true, &writable);
	if (lfd < 0) {
		ret = lfd;
		goto out;
	}
	if (!writable) {
		close(lfd);
		ret = -EACCES;
		goto out;
	}
	/* Fold the records of processes that died without detaching. */
	collect_locked(lfd, writable, p->dir, total, NULL, NULL);
	/* PID.N if PID is taken: a second engine of this process for the device
	 * while the first is still stopping, or our image before an exec. */
	for (int n = 0; n < 16 && fd < 0; n++) {
		int len = n ? snprintf(p->path, sizeof(p->path), "%s/%d.%d", p->dir, (int)init.pid, n)
			    : snprintf(p->path, sizeof(p->path), "%s/%d", p->dir, (int)init.pid);

		if (len < 0 || len >= (int)sizeof(p->path)) {
			errno = ENAMETOOLONG;
			break;
		}
		fd = open(p->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		ret = -errno;
		close(lfd);
		goto out;
	}
	fchmod(fd, 0644); /* readable by `uroce stat` of any user */
	init.starttime = uroce_proc_starttime(init.pid);
	snprintf(init.device, sizeof(init.device), "%s", eng->devname);
	m = MAP_FAILED;
	if (pwrite(fd, &init, sizeof(init), 0) == (ssize_t)sizeof(init) && !fstat(fd, &st))
		m = mmap(NULL, sizeof(init), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ret = m == MAP_FAILED ? -errno : 0;
	close(fd);
	if (ret) {
		unlink(p->path);
		close(lfd);
		goto out;
	}
	close(lfd);
	p->eng = eng;
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	eng->stats = m;
	eng->stats_shared = true;
	pthread_mutex_lock(&published_lock);
	p->next = published;
	published = p;
	pthread_mutex_unlock(&published_lock);
	return 0;
out:
	free(p);
	return ret;
}

int uroce_stats_attach(struct uroce_engine *eng)
{
	int ret = publish(eng);

	if (ret == 0)
		return 0;
	if (uroce_debug)
		fprintf(stderr, "uroce: %s: counters not published for `uroce stat`: %s\n",
			eng->devname, strerror(-ret));
	eng->stats_shared = false;
	eng->stats = calloc(1, sizeof(*eng->stats));
	return eng->stats ? 0 : -1;
}

void uroce_stats_detach(struct uroce_engine *eng)
{
	struct published *p = NULL, **pp;
	struct uroce_stats_shm last;
	bool writable;
	struct stat st;
	int lfd;

	if (!eng->stats)
		return;
	if (!eng->stats_shared) {
		free(eng->stats);
		eng->stats = NULL;
		return;
	}
	pthread_mutex_lock(&published_lock);
	for (pp = &published; *pp; pp = &(*pp)->next)
		if ((*pp)->eng == eng) {
			p = *pp;
			*pp = p->next;
			break;
		}
	pthread_mutex_unlock(&published_lock);
	snapshot(eng->stats, &last); /* the engine has stopped counting */
	munmap(eng->stats, sizeof(*eng->stats));
	eng->stats = NULL;
	eng->stats_shared = false;
	if (!p)
		return;
	/* Remove the record, then add it to the retired sums (a crash in
	 * between loses these counts rather than counting them twice).  If
	 * the lock cannot be had, the record stays: once we are gone, the
	 * next attach or `uroce stat` folds it.  (Gone already: the device
	 * was deleted, or someone folded it.) */
	lfd = lock_retired(p->dir, false, &writable);
	if (lfd >= 0) {
		if (writable && !stat(p->path, &st) && st.st_dev == p->dev &&
		    st.st_ino == p->ino && !unlink(p->path))
			retired_add(lfd, eng->devname, last.counters);
		close(lfd);
	}
	free(p);
}

#endif /* UROCE_STATS_NO_ENGINE */

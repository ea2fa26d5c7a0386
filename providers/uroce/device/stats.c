// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Where the counters live (docs/stats.md).  Each process using a device
 * publishes one record file, NSDIR/stats/DEV/PID (PID.N if that name is
 * taken), mapped shared: the engine counts straight into it and `uroce
 * stat` reads it.  When the engine stops, the record is removed and folded
 * into its user's "retired.<uid>" record (each user writes only its own);
 * a record whose writer died without doing so (its pid gone, or reused:
 * the start time differs) is folded by the next attach or `uroce stat` of
 * its user or root.  Every fold happens under flock(LOCK_EX) on the
 * directory, and readers sum under the same lock, so a process's counts
 * are never seen twice or not at all.
 *
 * Compiled into the provider and (with UROCE_STATS_NO_ENGINE) into the
 * uroce command, which uses the functions declared in device/stats.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "device/stats.h"

#include "device/registry.h"
#include "knob/knob.h"
#ifndef UROCE_STATS_NO_ENGINE
#include <pthread.h>
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

int uroce_stats_dir(char *buf, size_t len, const char *nsdir, const char *dev)
{
	int n = snprintf(buf, len, "%s/stats/%s", nsdir, dev);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The directory mode that gives each class of the node's users (owner,
 * group, others) what the node gives it: w -> may add records (wx), r ->
 * may read them (rx); sticky, so that no one removes another's. */
static mode_t dir_mode(mode_t node_mode)
{
	mode_t m = S_ISVTX;

	for (int shift = 0; shift <= 6; shift += 3) {
		mode_t cls = (node_mode >> shift) & 7;

		if (cls & 4)
			m |= 5 << shift;
		if (cls & 2)
			m |= 3 << shift;
	}
	return m;
}

int uroce_stats_mkdir(const char *nsdir, const char *dev, uid_t uid, gid_t gid,
		      mode_t node_mode)
{
	char path[PATH_MAX];
	int ret;

	if (snprintf(path, sizeof(path), "%s/stats", nsdir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if ((ret = uroce_mkdirs(path, 0755)))
		return ret;
	if ((ret = uroce_stats_dir(path, sizeof(path), nsdir, dev)))
		return ret;
	/* Made private first, opened up once it has its owner and group. */
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	if (chown(path, uid, gid) || chmod(path, dir_mode(node_mode)))
		return -errno;
	return 0;
}

/* Lock the record directory DIR (flock on the directory itself: anyone
 * who may read it may take it, no file to create), waiting a second at
 * most: a stuck holder must not stop programs from opening the device.
 * The directory's fd, or -errno. */
static int lock_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
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

/* Our own retired file in DIRFD, retired.<euid>, created if need be:
 * only we write it.  fd or -errno. */
static int open_retired_mine(int dirfd)
{
	char name[64];
	struct stat st;
	int fd;

	snprintf(name, sizeof(name), UROCE_STATS_RETIRED ".%u", (unsigned int)geteuid());
	fd = openat(dirfd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
	if (fd < 0)
		return -errno;
	/* Someone else's file under our name (made before we came): not ours. */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
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

/* A record file's name: the writer's PID, or PID.N. */
static bool is_record(const char *name)
{
	return name[0] >= '0' && name[0] <= '9';
}

/* A stream of DIRFD's entries from the start, DIRFD left open; NULL on
 * failure. */
static DIR *entries(int dirfd)
{
	int dfd = dup(dirfd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;

	if (!d && dfd >= 0)
		close(dfd);
	if (d)
		rewinddir(d); /* the dup shares DIRFD's position */
	return d;
}

/* Fold the records of dead writers in DIRFD (locked) into our retired
 * file: those we may remove (ours; any, for root: the directory is
 * sticky).  A record is removed before it is added, so a crash in between
 * loses its counts rather than counting them twice. */
static void fold_dead(int dirfd, const char *dev)
{
	struct uroce_stats_shm r;
	struct dirent *e;
	int mine = -1;
	DIR *d = entries(dirfd);

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct uroce_stats_shm *m;
		struct stat st;
		size_t len;

		if (!is_record(e->d_name) || fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    (st.st_uid != geteuid() && geteuid() != 0))
			continue;
		m = map_record(dirfd, e->d_name, &len);
		if (!m)
			continue;
		snapshot(m, &r);
		munmap(m, len);
		if (uroce_proc_alive(r.pid, r.starttime))
			continue;
		if (mine < 0 && (mine = open_retired_mine(dirfd)) < 0)
			break;
		if (unlinkat(dirfd, e->d_name, 0) == 0)
			retired_add(mine, dev, r.counters);
	}
	closedir(d);
	if (mine >= 0)
		close(mine);
}

/* Sum every retired file ("retired.<uid>", and an older build's
 * "retired") and every record of DIRFD into TOTAL. */
static void sum_all(int dirfd, const char *dev, uint64_t total[UROCE_STAT_COUNT],
		    void (*each)(const struct uroce_stats_shm *rec, void *arg), void *arg)
{
	struct uroce_stats_shm r;
	struct dirent *e;
	DIR *d = entries(dirfd);

	memset(total, 0, UROCE_STAT_COUNT * sizeof(total[0]));
	if (!d)
		return;
	while ((e = readdir(d))) {
		struct uroce_stats_shm *m;
		size_t len;
		bool alive = false;

		if (!strncmp(e->d_name, UROCE_STATS_RETIRED, strlen(UROCE_STATS_RETIRED))) {
			int fd = openat(dirfd, e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

			if (fd < 0)
				continue;
			retired_load(fd, &r, dev);
			close(fd);
		} else if (is_record(e->d_name) && (m = map_record(dirfd, e->d_name, &len))) {
			snapshot(m, &r);
			munmap(m, len);
			alive = uroce_proc_alive(r.pid, r.starttime);
		} else {
			continue;
		}
		for (int i = 0; i < UROCE_STAT_COUNT; i++)
			total[i] += r.counters[i];
		if (alive && each)
			each(&r, arg);
	}
	closedir(d);
}

int uroce_stats_collect(const char *dir, uint64_t total[UROCE_STAT_COUNT],
			void (*each)(const struct uroce_stats_shm *rec, void *arg), void *arg)
{
	const char *dev = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	int dirfd = lock_dir(dir);

	if (dirfd == -EWOULDBLOCK) {
		/* A stuck lock holder: read what there is, unlocked, fold nothing. */
		dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			return -errno;
		sum_all(dirfd, dev, total, each, arg);
		close(dirfd);
		return 0;
	}
	if (dirfd < 0)
		return dirfd;
	fold_dead(dirfd, dev);
	sum_all(dirfd, dev, total, each, arg);
	close(dirfd);
	return 0;
}

#ifndef UROCE_STATS_NO_ENGINE

/* The engines' published records: where each one's file is. */
struct published {
	struct published *next;
	const struct uroce_stats_shm *stats;
	char path[PATH_MAX];
	char dir[PATH_MAX];
	dev_t dev;
	ino_t ino;
};
static struct published *published;
static pthread_mutex_t published_lock = PTHREAD_MUTEX_INITIALIZER;

/* Create and map DEVNAME's record file into *STATS; 0 or -errno. */
static int publish(const char *devname, struct uroce_stats_shm **stats)
{
	struct published *p = calloc(1, sizeof(*p));
	struct uroce_stats_shm init = {
		.magic = UROCE_STATS_MAGIC,
		.version = UROCE_STATS_VERSION,
		.ncounters = UROCE_STAT_COUNT,
		.pid = getpid(),
	};
	char nsdir[PATH_MAX];
	struct stat st;
	void *m;
	int ret, lfd, fd = -1;

	if (!p)
		return -ENOMEM;
	if ((ret = uroce_ns_dir(nsdir, sizeof(nsdir))) ||
	    (ret = uroce_stats_dir(p->dir, sizeof(p->dir), nsdir, devname)))
		goto out;
	/* Made by `uroce link add`, with the rights of the device node; a
	 * user who may not write there keeps its counters private. */
	lfd = lock_dir(p->dir);
	if (lfd < 0) {
		ret = lfd;
		goto out;
	}
	/* Fold the records of processes that died without detaching. */
	fold_dead(lfd, devname);
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
	/* Readable by `uroce stat` of whoever may read the directory (the
	 * device's users), written only by us. */
	fchmod(fd, 0644);
	init.starttime = uroce_proc_starttime(init.pid);
	snprintf(init.device, sizeof(init.device), "%s", devname);
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
	p->stats = m;
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	*stats = m;
	pthread_mutex_lock(&published_lock);
	p->next = published;
	published = p;
	pthread_mutex_unlock(&published_lock);
	return 0;
out:
	free(p);
	return ret;
}

int uroce_stats_attach(const char *devname, struct uroce_stats_shm **stats, bool *shared)
{
	int ret = publish(devname, stats);

	*shared = ret == 0;
	if (ret == 0)
		return 0;
	if (uroce_knob_on(UROCE_KNOB_DEBUG))
		fprintf(stderr, "uroce: %s: counters not published for `uroce stat`: %s\n",
			devname, strerror(-ret));
	*stats = calloc(1, sizeof(**stats));
	return *stats ? 0 : -1;
}

void uroce_stats_detach(const char *devname, struct uroce_stats_shm **stats, bool *shared)
{
	struct published *p = NULL, **pp;
	struct uroce_stats_shm last;
	struct stat st;
	int lfd, mine;

	if (!*stats)
		return;
	if (!*shared) {
		free(*stats);
		*stats = NULL;
		return;
	}
	pthread_mutex_lock(&published_lock);
	for (pp = &published; *pp; pp = &(*pp)->next)
		if ((*pp)->stats == *stats) {
			p = *pp;
			*pp = p->next;
			break;
		}
	pthread_mutex_unlock(&published_lock);
	snapshot(*stats, &last); /* the engine has stopped counting */
	munmap(*stats, sizeof(**stats));
	*stats = NULL;
	*shared = false;
	if (!p)
		return;
	/* Remove the record, then add it to the retired sums (a crash in
	 * between loses these counts rather than counting them twice).  If
	 * the lock cannot be had, the record stays: once we are gone, the
	 * next attach or `uroce stat` folds it.  (Gone already: the device
	 * was deleted, or someone folded it.) */
	lfd = lock_dir(p->dir);
	if (lfd >= 0) {
		mine = open_retired_mine(lfd);
		if (mine >= 0 && !stat(p->path, &st) && st.st_dev == p->dev &&
		    st.st_ino == p->ino && !unlink(p->path))
			retired_add(mine, devname, last.counters);
		if (mine >= 0)
			close(mine);
		close(lfd);
	}
	free(p);
}

#endif /* UROCE_STATS_NO_ENGINE */

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The objects of each process on a device, in shared memory, for `rdma
 * resource show` (device/res.h, docs/netlink.md).  A table file per
 * context in the device's record directory, beside the counters'
 * (device/stats.c): made sparse, so a table costs the pages its entries
 * touch.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "device/registry.h"
#include "device/res.h"
#include "device/stats.h"

#define TABLE_LEN (sizeof(struct uroce_res_shm) + UROCE_RES_SLOTS * sizeof(struct uroce_res_entry))

/* An entry's fields after its sequence count. */
#define BODY(e) ((char *)(e) + sizeof(uint32_t))
#define BODY_LEN (sizeof(struct uroce_res_entry) - sizeof(uint32_t))

struct uroce_res {
	struct uroce_res *next;          /* this process's tables */
	pthread_mutex_t lock;
	struct uroce_res_shm *m;
	pid_t pid;                       /* the writer: a forked child writes nothing */
	uint32_t next_id[UROCE_RES_KINDS];
	char path[PATH_MAX];
	char name[NAME_MAX + 1];
};
static struct uroce_res *tables;
static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;

/* Is NAME a table of PID ("res.PID" or "res.PID.N")? */
static bool table_of(const char *name, pid_t pid)
{
	char *end;
	long p;

	if (strncmp(name, UROCE_RES_PREFIX, strlen(UROCE_RES_PREFIX)))
		return false;
	p = strtol(name + strlen(UROCE_RES_PREFIX), &end, 10);
	return p == pid && (*end == '\0' || *end == '.');
}

/* Tables of our pid that none of our contexts holds: our image's before
 * an exec, whose objects are gone (tables_lock held). */
static void remove_stale(const char *dir, pid_t pid)
{
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct uroce_res *r;
		bool held = false;

		if (!table_of(e->d_name, pid))
			continue;
		for (r = tables; r && !held; r = r->next)
			held = !strcmp(r->name, e->d_name) && r->pid == pid;
		if (!held)
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

struct uroce_res *uroce_res_open(const char *devname)
{
	struct uroce_res_shm init = {
		.magic = UROCE_RES_MAGIC,
		.version = UROCE_RES_VERSION,
		.nslots = UROCE_RES_SLOTS,
	};
	struct uroce_res *r = calloc(1, sizeof(*r));
	char nsdir[PATH_MAX], dir[PATH_MAX];
	void *m = MAP_FAILED;
	int fd = -1;

	if (!r || uroce_ns_dir(nsdir, sizeof(nsdir)) ||
	    uroce_stats_dir(dir, sizeof(dir), nsdir, devname))
		goto fail;
	r->pid = init.pid = getpid();
	init.starttime = uroce_proc_starttime(init.pid);
	pthread_mutex_lock(&tables_lock);
	remove_stale(dir, r->pid);
	for (int n = 0; n < 64 && fd < 0; n++) {
		int len = n ? snprintf(r->name, sizeof(r->name), UROCE_RES_PREFIX "%d.%d",
				       (int)r->pid, n)
			    : snprintf(r->name, sizeof(r->name), UROCE_RES_PREFIX "%d", (int)r->pid);

		if (len < 0 || len >= (int)sizeof(r->name) ||
		    snprintf(r->path, sizeof(r->path), "%s/%s", dir, r->name) >= (int)sizeof(r->path))
			break;
		fd = open(r->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd >= 0) {
		fchmod(fd, 0644); /* readable by the device's users, whatever our umask */
		if (!ftruncate(fd, TABLE_LEN) &&
		    pwrite(fd, &init, sizeof(init), 0) == (ssize_t)sizeof(init))
			m = mmap(NULL, TABLE_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (m == MAP_FAILED)
			unlink(r->path);
	}
	if (m == MAP_FAILED) {
		pthread_mutex_unlock(&tables_lock);
		goto fail;
	}
	r->m = m;
	pthread_mutex_init(&r->lock, NULL);
	r->next = tables;
	tables = r;
	pthread_mutex_unlock(&tables_lock);
	return r;
fail:
	free(r);
	return NULL;
}

void uroce_res_close(struct uroce_res *r)
{
	struct uroce_res **pp;

	if (!r)
		return;
	pthread_mutex_lock(&tables_lock);
	for (pp = &tables; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	pthread_mutex_unlock(&tables_lock);
	if (r->pid == getpid())
		unlink(r->path);
	munmap(r->m, TABLE_LEN);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* Write E's fields into slot S under its sequence count (r->lock held). */
static void entry_write(struct uroce_res_entry *s, const struct uroce_res_entry *e)
{
	uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&s->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(BODY(s), BODY(e), BODY_LEN);
	__atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
}

static bool writer(const struct uroce_res *r)
{
	return r && r->pid == getpid();
}

unsigned int uroce_res_add(struct uroce_res *r, struct uroce_res_entry *e)
{
	struct uroce_res_shm *m;
	uint32_t i;

	if (!writer(r) || e->kind <= UROCE_RES_FREE || e->kind >= UROCE_RES_KINDS)
		return 0;
	m = r->m;
	pthread_mutex_lock(&r->lock);
	if (!e->id)
		e->id = ++r->next_id[e->kind];
	__atomic_fetch_add(&m->count[e->kind], 1, __ATOMIC_RELAXED);
	for (i = 0; i < m->used && m->slot[i].kind != UROCE_RES_FREE; i++)
		;
	if (i < m->nslots) {
		entry_write(&m->slot[i], e);
		if (i == m->used)
			__atomic_store_n(&m->used, i + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&r->lock);
	return i < m->nslots ? i + 1 : 0;
}

void uroce_res_set(struct uroce_res *r, unsigned int slot, const struct uroce_res_entry *e)
{
	if (!writer(r) || !slot || slot > r->m->nslots)
		return;
	pthread_mutex_lock(&r->lock);
	entry_write(&r->m->slot[slot - 1], e);
	pthread_mutex_unlock(&r->lock);
}

void uroce_res_del(struct uroce_res *r, unsigned int slot, enum uroce_res_kind kind)
{
	static const struct uroce_res_entry freed;

	if (!writer(r))
		return;
	pthread_mutex_lock(&r->lock);
	__atomic_fetch_sub(&r->m->count[kind], 1, __ATOMIC_RELAXED);
	if (slot && slot <= r->m->nslots)
		entry_write(&r->m->slot[slot - 1], &freed);
	pthread_mutex_unlock(&r->lock);
}

/* A consistent copy of slot S, or false after a writer kept changing it. */
static bool entry_read(const struct uroce_res_entry *s, struct uroce_res_entry *out)
{
	for (int tries = 0; tries < 1000; tries++) {
		uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);

		if (seq & 1)
			continue;
		memcpy(BODY(out), BODY(s), BODY_LEN);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) == seq) {
			out->seq = seq;
			return true;
		}
	}
	return false;
}

/* Append the objects of table NAME in DIRFD to *OUT (*N of *CAP). */
static int read_table(int dirfd, const char *name, unsigned int table, struct uroce_res_obj **out,
		      size_t *n, size_t *cap, uint64_t count[UROCE_RES_KINDS])
{
	const struct uroce_res_shm *m;
	uint32_t used;
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size < TABLE_LEN) {
		close(fd);
		return 0;
	}
	m = mmap(NULL, TABLE_LEN, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return 0;
	if (m->magic != UROCE_RES_MAGIC || m->version != UROCE_RES_VERSION ||
	    m->nslots != UROCE_RES_SLOTS)
		goto out;
	if (!uroce_proc_alive(m->pid, m->starttime)) {
		/* The directory is sticky: only its owner or root may. */
		if (st.st_uid == geteuid() || geteuid() == 0)
			unlinkat(dirfd, name, 0);
		goto out;
	}
	for (int k = 0; k < UROCE_RES_KINDS; k++)
		count[k] += __atomic_load_n(&m->count[k], __ATOMIC_RELAXED);
	used = __atomic_load_n(&m->used, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < used && i < m->nslots; i++) {
		struct uroce_res_entry e;

		if (!entry_read(&m->slot[i], &e) || e.kind == UROCE_RES_FREE ||
		    e.kind >= UROCE_RES_KINDS)
			continue;
		if (*n == *cap) {
			size_t more = *cap ? *cap * 2 : 64;
			struct uroce_res_obj *p = realloc(*out, more * sizeof(*p));

			if (!p) {
				munmap((void *)m, TABLE_LEN);
				return -ENOMEM;
			}
			*out = p;
			*cap = more;
		}
		(*out)[*n].pid = m->pid;
		(*out)[*n].table = table;
		(*out)[(*n)++].e = e;
	}
out:
	munmap((void *)m, TABLE_LEN);
	return 0;
}

/* Tables in the order their processes made them: by pid, then name. */
static int by_name(const struct dirent **a, const struct dirent **b)
{
	long pa = atol((*a)->d_name + strlen(UROCE_RES_PREFIX));
	long pb = atol((*b)->d_name + strlen(UROCE_RES_PREFIX));

	return pa != pb ? (pa < pb ? -1 : 1) : strcmp((*a)->d_name, (*b)->d_name);
}

static int is_table(const struct dirent *e)
{
	return !strncmp(e->d_name, UROCE_RES_PREFIX, strlen(UROCE_RES_PREFIX));
}

int uroce_res_snapshot(const char *nsdir, const char *dev, struct uroce_res_obj **out,
		       size_t *n, uint64_t count[UROCE_RES_KINDS])
{
	struct dirent **names = NULL;
	char dir[PATH_MAX];
	size_t cap = 0;
	int ret, dfd, k;

	*out = NULL;
	*n = 0;
	memset(count, 0, UROCE_RES_KINDS * sizeof(count[0]));
	if ((ret = uroce_stats_dir(dir, sizeof(dir), nsdir, dev)))
		return ret;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? 0 : -errno;
	k = scandirat(dfd, ".", &names, is_table, by_name);
	ret = k < 0 ? -errno : 0;
	for (int i = 0; i < k; i++) {
		if (!ret)
			ret = read_table(dfd, names[i]->d_name, i, out, n, &cap, count);
		free(names[i]);
	}
	free(names);
	close(dfd);
	if (ret) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return ret;
}

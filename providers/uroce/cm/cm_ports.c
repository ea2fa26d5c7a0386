// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The rdma_cm port table, shared by every process of a network namespace:
 * /dev/shm/uroce-<ns>.cmport1, one entry per bound id: (port space, IP,
 * port), its owner word (pid << 32 | start time, as the QPN table), and
 * whether it reuses the address and whether it listens.  The rules are
 * the kernel's (drivers/infiniband/core/cma.c: cma_get_port,
 * cma_check_port, cma_bind_listen); a REQ is routed by it to the process
 * that listens (gsi.c).  Changes and lookups hold flock() on the file
 * (between processes) and a mutex (between threads); entries of dead
 * owners are reclaimed as they are met.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "cm/gsi.h"
#include "device/device.h"

#define PORTS_MAGIC 0x75726f6365637031ULL /* "urocecp1" */
#define PORTS_SLOTS 4096
/* Ephemeral ports: Linux's default ip_local_port_range (cma_alloc_any_port). */
#define EPHEMERAL_LO 32768
#define EPHEMERAL_HI 60999

enum { F_REUSE = 1, F_LISTEN = 2 };

struct port_entry {
	_Atomic uint64_t owner;   /* 0: free */
	uint16_t ps;
	uint16_t port;
	uint8_t flags;
	uint8_t pad[3];
	uint8_t ip[16];           /* IPv4-mapped or IPv6; wildcard: all zero */
};

struct ports_shared {
	uint64_t magic;
	uint32_t nslots;
	uint32_t pad;
	struct port_entry e[];
};

static pthread_mutex_t ports_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ports_shared *sh;
static int ports_fd = -1;
static uint64_t me;
static pid_t me_pid;

static const uint8_t v4_any[16] = { [10] = 0xff, 0xff };

void uroce_cm_ports_fork_child(void)
{
	static const pthread_mutex_t unlocked = PTHREAD_MUTEX_INITIALIZER;

	ports_lock = unlocked;    /* the owner word: ports_open sees the pid */
}

static bool is_any(const uint8_t *ip)
{
	static const uint8_t zero[16];

	return !memcmp(ip, zero, 16) || !memcmp(ip, v4_any, 16);
}

/* Map the namespace's table (once per process); ports_lock held. */
static int ports_open(void)
{
	size_t len = sizeof(struct ports_shared) + PORTS_SLOTS * sizeof(struct port_entry);
	char nsdir[PATH_MAX], path[PATH_MAX + 64];
	struct stat st;
	void *p;
	int fd;

	if (sh) {
		if (me_pid != getpid()) {  /* after fork the child is another owner */
			me_pid = getpid();
			me = uroce_owner_word(me_pid);
		}
		return 0;
	}
	if (uroce_ns_dir(nsdir, sizeof(nsdir)))
		return -ENODEV;
	uroce_cm_ports_file(path, sizeof(path), strrchr(nsdir, '/') + 1, geteuid());
	fd = uroce_shm_open_own(path);  /* per user, as the QPN table (docs/security.md) */
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || (st.st_size < (off_t)len && ftruncate(fd, len))) {
		close(fd);
		return -EIO;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return -errno;
	}
	sh = p;
	ports_fd = fd;
	flock(fd, LOCK_EX);
	if (sh->magic == 0) {     /* a fresh file is all zeroes: stamp it */
		sh->nslots = PORTS_SLOTS;
		sh->magic = PORTS_MAGIC;
	}
	flock(fd, LOCK_UN);
	if (sh->magic != PORTS_MAGIC || sh->nslots != PORTS_SLOTS) {
		munmap(p, len);
		close(fd);
		sh = NULL;
		ports_fd = -1;
		return -EPROTO;
	}
	me_pid = getpid();
	me = uroce_owner_word(me_pid);
	return 0;
}

static int lock(void)
{
	int ret;

	pthread_mutex_lock(&ports_lock);
	ret = ports_open();
	if (ret) {
		pthread_mutex_unlock(&ports_lock);
		return ret;
	}
	while (flock(ports_fd, LOCK_EX) && errno == EINTR)
		;
	return 0;
}

static void unlock(void)
{
	flock(ports_fd, LOCK_UN);
	pthread_mutex_unlock(&ports_lock);
}

/* Entry I is in use by a live process; a dead owner's entry is freed. */
static bool live(uint32_t i)
{
	uint64_t w = atomic_load(&sh->e[i].owner);

	if (!w)
		return false;
	if (w == me || uroce_owner_alive(w))
		return true;
	atomic_compare_exchange_strong(&sh->e[i].owner, &w, 0);
	return false;
}

/*
 * cma_check_port: may an id at IP with REUSE join the bindings of (PS,
 * PORT)?  SKIP is its own entry (or -1).  With LISTEN_ONLY only listeners
 * are compared (Linux lets a reuseaddr bind share a port, but not two
 * listens on it: cma_bind_listen).
 */
static int check_port(uint16_t ps, uint16_t port, const uint8_t *ip, bool reuse, int skip,
		      bool listen_only)
{
	for (uint32_t i = 0; i < PORTS_SLOTS; i++) {
		struct port_entry *e = &sh->e[i];

		if ((int)i == skip || e->ps != ps || e->port != port || !live(i))
			continue;
		if (listen_only && !(e->flags & F_LISTEN))
			continue;
		if (!listen_only && reuse && (e->flags & F_REUSE))
			continue;
		if (is_any(ip) || is_any(e->ip))
			return -EADDRNOTAVAIL;
		if (!memcmp(ip, e->ip, 16))
			return -EADDRINUSE;
	}
	return 0;
}

static bool port_used(uint16_t ps, uint16_t port)
{
	for (uint32_t i = 0; i < PORTS_SLOTS; i++)
		if (sh->e[i].ps == ps && sh->e[i].port == port && live(i))
			return true;
	return false;
}

static int free_slot(void)
{
	for (uint32_t i = 0; i < PORTS_SLOTS; i++)
		if (!live(i))
			return (int)i;
	return -ENOSPC;
}

int uroce_gsi_port_bind(uint16_t ps, const uint8_t ip[16], uint16_t *port, bool reuseaddr,
			uint32_t *handle)
{
	int slot, ret;

	ret = lock();
	if (ret)
		return ret;
	slot = free_slot();
	if (slot < 0) {
		ret = slot;
		goto out;
	}
	if (*port == 0) {
		uint32_t start, span = EPHEMERAL_HI - EPHEMERAL_LO + 1;

		if (getrandom(&start, sizeof(start), 0) != sizeof(start))
			start = (uint32_t)getpid() * 2654435761u;
		ret = -EADDRNOTAVAIL;
		for (uint32_t k = 0; k < span; k++) {
			uint16_t p = EPHEMERAL_LO + (start + k) % span;

			if (!port_used(ps, p)) {
				*port = p;
				ret = 0;
				break;
			}
		}
	} else {
		ret = check_port(ps, *port, ip, reuseaddr, -1, false);
	}
	if (ret)
		goto out;
	struct port_entry *e = &sh->e[slot];

	e->ps = ps;
	e->port = *port;
	e->flags = reuseaddr ? F_REUSE : 0;
	memcpy(e->ip, ip, 16);
	atomic_store(&e->owner, me); /* last: the entry is whole when it is live */
	*handle = (uint32_t)slot + 1;
out:
	unlock();
	return ret;
}

/* The entry of HANDLE if this process owns it; ports locked. */
static struct port_entry *mine(uint32_t handle)
{
	if (handle == 0 || handle > PORTS_SLOTS || atomic_load(&sh->e[handle - 1].owner) != me)
		return NULL;
	return &sh->e[handle - 1];
}

int uroce_gsi_port_listen(uint32_t handle)
{
	struct port_entry *e;
	int ret = lock();

	if (ret)
		return ret;
	e = mine(handle);
	if (!e)
		ret = -EINVAL;
	else if (!(e->flags & F_LISTEN)) {
		/* A reuseaddr binding listens only if no one else listens
		 * there (cma_bind_listen: cma_check_port without reuse). */
		if (e->flags & F_REUSE)
			ret = check_port(e->ps, e->port, e->ip, false, (int)handle - 1, true);
		if (!ret)
			e->flags |= F_LISTEN;
	}
	unlock();
	return ret;
}

int uroce_gsi_port_release(uint32_t handle)
{
	struct port_entry *e;
	int ret = lock();

	if (ret)
		return ret;
	e = mine(handle);
	if (e) {
		e->flags = 0;
		atomic_store(&e->owner, 0);
	} else {
		ret = -EINVAL;
	}
	unlock();
	return ret;
}

int uroce_gsi_port_lookup_listener(uint16_t ps, const uint8_t ip[16], uint16_t port)
{
	pid_t exact = 0, any = 0;

	if (lock())
		return 0;
	for (uint32_t i = 0; i < PORTS_SLOTS && !exact; i++) {
		struct port_entry *e = &sh->e[i];

		if (e->ps != ps || e->port != port || !(e->flags & F_LISTEN) || !live(i))
			continue;
		if (!memcmp(e->ip, ip, 16))
			exact = (pid_t)(atomic_load(&e->owner) >> 32);
		else if (is_any(e->ip))
			any = (pid_t)(atomic_load(&e->owner) >> 32);
	}
	unlock();
	return exact ? exact : any;
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The shared QPN table: /dev/shm/uroce-<ns>-<netdev>.u<UID>.qpn3, one 64-bit
 * owner word per QPN = pid << 32 | low 32 bits of the owner's start time (so
 * a reused pid is not mistaken for the owner), then the owners' forwarding
 * ports.  Lock-free: compare-and-swap only.
 *
 * One table per user, mode 0600: the processes that share a device's
 * addresses are those of one user (SO_REUSEPORT's rule, see
 * transport/udp/udp.c), so no other user needs to read it, and none may claim
 * QPNs or rewrite forwarding ports in it (docs/security.md).  (".qpn2" was
 * one table for all users, mode 0666.)
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "device/qpn.h"
#include "device/registry.h"

#define QPN_MAGIC 0x75726f6365716e33ULL /* "uroceqn3" */

struct qpn_shared {
	uint64_t magic;
	uint32_t nslots;
	_Atomic uint32_t hint;     /* where the next search starts */
	_Atomic uint64_t owner[];  /* then _Atomic uint32_t port[nslots]: the owner's forwarding port */
};


struct uroce_qpn_table {
	struct qpn_shared *sh;
	size_t map_len;
	uint64_t me;
};

static _Atomic uint32_t *ports(const struct uroce_qpn_table *t)
{
	return (_Atomic uint32_t *)&t->sh->owner[t->sh->nslots];
}


uint64_t uroce_owner_word(pid_t pid)
{
	return (uint64_t)(uint32_t)pid << 32 | (uint32_t)uroce_proc_starttime(pid);
}

int uroce_owner_alive(uint64_t word)
{
	pid_t pid = (pid_t)(word >> 32);

	if (kill(pid, 0) && errno == ESRCH)
		return 0;
	return (uint32_t)uroce_proc_starttime(pid) == (uint32_t)word;
}

/* Open (creating) PATH, a file only we may write: refuse one that another
 * user made under our name in /dev/shm (root takes the name back). */
int uroce_shm_open_own(const char *path)
{
	struct stat st;
	int fd;

	for (int tries = 0; tries < 2; tries++) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
		if (fd < 0 && errno != EACCES && errno != EPERM && errno != ELOOP)
			return -1;
		if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
		    st.st_uid == geteuid() && !fchmod(fd, 0600))
			return fd;
		if (fd >= 0)
			close(fd);
		if (geteuid() != 0 || tries || unlink(path))
			break;
	}
	fprintf(stderr, "uroce: %s belongs to another user or is not a plain file: "
		"refusing it (remove it)\n", path);
	errno = EPERM;
	return -1;
}

struct uroce_qpn_table *uroce_qpn_open(const char *nsid, const char *netdev, uint32_t nslots)
{
	char path[256];

	uroce_qpn_file(path, sizeof(path), nsid, netdev, geteuid());
	return uroce_qpn_open_file(path, nslots);
}

struct uroce_qpn_table *uroce_qpn_open_file(const char *path, uint32_t nslots)
{
	size_t len = sizeof(struct qpn_shared) + (size_t)nslots * (sizeof(uint64_t) + sizeof(uint32_t));
	struct uroce_qpn_table *t;
	struct stat st;
	int fd;

	fd = uroce_shm_open_own(path);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || (st.st_size < (off_t)len && ftruncate(fd, len))) {
		close(fd);
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		close(fd);
		return NULL;
	}
	t->map_len = len;
	t->sh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (t->sh == MAP_FAILED) {
		free(t);
		return NULL;
	}
	/* A fresh file is all zeroes: the first opener stamps it. */
	if (t->sh->magic == 0) {
		t->sh->nslots = nslots;
		t->sh->magic = QPN_MAGIC;
	}
	if (t->sh->magic != QPN_MAGIC || t->sh->nslots != nslots) {
		munmap(t->sh, len);
		free(t);
		errno = EPROTO;
		return NULL;
	}
	t->me = uroce_owner_word(getpid());
	return t;
}

void uroce_qpn_close(struct uroce_qpn_table *t)
{
	if (!t)
		return;
	munmap(t->sh, t->map_len);
	free(t);
}

/* Is QPN's slot free (never used, or its owner is gone)?  *CUR: its word. */
static bool slot_free(struct uroce_qpn_table *t, uint32_t qpn, uint64_t *cur)
{
	*cur = atomic_load(&t->sh->owner[qpn]);
	return *cur == 0 || !uroce_owner_alive(*cur);
}

/* May QPN be a QP's now: its low UROCE_QPN_PORT_BITS are no reserved
 * value's, and no live QP has them (qpn.h)? */
static bool port_bits_free(struct uroce_qpn_table *t, uint32_t qpn)
{
	uint32_t low = qpn & UROCE_QPN_PORT_MASK;
	uint64_t word;

	if (low < UROCE_QPN_FIRST || low == (CM_GSI_UDP_SPORT & UROCE_QPN_PORT_MASK))
		return false;
	for (uint32_t q = low; q < t->sh->nslots; q += UROCE_QPN_PORT_MASK + 1)
		if (q != qpn && !slot_free(t, q, &word))
			return false;
	return true;
}

static uint32_t alloc(struct uroce_qpn_table *t, uint16_t fwd_port, bool port_unique)
{
	uint32_t n = t->sh->nslots - UROCE_QPN_FIRST;

	for (uint32_t tries = 0; tries < n; tries++) {
		uint32_t qpn = UROCE_QPN_FIRST + atomic_fetch_add(&t->sh->hint, 1) % n;
		uint64_t cur;

		if (!slot_free(t, qpn, &cur) || (port_unique && !port_bits_free(t, qpn)))
			continue;
		/* Free, or its owner is gone (crashed): take it. */
		if (atomic_compare_exchange_strong(&t->sh->owner[qpn], &cur, t->me)) {
			/* Two processes may have taken QPNs of the same port
			 * bits at once: the one that sees the other gives way. */
			if (port_unique && !port_bits_free(t, qpn)) {
				atomic_store(&t->sh->owner[qpn], 0);
				continue;
			}
			atomic_store(&ports(t)[qpn], fwd_port);
			return qpn;
		}
	}
	errno = ENOSPC;
	return 0;
}

uint32_t uroce_qpn_alloc(struct uroce_qpn_table *t, uint16_t fwd_port)
{
	return alloc(t, fwd_port, false);
}

uint32_t uroce_qpn_alloc_qp(struct uroce_qpn_table *t, uint16_t fwd_port)
{
	return alloc(t, fwd_port, true);
}

void uroce_qpn_free(struct uroce_qpn_table *t, uint32_t qpn)
{
	uint64_t me = t->me;

	if (qpn >= UROCE_QPN_FIRST && qpn < t->sh->nslots)
		atomic_compare_exchange_strong(&t->sh->owner[qpn], &me, 0);
}

pid_t uroce_qpn_owner(struct uroce_qpn_table *t, uint32_t qpn, int check_alive,
		      uint16_t *fwd_port)
{
	uint64_t cur;

	if (qpn < UROCE_QPN_FIRST || qpn >= t->sh->nslots)
		return 0;
	cur = atomic_load(&t->sh->owner[qpn]);
	if (!cur)
		return 0;
	if (check_alive && !uroce_owner_alive(cur)) {
		atomic_compare_exchange_strong(&t->sh->owner[qpn], &cur, 0);
		return 0;
	}
	*fwd_port = (uint16_t)atomic_load(&ports(t)[qpn]);
	return (pid_t)(cur >> 32);
}

uint32_t uroce_qpn_find(struct uroce_qpn_table *t, pid_t pid, uint16_t *fwd_port)
{
	for (uint32_t n = UROCE_QPN_FIRST; n < t->sh->nslots; n++) {
		uint64_t cur = atomic_load(&t->sh->owner[n]);

		if (!cur || (pid_t)(cur >> 32) != pid)
			continue;
		/* A dead process that had the same pid (pids wrap at 32768
		 * on a busy host) left this entry: free it, look on. */
		if (!uroce_owner_alive(cur)) {
			atomic_compare_exchange_strong(&t->sh->owner[n], &cur, 0);
			continue;
		}
		*fwd_port = (uint16_t)atomic_load(&ports(t)[n]);
		return n;
	}
	return 0;
}

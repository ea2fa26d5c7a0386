// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * DREQs for a process that dies without closing (see gsi.h): the kernel's
 * ucma_close sends them at any exit; uroce's CM runs in the process, so a
 * SIGKILL would leave every peer waiting.  Established connections are
 * kept in a shared memfd (cm/reaper.h), each with its DREQ packet built in
 * advance (UD SEND_ONLY to QP 1, ICRC included).  The reaper is a program
 * of its own, uroce-reaper (cm/reaper_main.c), started at the first
 * publish with posix_spawn: it inherits only the memfd and the read end
 * of a pipe whose write end only this process holds, and it runs none of
 * this process's code (docs/fork.md says why a fork could not).
 */
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "cm/gsi.h"
#include "cm/reaper.h"
#include "transport/transport.h"
#include "wire/wire.h"
#include "provider_version.h"

_Static_assert(REAPER_PKT_LEN == 12 + 8 + CM_MAD_SIZE + 4, "DREQ packet: BTH, DETH, MAD, ICRC");

static pthread_mutex_t reaper_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reaper_map *map;      /* shared with the reaper */
static pid_t reaper_for;            /* the process the reaper watches */

void uroce_gsi_reaper_fork_child(void)
{
	static const pthread_mutex_t unlocked = PTHREAD_MUTEX_INITIALIZER;

	reaper_lock = unlocked;   /* map and reaper_for: reaper_start sees the pid */
}

/* ---- starting the reaper ------------------------------------------------------ */

/* uroce-reaper beside this build's provider: in the build tree when the
 * provider was loaded from there, else where `meson install` put it. */
static const char *reaper_path(void)
{
	Dl_info info;

	if (dladdr((void *)reaper_path, &info) && info.dli_fname &&
	    !strncmp(info.dli_fname, UROCE_BUILD_ROOT "/", strlen(UROCE_BUILD_ROOT) + 1))
		return UROCE_REAPER_BUILD;
	return UROCE_REAPER_INSTALLED;
}

/* Spawn the reaper with RFD and MFD as its descriptors 3 and 4, /dev/null
 * on 0-2 and nothing else, no environment, default signals, a session of
 * its own.  posix_spawn's child runs only system calls of libc's own
 * (no PLT, so no preload's dup2 or close), and execs at once. */
static int reaper_spawn(int rfd, int mfd)
{
	static char *const argv[] = { "uroce-reaper", NULL };
	static char *const envp[] = { NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	int ret, hi_r, hi_m;
	pid_t pid;

	/* above 4, so that no dup2 below overwrites the other's source */
	hi_r = fcntl(rfd, F_DUPFD_CLOEXEC, REAPER_FD_RECS + 1);
	hi_m = fcntl(mfd, F_DUPFD_CLOEXEC, REAPER_FD_RECS + 1);
	if (hi_r < 0 || hi_m < 0) {
		ret = errno;
		goto out;
	}
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDWR, 0);
	posix_spawn_file_actions_adddup2(&fa, 0, 1);
	posix_spawn_file_actions_adddup2(&fa, 0, 2);
	posix_spawn_file_actions_adddup2(&fa, hi_r, REAPER_FD_PIPE);
	posix_spawn_file_actions_adddup2(&fa, hi_m, REAPER_FD_RECS);
	posix_spawn_file_actions_addclosefrom_np(&fa, REAPER_FD_RECS + 1);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
				 POSIX_SPAWN_SETSID);
	ret = posix_spawn(&pid, reaper_path(), &fa, &at, argv, envp);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	/* it forks once and this child exits: the reaper is reparented */
	if (!ret)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
out:
	if (hi_r >= 0)
		close(hi_r);
	if (hi_m >= 0)
		close(hi_m);
	return -ret;
}

/* The records and the reaper of this process; reaper_lock held.  A
 * forked child starts its own: the mapping it inherited is its parent's,
 * which the parent's reaper reads. */
static int reaper_start(void)
{
	static bool told;
	struct reaper_map *m;
	int p[2], mfd, err;

	if (map && reaper_for == getpid())
		return 0;
	mfd = memfd_create("uroce-reaper", MFD_CLOEXEC);
	if (mfd < 0)
		return -errno;
	if (ftruncate(mfd, sizeof(*m))) {
		err = -errno;
		close(mfd);
		return err;
	}
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (m == MAP_FAILED) {
		err = -errno;
		close(mfd);
		return err;
	}
	m->magic = REAPER_MAGIC;
	m->nrecs = REAPER_RECS;
	m->rec_size = sizeof(struct reaper_rec);
	err = pipe2(p, O_CLOEXEC) ? -errno : 0;
	if (!err) {
		err = reaper_spawn(p[0], mfd);
		close(p[0]);
		/* p[1] stays open, close-on-exec, until this process ends */
		if (err)
			close(p[1]);
	}
	close(mfd);
	if (err) {
		munmap(m, sizeof(*m));
		if (!told)
			fprintf(stderr, "uroce cm: cannot start %s (%s): the peers of a killed process "
				"will learn of it by their own timeouts\n", reaper_path(), strerror(-err));
		told = true;
		return err;
	}
	map = m;
	reaper_for = getpid();
	return 0;
}

/* ---- publishing ------------------------------------------------------------------- */

/* The DREQ the kernel would send for C (cm_send_dreq), as a UD packet. */
static int build_dreq(struct reaper_rec *r, const struct uroce_gsi_conn_info *c, int ifindex)
{
	struct cm_msg m = {
		.attr_id = CM_ATTR_DREQ,
		.tid = c->local_comm_id,
		.local_comm_id = c->local_comm_id,
		.remote_comm_id = c->remote_comm_id,
		.remote_qpn = c->remote_qpn,
	};
	struct roce_pkt p = {
		.opcode = CM_GSI_OPCODE,
		.pkey = CM_GSI_PKEY,
		.dqpn = CM_GSI_QPN,
		.ackreq = true,
		.qkey = CM_GSI_QKEY,
		.sqpn = CM_GSI_QPN,
	};
	struct roce_net net;
	uint8_t *mad;
	struct iovec iov;
	uint32_t crc;
	int h;

	h = roce_build(r->pkt, sizeof(r->pkt), &p, CM_MAD_SIZE);
	if (h != 20 || (size_t)h + CM_MAD_SIZE + 4 != sizeof(r->pkt))
		return -EINVAL;
	mad = r->pkt + h;
	if (cm_mad_build(&m, mad) != CM_MAD_OK)
		return -EINVAL;
	r->family = roce_gid_family(c->local_gid);
	r->from_len = uroce_xport_sockaddr(r->family, c->local_gid, CM_GSI_UDP_SPORT, ifindex, &r->from);
	r->to_len = uroce_xport_sockaddr(r->family, c->remote_gid, ROCE_UDP_PORT, ifindex, &r->to);
	roce_net_from_socket(&net, r->family, c->local_gid, c->remote_gid, CM_GSI_UDP_SPORT,
			     ROCE_UDP_PORT);
	iov = (struct iovec){ mad, CM_MAD_SIZE };
	crc = htole32(roce_icrc(&net, r->pkt, h, &iov, 1, 0));
	memcpy(mad + CM_MAD_SIZE, &crc, 4);
	return 0;
}

int uroce_gsi_conn_publish(struct uroce_gsi *gsi, const struct uroce_gsi_conn_info *c,
			   uint32_t *handle)
{
	int ret;

	pthread_mutex_lock(&reaper_lock);
	ret = reaper_start();
	pthread_mutex_unlock(&reaper_lock);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < REAPER_RECS; i++) {
		uint32_t free_state = REAPER_REC_FREE;
		struct reaper_rec *r = &map->recs[i];

		if (!atomic_compare_exchange_strong(&r->state, &free_state, REAPER_REC_FILLING))
			continue;
		ret = build_dreq(r, c, if_nametoindex(uroce_gsi_netdev(gsi)));
		/* the reaper reads a record only once it is whole */
		atomic_store(&r->state, ret ? REAPER_REC_FREE : REAPER_REC_LIVE);
		if (!ret)
			*handle = i + 1;
		return ret;
	}
	return -ENOSPC;
}

void uroce_gsi_conn_unpublish(struct uroce_gsi *gsi, uint32_t handle)
{
	(void)gsi;
	/* (a forked child's handles are its own map's, never its parent's) */
	if (map && handle >= 1 && handle <= REAPER_RECS && reaper_for == getpid())
		atomic_store(&map->recs[handle - 1].state, REAPER_REC_FREE);
}

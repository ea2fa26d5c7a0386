// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * DREQs for a process that dies without closing (see gsi.h): the kernel's
 * ucma_close sends them at any exit; uroce's CM runs in the process, so a
 * SIGKILL would leave every peer waiting.  Established connections are
 * kept in a shared anonymous mapping, each with its DREQ packet built in
 * advance (UD SEND_ONLY to QP 1, ICRC included).  The reaper, a grandchild
 * forked at the first publish, closes everything it inherited, waits for
 * the end of a pipe whose write end only the process holds, and then
 * sends the DREQs that are still published.  It runs only async-signal-
 * safe calls after fork (socket, bind, sendto), as a forked copy of a
 * threaded process must.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "cm/gsi.h"
#include "transport/transport.h"
#include "wire/wire.h"

#define CONN_RECS 1024
#define DREQ_PKT_LEN (12 + 8 + CM_MAD_SIZE + 4)  /* BTH, DETH, MAD, ICRC */
#define DREQ_SENDS 3                              /* the reaper's retries */

enum { REC_FREE, REC_FILLING, REC_LIVE };

struct conn_rec {
	_Atomic uint32_t state;
	uint16_t sport;
	uint8_t family;
	uint8_t pad;
	int ifindex;
	uint8_t src[16], dst[16];
	uint8_t pkt[DREQ_PKT_LEN];
};

static pthread_mutex_t reaper_lock = PTHREAD_MUTEX_INITIALIZER;
static struct conn_rec *recs;       /* shared with the reaper */
static pid_t reaper_for;            /* the process the reaper watches */

/* ---- the reaper (after fork: async-signal-safe calls only) -------------------- */

static void send_rec(const struct conn_rec *r)
{
	struct sockaddr_storage from, to;
	socklen_t fl = uroce_xport_sockaddr(r->family, r->src, r->sport, r->ifindex, &from);
	socklen_t tl = uroce_xport_sockaddr(r->family, r->dst, ROCE_UDP_PORT, r->ifindex, &to);
	int one = 1, fd = socket(r->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int pmtu = r->family == AF_INET ? IP_PMTUDISC_DO : IPV6_PMTUDISC_DO;

	if (fd < 0)
		return;
	/* the ICRC was computed for DF and IP ID 0, as the engine sends */
	if (r->family == AF_INET)
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	else
		setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&from, fl) == 0)
		sendto(fd, r->pkt, sizeof(r->pkt), 0, (struct sockaddr *)&to, tl);
	close(fd);
}

static __attribute__((noreturn)) void reaper_main(int rfd)
{
	struct timespec gap = { 0, 100 * 1000 * 1000 };
	char b;
	ssize_t n;

	/* Wait for the watched process to end: the pipe's write end closes. */
	do {
		n = read(rfd, &b, 1);
	} while (n > 0 || (n < 0 && errno == EINTR));
	for (int round = 0; round < DREQ_SENDS; round++) {
		for (int i = 0; i < CONN_RECS; i++)
			if (atomic_load(&recs[i].state) == REC_LIVE)
				send_rec(&recs[i]);
		nanosleep(&gap, NULL);
	}
	_exit(0);
}

static void reaper_child(int rfd)
{
	int null;

	if (fork() != 0)
		_exit(0);    /* the grandchild is reparented: the app never waits for it */
	/* Keep nothing of the application: no sockets (its SO_REUSEPORT
	 * group would lose packets to us), no pipes it reads to the end. */
	if (rfd != 3) {
		dup2(rfd, 3);
		rfd = 3;
	}
	close_range(4, ~0u, 0);
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 3)
			close(null);
	}
	/* Ctrl-C or SIGTERM to the application's group must not stop the
	 * one who speaks for it afterwards. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	setsid();
	reaper_main(rfd);
}

/* The records and the reaper of this process; reaper_lock held. */
static int reaper_start(void)
{
	int p[2];
	pid_t pid;

	if (recs && reaper_for == getpid())
		return 0;
	/* New records (also in a forked child: the mapping it inherited is
	 * its parent's, shared with the parent's reaper). */
	void *m = mmap(NULL, CONN_RECS * sizeof(*recs), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	struct conn_rec *old = recs;
	int err;

	if (m == MAP_FAILED)
		return -errno;
	recs = m;                /* (the reaper reads this one) */
	if (pipe2(p, O_CLOEXEC))
		goto fail;
	pid = fork();
	if (pid == 0)
		reaper_child(p[0]);
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		goto fail;
	}
	waitpid(pid, NULL, 0);
	/* p[1] stays open, close-on-exec, until this process ends */
	reaper_for = getpid();
	return 0;
fail:
	err = -errno;
	munmap(m, CONN_RECS * sizeof(*recs));
	recs = old;
	return err;
}

/* ---- publishing ------------------------------------------------------------------- */

/* The DREQ the kernel would send for C (cm_send_dreq), as a UD packet. */
static int build_dreq(struct conn_rec *r, const struct uroce_gsi_conn_info *c)
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
	if (h != 20)
		return -EINVAL;
	mad = r->pkt + h;
	if (cm_mad_build(&m, mad) != CM_MAD_OK)
		return -EINVAL;
	r->family = roce_gid_family(c->local_gid);
	r->sport = CM_GSI_UDP_SPORT;
	memcpy(r->src, c->local_gid, 16);
	memcpy(r->dst, c->remote_gid, 16);
	roce_net_from_socket(&net, r->family, r->src, r->dst, r->sport, ROCE_UDP_PORT);
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
	for (uint32_t i = 0; i < CONN_RECS; i++) {
		uint32_t free_state = REC_FREE;
		struct conn_rec *r = &recs[i];

		if (!atomic_compare_exchange_strong(&r->state, &free_state, REC_FILLING))
			continue;
		r->ifindex = if_nametoindex(uroce_gsi_netdev(gsi));
		ret = build_dreq(r, c);
		/* the reaper reads a record only once it is whole */
		atomic_store(&r->state, ret ? REC_FREE : REC_LIVE);
		if (!ret)
			*handle = i + 1;
		return ret;
	}
	return -ENOSPC;
}

void uroce_gsi_conn_unpublish(struct uroce_gsi *gsi, uint32_t handle)
{
	(void)gsi;
	if (recs && handle >= 1 && handle <= CONN_RECS)
		atomic_store(&recs[handle - 1].state, REC_FREE);
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * uroce-reaper: sends the DREQs of a process that died without closing
 * its rdma CM connections (cm/gsi_reaper.c starts it with posix_spawn,
 * cm/reaper.h says what it shares).  It is a program of its own, not a
 * fork of the application, so that it runs none of the application's
 * code: no preload's wrappers, no lock some thread held at fork, no copy
 * of the application's descriptors (docs/fork.md).
 *
 * It holds one descriptor, the read end of a pipe whose write end only
 * the application holds; when that reads as end of file, the application
 * is gone, and the records still LIVE are the connections it left.
 */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cm/reaper.h"

static void send_rec(const struct reaper_rec *r)
{
	int one = 1, fd = socket(r->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int pmtu = r->family == AF_INET ? IP_PMTUDISC_DO : IPV6_PMTUDISC_DO;

	if (fd < 0)
		return;
	/* the ICRC was computed for DF and IP ID 0, as the engine sends */
	if (r->family == AF_INET)
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	else
		setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	/* the CM's source port is the GSI's, bound by the live processes */
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&r->from, r->from_len) == 0)
		sendto(fd, r->pkt, sizeof(r->pkt), 0, (const struct sockaddr *)&r->to, r->to_len);
	close(fd);
}

int main(void)
{
	struct timespec gap = { 0, REAPER_GAP_MS * 1000 * 1000 };
	struct reaper_map *map;
	struct stat st;
	ssize_t n;
	char b;

	/* Nothing but our two descriptors and /dev/null on 0-2, whatever
	 * the spawner's file actions did. */
	close_range(REAPER_FD_RECS + 1, ~0u, 0);
	if (fstat(REAPER_FD_RECS, &st) || (size_t)st.st_size < sizeof(*map))
		return 2;
	map = mmap(NULL, sizeof(*map), PROT_READ, MAP_SHARED, REAPER_FD_RECS, 0);
	close(REAPER_FD_RECS);
	if (map == MAP_FAILED || map->magic != REAPER_MAGIC || map->nrecs != REAPER_RECS ||
	    map->rec_size != sizeof(struct reaper_rec))
		return 2;
	/* Ctrl-C or SIGTERM to the application's group must not stop the
	 * one who speaks for it afterwards. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* The application waits for this process only until it has forked:
	 * the one that stays is reparented, and a program that waits for
	 * all its children never waits for it. */
	switch (fork()) {
	case -1:
		return 3;
	case 0:
		break;
	default:
		_exit(0);
	}
	do {
		n = read(REAPER_FD_PIPE, &b, 1);
	} while (n > 0 || (n < 0 && errno == EINTR));
	for (int round = 0; round < REAPER_SENDS; round++) {
		for (int i = 0; i < REAPER_RECS; i++)
			if (atomic_load(&map->recs[i].state) == REAPER_REC_LIVE)
				send_rec(&map->recs[i]);
		nanosleep(&gap, NULL);
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The progress thread's polling policy: how soon it runs when a packet
 * arrives, and how long it keeps polling after activity before it sleeps.
 *
 * Issue 14: an ib_write_lat/ib_read_lat side spins on memory, not on the
 * CQ, so the WRITE or READ request aimed at it is handled by the progress
 * thread, which has to be woken and scheduled while the application's
 * thread spins on the same CPUs.  Measured choices (docs/performance.md):
 *
 * - a short scheduler slice (Linux >= 6.12, EEVDF: sched_attr.sched_runtime
 *   of a SCHED_OTHER thread is its slice, and a waking task with a shorter
 *   slice preempts the running one).  UROCE_PROGRESS_SLICE_US, default 100
 *   (the kernel's minimum); 0 leaves the kernel's default.  Costs nothing
 *   while idle: the thread still sleeps in epoll_wait.
 * - an application thread that busy-polls its CQ while another thread
 *   (the progress thread) holds the receive path yields the CPU, so that a
 *   progress thread preempted on the same CPU gets to finish: without it an
 *   ib_send_bw responder on a loaded 2-CPU machine answered ACK requests
 *   8-49 ms late (a pcap showed no loss, only those gaps).
 * - a bounded busy poll after activity: once the thread handled a packet it
 *   keeps polling the sockets without sleeping for UROCE_BUSY_POLL_US
 *   (default 0: off), each new packet restarting the window; then it
 *   sleeps again.  An idle process stays at ~0 % CPU either way.
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "engine.h"

/* The kernel's struct sched_attr (include/uapi/linux/sched/types.h):
 * glibc 2.36 has no wrapper, so the system call is made directly. */
struct uroce_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;      /* SCHED_OTHER on EEVDF: the slice, ns */
	uint64_t sched_deadline;
	uint64_t sched_period;
};

/* A non-negative integer from environment variable NAME, else DEF. */
static long env_long(const char *name, long def)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return def;
	n = strtol(v, &end, 10);
	return *end || n < 0 ? def : n;
}

void uroce_poll_conf(struct uroce_engine *eng)
{
	eng->busy_poll_ns = (uint64_t)env_long("UROCE_BUSY_POLL_US", 0) * 1000;
	eng->slice_ns = (uint64_t)env_long("UROCE_PROGRESS_SLICE_US", 100) * 1000;
}

void uroce_poll_thread_start(struct uroce_engine *eng)
{
	struct uroce_sched_attr a = { .size = sizeof(a), .sched_policy = SCHED_OTHER };

	if (!eng->slice_ns)
		return;
	/* Best effort: before 6.12 the runtime of SCHED_OTHER is ignored, and
	 * a kernel that refuses it (EINVAL) leaves the default slice. */
	a.sched_runtime = eng->slice_ns;
	if (syscall(SYS_sched_setattr, 0, &a, 0) && uroce_debug)
		perror("uroce: progress thread slice (sched_setattr)");
}

bool uroce_poll_keep_busy(struct uroce_engine *eng, bool had_packets, uint64_t *until_ns)
{
	uint64_t now;

	if (!eng->busy_poll_ns)
		return false;
	now = uroce_now_ns();
	if (had_packets)
		*until_ns = now + eng->busy_poll_ns;
	return now < *until_ns;
}

void uroce_poll_contended(struct uroce_engine *eng)
{
	(void)eng;
	sched_yield();
}

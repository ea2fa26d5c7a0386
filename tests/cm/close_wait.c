// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * A thread blocked in rdma_get_cm_event while another thread destroys its
 * ids and closes the event channel (rping does this at its end).  With the
 * kernel's rdma_cm the blocked write() holds the file, so it stays blocked
 * and the process ends normally; it must not return an error (rping's
 * cm_thread then exits 255: "rdma_get_cm_event: Bad file descriptor").
 * Nor may it take the events of a new channel that got the same fd number.
 *
 * Run under `uroce run` in a namespace whose lo carries a uroce device.
 * Exit 0 if the blocked call is still blocked RECHECK_MS after the close
 * and after the new channel's event, 1 otherwise.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <sys/syscall.h>
#include <rdma/rdma_cma.h>

#define RECHECK_MS 300
#define RACE_ROUNDS 400

static struct rdma_event_channel *ch;
static _Atomic int returned;
static _Atomic pid_t waiter_tid;
static int ret_errno;

static void *waiter(void *arg)
{
	struct rdma_cm_event *ev;
	int r;

	(void)arg;
	atomic_store(&waiter_tid, (pid_t)syscall(SYS_gettid));
	r = rdma_get_cm_event(ch, &ev);
	ret_errno = r ? errno : 0;
	atomic_store(&returned, r ? -1 : 1);
	return NULL;
}

static void ms_sleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Is thread TID blocked in poll (our GET_EVENT's wait)?  The event to
 * wait for before closing under it. */
static int in_poll(pid_t tid)
{
	char path[64];
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
#ifdef SYS_poll
	if (nr == SYS_poll)
		return 1;
#endif
	return nr == SYS_ppoll;
}

/* Wait (bounded) until the thread that stores its id in *TID blocks in poll. */
static int wait_in_poll(_Atomic pid_t *tid)
{
	for (int waited = 0; waited < 10000; waited++) {
		pid_t t = atomic_load(tid);

		if (t && in_poll(t))
			return 0;
		ms_sleep(1);
	}
	fprintf(stderr, "FAIL: rdma_get_cm_event did not block\n");
	return -1;
}

static int check(const char *when)
{
	if (!atomic_load(&returned))
		return 0;
	fprintf(stderr, "FAIL: the blocked rdma_get_cm_event returned (%s) %s\n",
		atomic_load(&returned) < 0 ? strerror(ret_errno) : "an event", when);
	return 1;
}


/* The race rping meets: an event wakes the waiter, and before it takes
 * the event the main thread destroys the id (the event goes with it) and
 * closes the channel.  The waiter must wait on, never fail. */
static _Atomic int race_failures;
static _Atomic pid_t race_tid;

static void *race_waiter(void *arg)
{
	struct rdma_event_channel *c = arg;
	struct rdma_cm_event *ev;

	atomic_store(&race_tid, (pid_t)syscall(SYS_gettid));
	if (rdma_get_cm_event(c, &ev)) {
		atomic_fetch_add(&race_failures, 1);
		fprintf(stderr, "rdma_get_cm_event: %s\n", strerror(errno));
		return NULL;
	}
	rdma_ack_cm_event(ev);
	return NULL;
}

static int race(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(7),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (int i = 0; i < RACE_ROUNDS; i++) {
		struct rdma_event_channel *c = rdma_create_event_channel();
		struct rdma_cm_id *id;
		pthread_t t;

		atomic_store(&race_tid, 0);
		if (!c || rdma_create_id(c, &id, NULL, RDMA_PS_TCP) ||
		    pthread_create(&t, &attr, race_waiter, c) || wait_in_poll(&race_tid)) {
			perror("FAIL: race setup");
			return 1;
		}
		/* ADDR_RESOLVED is queued during the call: it wakes the
		 * waiter, which may or may not take it before the id goes. */
		rdma_resolve_addr(id, NULL, (struct sockaddr *)&sin, 2000);
		rdma_destroy_id(id);
		rdma_destroy_event_channel(c);
	}
	ms_sleep(RECHECK_MS);
	if (atomic_load(&race_failures)) {
		fprintf(stderr, "FAIL: %d of %d waiters failed when their channel was closed\n",
			atomic_load(&race_failures), RACE_ROUNDS);
		return 1;
	}
	printf("ok: %d rounds of an event racing destroy_id and close: no waiter failed\n",
	       RACE_ROUNDS);
	return 0;
}

int main(void)
{
	struct rdma_event_channel *ch2;
	struct rdma_cm_id *id, *id2;
	struct rdma_cm_event *ev;
	struct addrinfo *ai;
	pthread_t t;

	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		perror("rdma_create_event_channel/id");
		return 1;
	}
	pthread_create(&t, NULL, waiter, NULL);
	if (wait_in_poll(&waiter_tid))
		return 1;
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	/* Nothing must happen to the blocked call: look again later. */
	ms_sleep(RECHECK_MS);
	if (check("after the close"))
		return 1;
	/* A new channel (it may get the old fd number) has its own events:
	 * the old call must not take them. */
	ch2 = rdma_create_event_channel();
	if (!ch2 || rdma_create_id(ch2, &id2, NULL, RDMA_PS_TCP)) {
		perror("FAIL: a new channel after the close");
		return 1;
	}
	if (getaddrinfo("127.0.0.1", "7", NULL, &ai) ||
	    rdma_resolve_addr(id2, NULL, ai->ai_addr, 2000)) {
		perror("FAIL: rdma_resolve_addr on the new channel");
		return 1;
	}
	freeaddrinfo(ai);
	if (rdma_get_cm_event(ch2, &ev)) {
		perror("FAIL: rdma_get_cm_event on the new channel");
		return 1;
	}
	printf("ok: the new channel's event: %s\n", rdma_event_str(ev->event));
	rdma_ack_cm_event(ev);
	if (check("after an event on a new channel"))
		return 1;
	rdma_destroy_id(id2);
	rdma_destroy_event_channel(ch2);
	printf("ok: a blocked rdma_get_cm_event stays blocked when its channel is closed\n");
	return race();
}

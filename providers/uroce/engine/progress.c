// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The progress thread (as the kernel's rxe_task.c runs the protocol's
 * work): one per engine, it sleeps in epoll on the transport, an eventfd
 * (uroce_engine_wake) and the timer tick (tick.c), takes what the
 * transport has, runs the timers, and sends what the held ACKs and a
 * stalled transmit queue still owe.  Because it runs, one-sided
 * operations aimed at the process complete while the application makes
 * no verbs call.  When to poll rather than sleep, and when to leave the
 * wire to polling applications, is poll.c's policy.
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/syscall.h>

#include "engine/engine_int.h"

void uroce_engine_wake(struct uroce_engine *eng)
{
	uint64_t one = 1;

	if (write(eng->wake_fd, &one, sizeof(one)) < 0)
		(void)0;
}

/* The progress thread takes what the transport has: while it still has
 * packets (ACKs among them), before the timers run, since a thread that
 * was not scheduled for a while otherwise times out QPs whose ACKs wait in
 * sockets it has not reached yet.  The packets taken. */
static unsigned int progress_rx(struct uroce_engine *eng, bool *handed_over)
{
	unsigned int got = 0, n;

	pthread_mutex_lock(&eng->rx_lock);
	uroce_poll_app_waits(eng);
	*handed_over = false;
	for (int rounds = 0; rounds < RX_ROUNDS && (n = uroce_engine_rx_bursts(eng, UROCE_BURST_PROGRESS)) > 0; rounds++) {
		got += n;
		/* An application polls and waits for this lock: leave the
		 * rest to it.  It then sends what the ACKs release itself,
		 * as with one QP, instead of waiting while this thread does
		 * (ib_write_bw -q 128, docs/performance.md). */
		if (uroce_poll_app_waits(eng)) {
			*handed_over = true;
			break;
		}
	}
	pthread_mutex_unlock(&eng->rx_lock);
	return got;
}

/* Sleep in epoll_wait for at most WAIT_NS (UINT64_MAX: no limit). */
static int progress_wait(struct uroce_engine *eng, struct epoll_event *evs, int max,
			 uint64_t wait_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(wait_ns / 1000000000u),
			       .tv_nsec = (long)(wait_ns % 1000000000u) };
	int n;

	n = (int)syscall(SYS_epoll_pwait2, eng->epfd, evs, max,
			 wait_ns == UINT64_MAX ? NULL : &ts, NULL, 0);
	if (n < 0 && errno == ENOSYS) /* before Linux 5.11: milliseconds */
		n = epoll_wait(eng->epfd, evs, max, wait_ns == UINT64_MAX ? -1 :
			       (int)((wait_ns + 999999) / 1000000));
	return n;
}

/* Watch the transport's fd from the progress thread's epoll set, or not
 * (poll.c decides: not while an application polls the wire itself). */
static void progress_watch(struct uroce_engine *eng, bool on)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = XPORT_IDX };

	epoll_ctl(eng->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, eng->xport->fd, &ev);
}

void *uroce_progress_thread(void *arg)
{
	struct uroce_engine *eng = arg;
	struct epoll_event evs[16];
	uint64_t busy_until = 0;
	bool busy = false;

	uroce_poll_thread_start(eng);
	while (!atomic_load(&eng->stop)) {
		/* A stalled transmit queue is looked at every tick, a deferred
		 * watch (poll.c) sooner unless an application keeps the time;
		 * the timers (or its watchdog) wake the thread through tick_fd. */
		uint64_t wait = busy ? 0 : uroce_xport_tx_left(eng->xport) ? UROCE_TICK_NS : UINT64_MAX;
		bool woken_by_xport = false, handed_over = false;
		unsigned int got = 0;
		int n;

		atomic_store_explicit(&eng->loop_ns, uroce_now_ns(), memory_order_relaxed);
		if (uroce_poll_deferred(eng)) {
			uint64_t look_in = uroce_poll_look_in_ns(eng);

			wait = look_in < wait ? look_in : wait;
		}
		if (eng->progress_held) {
			uint64_t held = uroce_resp_held_wait_ns(eng);

			eng->progress_held = held != UINT64_MAX;
			wait = held < wait ? held : wait;
		}
		n = progress_wait(eng, evs, 16, wait);
		uroce_poll_watchdog_check(eng);
		for (int i = 0; i < n; i++) {
			uint64_t v;

			if (evs[i].data.u64 == TICK_IDX && read(eng->tick_fd, &v, sizeof(v)) < 0)
				(void)0;
			if (evs[i].data.u64 == WAKE_IDX && read(eng->wake_fd, &v, sizeof(v)) < 0)
				(void)0;
			woken_by_xport |= evs[i].data.u64 == XPORT_IDX;
		}
		/* An application went to sleep on a channel: watch for it
		 * (packets already waiting are reported by the next wait). */
		if (uroce_poll_take_rewatch(eng))
			progress_watch(eng, true);
		if (woken_by_xport) {
			got = progress_rx(eng, &handed_over);
			/* Woken for packets an application thread took, or one
			 * now waits to take them: leave the wire to it for a
			 * while. */
			if (uroce_poll_after_wake(eng, handed_over ? 0 : got))
				progress_watch(eng, false);
		} else if (uroce_poll_deferred(eng) && uroce_poll_look_in_ns(eng) == 0) {
			/* Deferred: take what waits.  Packets nobody took, or no
			 * application poll since the last look: watch again. */
			if (pthread_mutex_trylock(&eng->rx_lock) == 0) {
				got = uroce_engine_rx_bursts(eng, UROCE_BURST_PROGRESS);
				pthread_mutex_unlock(&eng->rx_lock);
				got += got ? progress_rx(eng, &handed_over) : 0;
			}
			if (uroce_poll_rewatch(eng, got))
				progress_watch(eng, true);
		}
		if (got)
			uroce_count(eng, UROCE_STAT_PROGRESS_RX, got);
		if (handed_over)
			busy_until = 0;
		busy = uroce_poll_keep_busy(eng, handed_over ? 0 : got, &busy_until);
		uroce_engine_run_timers(eng, UROCE_BURST_PROGRESS);
		/* ACKs held for ack_hold_ns that no post took along (an
		 * application's poll held them and started the tick; this
		 * thread's own holds shorten its wait, above). */
		uroce_resp_flush_held(eng, UROCE_HELD_EXPIRED);
		if (uroce_xport_tx_left(eng->xport))
			eng->xport->ops->tx_flush(eng->xport);
	}
	return NULL;
}

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
#include <time.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "engine/engine_int.h"
#include "knob/knob.h"

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

enum {
	LOOK_GAP_MAX_NS = 1000000,   /* quiet looks space out up to this (the timers' tick) */
	/* Wasted wake-ups in a row before a deferral.  With 4, a ping-pong's
	 * progress threads were woken for every datagram for the first 5-12
	 * ms of a run, each wake-up preempting a spinning application: the
	 * p99 of a 20 000-message ib_send_lat on the veth was 7-15 us in
	 * one run of three, 3.8-4.6 us in 16 of 16 with 2
	 * (docs/performance.md, "The polling tail"). */
	DEFER_AFTER_WASTED = 2,
	SPIN_POLLS = 8,              /* application polls between wake-ups: it spins */
	LOOKS_TO_REWATCH = 3,        /* looks in a row that find packets end it */
	APP_CPU_LOOK_NS = 1000000,   /* how often busy polling looks at the application's CPU use */
	APP_IDLE_LOOKS = 2,          /* and how many idle looks in a row it needs */
	STREAM_BURST = 32,           /* packets of one wake-up that make a stream */
	STREAM_SPIN_NS = 20000,      /* how long the progress thread then polls on */
	/* How long an application may stop polling before the progress
	 * thread keeps the time again: beyond the scheduler's next tick
	 * (HZ 250: 4 ms), so that putting tick_fd off costs 0.3 us, not the
	 * 11 us of a timer moved within it (docs/performance.md). */
	WATCHDOG_NS = 5000000,
};

void uroce_poll_conf(struct uroce_engine *eng)
{
	/* knob/knob.h: the defaults, and the ack hold's use in resp_ack.c */
	eng->busy_poll_ns = uroce_knob_num(UROCE_KNOB_BUSY_POLL_US) * 1000;
	eng->slice_ns = uroce_knob_num(UROCE_KNOB_PROGRESS_SLICE_US) * 1000;
	eng->poll_defer_ns = uroce_knob_num(UROCE_KNOB_DEFER_US) * 1000;
	eng->ack_hold_ns = uroce_knob_num(UROCE_KNOB_ACK_HOLD_US) * 1000;
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

/* CPU time of CLOCK, ns. */
static uint64_t cpu_ns(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Did the process's other threads (the application's) use less than an
 * eighth of a CPU over the last look's interval?  Looked at once per
 * APP_CPU_LOOK_NS: two system calls. */
static bool app_threads_idle(struct uroce_engine *eng, uint64_t now)
{
	uint64_t proc, mine, others, others_total;

	if (now - eng->app_cpu_at_ns < APP_CPU_LOOK_NS)
		return eng->app_idle;
	/* This thread's clock first: it runs on between the two reads, and
	 * read second it could exceed what the process clock had counted,
	 * which made "the others" negative (a huge unsigned number, "busy")
	 * at every other look, so busy polling never started. */
	mine = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	proc = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
	others_total = proc > mine ? proc - mine : 0;
	others = others_total > eng->app_cpu_ns ? others_total - eng->app_cpu_ns : 0;
	/* Idle for APP_IDLE_LOOKS looks in a row: a ping-pong's start (its
	 * side channel's handshake sleeps) is no time to begin. */
	if (eng->app_cpu_at_ns && others < (now - eng->app_cpu_at_ns) / 8)
		eng->app_idle_looks += eng->app_idle_looks < APP_IDLE_LOOKS;
	else
		eng->app_idle_looks = 0;
	eng->app_idle = eng->app_idle_looks >= APP_IDLE_LOOKS;
	eng->app_cpu_ns = others_total;
	eng->app_cpu_at_ns = now;
	return eng->app_idle;
}

bool uroce_poll_keep_busy(struct uroce_engine *eng, unsigned int got, uint64_t *until_ns)
{
	uint64_t now = uroce_now_ns();

	/* A stream: a wake-up that found a burst of packets is likely
	 * followed by another within microseconds (ib_write_bw's server,
	 * whose application sleeps).  Polling a little longer takes it
	 * without being woken.  A ping-pong's wake-ups find one packet or
	 * two, and never spin here. */
	if (got >= STREAM_BURST && now + STREAM_SPIN_NS > *until_ns)
		*until_ns = now + STREAM_SPIN_NS;
	if (!eng->busy_poll_ns)
		return now < *until_ns;
	/* Only while the application's threads sleep: a thread that spins
	 * (ib_write_lat's spins on memory between rare CQ polls) needs the
	 * CPU a second poller would take, and two pollers per process on 2
	 * CPUs starve one another.  With them asleep (an ib_write_bw or
	 * ib_read_lat server), polling spends a CPU nobody wanted and saves a
	 * wake-up per packet burst. */
	if (!app_threads_idle(eng, now))
		return now < *until_ns;
	if (got)
		*until_ns = now + eng->busy_poll_ns;
	return now < *until_ns;
}

void uroce_poll_contended(struct uroce_engine *eng)
{
	atomic_fetch_add_explicit(&eng->app_contended, 1, memory_order_relaxed);
	sched_yield();
}

bool uroce_poll_app_waits(struct uroce_engine *eng)
{
	uint64_t n = atomic_load_explicit(&eng->app_contended, memory_order_relaxed);
	bool moved = n != eng->contended_seen;

	eng->contended_seen = n;
	return moved;
}

void uroce_poll_app_polled(struct uroce_engine *eng)
{
	atomic_fetch_add_explicit(&eng->app_polls, 1, memory_order_relaxed);
}

/* The progress thread keeps the time again: tick_fd from the watchdog's
 * time back to the timers'. */
static void watchdog_off(struct uroce_engine *eng)
{
	pthread_mutex_lock(&eng->tick_lock);
	if (atomic_exchange(&eng->watchdog, false))
		uroce_engine_tick_set_fd(eng, atomic_load(&eng->tick_at_ns));
	pthread_mutex_unlock(&eng->tick_lock);
}

/* The progress thread's watch and the gap to its next look, which
 * application threads read too (uroce_poll_looks_within). */
static void set_watch(struct uroce_engine *eng, enum uroce_watch watch, uint64_t gap_ns)
{
	__atomic_store_n(&eng->look_gap_ns, gap_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&eng->watch, watch, __ATOMIC_SEQ_CST);
	if (watch == UROCE_WATCH_DEFERRED)
		eng->defer_check_ns = uroce_now_ns() + gap_ns;
	else
		watchdog_off(eng);
}

/* How often applications polled the wire since the last look.  (And look.) */
static uint64_t app_polls_since(struct uroce_engine *eng)
{
	uint64_t polls = atomic_load_explicit(&eng->app_polls, memory_order_relaxed);
	uint64_t moved = polls - eng->polls_seen;

	eng->polls_seen = polls;
	return moved;
}

bool uroce_poll_deferred(const struct uroce_engine *eng)
{
	return eng->watch == UROCE_WATCH_DEFERRED;
}

bool uroce_poll_after_wake(struct uroce_engine *eng, unsigned int got)
{
	uint64_t polls = app_polls_since(eng);
	uint64_t arms = atomic_load(&eng->app_arms);

	if (!eng->poll_defer_ns)
		return false;
	/* An application that arms its CQs sleeps on their channel between
	 * polls: nobody would take its packets while this thread defers. */
	if (arms != eng->arms_seen) {
		eng->arms_seen = arms;
		eng->wasted_wakes = 0;
		return false;
	}
	/* Wasted: the packets the wake-up announced were gone, taken by an
	 * application thread polling its CQ; or this thread took them from
	 * an application that polled SPIN_POLLS times since the last wake-up
	 * and would have taken them itself.  A progress thread that wins that
	 * race (its wake-up preempts the poller) would otherwise never see
	 * four wasted wake-ups in a row: ib_write_lat over xdp then ran with
	 * a thread hop in about one run of three (docs/performance.md). */
	eng->wasted_wakes = (got == 0 && polls) || polls >= SPIN_POLLS ?
			    eng->wasted_wakes + 1 : 0;
	if (eng->wasted_wakes < DEFER_AFTER_WASTED)
		return false;
	eng->wasted_wakes = 0;
	set_watch(eng, UROCE_WATCH_DEFERRED, eng->poll_defer_ns);
	/* Deferred, then the arms read; uroce_poll_app_sleeps counts, then
	 * reads the watch: one of the two sees the other. */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&eng->app_arms) != arms) {
		set_watch(eng, UROCE_WATCH_PROGRESS, eng->poll_defer_ns);
		return false;
	}
	uroce_count(eng, UROCE_STAT_PROGRESS_DEFERRALS, 1);
	return true;
}

/*
 * A thread that arms a CQ sleeps on its completion channel next
 * (ibv_get_cq_event), and then polls no more.  A progress thread that
 * deferred to polling applications would see its packets only at its next
 * look, 200 µs to 1 ms away: rsockets, which spins on its CQ before it
 * arms, waited that long for one message in six, mean 375 µs against 12 µs
 * over TCP (docs/performance.md, "Event path").  So it is woken to watch
 * again now.
 */
void uroce_poll_app_sleeps(struct uroce_engine *eng)
{
	atomic_fetch_add(&eng->app_arms, 1);
	if (__atomic_load_n(&eng->watch, __ATOMIC_SEQ_CST) == UROCE_WATCH_DEFERRED &&
	    !atomic_exchange(&eng->rewatch_asked, true))
		uroce_engine_wake(eng);
}

bool uroce_poll_take_rewatch(struct uroce_engine *eng)
{
	if (!atomic_exchange(&eng->rewatch_asked, false) || eng->watch != UROCE_WATCH_DEFERRED)
		return false;
	eng->looks_found = 0;
	eng->wasted_wakes = 0;
	eng->arms_seen = atomic_load(&eng->app_arms);
	set_watch(eng, UROCE_WATCH_PROGRESS, eng->poll_defer_ns);
	return true;
}

/* Will the progress thread look within NS, whatever comes?  Asked by
 * application threads: the progress thread's own fields, read once. */
bool uroce_poll_looks_within(const struct uroce_engine *eng, uint64_t ns)
{
	return __atomic_load_n(&eng->watch, __ATOMIC_RELAXED) == UROCE_WATCH_DEFERRED &&
	       __atomic_load_n(&eng->look_gap_ns, __ATOMIC_RELAXED) <= ns;
}

/* How long until the deferred watch's next look; 0: it is due; UINT64_MAX:
 * none while an application keeps the time (uroce_poll_beat). */
uint64_t uroce_poll_look_in_ns(const struct uroce_engine *eng)
{
	uint64_t now = uroce_now_ns();

	if (atomic_load(&eng->watchdog))
		return UINT64_MAX;
	return eng->defer_check_ns > now ? eng->defer_check_ns - now : 0;
}

/* Is the watchdog off, or due to be put off at NOW? */
static bool watchdog_wanted(const struct uroce_engine *eng, uint64_t now)
{
	return !atomic_load(&eng->watchdog) || atomic_load(&eng->fd_at_ns) <= now + WATCHDOG_NS / 2;
}

/*
 * An application thread polls the wire while the progress thread defers
 * to it: it keeps the time in the progress thread's place.  Its polls run
 * the timers when they are due, and put the watchdog off, a timer set
 * WATCHDOG_NS ahead (once in WATCHDOG_NS / 2 at most).  The progress
 * thread's looks and ticks, each a wake-up that preempted a spinning
 * thread, then do not come: in a polling ib_send_lat on lo they were about
 * 2 000 a second a process, and its p99 was 14 us against 5 us without
 * them (docs/performance.md, "The polling tail").  Not while looks find
 * packets nobody took (an application that spins on memory, not its CQ,
 * uroce_poll_rewatch): those looks are the progress thread's to time.
 */
void uroce_poll_beat(struct uroce_engine *eng)
{
	uint64_t now;

	if (__atomic_load_n(&eng->watch, __ATOMIC_RELAXED) != UROCE_WATCH_DEFERRED ||
	    __atomic_load_n(&eng->looks_found, __ATOMIC_RELAXED))
		return;
	now = uroce_now_ns();
	if (atomic_load(&eng->watchdog) && now >= atomic_load(&eng->tick_at_ns))
		uroce_engine_run_timers(eng, UROCE_BURST_APP);
	if (!watchdog_wanted(eng, now))
		return;
	pthread_mutex_lock(&eng->tick_lock);
	/* Deferred still (the progress thread watches again under this
	 * lock, watchdog_off), and not put off meanwhile by another thread. */
	if (__atomic_load_n(&eng->watch, __ATOMIC_SEQ_CST) == UROCE_WATCH_DEFERRED &&
	    watchdog_wanted(eng, now)) {
		atomic_store(&eng->watchdog, true);
		uroce_engine_tick_set_fd(eng, now + WATCHDOG_NS);
	}
	pthread_mutex_unlock(&eng->tick_lock);
}

void uroce_poll_watchdog_check(struct uroce_engine *eng)
{
	uint64_t now;

	if (!atomic_load(&eng->watchdog))
		return;
	now = uroce_now_ns();
	if (now < atomic_load(&eng->fd_at_ns))
		return;
	watchdog_off(eng);
	eng->defer_check_ns = now;
}

bool uroce_poll_rewatch(struct uroce_engine *eng, unsigned int got)
{
	/* Still polled: defer on, unless packets waited at LOOKS_TO_REWATCH
	 * looks in a row.  One look's worth is no sign: an application that
	 * polls takes a packet some microseconds after it lands, and a look
	 * may fall in between (ib_read_lat's client flapped that way, its
	 * progress thread woken for every response).  Packets at every look
	 * mean no application takes them (one that spins on memory, as
	 * ib_write_lat's side does before its ping-pong finds its pace,
	 * resp_ack.c): watch again. */
	eng->looks_found = got ? eng->looks_found + 1 : 0;
	if (app_polls_since(eng) && eng->looks_found < LOOKS_TO_REWATCH) {
		/* A quiet look (polled, nothing waited) doubles the gap to the
		 * next, up to the timers' tick; one that found packets starts
		 * again from UROCE_DEFER_US.  Each look is a wake-up that
		 * preempts a spinning thread on a busy machine: at every
		 * 200 us, an ib_send_lat side's application thread was
		 * preempted 5 000 times a second (docs/performance.md). */
		uint64_t gap = eng->look_gap_ns;

		if (got)
			gap = eng->poll_defer_ns;
		else if (gap < LOOK_GAP_MAX_NS)
			gap = gap * 2 < LOOK_GAP_MAX_NS ? gap * 2 : LOOK_GAP_MAX_NS;
		set_watch(eng, UROCE_WATCH_DEFERRED, gap);
		return false;
	}
	eng->looks_found = 0;
	set_watch(eng, UROCE_WATCH_PROGRESS, eng->look_gap_ns);
	return true;
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Engine lifetime, the progress thread, packet dispatch by destination QP,
 * and the hooks the verbs layer calls.  The engine runs in the application
 * process: one-sided operations aimed at it complete while the
 * application makes no verbs call, because this thread serves them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>

#include "wire/wire.h"
#include "engine/engine_int.h"
#include "engine/evobj.h"
#include "engine/pkt.h"
#include "trace/trace.h"

#define WAKE_IDX 1
#define XPORT_IDX 2
#define TICK_IDX 3
/* Packets taken from the transport per call, and calls per wake-up. */
#define RX_BURST 64
#define RX_ROUNDS 64

int uroce_debug;

static pthread_mutex_t engines_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uroce_engine *engines;

void uroce_engine_wake(struct uroce_engine *eng)
{
	uint64_t one = 1;

	if (write(eng->wake_fd, &one, sizeof(one)) < 0)
		(void)0;
}

/*
 * The progress thread runs the timers by AT_NS at the latest: tick_fd is
 * set to the earliest time any thread asked for, and tick_at_ns says which
 * (so that a later time costs one compare).  Invariant: tick_at_ns is never
 * after the earliest timer of an armed QP.  A timer that moves later (a
 * ping-pong's every ACK restarts it) costs nothing: the thread wakes at the
 * old time, finds nothing due and sets the tick for the new earliest one.
 * Until 2026-11-28 the tick came every millisecond while any QP was armed:
 * a thousand wake-ups a second, each preempting a spinning application
 * thread on a busy machine (docs/performance.md).
 */
void uroce_engine_tick_by(struct uroce_engine *eng, uint64_t at_ns)
{
	struct itimerspec its = { 0 };

	if (at_ns >= atomic_load(&eng->tick_at_ns))
		return;
	pthread_mutex_lock(&eng->tick_lock);
	if (at_ns < atomic_load(&eng->tick_at_ns)) {
		atomic_store(&eng->tick_at_ns, at_ns);
		/* An absolute time of 0 would disarm the timer. */
		its.it_value.tv_sec = (time_t)(at_ns / 1000000000u);
		its.it_value.tv_nsec = (long)(at_ns % 1000000000u) + !at_ns;
		if (timerfd_settime(eng->tick_fd, TFD_TIMER_ABSTIME, &its, NULL))
			uroce_engine_wake(eng);
	}
	pthread_mutex_unlock(&eng->tick_lock);
}

/* A look by the progress thread within UROCE_TICK_NS (an application's held
 * ACKs, resp.c).  Not a wake-up at once: an eventfd cost a context switch
 * per message in a ping-pong. */
void uroce_engine_start_tick(struct uroce_engine *eng)
{
	uroce_engine_tick_by(eng, uroce_now_ns() + UROCE_TICK_NS);
}

/* The earliest of QE's timers, UINT64_MAX: none. */
static uint64_t timers_due_ns(const struct uroce_qp_eng *qe)
{
	uint64_t due = UINT64_MAX;
	const uint64_t t[] = { qe->deadline_ns, qe->rnr_until_ns, qe->probe_ns };

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i] && t[i] < due)
			due = t[i];
	return due;
}

/* QE's timers run (ON) or not; called with its QP's lock held. */
void uroce_engine_arm(struct uroce_qp_eng *qe, bool on)
{
	if (qe->armed != on) {
		qe->armed = on;
		atomic_fetch_add(&qe->eng->armed, on ? 1 : -1);
	}
	if (!on)
		return;
	/* Armed, then the tick read: run_timers clears the tick, then reads
	 * the QPs' armed flags, so either it finds this QP or this call
	 * finds the tick cleared and sets it. */
	atomic_thread_fence(memory_order_seq_cst);
	uroce_engine_tick_by(qe->eng, timers_due_ns(qe));
}

const struct uroce_upcalls *uroce_up;

void uroce_engine_set_upcalls(const struct uroce_upcalls *up)
{
	uroce_up = up;
}

/* ---- dispatch ----------------------------------------------------------- */

struct uroce_qp *uroce_engine_qp_locked(struct uroce_engine *eng, uint32_t qpn)
{
	struct uroce_qp *qp = NULL;

	pthread_rwlock_rdlock(&eng->qps_lock);
	if (qpn < UROCE_MAX_QP)
		qp = eng->qps[qpn];
	if (qp)
		pthread_mutex_lock(&qp->lock);
	pthread_rwlock_unlock(&eng->qps_lock);
	return qp;
}

int uroce_engine_forward(struct uroce_engine *eng, uint16_t port, const struct uroce_rx *rx)
{
	int ret;

	if (!eng->xport->ops->forward)
		return -EOPNOTSUPP;
	ret = eng->xport->ops->forward(eng->xport, port, rx);
	if (ret == 0)
		uroce_count(eng, UROCE_STAT_FORWARDED_OUT, 1);
	return ret;
}

static void forward(struct uroce_engine *eng, uint32_t qpn, struct uroce_rx *rx)
{
	uint16_t port = 0;
	pid_t owner;

	if (rx->forwarded)
		goto drop;
	owner = uroce_qpn_owner(eng->qpns, qpn, 0, &port);
	if (!owner || owner == getpid())
		goto drop;
	if (!eng->xport->ops->forward)
		goto drop;
	if (uroce_engine_forward(eng, port, rx) == 0)
		return;
	/* The owner may be gone: ask again, freeing its QPN if it died. */
	owner = uroce_qpn_owner(eng->qpns, qpn, 1, &port);
	if (owner && owner != getpid() && uroce_engine_forward(eng, port, rx) == 0)
		return;
drop:
	uroce_count(eng, UROCE_STAT_DROP_NO_QP, 1);
}

void uroce_engine_rx(struct uroce_engine *eng, struct uroce_rx *rx)
{
	struct roce_pkt pkt;
	struct uroce_qp *qp = NULL;
	uint32_t qpn;
	int ret;

	uroce_count(eng, UROCE_STAT_RX_PACKETS, 1);
	uroce_count(eng, UROCE_STAT_RX_BYTES, rx->len);
	ret = uroce_pkt_parse(eng, rx, &pkt);
	if (ret)
		return;
	if (uroce_debug && pkt.kind == ROCE_K_ACK && (pkt.syndrome & ROCE_AETH_TYPE_MASK))
		fprintf(stderr, "uroce: rx NAK syndrome 0x%02x psn %u for QP %u\n", pkt.syndrome,
			pkt.psn, pkt.dqpn);
	/* The only P_Key is the default 0xffff; a packet matches if the low 15
	 * bits agree (IBTA 10.9.3: membership bit aside). */
	if ((pkt.pkey & 0x7fff) != 0x7fff) {
		uroce_count(eng, UROCE_STAT_DROP_PKEY, 1);
		return;
	}
	/* Congestion notifications: uroce does no rate control (DCQCN);
	 * they are counted and dropped. */
	if (pkt.kind == ROCE_K_CNP) {
		uroce_count(eng, UROCE_STAT_DROP_OTHER, 1);
		return;
	}
	qpn = pkt.dqpn;
	if (qpn == CM_GSI_QPN) {
		uroce_up->gsi_rx(eng, rx, &pkt);
		return;
	}
	if (qpn == ROCE_QPN_MULTICAST) {
		uroce_mcast_rx(eng, rx, &pkt);
		return;
	}
	qp = uroce_engine_qp_locked(eng, qpn);
	if (!qp) {
		forward(eng, qpn, rx);
		return;
	}
	struct uroce_qp_eng *qe = qp->engine;
	uint32_t epsn = qe->epsn, una = qe->una_psn;

	if (pkt.is_response)
		uroce_comp_rx(qp, &pkt);
	else
		uroce_resp_rx(qp, &pkt, rx);
	/* A peer whose source port we could not predict (another RoCE
	 * implementation): connect to where it really sends from, so the rest
	 * of the connection comes here directly.  Only for a packet the QP
	 * took (a new request, a response that acknowledged something): any
	 * host can send a packet with a far-off PSN from any port, and such
	 * a packet must not move the connection (tests/faults/hostile.sh). */
	if (qp->vqp.qp.qp_type != IBV_QPT_UD && rx->src_port != qe->conn_port &&
	    qp->state >= IBV_QPS_RTR && qp->state <= IBV_QPS_SQE && qe->reconnects < 4 &&
	    (qe->epsn != epsn || qe->una_psn != una) && eng->xport->ops->steer) {
		qe->reconnects++;
		uroce_count(eng, UROCE_STAT_CONN_RESTEERS, 1);
		if (eng->xport->ops->steer(eng->xport, qpn, rx->family, rx->dst_ip, rx->src_ip,
					   rx->src_port) == 0)
			qe->conn_port = rx->src_port;
	}
	pthread_mutex_unlock(&qp->lock);
}

bool uroce_engine_has_addr(struct uroce_engine *eng, const uint8_t *gid)
{
	struct uroce_netdev nd;

	if (uroce_netdev_query(eng->netdev, &nd))
		return false;
	for (int i = 0; i < nd.n_addrs; i++)
		if (!memcmp(nd.addrs[i], gid, 16))
			return true;
	return false;
}

/* ---- what the CM's QP 1 asks of the engine (engine.h) --------------------- */

const char *uroce_engine_devname(const struct uroce_engine *eng)
{
	return eng->devname;
}

const char *uroce_engine_netdev(const struct uroce_engine *eng)
{
	return eng->netdev;
}

const char *uroce_engine_nsid(const struct uroce_engine *eng)
{
	return eng->nsid;
}

uint16_t uroce_engine_fwd_port(const struct uroce_engine *eng)
{
	return eng->xport->fwd_port;
}

bool uroce_engine_stopping(struct uroce_engine *eng)
{
	return atomic_load(&eng->stop);
}

struct uroce_gsi *uroce_engine_gsi(const struct uroce_engine *eng)
{
	return eng->gsi;
}

void uroce_engine_set_gsi(struct uroce_engine *eng, struct uroce_gsi *gsi)
{
	eng->gsi = gsi;
}

void uroce_engine_count(struct uroce_engine *eng, enum uroce_stat e, uint64_t n)
{
	uroce_count(eng, e, n);
}

/* ---- the progress thread -------------------------------------------------- */

/* The timers that are due, if the tick says some may be; then the tick is
 * set for the next.  It is cleared first: a timer started while the QPs
 * are looked at sets it again (uroce_engine_arm), so none is missed. */
static void run_timers(struct uroce_engine *eng)
{
	uint64_t now = uroce_now_ns(), next = UINT64_MAX;

	if (now < atomic_load(&eng->tick_at_ns))
		return;
	pthread_mutex_lock(&eng->tick_lock);
	atomic_store(&eng->tick_at_ns, UINT64_MAX);
	pthread_mutex_unlock(&eng->tick_lock);
	atomic_thread_fence(memory_order_seq_cst);
	pthread_rwlock_rdlock(&eng->qps_lock);
	for (uint32_t i = 0; i < eng->n_qps; i++) {
		struct uroce_qp *qp = eng->qp_list[i];
		struct uroce_qp_eng *qe = qp->engine;
		uint64_t due;

		if (!qe->armed)
			continue;
		pthread_mutex_lock(&qp->lock);
		uroce_req_timer(qp, now);
		due = qe->armed ? timers_due_ns(qe) : UINT64_MAX;
		pthread_mutex_unlock(&qp->lock);
		/* A time already past that the timer did not act on (a probe
		 * with nothing left to probe) is looked at again on the tick,
		 * not at once, again and again. */
		if (due <= now)
			due = now + UROCE_TICK_NS;
		next = due < next ? due : next;
	}
	pthread_rwlock_unlock(&eng->qps_lock);
	if (next != UINT64_MAX)
		uroce_engine_tick_by(eng, next);
}

/* Everything the transport has, a burst at a time: each burst is checked
 * and dispatched whole, and what it makes the engine send (ACKs coalesced
 * per QP, IBTA 9.7.5.1.1) leaves together after it.  The packets taken. */
static unsigned int rx_bursts(struct uroce_engine *eng, enum uroce_burst_by by)
{
	static __thread struct uroce_rx pkts[RX_BURST];
	unsigned int got = 0;

	for (int round = 0; round < RX_ROUNDS; round++) {
		int n = eng->xport->ops->recv(eng->xport, pkts, RX_BURST,
					      by == UROCE_BURST_APP ? UROCE_RX_SPINNING : 0);

		if (n <= 0)
			break;
		got += (unsigned int)n;
		uroce_tx_begin(eng);
		uroce_resp_acks_begin(eng);
		for (int i = 0; i < n; i++)
			uroce_engine_rx(eng, &pkts[i]);
		uroce_resp_flush_acks(eng, by);
		uroce_tx_end(eng);
		/* Held ACKs whose time is up leave between bursts, not after
		 * the whole drain: a drain runs as long as packets keep coming
		 * (up to RX_ROUNDS^2 bursts from the progress thread).  One of
		 * 180 ms at -q 128 held 64 QPs' ACKs past their peers' 67 ms
		 * ACK timeout (docs/performance.md). */
		uroce_resp_flush_held(eng, UROCE_HELD_EXPIRED);
		if (n < RX_BURST)
			break;
	}
	return got;
}

/* An application thread polls its CQ and finds it empty: it serves the
 * wire itself, with no thread hop.  The transport's recv looks (a
 * non-blocking epoll, or an AF_XDP ring) without the engine's epoll set,
 * which is the progress thread's to change (poll.c). */
void uroce_engine_poll(struct uroce_engine *eng)
{
	uroce_poll_app_polled(eng);
	/* The ACKs its last poll held: this thread did not post on their
	 * QPs meanwhile, so they go now, before it looks for more, unless
	 * their QP still waits for its own ACK (resp.c, keep_for_post). */
	uroce_resp_flush_held(eng, UROCE_HELD_POLL);
	if (pthread_mutex_trylock(&eng->rx_lock)) {
		/* Another thread is draining: it will deliver.  If it is the
		 * progress thread, preempted on this CPU by this busy poller,
		 * let it run (poll.c). */
		uroce_poll_contended(eng);
		return;
	}
	rx_bursts(eng, UROCE_BURST_APP);
	pthread_mutex_unlock(&eng->rx_lock);
}

void uroce_engine_poll_done(struct uroce_engine *eng)
{
	uroce_resp_flush_held(eng, UROCE_HELD_ALL);
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
	for (int rounds = 0; rounds < RX_ROUNDS && (n = rx_bursts(eng, UROCE_BURST_PROGRESS)) > 0; rounds++) {
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

static void *progress_thread(void *arg)
{
	struct uroce_engine *eng = arg;
	struct epoll_event evs[16];
	uint64_t busy_until = 0;
	bool busy = false;

	uroce_poll_thread_start(eng);
	while (!atomic_load(&eng->stop)) {
		/* A stalled transmit queue is looked at every tick, a deferred
		 * watch (poll.c) sooner; the timers wake the thread through
		 * tick_fd. */
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
		for (int i = 0; i < n; i++) {
			uint64_t v;

			if (evs[i].data.u64 == TICK_IDX && read(eng->tick_fd, &v, sizeof(v)) < 0)
				(void)0;
			if (evs[i].data.u64 == WAKE_IDX && read(eng->wake_fd, &v, sizeof(v)) < 0)
				(void)0;
			woken_by_xport |= evs[i].data.u64 == XPORT_IDX;
		}
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
				got = rx_bursts(eng, UROCE_BURST_PROGRESS);
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
		run_timers(eng);
		/* ACKs held for ack_hold_ns that no post took along (an
		 * application's poll held them and started the tick; this
		 * thread's own holds shorten its wait, above). */
		uroce_resp_flush_held(eng, UROCE_HELD_EXPIRED);
		if (uroce_xport_tx_left(eng->xport))
			eng->xport->ops->tx_flush(eng->xport);
	}
	return NULL;
}

/* ---- lifetime ---------------------------------------------------------------- */

static bool stats_wanted(void)
{
	const char *env = getenv("UROCE_STATS");

	return env && *env && *env != '0';
}

/* UROCE_STATS=1: print this process's counters when the engine stops. */
static void dump_counters(struct uroce_engine *eng)
{
	if (!stats_wanted() || !eng->stats)
		return;
	fprintf(stderr, "uroce[%d] %s:", (int)getpid(), eng->devname);
	for (int i = 0; i < UROCE_STAT_COUNT; i++)
		if (eng->stats->counters[i])
			fprintf(stderr, " %s=%llu", uroce_stat_name(i),
				(unsigned long long)eng->stats->counters[i]);
	fputc('\n', stderr);
}

/* ... and at exit for the devices a program did not close (perftest
 * exits without closing after a failed completion: the counters of a
 * failed run are the ones wanted most), after the transport has added
 * what the kernel still held for it. */
__attribute__((destructor)) static void dump_open_engines(void)
{
	if (pthread_mutex_trylock(&engines_lock))
		return;
	for (struct uroce_engine *eng = engines; eng; eng = eng->next) {
		if (eng->xport && eng->xport->ops->sync_counters)
			eng->xport->ops->sync_counters(eng->xport);
		dump_counters(eng);
		if (stats_wanted())
			uroce_engine_dump_qps(eng);
	}
	pthread_mutex_unlock(&engines_lock);
}

static void engine_free(struct uroce_engine *eng)
{
	uroce_up->gsi_detach(eng);
	dump_counters(eng);
	uroce_stats_detach(eng->devname, &eng->stats, &eng->stats_shared);
	uroce_mcast_close(eng);
	if (eng->xport)
		eng->xport->ops->close(eng->xport);
	if (eng->epfd >= 0)
		close(eng->epfd);
	if (eng->wake_fd >= 0)
		close(eng->wake_fd);
	if (eng->tick_fd >= 0)
		close(eng->tick_fd);
	uroce_qpn_close(eng->qpns);
	uroce_pkt_trace_close(eng);
	free(eng->qps);
	free(eng->qp_list);
	free(eng);
}

/* Open the transport TRANSPORT names on the engine's netdev. */
static int xport_open(struct uroce_engine *eng, const char *transport)
{
	const struct uroce_xport_ops *ops = uroce_xport_lookup(transport);
	struct uroce_xport_conf conf = {
		.devname = eng->devname,
		.netdev = eng->netdev,
		.counters = eng->stats->counters,
		.rx_ip_fields_always = uroce_pkt_traced(),
	};
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = XPORT_IDX };
	int ret;

	if (!ops) {
		fprintf(stderr, "uroce: %s: transport \"%s\" is not available\n", eng->devname,
			transport);
		return -EOPNOTSUPP;
	}
	ret = ops->open(&conf, &eng->xport);
	if (ret)
		return ret;
	return epoll_ctl(eng->epfd, EPOLL_CTL_ADD, eng->xport->fd, &ev) ? -errno : 0;
}

static struct uroce_engine *engine_new(const char *devname, const char *netdev,
				       const char *transport)
{
	struct uroce_engine *eng = calloc(1, sizeof(*eng));
	char nsdir[PATH_MAX];
	int err;

	if (!eng)
		return NULL;
	uroce_debug = getenv("UROCE_DEBUG") && *getenv("UROCE_DEBUG") != '0';
	eng->epfd = eng->wake_fd = eng->tick_fd = -1;
	snprintf(eng->devname, sizeof(eng->devname), "%s", devname);
	snprintf(eng->netdev, sizeof(eng->netdev), "%s", netdev);
	if (uroce_ns_dir(nsdir, sizeof(nsdir)) == 0)
		snprintf(eng->nsid, sizeof(eng->nsid), "%s", strrchr(nsdir, '/') + 1);
	pthread_rwlock_init(&eng->qps_lock, NULL);
	pthread_mutex_init(&eng->rx_lock, NULL);
	pthread_mutex_init(&eng->held_lock, NULL);
	pthread_mutex_init(&eng->tick_lock, NULL);
	atomic_store(&eng->tick_at_ns, UINT64_MAX);
	pthread_mutex_init(&eng->mcast_lock, NULL);
	eng->qps = calloc(UROCE_MAX_QP, sizeof(*eng->qps));
	eng->qp_list = calloc(UROCE_MAX_QP, sizeof(*eng->qp_list));
	/* QPNs are unique per address on the wire: every uroce device (of any
	 * registry) on this netdev shares one QPN table and forwarding domain. */
	eng->qpns = uroce_qpn_open(eng->nsid, eng->netdev, UROCE_MAX_QP);
	uroce_stats_attach(eng->devname, &eng->stats, &eng->stats_shared);
	eng->epfd = epoll_create1(EPOLL_CLOEXEC);
	eng->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	eng->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (!eng->qps || !eng->qp_list || !eng->qpns || !eng->stats || eng->epfd < 0 ||
	    eng->wake_fd < 0 || eng->tick_fd < 0) {
		err = errno ? errno : ENOMEM;
		goto fail;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = WAKE_IDX };
	epoll_ctl(eng->epfd, EPOLL_CTL_ADD, eng->wake_fd, &ev);
	ev.data.u64 = TICK_IDX;
	epoll_ctl(eng->epfd, EPOLL_CTL_ADD, eng->tick_fd, &ev);
	err = -xport_open(eng, transport);
	if (err)
		goto fail;
	uroce_pkt_trace_open(eng);
	err = -uroce_up->gsi_attach(eng);
	if (err)
		goto fail;
	uroce_poll_conf(eng);
	err = pthread_create(&eng->thread, NULL, progress_thread, eng);
	if (err)
		goto fail;
	return eng;
fail:
	engine_free(eng);
	errno = err;
	return NULL;
}

struct uroce_engine *uroce_engine_get(struct uroce_context *ctx)
{
	struct uroce_device *dev = to_udev(ctx->vctx.context.device);

	return uroce_engine_get_dev(ctx->vctx.context.device->name, dev->netdev,
				    uroce_transport_name(dev->transport));
}

struct uroce_engine *uroce_engine_get_dev(const char *name, const char *netdev,
					  const char *transport)
{
	struct uroce_engine *eng;

	pthread_mutex_lock(&engines_lock);
	for (eng = engines; eng; eng = eng->next)
		if (!strcmp(eng->devname, name))
			break;
	if (!eng) {
		eng = engine_new(name, netdev, transport);
		if (eng) {
			eng->next = engines;
			engines = eng;
		}
	}
	if (eng)
		eng->refs++;
	pthread_mutex_unlock(&engines_lock);
	return eng;
}

void uroce_engine_put(struct uroce_engine *eng)
{
	struct uroce_engine **pp;
	uint64_t one = 1;

	if (!eng)
		return;
	pthread_mutex_lock(&engines_lock);
	if (--eng->refs > 0) {
		pthread_mutex_unlock(&engines_lock);
		return;
	}
	for (pp = &engines; *pp; pp = &(*pp)->next)
		if (*pp == eng) {
			*pp = eng->next;
			break;
		}
	pthread_mutex_unlock(&engines_lock);
	atomic_store(&eng->stop, true);
	if (write(eng->wake_fd, &one, sizeof(one)) < 0)
		(void)0;
	pthread_join(eng->thread, NULL);
	/* Packets from other hosts land on any socket of a device's
	 * SO_REUSEPORT group: what this process's sockets still hold is
	 * handled (other processes' packets passed on) before they close
	 * (docs/engine.md).  Bounded: RX_ROUNDS bursts. */
	if (eng->xport) {
		pthread_mutex_lock(&eng->rx_lock);
		rx_bursts(eng, UROCE_BURST_PROGRESS);
		pthread_mutex_unlock(&eng->rx_lock);
	}
	uroce_resp_flush_held(eng, UROCE_HELD_ALL);
	engine_free(eng);
}

/* ---- completions and errors --------------------------------------------------- */

static enum ibv_wc_opcode send_wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_ATOMIC_WRITE:
		return IBV_WC_ATOMIC_WRITE;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	default:
		return IBV_WC_SEND;
	}
}

static void push_cqe(struct uroce_qp *qp, struct uroce_cq *cq, struct ibv_wc *wc)
{
	if (uroce_up->cq_push(cq, wc, false) == -ENOSPC) {
		/* CQ overrun: never a silent drop (IBTA 11.4.2.1: CQ error). */
		fprintf(stderr, "uroce: CQ overrun on QP %u: the CQ is in error\n",
			qp->vqp.qp.qp_num);
	}
}

void uroce_complete_send(struct uroce_qp *qp, struct uroce_send_wqe *w,
			 enum ibv_wc_status status)
{
	bool signaled = qp->sq_sig_all || (w->send_flags & IBV_SEND_SIGNALED);

	if (status != IBV_WC_SUCCESS || signaled) {
		struct ibv_wc wc = {
			.wr_id = w->wr_id,
			.status = status,
			.opcode = send_wc_opcode(w->opcode),
			.qp_num = qp->vqp.qp.qp_num,
		};

		if (status == IBV_WC_SUCCESS && (w->opcode == IBV_WR_RDMA_READ))
			wc.byte_len = w->length;
		else if (status == IBV_WC_SUCCESS &&
			 (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
			  w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD))
			wc.byte_len = 8;
		push_cqe(qp, qp->scq, &wc);
	}
	w->state = UROCE_WQE_DONE;
	ring_retire(&qp->sq);
}

static void flush_queues(struct uroce_qp *qp)
{
	struct uroce_qp_eng *qe = qp->engine;

	/* The error state is stored: now read sq.prod (uroce_engine_post_deferred). */
	atomic_thread_fence(memory_order_seq_cst);
	while (ring_used(&qp->sq)) {
		struct uroce_send_wqe *w = ring_slot(&qp->sq, qp->sq.cons);

		if ((w->opcode == IBV_WR_RDMA_READ || w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		     w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) && w->state != UROCE_WQE_POSTED &&
		    qe->rd_atomic)
			qe->rd_atomic--;
		uroce_complete_send(qp, w, IBV_WC_WR_FLUSH_ERR);
	}
	qe->sq_next = qp->sq.cons;
	qe->cur_off = 0;
	qe->una_psn = qe->cur_psn;
	while (!qp->srq && ring_used(&qp->rq)) {
		struct uroce_recv_wqe *r = ring_slot(&qp->rq, qp->rq.cons);
		struct ibv_wc wc = {
			.wr_id = r->wr_id,
			.status = IBV_WC_WR_FLUSH_ERR,
			.opcode = IBV_WC_RECV,
			.qp_num = qp->vqp.qp.qp_num,
		};

		push_cqe(qp, qp->rcq, &wc);
		qp->rq.cons++;
	}
	qe->deadline_ns = qe->rnr_until_ns = 0;
	uroce_engine_arm(qe, false);
}

void uroce_qp_to_error_ev(struct uroce_qp *qp, int ev)
{
	bool was_err = qp->state == IBV_QPS_ERR;

	UROCE_TRACE(uroce_trace_to_error(qp, ev));
	qp->state = IBV_QPS_ERR;
	/* Not ibv_qp's own state field: libibverbs keeps there the state the
	 * application last set (ibv_modify_qp), and a real RNIC or rxe does
	 * not change it when the QP fails.  UCX asserts on it (a loaded
	 * ucx_mpi run aborted in uct_rc_verbs_ep_flush).  ibv_query_qp
	 * reports ERR from qp->attr. */
	qp->attr.qp_state = IBV_QPS_ERR;
	flush_queues(qp);
	if (was_err)
		return;
	if (ev >= 0)
		uroce_up->qp_event(qp, ev);
	if (qp->srq && qp->vqp.qp.qp_type != IBV_QPT_XRC_RECV)
		uroce_up->qp_event(qp, IBV_EVENT_QP_LAST_WQE_REACHED);
}

/* IBTA 11.6.3.1: the affiliated asynchronous errors are for what no
 * completion can report.  A requester error (retries exhausted, a NAK, a
 * local error while building a packet) is reported by the failing WQE's
 * CQE (IBTA 10.10.2), and the QP goes to error without an event, as on
 * rxe and on RNICs (mlx5 raises its catastrophic-error event only for
 * errors it cannot put in a CQE). */
void uroce_qp_to_error(struct uroce_qp *qp)
{
	uroce_qp_to_error_ev(qp, -1);
}

bool uroce_engine_sq_draining(const struct uroce_qp *qp)
{
	return qp->state == IBV_QPS_SQD && qp->engine->sq_next != qp->sq.cons;
}

void uroce_check_drained(struct uroce_qp *qp)
{
	struct uroce_qp_eng *qe = qp->engine;

	/* IBTA 11.6.3.1: SQ drained once in SQD no WQE is outstanding. */
	if (qp->state == IBV_QPS_SQD && qe->draining && !qe->drained_sent &&
	    (qe->sq_next == qp->sq.cons ||
	     ((struct uroce_send_wqe *)ring_slot(&qp->sq, qp->sq.cons))->state == UROCE_WQE_POSTED)) {
		qe->drained_sent = true;
		uroce_up->qp_event(qp, IBV_EVENT_SQ_DRAINED);
	}
}

/* ---- hooks of the verbs layer ------------------------------------------------------ */

int uroce_engine_qp_create(struct uroce_qp *qp)
{
	struct uroce_context *ctx = qp->ctx;
	struct uroce_qp_eng *qe;
	struct uroce_engine *eng;
	uint32_t qpn;

	pthread_mutex_lock(&ctx->lock);
	if (!ctx->engine)
		ctx->engine = uroce_engine_get(ctx);
	eng = ctx->engine;
	pthread_mutex_unlock(&ctx->lock);
	if (!eng)
		return errno ? errno : EIO;
	qe = calloc(1, sizeof(*qe));
	if (!qe)
		return ENOMEM;
	qpn = uroce_qpn_alloc_qp(eng->qpns, eng->xport->fwd_port);
	if (!qpn) {
		free(qe);
		return ENOMEM;
	}
	qe->eng = eng;
	qe->qp = qp;
	qe->rwqe = (struct uroce_recv_wqe *)qe->rwqe_buf;
	qp->engine = qe;
	qp->vqp.qp.qp_num = qpn;
	pthread_rwlock_wrlock(&eng->qps_lock);
	eng->qps[qpn] = qp;
	eng->qp_list[eng->n_qps++] = qp;
	pthread_rwlock_unlock(&eng->qps_lock);
	return 0;
}

void uroce_engine_qp_destroy(struct uroce_qp *qp)
{
	struct uroce_qp_eng *qe = qp->engine;
	struct uroce_engine *eng;
	uint32_t qpn = qp->vqp.qp.qp_num;

	if (!qe)
		return;
	eng = qe->eng;
	pthread_rwlock_wrlock(&eng->qps_lock);
	eng->qps[qpn] = NULL;
	for (uint32_t i = 0; i < eng->n_qps; i++)
		if (eng->qp_list[i] == qp) {
			eng->qp_list[i] = eng->qp_list[--eng->n_qps];
			break;
		}
	pthread_rwlock_unlock(&eng->qps_lock);
	/* Nothing can find the QP now; wait for a packet being processed. */
	pthread_mutex_lock(&qp->lock);
	uroce_engine_qp_leaving(qp);
	uroce_engine_arm(qe, false);
	pthread_mutex_unlock(&qp->lock);
	pthread_mutex_lock(&eng->rx_lock);
	if (eng->xport->ops->unsteer)
		eng->xport->ops->unsteer(eng->xport, qpn);
	pthread_mutex_unlock(&eng->rx_lock);
	uroce_qpn_free(eng->qpns, qpn);
	free(qe);
	qp->engine = NULL;
}

static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 1024;
}

/*
 * A NIC acknowledges a request on receipt.  Here the ACK may still wait for
 * the end of the receive burst when the application, which already saw the
 * receive completion, moves the QP to Error or Reset (rdma_disconnect) or
 * destroys it: it leaves now, or the peer's send never completes.
 */
void uroce_engine_qp_leaving(struct uroce_qp *qp)
{
	if (qp->engine)
		uroce_resp_ack_before_requests(qp);
}

/*
 * A UD QP sends from whichever of the device's addresses an AH names, so
 * its one source port must be ready on all of them (transport.h,
 * claim_port): WANT; where another program holds WANT, the port the
 * transport gives in its place, which is then claimed on the other
 * addresses too.  An address that cannot take it (a tentative IPv6 one,
 * or a second program in the way) is left to the first send, as before.
 */
static uint16_t claim_ud_port(struct uroce_engine *eng, uint16_t want)
{
	struct uroce_xport *x = eng->xport;
	struct uroce_netdev nd;
	int moved_at = -1;

	if (!x->ops->claim_port || uroce_netdev_query(eng->netdev, &nd))
		return want;
	for (int i = 0; i < nd.n_addrs; i++) {
		int port;

		if (i == moved_at)
			continue;
		port = x->ops->claim_port(x, roce_gid_family(nd.addrs[i]), nd.addrs[i], want);
		if (port > 0 && port != want && moved_at < 0) {
			want = (uint16_t)port;
			moved_at = i;
			i = -1;     /* the new port on the other addresses */
		}
	}
	return want;
}

void uroce_engine_qp_modified(struct uroce_qp *qp, enum ibv_qp_state old_state,
			      int attr_mask)
{
	struct uroce_qp_eng *qe = qp->engine;

	switch (qp->state) {
	case IBV_QPS_RESET: {
		struct uroce_engine *eng = qe->eng;
		struct uroce_qp *self = qe->qp;
		bool armed = qe->armed;

		if (eng->xport->ops->unsteer)
			eng->xport->ops->unsteer(eng->xport, qp->vqp.qp.qp_num);
		memset(qe, 0, sizeof(*qe));
		qe->eng = eng;
		qe->qp = self;
		qe->armed = armed;
		qe->rwqe = (struct uroce_recv_wqe *)qe->rwqe_buf;
		uroce_engine_arm(qe, false);
		break;
	}
	case IBV_QPS_RTR:
		if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
			/* RoCEv2 source port: entropy from the QPN (A17.3.1). */
			qp->udp_sport = claim_ud_port(qe->eng, uroce_xport_sport(qp->vqp.qp.qp_num));
		} else if (old_state != IBV_QPS_RTR || (attr_mask & (IBV_QP_DEST_QPN | IBV_QP_AV))) {
			/* Connected QPs: the QP's port, and a receive socket
			 * connected to the port the peer (if it is uroce) sends
			 * from, before any packet flows: no packet of the
			 * connection takes the shared socket and arrives late. */
			uint32_t me = qp->vqp.qp.qp_num, peer = qp->attr.dest_qp_num;

			struct uroce_xport *x = qe->eng->xport;

			qp->udp_sport = uroce_xport_sport(me);
			if (x->ops->claim_port) {
				int port = x->ops->claim_port(x, qp->av.family, qp->av.sgid.raw,
							      qp->udp_sport);

				if (port > 0)
					qp->udp_sport = (uint16_t)port;
			}
			qe->reconnects = 0;
			qe->conn_port = uroce_xport_sport(peer);
			if (!x->ops->steer || x->ops->steer(x, me, qp->av.family, qp->av.sgid.raw,
							    qp->av.dgid.raw, qe->conn_port))
				qe->conn_port = 0;
		}
		if (old_state != IBV_QPS_RTR) {
			qe->epsn = qp->attr.rq_psn & 0xffffff;
			qe->msn = 0;
		}
		if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
			struct uroce_netdev nd;

			qe->mtu = uroce_netdev_query(qe->eng->netdev, &nd) ? 1024 :
				  mtu_bytes(uroce_netdev_ib_mtu(nd.mtu));
		} else {
			qe->mtu = mtu_bytes(qp->attr.path_mtu);
		}
		break;
	case IBV_QPS_RTS:
		if (old_state == IBV_QPS_RTR || (attr_mask & IBV_QP_SQ_PSN)) {
			qe->sq_psn = qp->attr.sq_psn & 0xffffff;
			qe->cur_psn = qe->sq_psn;
			qe->una_psn = qe->sq_psn;
			qe->sq_next = qp->sq.cons;
			qe->cur_off = 0;
		}
		qe->retry_left = qp->attr.retry_cnt;
		qe->rnr_left = qp->attr.rnr_retry;
		qe->draining = false;
		uroce_req_progress(qp);
		break;
	case IBV_QPS_SQD:
		if (old_state != IBV_QPS_SQD) {
			qe->draining = true;
			qe->drained_sent = false;
		}
		uroce_check_drained(qp);
		break;
	case IBV_QPS_ERR:
		flush_queues(qp);
		if (qp->srq && old_state != IBV_QPS_ERR)
			uroce_up->qp_event(qp, IBV_EVENT_QP_LAST_WQE_REACHED);
		break;
	default:
		break;
	}
}

void uroce_engine_sq_posted(struct uroce_qp *qp)
{
	if (qp->state == IBV_QPS_ERR)
		flush_queues(qp);
	else if (!uroce_cc_post_waits(qp))
		uroce_req_progress(qp);
}

/*
 * A post published its WQEs without the QP's lock (verbs/post.c).  It may
 * leave them to the engine when the engine's next pass is sure to come
 * and would send them anyway: an RC QP in RTS whose posts wait for the ACK
 * clock has packets outstanding, and their response (or a timer) calls
 * uroce_req_progress.  The post stored sq.prod before the fence here, then
 * reads the state and PSNs.  The pass that could be the last (a response
 * that acknowledges everything, a move to the error state) stores una_psn
 * or the state, and then reads sq.prod behind a fence of its own
 * (uroce_req_progress, flush_queues).  Of two such store-fence-load
 * sequences at least one load sees the other's store: either this post
 * takes the lock, or that pass sees its WQEs.
 */
bool uroce_engine_post_deferred(struct uroce_qp *qp)
{
	atomic_thread_fence(memory_order_seq_cst);
	return __atomic_load_n(&qp->state, __ATOMIC_RELAXED) == IBV_QPS_RTS &&
	       uroce_cc_post_waits(qp);
}

void uroce_engine_rq_posted(struct uroce_qp *qp)
{
	if (qp->state != IBV_QPS_ERR)
		return;
	pthread_mutex_lock(&qp->lock);
	flush_queues(qp);
	pthread_mutex_unlock(&qp->lock);
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * An engine's lifetime: one per (process, device), made at the first QP
 * or by the CM's QP 1 and shared by reference: its transport, counters,
 * QPN table, QP 1 and progress thread start with it and stop with its
 * last reference.  Also the accessors the CM's QP 1 reads the engine
 * with (engine.h).  The engine runs in the application process; what
 * its other files do, docs/engine.md lists.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>

#include "engine/engine_int.h"
#include "knob/knob.h"
#include "engine/pkt.h"

int uroce_debug;

static pthread_mutex_t engines_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uroce_engine *engines;
unsigned uroce_fork_gen;

/* A forked child has none of its parent's engines: their threads did not
 * come along, and their sockets, epoll set, timerfd and eventfd are shared
 * with the parent, who alone may read, change or close them (an
 * EPOLL_CTL_DEL from the child would take a socket out of the parent's
 * set).  The child's copies stay as they are, never touched; what the
 * child opens gets engines of its own.  Async-signal-safe: stores only. */
static void engines_fork_child(void)
{
	static const pthread_mutex_t unlocked = PTHREAD_MUTEX_INITIALIZER;

	engines = NULL;
	engines_lock = unlocked;
	__atomic_store_n(&uroce_fork_gen, uroce_fork_gen + 1, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void engines_fork_init(void)
{
	pthread_atfork(NULL, NULL, engines_fork_child);
}

const struct uroce_upcalls *uroce_up;

void uroce_engine_set_upcalls(const struct uroce_upcalls *up)
{
	uroce_up = up;
}

/* ---- what the CM's QP 1 asks of the engine (engine.h) --------------------- */

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

/* ---- lifetime ---------------------------------------------------------------- */

static bool stats_wanted(void)
{
	return uroce_knob_on(UROCE_KNOB_STATS);
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

/*
 * Before engine_put closes the sockets: packets from other hosts land on
 * any socket of a device's SO_REUSEPORT group, and the kernel gives every
 * CM MAD of an address to one of them (udp.c, udp_retire).  So the
 * transport first takes nothing new, then what its sockets hold is
 * handled (other processes' packets passed on, docs/engine.md), bounded:
 * RX_ROUNDS bursts; the ACKs held go too.
 */
static void engine_leave(struct uroce_engine *eng)
{
	if (!eng->xport)
		return;
	if (eng->xport->ops->retire)
		eng->xport->ops->retire(eng->xport);
	pthread_mutex_lock(&eng->rx_lock);
	uroce_engine_rx_bursts(eng, UROCE_BURST_PROGRESS);
	pthread_mutex_unlock(&eng->rx_lock);
	uroce_resp_flush_held(eng, UROCE_HELD_ALL);
}

/*
 * At exit with the device open (rping, perftest): the same for the other
 * processes' packets, but only passing them on.  The process's own
 * objects are left alone: a full drain here, which delivered CM MADs to
 * this process's CM and completions to its QPs, made rping >= 61 clients
 * hang at exit (3 of 42 release runs under load).  The engine stops
 * first, so the CM delivers nothing (gsi.c); the progress thread may be
 * in a burst: the receive lock is tried for at most 5 ms.
 */
static void engine_leave_at_exit(struct uroce_engine *eng)
{
	if (!eng->xport || uroce_parents(eng->gen))
		return;
	atomic_store(&eng->stop, true);
	if (eng->xport->ops->retire)
		eng->xport->ops->retire(eng->xport);
	for (int tries = 50; pthread_mutex_trylock(&eng->rx_lock); usleep(100))
		if (--tries <= 0)
			return;
	uroce_engine_rx_pass_on(eng);
	pthread_mutex_unlock(&eng->rx_lock);
}

/* At exit, for the devices a program did not close: the other processes'
 * packets passed on (above), then UROCE_STATS=1's counters (perftest
 * exits without closing after a failed completion: the counters of a
 * failed run are the ones wanted most), after the transport has added
 * what the kernel still held for it. */
__attribute__((destructor)) static void dump_open_engines(void)
{
	if (pthread_mutex_trylock(&engines_lock))
		return;
	for (struct uroce_engine *eng = engines; eng; eng = eng->next) {
		engine_leave_at_exit(eng);
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
	eng->gen = uroce_fork_gen;
	uroce_debug = uroce_knob_on(UROCE_KNOB_DEBUG);
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
	atomic_store(&eng->fd_at_ns, UINT64_MAX);
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
	err = pthread_create(&eng->thread, NULL, uroce_progress_thread, eng);
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

/*
 * A poll holds the ACK of what it received for the post the application
 * makes next (resp_ack.c); one that makes none meanwhile sends it at its
 * next poll, and one that stops polling leaves it to the progress
 * thread's next look or its watchdog, up to 5 ms away.  An application
 * that calls into the CM has turned from that QP: its ACKs leave now, as a
 * NIC's leave on receipt.  perftest -R's server waits for the completion
 * of its last handshake SEND before it listens for the data connection,
 * and its client connects at once: with that ACK held, the REQ came first
 * and met REJ 8 in 5 of 6 runs on lo (docs/cm.md, perftest's race).
 */
void uroce_engine_flush_held_all(void)
{
	pthread_mutex_lock(&engines_lock);
	for (struct uroce_engine *eng = engines; eng; eng = eng->next)
		if (!uroce_parents(eng->gen))
			uroce_resp_flush_held(eng, UROCE_HELD_ALL);
	pthread_mutex_unlock(&engines_lock);
}

void uroce_engine_put(struct uroce_engine *eng)
{
	struct uroce_engine **pp;
	uint64_t one = 1;

	if (!eng || uroce_parents(eng->gen))  /* a forked child's copy: left alone */
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
	uroce_mcast_close(eng);
	engine_leave(eng);
	/* At once: the counters and tables engine_free puts away took
	 * milliseconds on a loaded machine. */
	if (eng->xport) {
		eng->xport->ops->close(eng->xport);
		eng->xport = NULL;
	}
	engine_free(eng);
}

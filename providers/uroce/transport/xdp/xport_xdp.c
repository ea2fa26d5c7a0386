// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The xdp transport (docs/xdp.md): RoCEv2 frames between the interface's
 * receive queue and the process through an AF_XDP socket.
 *
 * One AF_XDP socket can own a queue, so on a device one process at a time
 * (the first to open it) gets the queue's socket; it enters the QPNs of
 * its connections in the XDP program's map, and their frames come to it
 * without the kernel's network stack.  Everything else the program passes
 * to the kernel, where this transport keeps the udp transport open
 * beneath it: QP1 (the CM), UD QPs, other processes' QPs and unknown QPs
 * follow the udp transport's rules unchanged, and packets to this host's
 * own addresses (which no wire carries back) leave through it too.  The
 * two are wire-compatible: both write IPv4 ID 0 with DF, the values the
 * engine's ICRC covers.
 *
 * This file opens and closes the transport (the program, the queues'
 * sockets, the udp transport beneath), adds the sockets' kernel counters
 * to the device's, and holds the ops table; xdp_xport.h says which file
 * does the rest.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <time.h>
#include <bpf/bpf.h>
#include <uroce/stats.h>

#include "device/device.h"
#include "knob/knob.h"
#include "transport/xdp/xdp_frame.h"
#include "transport/xdp/xdp_xport.h"

#define MAX_HLEN (UROCE_ETH_HLEN + UROCE_IP6_HLEN + UROCE_UDP_HLEN)
#define STATS_EVERY_NS 10000000ull   /* reading the socket's counters: 10 ms */

extern const struct uroce_xport_ops uroce_xdp_ops;

/* Add what the kernel counted for the socket since the last look (frames
 * it dropped on the way in, descriptors it refused) to the device's
 * counters; at most every STATS_EVERY_NS unless FORCE.  Called by the one
 * thread that receives (transport.h) and by close. */
void xdp_account(struct xdp_xport *t, bool force)
{
	struct xdp_statistics st, *seen;
	struct timespec ts;
	uint64_t now;

	if (!t->xsk || !t->counters)
		return;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (!force && now - t->stats_ns < STATS_EVERY_NS)
		return;
	/* One at a time (the receiving thread, close, the exit hook): a delta
	 * added twice would count drops that did not happen. */
	if (__atomic_exchange_n(&t->accounting, true, __ATOMIC_ACQUIRE))
		return;
	t->stats_ns = now;
	for (unsigned int q = 0; q < t->nrxq; q++) {
		if (!t->rxq[q] || uroce_xsk_stats(t->rxq[q], &st))
			continue;
		seen = &t->seen[q];
		count(t, UROCE_STAT_XDP_RX_DROPPED, st.rx_dropped - seen->rx_dropped);
		count(t, UROCE_STAT_XDP_RX_RING_FULL, st.rx_ring_full - seen->rx_ring_full);
		count(t, UROCE_STAT_XDP_FILL_RING_EMPTY,
		      st.rx_fill_ring_empty_descs - seen->rx_fill_ring_empty_descs);
		count(t, UROCE_STAT_XDP_TX_INVALID, st.tx_invalid_descs - seen->tx_invalid_descs);
		*seen = st;
	}
	__atomic_store_n(&t->accounting, false, __ATOMIC_RELEASE);
}

/* At the exit of a program that did not close its device (engine.c):
 * the kernel's counts since the receiving thread last looked. */
static void xdp_sync_counters(struct uroce_xport *x)
{
	xdp_account(xx(x), true);
}

static void xdp_close(struct uroce_xport *x)
{
	struct xdp_xport *t = xx(x);
	uint32_t qpn;

	xdp_account(t, true);

	if (t->xsk && t->have_prog)
		for (qpn = 0; qpn < UROCE_XDP_MAX_QPNS; qpn++)
			if (t->steered[qpn / 8] & (1u << (qpn % 8)))
				bpf_map_delete_elem(t->prog.qpns_fd, &qpn);
	for (unsigned int q = 0; q < t->nrxq; q++)
		uroce_xsk_close(t->rxq[q]);
	if (t->have_prog)
		uroce_xdp_prog_put(t->nsid, t->netdev, &t->prog);
	uroce_xdp_nl_close(t->nl);
	if (t->udp)
		t->udp->ops->close(t->udp);
	if (t->head.fd >= 0)
		close(t->head.fd);
	pthread_mutex_destroy(&t->tx_lock);
	free(t);
}

/* The program's address map holds exactly the netdev's addresses. */
static void publish_addrs(struct xdp_xport *t, const struct uroce_netdev *nd)
{
	uint32_t one = 1;

	for (int i = 0; i < nd->n_addrs; i++) {
		struct uroce_xdp_addr a;

		memcpy(a.b, nd->addrs[i], 16);
		bpf_map_update_elem(t->prog.addrs_fd, &a, &one, BPF_ANY);
	}
}

/* A new owner of the queue: entries of a previous one (gone, or crashed)
 * would send its QPNs' frames to us. */
static void clear_qpns(struct xdp_xport *t)
{
	uint32_t key, next;

	while (bpf_map_get_next_key(t->prog.qpns_fd, NULL, &next) == 0) {
		key = next;
		if (bpf_map_delete_elem(t->prog.qpns_fd, &key))
			break;
	}
}

/*
 * The kernel lets go of a closed socket's queue in deferred work
 * (xp_release_deferred, under the RTNL), some milliseconds after the
 * close: a process that starts as the last one exits meets EBUSY from a
 * socket that no longer has an owner.  The queues' claim tells that from
 * a live owner, and only the first is waited for, within
 * QUEUE_FREE_WAIT_MS (another program's socket on the queue, not uroce's,
 * also takes that long to be given up on).
 */
#define QUEUE_FREE_WAIT_MS 5000

static struct uroce_xsk *open_one(struct xdp_xport *t, uint32_t queue, uint32_t rx_frames,
				  char *err, size_t errlen)
{
	/* Queue 0's socket sends; the others only receive. */
	uint32_t tx_frames = queue == 0 ? UROCE_XSK_TX_FRAMES : UROCE_XSK_BATCH;
	struct uroce_xsk *x;
	int waited_ms = 0;

	for (int pause_ms = 1;; pause_ms = pause_ms < 64 ? pause_ms * 2 : 64) {
		x = uroce_xsk_open(t->netdev, queue, rx_frames, tx_frames, err, errlen);
		/* More pinned memory than RLIMIT_MEMLOCK allows (a user
		 * without CAP_IPC_LOCK; 8 MiB by default): fewer receive
		 * frames, down to UROCE_XSK_RX_FLOOR, then fewer to send from
		 * (a copy-mode kick sends 32 at a time), then fewer receive
		 * frames again, down to the least a socket has. */
		if (!x && errno == ENOBUFS && (rx_frames / 2 >= UROCE_XSK_MIN_RX_FRAMES ||
					       tx_frames / 2 >= UROCE_XSK_MIN_TX_FRAMES)) {
			if (rx_frames / 2 >= UROCE_XSK_RX_FLOOR ||
			    tx_frames / 2 < UROCE_XSK_MIN_TX_FRAMES)
				rx_frames /= 2;
			else
				tx_frames /= 2;
			if (uroce_knob_on(UROCE_KNOB_DEBUG))
				fprintf(stderr, "uroce: %s: %s; trying %u receive and %u send frames\n",
					t->devname, err, rx_frames, tx_frames);
			continue;
		}
		if (x || errno != EBUSY || waited_ms >= QUEUE_FREE_WAIT_MS)
			return x;
		usleep(pause_ms * 1000);
		waited_ms += pause_ms;
	}
}

/* Receive frames per socket for NQ queues: about UROCE_XDP_RX_FRAMES in
 * all, a power of 2, at least UROCE_XSK_RX_FLOOR each up to 8 queues and
 * UROCE_XSK_MIN_RX_FRAMES beyond (the UMEM is pinned memory: 64 queues of
 * 1024 would pin 256 MiB). */
static uint32_t rx_frames_per_queue(unsigned int nq)
{
	uint64_t total = uroce_knob_num(UROCE_KNOB_XDP_RX_FRAMES);
	uint32_t f = nq <= 8 ? UROCE_XSK_RX_FLOOR : UROCE_XSK_MIN_RX_FRAMES;

	while (f < (1u << 20) && (uint64_t)f * 2 * nq <= total)
		f *= 2;
	return f;
}

/*
 * This user's AF_XDP sockets, one on each receive queue (the XDP program
 * redirects a frame to the socket of the queue it came in on), at most
 * MAX_QUEUES, or UROCE_XDP_QUEUES.  Queue 0's socket (t->xsk) also sends.
 * 0, or -errno: EBUSY when a live user holds the queues.  A queue other
 * than 0 that cannot be had is left to the kernel.
 */
static int open_queues(struct xdp_xport *t, char *err, size_t errlen)
{
	unsigned int want = (unsigned int)uroce_knob_num(UROCE_KNOB_XDP_QUEUES);
	unsigned int nq = uroce_xsk_queues(t->netdev);
	uint32_t rx_frames;

	if (want > 0 && want < nq)
		nq = want;
	nq = nq < MAX_QUEUES ? nq : MAX_QUEUES;
	rx_frames = rx_frames_per_queue(nq);
	if (uroce_xdp_queue_claim(&t->prog)) {
		snprintf(err, errlen, "%s queue 0: another uroce process's AF_XDP socket has it",
			 t->netdev);
		return -EBUSY;
	}
	t->xsk = t->rxq[0] = open_one(t, 0, rx_frames, err, errlen);
	if (!t->xsk) {
		int saved = errno;

		uroce_xdp_queue_unclaim(&t->prog);
		return -saved;
	}
	t->nrxq = nq;
	t->rx_max_len = t->xsk->rx_max_len;
	for (unsigned int q = 1; q < nq; q++) {
		char why[256];

		t->rxq[q] = open_one(t, q, rx_frames, why, sizeof(why));
		if (!t->rxq[q] && uroce_knob_on(UROCE_KNOB_DEBUG))
			fprintf(stderr, "uroce: %s: %s; its frames take the kernel\n", t->devname, why);
		if (t->rxq[q] && t->rxq[q]->rx_max_len < t->rx_max_len)
			t->rx_max_len = t->rxq[q]->rx_max_len;
	}
	return 0;
}

static int xdp_open(const struct uroce_xport_conf *conf, struct uroce_xport **out)
{
	const struct uroce_xport_ops *udp = uroce_xport_lookup("udp");
	struct xdp_xport *t = calloc(1, sizeof(*t));
	struct epoll_event ev = { .events = EPOLLIN };
	struct uroce_netdev nd;
	char nsdir[4096], err[256] = "";
	int ret;

	if (!t)
		return -ENOMEM;
	t->head.fd = -1;
	pthread_mutex_init(&t->tx_lock, NULL);
	snprintf(t->devname, sizeof(t->devname), "%s", conf->devname);
	t->counters = conf->counters;
	snprintf(t->netdev, sizeof(t->netdev), "%s", conf->netdev);
	snprintf(t->nsid, sizeof(t->nsid), "0");
	if (uroce_ns_dir(nsdir, sizeof(nsdir)) == 0)
		snprintf(t->nsid, sizeof(t->nsid), "%s", strrchr(nsdir, '/') + 1);
	ret = udp ? udp->open(conf, &t->udp) : 0;
	if (ret)
		goto fail;
	ret = uroce_netdev_query(t->netdev, &nd);
	if (ret)
		goto fail;
	memcpy(t->mac, nd.mac, 6);
	ret = uroce_xdp_prog_get(t->nsid, t->netdev, &t->prog, err, sizeof(err));
	if (ret)
		goto fail_say;
	t->have_prog = true;
	publish_addrs(t, &nd);
	t->nl = uroce_xdp_nl_open(nd.ifindex);
	if (!t->nl) {
		snprintf(err, sizeof(err), "%s: netlink (libnl-3) for routes and neighbours", t->netdev);
		ret = -ENOMEM;
		goto fail_say;
	}
	ret = open_queues(t, err, sizeof(err));
	if (ret && (ret != -EBUSY || !t->udp))
		goto fail_say;
	if (ret && uroce_knob_on(UROCE_KNOB_DEBUG))
		fprintf(stderr, "uroce: %s: %s; this process uses the udp path\n", t->devname, err);
	if (t->xsk)
		clear_qpns(t);
	for (uint32_t q = 0; q < t->nrxq; q++) {
		int fd = t->rxq[q] ? uroce_xsk_fd(t->rxq[q]) : -1;

		if (fd >= 0 && bpf_map_update_elem(t->prog.xsks_fd, &q, &fd, BPF_ANY)) {
			ret = -errno;
			snprintf(err, sizeof(err), "%s: XSKMAP: %s", t->netdev, strerror(errno));
			goto fail_say;
		}
	}
	t->head.fd = epoll_create1(EPOLL_CLOEXEC);
	if (t->head.fd < 0) {
		ret = -errno;
		goto fail;
	}
	if (t->udp)
		epoll_ctl(t->head.fd, EPOLL_CTL_ADD, t->udp->fd, &ev);
	for (unsigned int q = 0; q < t->nrxq; q++)
		if (t->rxq[q])
			epoll_ctl(t->head.fd, EPOLL_CTL_ADD, uroce_xsk_fd(t->rxq[q]), &ev);
	t->head.ops = &uroce_xdp_ops;
	t->head.fwd_port = t->udp ? t->udp->fwd_port : 0;
	/* What the netdev's MTU carries; packets longer than the socket
	 * takes (one UMEM frame without multi-buffer) take the udp
	 * transport, so without it only what the socket takes. */
	t->head.caps.max_burst = MAX_BURST;
	t->head.caps.max_payload = t->udp ? t->udp->caps.max_payload :
				   t->xsk ? t->rx_max_len - MAX_HLEN : 0;
	t->head.caps.rx_coalescing = t->udp && t->udp->caps.rx_coalescing;
	t->head.caps.frames = t->xsk != NULL;
	*out = &t->head;
	return 0;
fail_say:
	fprintf(stderr, "uroce: %s: transport xdp: %s\n", t->devname, err);
fail:
	xdp_close(&t->head);
	return ret;
}

const struct uroce_xport_ops uroce_xdp_ops = {
	.name = "xdp",
	.open = xdp_open,
	.close = xdp_close,
	.send = xdp_send,
	.recv = xdp_recv,
	.tx_flush = xdp_tx_flush,
	.forward = xdp_forward,
	.steer = xdp_steer,
	.unsteer = xdp_unsteer,
	.macs = xdp_macs,
	.sync_counters = xdp_sync_counters,
	.claim_port = xdp_claim_port,
	.send_local = xdp_send_local,
	.mcast_join = xdp_mcast_join,
	.mcast_leave = xdp_mcast_leave,
};

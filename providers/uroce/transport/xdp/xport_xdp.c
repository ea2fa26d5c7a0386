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
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <time.h>
#include <bpf/bpf.h>
#include <uroce/stats.h>

#include "transport/transport.h"
#include "device/device.h"
#include "wire/wire.h"
#include "transport/xdp/xdp_frame.h"
#include "transport/xdp/xdp_load.h"
#include "transport/xdp/xdp_sock.h"

#define RESOLVE_WAIT_MS 1000
#define MAX_BURST 64
#define MAX_HLEN (UROCE_ETH_HLEN + UROCE_IP6_HLEN + UROCE_UDP_HLEN)
#define STATS_EVERY_NS 10000000ull   /* reading the socket's counters: 10 ms */
/* Receive queues that get an AF_XDP socket: as many as the program's
 * XSKMAP has slots; frames on further queues of a larger NIC take the
 * kernel and the udp transport. */
#define MAX_QUEUES UROCE_XDP_MAX_QUEUES

extern const struct uroce_xport_ops uroce_xdp_ops;

struct xdp_xport {
	struct uroce_xport head;
	/* Beneath: QP1, UD, other processes, local peers.  NULL only where the
	 * program's transport table has no udp (the xdp_probe test tool). */
	struct uroce_xport *udp;
	char devname[64];
	char netdev[IF_NAMESIZE];
	char nsid[64];
	uint8_t mac[6];
	struct uroce_xdp_prog prog;
	bool have_prog;
	struct uroce_xsk *xsk;              /* queue 0's: sends too; NULL: another process has the queues */
	struct uroce_xsk *rxq[MAX_QUEUES];  /* each queue's socket, rxq[0] == xsk; NULL: none */
	unsigned int nrxq;                  /* queues tried (the interface's, at most MAX_QUEUES) */
	unsigned int rx_next;               /* the queue recv looks at first */
	unsigned int udp_skips;             /* spinning calls since the udp beneath was looked at */
	uint32_t rx_max_len;                /* the longest frame every socket takes */
	struct uroce_xdp_nl *nl;
	pthread_mutex_t tx_lock;
	bool kicking;                       /* a thread runs the unlocked kick (tx_lock) */
	bool kick_again;                    /* frames were queued meanwhile: it goes on (tx_lock) */
	uint64_t *counters;                 /* enum uroce_stat */
	struct xdp_statistics seen[MAX_QUEUES];   /* the sockets' counters already counted */
	uint64_t stats_ns;                  /* when they were read */
	bool accounting;                    /* a thread is adding them (account_xsk) */
	uint8_t steered[UROCE_XDP_MAX_QPNS / 8];   /* QPNs we entered in the map */
};

static struct xdp_xport *xx(struct uroce_xport *x)
{
	return (struct xdp_xport *)x;
}

static void count(struct xdp_xport *t, enum uroce_stat e, uint64_t n)
{
	if (t->counters && n)
		uroce_stat_add(t->counters, e, n);
}

/* Add what the kernel counted for the socket since the last look (frames
 * it dropped on the way in, descriptors it refused) to the device's
 * counters; at most every STATS_EVERY_NS unless FORCE.  Called by the one
 * thread that receives (transport.h) and by close. */
static void account_xsk(struct xdp_xport *t, bool force)
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
	account_xsk(xx(x), true);
}

static void xdp_close(struct uroce_xport *x)
{
	struct xdp_xport *t = xx(x);
	uint32_t qpn;

	account_xsk(t, true);

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
			if (getenv("UROCE_DEBUG"))
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

/* Receive frames per socket for NQ queues: about UROCE_XSK_RX_FRAMES (or
 * UROCE_XDP_RX_FRAMES) in all, a power of 2, at least UROCE_XSK_RX_FLOOR
 * each up to 8 queues and UROCE_XSK_MIN_RX_FRAMES beyond (the UMEM is
 * pinned memory: 64 queues of 1024 would pin 256 MiB). */
static uint32_t rx_frames_per_queue(unsigned int nq)
{
	const char *env = getenv("UROCE_XDP_RX_FRAMES");
	uint64_t total = env && atoll(env) > 0 ? (uint64_t)atoll(env) : UROCE_XSK_RX_FRAMES;
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
	const char *env = getenv("UROCE_XDP_QUEUES");
	int want = env ? atoi(env) : 0;
	unsigned int nq = uroce_xsk_queues(t->netdev);
	uint32_t rx_frames;

	if (want > 0 && (unsigned int)want < nq)
		nq = (unsigned int)want;
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
		if (!t->rxq[q] && getenv("UROCE_DEBUG"))
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
	if (ret && getenv("UROCE_DEBUG"))
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

/* A packet the AF_XDP socket cannot carry: through the udp transport. */
static int via_udp(struct xdp_xport *t, const struct uroce_txpkt *pkt)
{
	if (!t->udp)
		return -EHOSTUNREACH;
	return t->udp->ops->send(t->udp, pkt, 1) == 1 ? 0 : -EIO;
}

/* Copy IOV (IOVCNT pieces) into the frame pieces FRAME from byte OFF on. */
static void scatter(const struct iovec *frame, const struct iovec *iov, uint32_t iovcnt,
		    uint32_t off)
{
	unsigned int k = 0;

	for (uint32_t i = 0; i < iovcnt; i++) {
		const uint8_t *from = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		while (left) {
			size_t c;

			while (off >= frame[k].iov_len)
				off -= (uint32_t)frame[k++].iov_len;
			c = frame[k].iov_len - off < left ? frame[k].iov_len - off : left;
			memcpy((uint8_t *)frame[k].iov_base + off, from, c);
			from += c;
			off += (uint32_t)c;
			left -= c;
		}
	}
}

/* Gather PKT into the TX frames it needs (more than one: a multi-buffer
 * frame) and queue it; -EAGAIN: no frame free. */
static int frame_out(struct xdp_xport *t, const struct uroce_txpkt *pkt, const uint8_t mac[6])
{
	uint32_t hlen = uroce_frame_hlen(pkt->path->family), total = hlen + pkt->len;
	uint32_t nframes = (total + UROCE_XSK_FRAME_SIZE - 1) / UROCE_XSK_FRAME_SIZE;
	struct iovec frame[UROCE_XSK_MAX_FRAGS];
	uint64_t addrs[UROCE_XSK_MAX_FRAGS];

	if (total > t->xsk->tx_max_len)
		return -EMSGSIZE;
	for (uint32_t k = 0; k < nframes; k++) {
		frame[k].iov_base = uroce_xsk_tx_frame(t->xsk, &addrs[k]);
		if (!frame[k].iov_base) {
			while (k--)
				uroce_xsk_tx_unget(t->xsk, addrs[k]);
			count(t, UROCE_STAT_XDP_TX_NO_FRAME, 1);
			return -EAGAIN;
		}
		frame[k].iov_len = k + 1 < nframes ? UROCE_XSK_FRAME_SIZE :
				   total - k * UROCE_XSK_FRAME_SIZE;
	}
	scatter(frame, pkt->iov, pkt->iovcnt, hlen);
	uroce_frame_build(frame, nframes, t->mac, mac, pkt->path, pkt->len);
	return uroce_xsk_tx_put(t->xsk, addrs, nframes, total);
}

/*
 * Hand the ring to the kernel without waiting.  Called with tx_lock held,
 * returns with it released.  The sendto() calls run without the lock: in
 * copy mode each one carries frames through the veth and the peer's XDP
 * program into its socket, and a thread that wanted to queue a frame
 * meanwhile slept on the lock (ib_write_lat over xdp: 65 of 93 sleeps of
 * its threads, docs/xdp.md).  One thread kicks at a time; frames queued
 * while it does are its to send too (kick_again), so none is left behind
 * unkicked.  What a stalled queue does not take stays on the ring, counted
 * in tx_left, for the progress thread (xdp_tx_flush).
 */
static void kick_unlock(struct xdp_xport *t)
{
	if (t->kicking) {
		t->kick_again = true;
		pthread_mutex_unlock(&t->tx_lock);
		return;
	}
	t->kicking = true;
	for (;;) {
		uint32_t freed;

		t->kick_again = false;
		pthread_mutex_unlock(&t->tx_lock);
		uroce_xsk_push(t->xsk);
		pthread_mutex_lock(&t->tx_lock);
		freed = uroce_xsk_settle(t->xsk);
		/* Again if frames came meanwhile, or if taking back completed
		 * frames made room for a queue the kernel had stopped taking. */
		if (!t->kick_again && !(freed && t->xsk->tx_queued))
			break;
	}
	t->kicking = false;
	__atomic_store_n(&t->head.tx_left, t->xsk->tx_queued, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&t->tx_lock);
}

static int xdp_send(struct uroce_xport *x, const struct uroce_txpkt *pkts, unsigned int n)
{
	struct xdp_xport *t = xx(x);
	const struct uroce_path *known = NULL;   /* the path MAC and LOCAL are for */
	uint8_t mac[6];
	bool local = false;
	unsigned int i, framed = 0;
	int ret = 0;

	if (!t->xsk)
		return t->udp->ops->send(t->udp, pkts, n);
	if (n > MAX_BURST)
		n = MAX_BURST;
	pthread_mutex_lock(&t->tx_lock);
	for (i = 0; i < n; i++) {
		const struct uroce_path *p = pkts[i].path;

		/* A burst goes mostly to one peer: look it up once. */
		ret = 0;
		if (!known || known->family != p->family || memcmp(known->dst, p->dst, 16)) {
			known = NULL;
			ret = uroce_xdp_nl_resolve(t->nl, p->family, p->dst, RESOLVE_WAIT_MS, mac,
						   &local);
			if (ret == 0)
				known = p;
		}
		/* This host, not this link, or longer than the socket sends
		 * (a kernel without multi-buffer sockets: one frame): the udp
		 * transport (the peer's program passes such frames too). */
		if (ret == 0 && !local &&
		    uroce_frame_hlen(p->family) + pkts[i].len <= t->xsk->tx_max_len) {
			ret = frame_out(t, &pkts[i], mac);
			framed += !ret;
		} else if (ret == 0 || ret == -EHOSTUNREACH)
			ret = via_udp(t, &pkts[i]);
		if (ret)
			break;
	}
	kick_unlock(t);
	count(t, UROCE_STAT_XDP_TX_FRAMES, framed);
	return i ? (int)i : ret;
}

static void xdp_tx_flush(struct uroce_xport *x)
{
	struct xdp_xport *t = xx(x);

	/* A thread that holds the lock is kicking the same ring. */
	if (!t->xsk || pthread_mutex_trylock(&t->tx_lock))
		return;
	kick_unlock(t);
}

static int xdp_recv(struct uroce_xport *x, struct uroce_rx *pkts, unsigned int max,
		    unsigned int flags)
{
	struct xdp_xport *t = xx(x);
	uint8_t *frames[UROCE_XSK_BATCH];
	uint32_t lens[UROCE_XSK_BATCH];
	unsigned int want = max < UROCE_XSK_BATCH ? max : UROCE_XSK_BATCH, got = 0;
	int n = 0, more;

	if (t->xsk) {
		account_xsk(t, false);
		/* Every queue, from a different one each time so that none
		 * waits behind a busy one; each gives back what it lent the
		 * previous call. */
		for (unsigned int k = 0; k < t->nrxq; k++) {
			struct uroce_xsk *s = t->rxq[(t->rx_next + k) % t->nrxq];

			if (s)
				got += (unsigned int)uroce_xsk_rx(s, frames + got, lens + got, want - got);
		}
		t->rx_next = (t->rx_next + 1) % t->nrxq;
		count(t, UROCE_STAT_XDP_RX_FRAMES, got);
		for (unsigned int i = 0; i < got; i++) {
			int r = uroce_frame_parse(frames[i], lens[i], &pkts[n]);

			/* The drop counters follow enum roce_reason (engine/pkt.c). */
			if (r == ROCE_OK)
				n++;
			else
				count(t, UROCE_STAT_DROP_TRUNCATED + (r - ROCE_E_TRUNCATED), 1);
		}
	}
	if ((unsigned int)n >= max || !t->udp)
		return n;
	/* A spinning poll looks at the udp beneath (a system call) on one
	 * call in four: its traffic (QP1, UD, this host) also wakes the
	 * progress thread. */
	if ((flags & UROCE_RX_SPINNING) && t->xsk && ++t->udp_skips % 4)
		return n;
	more = t->udp->ops->recv(t->udp, pkts + n, max - n, flags);
	return more > 0 ? n + more : n ? n : more;
}

static int xdp_forward(struct uroce_xport *x, uint16_t port, const struct uroce_rx *rx)
{
	struct xdp_xport *t = xx(x);

	return t->udp && t->udp->ops->forward ? t->udp->ops->forward(t->udp, port, rx) : -EOPNOTSUPP;
}

static int xdp_steer(struct uroce_xport *x, uint32_t qpn, int family, const uint8_t *local,
		     const uint8_t *peer, uint16_t peer_port)
{
	struct xdp_xport *t = xx(x);
	uint32_t longest = t->rx_max_len;   /* the program's rule: xdp_maps.h */
	int ret = t->udp && t->udp->ops->steer ? t->udp->ops->steer(t->udp, qpn, family, local, peer,
							   peer_port) : 0;

	if (t->xsk && qpn < UROCE_XDP_MAX_QPNS &&
	    bpf_map_update_elem(t->prog.qpns_fd, &qpn, &longest, BPF_ANY) == 0)
		__atomic_fetch_or(&t->steered[qpn / 8], (uint8_t)(1u << (qpn % 8)), __ATOMIC_RELAXED);
	return ret;
}

static int xdp_macs(struct uroce_xport *x, const struct uroce_path *path, uint8_t *smac,
		    uint8_t *dmac)
{
	struct xdp_xport *t = xx(x);
	bool local = false;
	int ret;

	if (!t->xsk)
		return -EOPNOTSUPP;
	ret = uroce_xdp_nl_resolve(t->nl, path->family, path->dst, 0, dmac, &local);
	if (ret)
		return ret;
	if (local)
		return -EHOSTUNREACH;
	memcpy(smac, t->mac, 6);
	return 0;
}

static void xdp_unsteer(struct uroce_xport *x, uint32_t qpn)
{
	struct xdp_xport *t = xx(x);

	if (t->xsk && qpn < UROCE_XDP_MAX_QPNS &&
	    (t->steered[qpn / 8] & (1u << (qpn % 8)))) {
		bpf_map_delete_elem(t->prog.qpns_fd, &qpn);
		__atomic_fetch_and(&t->steered[qpn / 8], (uint8_t)~(1u << (qpn % 8)),
				   __ATOMIC_RELAXED);
	}
	if (t->udp && t->udp->ops->unsteer)
		t->udp->ops->unsteer(t->udp, qpn);
}

/* Frames carry any source port, but what takes the udp transport (the
 * host's own addresses, long packets) leaves from its socket: one port
 * for both, the ICRC covers it. */
static int xdp_claim_port(struct uroce_xport *x, int family, const uint8_t *local, uint16_t want)
{
	struct xdp_xport *t = xx(x);

	return t->udp && t->udp->ops->claim_port ?
	       t->udp->ops->claim_port(t->udp, family, local, want) : want;
}

/* Packets for another process of this device, and multicast groups: the
 * udp transport beneath (the program passes QP 0xFFFFFF to the kernel). */
static int xdp_send_local(struct uroce_xport *x, uint16_t port, const struct uroce_txpkt *pkt)
{
	struct xdp_xport *t = xx(x);

	return t->udp && t->udp->ops->send_local ? t->udp->ops->send_local(t->udp, port, pkt) :
		-EOPNOTSUPP;
}

static int xdp_mcast_join(struct uroce_xport *x, int family, const uint8_t *group)
{
	struct xdp_xport *t = xx(x);

	return t->udp && t->udp->ops->mcast_join ? t->udp->ops->mcast_join(t->udp, family, group) :
		-EOPNOTSUPP;
}

static void xdp_mcast_leave(struct uroce_xport *x, const uint8_t *group)
{
	struct xdp_xport *t = xx(x);

	if (t->udp && t->udp->ops->mcast_leave)
		t->udp->ops->mcast_leave(t->udp, group);
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

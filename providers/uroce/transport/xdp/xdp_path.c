// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The xdp transport's data path: packets out as frames through the
 * AF_XDP socket of queue 0 (built with their Ethernet, IP and UDP
 * headers, xdp_frame.c), or through the udp transport beneath when no
 * frame can carry them (this host, too long); frames in from every
 * queue's socket, then what the udp transport has.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/uio.h>

#include "transport/xdp/xdp_frame.h"
#include "transport/xdp/xdp_xport.h"
#include "wire/wire.h"

#define RESOLVE_WAIT_MS 1000

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

int xdp_send(struct uroce_xport *x, const struct uroce_txpkt *pkts, unsigned int n)
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

void xdp_tx_flush(struct uroce_xport *x)
{
	struct xdp_xport *t = xx(x);

	/* A thread that holds the lock is kicking the same ring. */
	if (!t->xsk || pthread_mutex_trylock(&t->tx_lock))
		return;
	kick_unlock(t);
}

int xdp_recv(struct uroce_xport *x, struct uroce_rx *pkts, unsigned int max,
	     unsigned int flags)
{
	struct xdp_xport *t = xx(x);
	uint8_t *frames[UROCE_XSK_BATCH];
	uint32_t lens[UROCE_XSK_BATCH];
	unsigned int want = max < UROCE_XSK_BATCH ? max : UROCE_XSK_BATCH, got = 0;
	int n = 0, more;

	if (t->xsk) {
		xdp_account(t, false);
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

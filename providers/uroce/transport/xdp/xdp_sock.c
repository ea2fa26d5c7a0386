// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * An AF_XDP socket through libxdp's xsk API (docs/xdp.md).  The frames are
 * placed by the XDP program (uroce_xdp.bpf.c), which the socket never loads
 * itself (XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD): the caller enters the
 * socket in the program's XSKMAP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <uroce/af_xdp_mb.h>

#include "transport/xdp/xdp_sock.h"
#include "knob/knob.h"

#define JOINED_SLOT (UROCE_XSK_MAX_FRAGS * UROCE_XSK_RX_FRAME_LEN)

static int bind_socket(struct uroce_xsk *x, const char *ifname, uint32_t queue, uint16_t mode)
{
	struct xsk_socket_config cfg = {
		.rx_size = x->rx_frames, .tx_size = x->tx_frames,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = mode | XDP_USE_NEED_WAKEUP,
	};

	return xsk_socket__create(&x->xsk, ifname, queue, x->umem, &x->rx, &x->tx, &cfg);
}

/* Zero-copy before copy mode, each with multi-buffer first (a kernel
 * before 6.6 refuses XDP_USE_SG with EINVAL, a zero-copy driver without
 * it with EOPNOTSUPP).  EBUSY and EPERM end the search: no mode helps. */
static int bind_best(struct uroce_xsk *x, const char *ifname, uint32_t queue)
{
	static const uint16_t modes[] = {
		XDP_ZEROCOPY | XDP_USE_SG, XDP_COPY | XDP_USE_SG, XDP_ZEROCOPY, XDP_COPY,
	};
	bool sg = uroce_knob_on(UROCE_KNOB_XDP_SG);
	int ret = -EINVAL;

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if ((modes[i] & XDP_USE_SG) && !sg)
			continue;
		ret = bind_socket(x, ifname, queue, modes[i]);
		if (ret == 0) {
			x->zerocopy = modes[i] & XDP_ZEROCOPY;
			x->sg = modes[i] & XDP_USE_SG;
			return 0;
		}
		if (ret == -EBUSY || ret == -EPERM)
			break;
	}
	return ret;
}

static void fill(struct uroce_xsk *x, const uint64_t *addrs, uint32_t n)
{
	uint32_t idx;

	if (n == 0 || xsk_ring_prod__reserve(&x->fq, n, &idx) != n)
		return;
	for (uint32_t i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&x->fq, idx + i) = addrs[i];
	xsk_ring_prod__submit(&x->fq, n);
}

struct uroce_xsk *uroce_xsk_open(const char *ifname, uint32_t queue, uint32_t rx_frames,
				 uint32_t tx_frames, char *err, size_t errlen)
{
	size_t size = (size_t)(rx_frames + tx_frames) * UROCE_XSK_FRAME_SIZE;
	struct xsk_umem_config ucfg = {
		.fill_size = rx_frames, .comp_size = tx_frames,
		.frame_size = UROCE_XSK_FRAME_SIZE,
	};
	struct uroce_xsk *x = calloc(1, sizeof(*x));
	uint64_t batch[UROCE_XSK_BATCH];
	int ret;

	if (!x)
		return NULL;
	x->rx_frames = rx_frames;
	x->tx_frames = tx_frames;
	x->free = calloc(tx_frames, sizeof(x->free[0]));
	if (!x->free) {
		snprintf(err, errlen, "%s: %s", ifname, strerror(errno));
		goto fail_errno;
	}
	x->area = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->area == MAP_FAILED) {
		snprintf(err, errlen, "UMEM: %s", strerror(errno));
		x->area = NULL;
		goto fail_errno;
	}
	ret = xsk_umem__create(&x->umem, x->area, size, &x->fq, &x->cq, &ucfg);
	if (ret) {
		errno = -ret;
		snprintf(err, errlen, "%s: AF_XDP UMEM: %s%s", ifname, strerror(-ret),
			 ret == -EPERM ? " (AF_XDP sockets need CAP_NET_RAW)" :
			 ret == -EAFNOSUPPORT ? " (the kernel has no CONFIG_XDP_SOCKETS)" :
			 ret == -ENOBUFS ? " (more than RLIMIT_MEMLOCK lets this user pin)" : "");
		goto fail_errno;
	}
	ret = bind_best(x, ifname, queue);
	if (ret) {
		errno = -ret;
		snprintf(err, errlen, "%s queue %u: AF_XDP bind: %s%s", ifname, queue, strerror(-ret),
			 ret == -EBUSY ? " (another process's socket has this queue)" :
			 ret == -EPERM ? " (needs CAP_NET_RAW)" : "");
		goto fail_errno;
	}
	x->rx_max_len = UROCE_XSK_RX_FRAME_LEN;
	x->tx_max_len = UROCE_XSK_FRAME_SIZE;
	if (x->sg) {
		x->joined = malloc((size_t)UROCE_XSK_BATCH * JOINED_SLOT);
		if (!x->joined) {
			snprintf(err, errlen, "%s: multi-buffer frames: %s", ifname, strerror(errno));
			goto fail_errno;
		}
		x->rx_max_len *= UROCE_XSK_MAX_FRAGS;
		x->tx_max_len *= UROCE_XSK_MAX_FRAGS;
	}
	/* The first rx_frames receive, the rest send. */
	for (uint32_t f = 0; f < rx_frames; f += UROCE_XSK_BATCH) {
		for (uint32_t i = 0; i < UROCE_XSK_BATCH; i++)
			batch[i] = (uint64_t)(f + i) * UROCE_XSK_FRAME_SIZE;
		fill(x, batch, UROCE_XSK_BATCH);
	}
	for (uint32_t f = rx_frames; f < rx_frames + tx_frames; f++)
		x->free[x->n_free++] = (uint64_t)f * UROCE_XSK_FRAME_SIZE;
	return x;
fail_errno:
	ret = errno;
	uroce_xsk_close(x);
	errno = ret;
	return NULL;
}

unsigned int uroce_xsk_queues(const char *ifname)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr = { .ifr_data = (char *)&ch };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return 1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ret = ioctl(fd, SIOCETHTOOL, &ifr);
	close(fd);
	/* Channels that receive: RX-only ones and combined ones. */
	return ret == 0 && ch.rx_count + ch.combined_count > 0 ? ch.rx_count + ch.combined_count : 1;
}

void uroce_xsk_close(struct uroce_xsk *x)
{
	if (!x)
		return;
	if (x->xsk)
		xsk_socket__delete(x->xsk);
	if (x->umem)
		xsk_umem__delete(x->umem);
	if (x->area)
		munmap(x->area, (size_t)(x->rx_frames + x->tx_frames) * UROCE_XSK_FRAME_SIZE);
	free(x->joined);
	free(x->free);
	free(x);
}

int uroce_xsk_fd(const struct uroce_xsk *x)
{
	return xsk_socket__fd(x->xsk);
}

int uroce_xsk_stats(const struct uroce_xsk *x, struct xdp_statistics *st)
{
	socklen_t len = sizeof(*st);

	memset(st, 0, sizeof(*st));
	return getsockopt(xsk_socket__fd(x->xsk), SOL_XDP, XDP_STATISTICS, st, &len) ? -errno : 0;
}

/* Take back the frames the kernel has finished sending; how many. */
static uint32_t reclaim(struct uroce_xsk *x)
{
	uint32_t idx, n = xsk_ring_cons__peek(&x->cq, x->tx_frames, &idx);

	for (uint32_t i = 0; i < n; i++)
		x->free[x->n_free++] = *xsk_ring_cons__comp_addr(&x->cq, idx + i);
	if (n)
		xsk_ring_cons__release(&x->cq, n);
	return n;
}

uint8_t *uroce_xsk_tx_frame(struct uroce_xsk *x, uint64_t *addr)
{
	if (x->n_free == 0)
		reclaim(x);
	if (x->n_free == 0) {
		uroce_xsk_kick(x, UROCE_XSK_KICK_STALL_MS);   /* copy mode completes frames in sendto() */
		reclaim(x);
	}
	if (x->n_free == 0)
		return NULL;
	*addr = x->free[--x->n_free];
	return xsk_umem__get_data(x->area, *addr);
}

void uroce_xsk_tx_unget(struct uroce_xsk *x, uint64_t addr)
{
	x->free[x->n_free++] = addr;
}

int uroce_xsk_tx_put(struct uroce_xsk *x, const uint64_t *addrs, uint32_t nframes, uint32_t len)
{
	uint32_t idx;

	if (xsk_ring_prod__reserve(&x->tx, nframes, &idx) != nframes) {
		for (uint32_t i = 0; i < nframes; i++)
			uroce_xsk_tx_unget(x, addrs[i]);
		return -ENOBUFS;
	}
	for (uint32_t i = 0; i < nframes; i++, len -= UROCE_XSK_FRAME_SIZE) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->tx, idx + i);

		d->addr = addrs[i];
		d->len = i + 1 < nframes ? UROCE_XSK_FRAME_SIZE : len;
		d->options = i + 1 < nframes ? XDP_PKT_CONTD : 0;
	}
	xsk_ring_prod__submit(&x->tx, nframes);
	x->tx_queued += nframes;
	return 0;
}

/* Descriptors on the TX ring the kernel has not taken yet: from the ring's
 * shared indexes only, so that uroce_xsk_push may ask without the
 * producers' lock (uroce_xsk_tx_put submits what it reserves at once, so
 * no reserved descriptor is left out). */
static uint32_t tx_pending(const struct uroce_xsk *x)
{
	return __atomic_load_n(x->tx.producer, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(x->tx.consumer, __ATOMIC_ACQUIRE);
}

/* One copy-mode send call; 0, or -errno for a failure other than "the
 * batch ended / the queue is full for now" (EAGAIN, EBUSY, ENOBUFS). */
static int tx_call(struct uroce_xsk *x)
{
	if (sendto(xsk_socket__fd(x->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
	    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS)
		return -errno;
	return 0;
}

/* On veth with RPS, copy-mode TX stalled for more than 100 ms at a time,
 * and under load for more than 3 s: what a kick leaves queued, the
 * progress thread sends later (xdp_path.c, xdp_tx_flush; docs/xdp.md,
 * "RPS").  Only a sender that needs a free frame waits, up to
 * UROCE_XSK_KICK_STALL_MS. */
int uroce_xsk_kick(struct uroce_xsk *x, int stall_ms)
{
	int ret = 0, stalled_ms = 0;

	if (x->tx_queued == 0)
		return 0;
	/* Copy mode sends only inside sendto(), at most 32 frames a call
	 * (the kernel's TX batch): call it until the ring is empty.  EAGAIN /
	 * EBUSY: the batch ended, the completion ring is full, or the
	 * device's queue is stopped until its peer drains it (veth's
	 * backpressure).  A frame left on the ring is sent by no one until
	 * the next sendto(): for the last packets of a UC message that is
	 * never, so a call that took nothing waits 1 ms for the queue (poll()
	 * on the socket drives copy-mode TX too) and tries again, for at most
	 * STALL_MS; whatever is left then stays queued for the next kick. */
	while (tx_pending(x)) {
		uint32_t before = tx_pending(x);

		if (!xsk_ring_prod__needs_wakeup(&x->tx) && x->zerocopy)
			break;
		ret = tx_call(x);
		if (ret)
			break;
		reclaim(x);
		if (tx_pending(x) < before)
			continue;
		if (stalled_ms++ >= stall_ms)
			break;
		struct pollfd pfd = { .fd = xsk_socket__fd(x->xsk), .events = POLLOUT };

		poll(&pfd, 1, 1);
		reclaim(x);
	}
	x->tx_queued = tx_pending(x);
	reclaim(x);
	return ret;
}

int uroce_xsk_push(struct uroce_xsk *x)
{
	for (uint32_t before; (before = tx_pending(x)) != 0;) {
		int ret;

		if (!xsk_ring_prod__needs_wakeup(&x->tx) && x->zerocopy)
			return 0;
		ret = tx_call(x);
		/* Took nothing (a full completion ring, veth's backpressure):
		 * what is left is settle's to count, the progress thread's to
		 * send (xdp_path.c). */
		if (ret || tx_pending(x) >= before)
			return ret;
	}
	return 0;
}

uint32_t uroce_xsk_settle(struct uroce_xsk *x)
{
	uint32_t n = reclaim(x);

	x->tx_queued = tx_pending(x);
	return n;
}

static uint8_t *rx_data(const struct uroce_xsk *x, const struct xdp_desc *d)
{
	return xsk_umem__get_data(x->area, xsk_umem__add_offset_to_addr(d->addr));
}

/*
 * Copy the packet whose first frame is descriptor IDX, NFRAMES of them,
 * into joined slot SLOT; its length, or 0 if it is longer than a slot
 * (the XDP program passes such frames to the kernel, so a peer's frame
 * never is).
 */
static uint32_t join(struct uroce_xsk *x, uint32_t idx, uint32_t nframes, unsigned int slot)
{
	uint8_t *to = x->joined + (size_t)slot * JOINED_SLOT;
	uint32_t len = 0;

	for (uint32_t i = 0; i < nframes; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&x->rx, idx + i);

		if (len + d->len > JOINED_SLOT)
			return 0;
		memcpy(to + len, rx_data(x, d), d->len);
		len += d->len;
	}
	return len;
}

/* Descriptors, from IDX on (AVAIL of them), that the packet there spans:
 * all but its last are marked XDP_PKT_CONTD.  0 if its last is not among
 * them yet (the kernel posts a packet's frames together, but a peek may
 * end inside one). */
static uint32_t packet_frames(const struct uroce_xsk *x, uint32_t idx, uint32_t avail)
{
	for (uint32_t k = 0; k < avail; k++)
		if (!(xsk_ring_cons__rx_desc(&x->rx, idx + k)->options & XDP_PKT_CONTD))
			return k + 1;
	return 0;
}

int uroce_xsk_rx(struct uroce_xsk *x, uint8_t **frames, uint32_t *lens, unsigned int max)
{
	uint32_t idx, n, used = 0;
	unsigned int got = 0;
	bool partial = false;

	uroce_xsk_rx_done(x);
	if (max == 0)
		return 0;
	n = xsk_ring_cons__peek(&x->rx, UROCE_XSK_BATCH, &idx);
	while (used < n && got < max) {
		uint32_t nframes = packet_frames(x, idx + used, n - used);

		if (nframes == 0 && used == 0 && n == UROCE_XSK_BATCH)
			nframes = n;   /* longer than a peek (no peer's frame is): dropped */
		if (nframes == 0) {
			partial = true;
			break;
		}
		for (uint32_t i = 0; i < nframes; i++)
			x->rx_addrs[x->rx_nframes++] =
				xsk_umem__extract_addr(xsk_ring_cons__rx_desc(&x->rx, idx + used + i)->addr);
		if (nframes == 1) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&x->rx, idx + used);

			frames[got] = rx_data(x, d);
			lens[got] = d->len;
		} else {
			frames[got] = x->joined ? x->joined + (size_t)got * JOINED_SLOT : NULL;
			lens[got] = x->joined ? join(x, idx + used, nframes, got) : 0;
		}
		used += nframes;
		got += lens[got] > 0;
	}
	xsk_ring_cons__cancel(&x->rx, n - used);
	/* The ring's cached view ends inside a packet: peek only reads the
	 * producer again once that view is used up, which the frames left
	 * never would be; forget it. */
	if (partial)
		x->rx.cached_prod = x->rx.cached_cons;
	if (used)
		xsk_ring_cons__release(&x->rx, used);
	return (int)got;
}

void uroce_xsk_rx_done(struct uroce_xsk *x)
{
	fill(x, x->rx_addrs, x->rx_nframes);
	x->rx_nframes = 0;
	if (xsk_ring_prod__needs_wakeup(&x->fq))
		recvfrom(xsk_socket__fd(x->xsk), NULL, 0, MSG_DONTWAIT, NULL, NULL);
}

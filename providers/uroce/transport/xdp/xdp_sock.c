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
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>

#include "xdp_sock.h"

#define RING_SIZE 2048   /* descriptors per ring: half the frames each way */

static int bind_socket(struct uroce_xsk *x, const char *ifname, uint32_t queue, uint16_t mode)
{
	struct xsk_socket_config cfg = {
		.rx_size = RING_SIZE, .tx_size = RING_SIZE,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = mode | XDP_USE_NEED_WAKEUP,
	};

	return xsk_socket__create(&x->xsk, ifname, queue, x->umem, &x->rx, &x->tx, &cfg);
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

struct uroce_xsk *uroce_xsk_open(const char *ifname, uint32_t queue, char *err, size_t errlen)
{
	size_t size = (size_t)UROCE_XSK_FRAMES * UROCE_XSK_FRAME_SIZE;
	struct xsk_umem_config ucfg = {
		.fill_size = RING_SIZE, .comp_size = RING_SIZE,
		.frame_size = UROCE_XSK_FRAME_SIZE,
	};
	struct uroce_xsk *x = calloc(1, sizeof(*x));
	uint64_t rx_frames[UROCE_XSK_BATCH];
	int ret;

	if (!x)
		return NULL;
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
			 ret == -EAFNOSUPPORT ? " (the kernel has no CONFIG_XDP_SOCKETS)" : "");
		goto fail_errno;
	}
	ret = bind_socket(x, ifname, queue, XDP_ZEROCOPY);
	x->zerocopy = ret == 0;
	if (ret)
		ret = bind_socket(x, ifname, queue, XDP_COPY);
	if (ret) {
		errno = -ret;
		snprintf(err, errlen, "%s queue %u: AF_XDP bind: %s%s", ifname, queue, strerror(-ret),
			 ret == -EBUSY ? " (another process's socket has this queue)" :
			 ret == -EPERM ? " (needs CAP_NET_RAW)" : "");
		goto fail_errno;
	}
	/* The first half of the frames receive, the second half send. */
	for (uint32_t f = 0; f < UROCE_XSK_FRAMES / 2; f += UROCE_XSK_BATCH) {
		for (uint32_t i = 0; i < UROCE_XSK_BATCH; i++)
			rx_frames[i] = (uint64_t)(f + i) * UROCE_XSK_FRAME_SIZE;
		fill(x, rx_frames, UROCE_XSK_BATCH);
	}
	for (uint32_t f = UROCE_XSK_FRAMES / 2; f < UROCE_XSK_FRAMES; f++)
		x->free[x->n_free++] = (uint64_t)f * UROCE_XSK_FRAME_SIZE;
	return x;
fail_errno:
	ret = errno;
	uroce_xsk_close(x);
	errno = ret;
	return NULL;
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
		munmap(x->area, (size_t)UROCE_XSK_FRAMES * UROCE_XSK_FRAME_SIZE);
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

/* Take back the frames the kernel has finished sending. */
static void reclaim(struct uroce_xsk *x)
{
	uint32_t idx, n = xsk_ring_cons__peek(&x->cq, RING_SIZE, &idx);

	for (uint32_t i = 0; i < n; i++)
		x->free[x->n_free++] = *xsk_ring_cons__comp_addr(&x->cq, idx + i);
	if (n)
		xsk_ring_cons__release(&x->cq, n);
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

int uroce_xsk_tx_put(struct uroce_xsk *x, uint64_t addr, uint32_t len)
{
	uint32_t idx;

	if (xsk_ring_prod__reserve(&x->tx, 1, &idx) != 1) {
		uroce_xsk_tx_unget(x, addr);
		return -ENOBUFS;
	}
	xsk_ring_prod__tx_desc(&x->tx, idx)->addr = addr;
	xsk_ring_prod__tx_desc(&x->tx, idx)->len = len;
	xsk_ring_prod__submit(&x->tx, 1);
	x->tx_queued++;
	return 0;
}

/* Descriptors on the TX ring the kernel has not taken yet. */
static uint32_t tx_pending(const struct uroce_xsk *x)
{
	return x->tx.cached_prod - __atomic_load_n(x->tx.consumer, __ATOMIC_ACQUIRE);
}

/* On veth with RPS, copy-mode TX stalled for more than 100 ms at a time,
 * and under load for more than 3 s: what a kick leaves queued, the
 * progress thread sends later (xport_xdp.c, xdp_tx_flush; docs/xdp.md,
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
		if (sendto(xsk_socket__fd(x->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 &&
		    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS) {
			ret = -errno;
			break;
		}
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

int uroce_xsk_rx(struct uroce_xsk *x, uint8_t **frames, uint32_t *lens, unsigned int max)
{
	uint32_t idx, n;

	uroce_xsk_rx_done(x);
	n = xsk_ring_cons__peek(&x->rx, max < UROCE_XSK_BATCH ? max : UROCE_XSK_BATCH, &idx);
	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&x->rx, idx + i);

		x->rx_addrs[i] = xsk_umem__extract_addr(d->addr);
		frames[i] = xsk_umem__get_data(x->area, xsk_umem__add_offset_to_addr(d->addr));
		lens[i] = d->len;
	}
	if (n)
		xsk_ring_cons__release(&x->rx, n);
	x->rx_held = n;
	return (int)n;
}

void uroce_xsk_rx_done(struct uroce_xsk *x)
{
	fill(x, x->rx_addrs, x->rx_held);
	x->rx_held = 0;
	if (xsk_ring_prod__needs_wakeup(&x->fq))
		recvfrom(xsk_socket__fd(x->xsk), NULL, 0, MSG_DONTWAIT, NULL, NULL);
}

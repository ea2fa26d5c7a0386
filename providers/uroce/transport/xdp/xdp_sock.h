/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * One AF_XDP socket: its UMEM and four rings (libxdp's xsk API).  The
 * UMEM's first half is lent to the kernel through the fill ring for
 * receiving, the second half holds frames being sent.
 */
#ifndef UROCE_XDP_SOCK_H
#define UROCE_XDP_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#define UROCE_XSK_FRAMES 4096
#define UROCE_XSK_FRAME_SIZE XSK_UMEM__DEFAULT_FRAME_SIZE
#define UROCE_XSK_BATCH 64

struct uroce_xsk {
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	uint8_t *area;
	bool zerocopy;
	uint32_t tx_queued;         /* descriptors on the TX ring the kernel has not sent */
	uint32_t n_free;
	uint32_t rx_held;           /* frames the caller still reads */
	uint64_t rx_addrs[UROCE_XSK_BATCH];
	uint64_t free[UROCE_XSK_FRAMES / 2];  /* TX frames not in flight */
};

/* Bind a socket to (IFNAME, QUEUE): zero-copy where the driver offers it,
 * copy mode otherwise.  NULL with errno and a reason in ERR. */
struct uroce_xsk *uroce_xsk_open(const char *ifname, uint32_t queue, char *err, size_t errlen);
void uroce_xsk_close(struct uroce_xsk *x);
/* The fd to poll for received frames (POLLIN). */
int uroce_xsk_fd(const struct uroce_xsk *x);

/* A free TX frame of UROCE_XSK_FRAME_SIZE bytes (its UMEM offset in *ADDR),
 * NULL if every frame is in flight. */
uint8_t *uroce_xsk_tx_frame(struct uroce_xsk *x, uint64_t *addr);
/* Give back a frame taken with uroce_xsk_tx_frame and not queued. */
void uroce_xsk_tx_unget(struct uroce_xsk *x, uint64_t addr);
/* Queue the frame at ADDR of LEN bytes; uroce_xsk_kick sends the queue. */
int uroce_xsk_tx_put(struct uroce_xsk *x, uint64_t addr, uint32_t len);
/* Hand the queue to the kernel, waiting up to STALL_MS (1 ms steps) while
 * it takes nothing; what is still queued then is left in tx_queued. */
int uroce_xsk_kick(struct uroce_xsk *x, int stall_ms);
/* How long uroce_xsk_kick waits when a frame is needed and none is free. */
#define UROCE_XSK_KICK_STALL_MS 3000

/* Up to MAX (<= UROCE_XSK_BATCH) received frames into FRAMES/LENS; they
 * stay the caller's until uroce_xsk_rx_done gives them back to the kernel. */
/* The kernel's counters of the socket (XDP_STATISTICS); 0 or -errno. */
int uroce_xsk_stats(const struct uroce_xsk *x, struct xdp_statistics *st);

int uroce_xsk_rx(struct uroce_xsk *x, uint8_t **frames, uint32_t *lens, unsigned int max);
void uroce_xsk_rx_done(struct uroce_xsk *x);

#endif

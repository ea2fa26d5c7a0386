/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * One AF_XDP socket: its UMEM and four rings (libxdp's xsk API).  The
 * UMEM's first rx_frames are lent to the kernel through the fill ring
 * for receiving, the tx_frames after them hold frames being sent.  Where
 * the kernel has multi-buffer sockets (XDP_USE_SG, Linux 6.6), a packet
 * may span up to UROCE_XSK_MAX_FRAGS frames each way: a 4096-byte IB MTU
 * packet is longer than one frame.
 */
#ifndef UROCE_XDP_SOCK_H
#define UROCE_XDP_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

/* Receive frames (a power of 2): UROCE_XDP_RX_FRAMES (8192 by default,
 * knob/knob.h) for the one socket of a single-queue interface (32 MiB,
 * what the udp transport's receive buffers hold); a multi-queue one's
 * sockets share out about as many, at least UROCE_XSK_MIN_RX_FRAMES each
 * (more than 32 queues take more in all: 64 take 64 MiB).  They are what
 * a receiver that is not scheduled can take meanwhile: with 2048 a UC
 * flood into a loaded machine lost 13-17 % of its packets, with 8192 none
 * (docs/xdp.md, "Receive frames").  The socket that sends (queue 0's) has
 * UROCE_XSK_TX_FRAMES more, the others UROCE_XSK_BATCH.  Under
 * RLIMIT_MEMLOCK a socket gives up receive frames down to
 * UROCE_XSK_RX_FLOOR, then send frames, then receive frames again. */
#define UROCE_XSK_RX_FLOOR 1024
#define UROCE_XSK_MIN_RX_FRAMES 256
#define UROCE_XSK_TX_FRAMES 2048
#define UROCE_XSK_MIN_TX_FRAMES 256
#define UROCE_XSK_FRAME_SIZE XSK_UMEM__DEFAULT_FRAME_SIZE
#define UROCE_XSK_BATCH 64
/* Frames one packet may span (multi-buffer): the longest RoCE packet, IB
 * MTU 4096 with its headers, fits two.  Longer frames the XDP program
 * passes to the kernel (uroce_xsk.rx_max_len). */
#define UROCE_XSK_MAX_FRAGS 2
/* What the kernel writes into one receive frame: it keeps
 * XDP_PACKET_HEADROOM (256) in front. */
#define UROCE_XSK_RX_FRAME_LEN (UROCE_XSK_FRAME_SIZE - 256)

struct uroce_xsk {
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	uint8_t *area;
	bool zerocopy;
	bool sg;                    /* bound with XDP_USE_SG: multi-buffer packets */
	uint32_t rx_max_len;        /* the longest frame it receives */
	uint32_t tx_max_len;        /* the longest frame it sends */
	uint32_t tx_queued;         /* descriptors on the TX ring the kernel has not sent */
	uint32_t rx_frames;         /* UMEM frames lent to the kernel to receive into */
	uint32_t tx_frames;         /* UMEM frames after them, to send from */
	uint32_t n_free;
	uint32_t rx_nframes;        /* frames of the packets the caller still reads */
	uint64_t rx_addrs[UROCE_XSK_BATCH];
	uint8_t *joined;            /* sg: a multi-buffer packet's frames, one after another */
	uint64_t *free;             /* TX frames not in flight (of tx_frames) */
};

/* Bind a socket with RX_FRAMES receive frames (a power of 2, at least
 * UROCE_XSK_MIN_RX_FRAMES) and TX_FRAMES send frames (a power of 2, at
 * least UROCE_XSK_BATCH) to (IFNAME, QUEUE): zero-copy where the driver
 * offers it, copy mode otherwise; multi-buffer where the kernel has it,
 * unless UROCE_XDP_SG=0.
 * NULL with errno and a reason in ERR (ENOBUFS: the UMEM is more than
 * RLIMIT_MEMLOCK lets this user pin). */
struct uroce_xsk *uroce_xsk_open(const char *ifname, uint32_t queue, uint32_t rx_frames,
				 uint32_t tx_frames, char *err, size_t errlen);
void uroce_xsk_close(struct uroce_xsk *x);
/* The receive queues of IFNAME a socket can bind (its channels that
 * receive, from ethtool; 1 where the driver does not say). */
unsigned int uroce_xsk_queues(const char *ifname);
/* The fd to poll for received frames (POLLIN). */
int uroce_xsk_fd(const struct uroce_xsk *x);

/* A free TX frame of UROCE_XSK_FRAME_SIZE bytes (its UMEM offset in *ADDR),
 * NULL if every frame is in flight. */
uint8_t *uroce_xsk_tx_frame(struct uroce_xsk *x, uint64_t *addr);
/* Give back a frame taken with uroce_xsk_tx_frame and not queued. */
void uroce_xsk_tx_unget(struct uroce_xsk *x, uint64_t addr);
/* Queue one packet of LEN bytes in the NFRAMES frames at ADDRS (each full
 * but the last); uroce_xsk_kick sends the queue.  On failure the frames
 * are free again. */
int uroce_xsk_tx_put(struct uroce_xsk *x, const uint64_t *addrs, uint32_t nframes, uint32_t len);
/* Hand the queue to the kernel, waiting up to STALL_MS (1 ms steps) while
 * it takes nothing; what is still queued then is left in tx_queued. */
int uroce_xsk_kick(struct uroce_xsk *x, int stall_ms);
/* The kick in two halves, so that the sending half runs without the
 * producers' lock (a copy-mode sendto() runs the whole path to the peer's
 * socket, microseconds in which other threads would sleep on that lock):
 * push calls sendto() until the submitted descriptors are taken or a call
 * takes nothing, touching only the ring's shared indexes, and may run
 * beside producers; settle, under their lock, takes back the completed
 * frames and counts what is left in tx_queued.  settle returns how many
 * frames it took back.  Returns of push: 0, or -errno of sendto(). */
int uroce_xsk_push(struct uroce_xsk *x);
uint32_t uroce_xsk_settle(struct uroce_xsk *x);
/* How long uroce_xsk_kick waits when a frame is needed and none is free. */
#define UROCE_XSK_KICK_STALL_MS 3000

/* The kernel's counters of the socket (XDP_STATISTICS); 0 or -errno. */
int uroce_xsk_stats(const struct uroce_xsk *x, struct xdp_statistics *st);

/* Up to MAX (<= UROCE_XSK_BATCH) received packets into FRAMES/LENS, each
 * in one piece (a multi-buffer packet's frames joined); they stay the
 * caller's until uroce_xsk_rx_done gives them back to the kernel. */
int uroce_xsk_rx(struct uroce_xsk *x, uint8_t **frames, uint32_t *lens, unsigned int max);
void uroce_xsk_rx_done(struct uroce_xsk *x);

#endif

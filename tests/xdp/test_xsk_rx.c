// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Unit test of an AF_XDP socket's receive side (xdp_sock.c) on rings made
 * in memory, as the kernel would fill them: one-frame packets; multi-buffer
 * packets (XDP_PKT_CONTD) joined into one piece, byte for byte; a packet
 * whose last frame is not on the ring yet left for the next call; MAX
 * honoured; a packet longer than two frames dropped; every frame taken
 * given back through the fill ring.  No kernel, no root: it runs in the
 * unit suite, under ASan/UBSan in test.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uroce/af_xdp_mb.h>

#include "transport/xdp/xdp_sock.h"

#define RING 256
#define NFRAMES 512
#define HEADROOM 256

static struct xdp_desc rx_descs[RING];
static uint64_t fq_addrs[RING];
static uint32_t rx_prod, rx_cons, fq_prod, fq_cons, flags;
static uint32_t next_frame;
static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL: " __VA_ARGS__); \
	printf("\n"); } } while (0)

static uint8_t pattern(uint32_t pkt, uint32_t i)
{
	return (uint8_t)(pkt * 31 + i * 7 + 1);
}

/* The kernel's side: packet PKT of LEN bytes into frames of FRAME_LEN, all
 * but the last marked XDP_PKT_CONTD; only the first NPOST descriptors are
 * made visible (the rest stay for post_rest). */
static uint32_t staged;

static void produce(struct uroce_xsk *x, uint32_t pkt, uint32_t len, uint32_t frame_len,
		    uint32_t npost)
{
	uint32_t off = 0, k = 0;

	while (off < len) {
		uint32_t n = len - off < frame_len ? len - off : frame_len;
		uint64_t addr = (uint64_t)(next_frame++ % NFRAMES) * UROCE_XSK_FRAME_SIZE;
		struct xdp_desc *d = &rx_descs[staged++ % RING];

		for (uint32_t i = 0; i < n; i++)
			x->area[addr + HEADROOM + i] = pattern(pkt, off + i);
		d->addr = addr + HEADROOM;
		d->len = n;
		d->options = off + n < len ? XDP_PKT_CONTD : 0;
		off += n;
		if (k++ < npost)
			__atomic_store_n(&rx_prod, rx_prod + 1, __ATOMIC_RELEASE);
	}
}

static void post_rest(void)
{
	__atomic_store_n(&rx_prod, staged, __ATOMIC_RELEASE);
}

static void check_packet(const uint8_t *p, uint32_t got_len, uint32_t pkt, uint32_t len)
{
	uint32_t bad = 0;

	CHECK(got_len == len, "packet %u: length %u, want %u", pkt, got_len, len);
	for (uint32_t i = 0; i < len && i < got_len; i++)
		bad += p[i] != pattern(pkt, i);
	CHECK(bad == 0, "packet %u: %u bytes differ", pkt, bad);
}

int main(void)
{
	struct uroce_xsk x = { 0 };
	uint8_t *frames[UROCE_XSK_BATCH];
	uint32_t lens[UROCE_XSK_BATCH], taken = 0;
	const uint32_t fl = UROCE_XSK_RX_FRAME_LEN;
	int n;

	x.area = calloc(NFRAMES, UROCE_XSK_FRAME_SIZE);
	x.joined = malloc((size_t)UROCE_XSK_BATCH * UROCE_XSK_MAX_FRAGS * fl);
	x.sg = true;
	x.rx = (struct xsk_ring_cons){ .mask = RING - 1, .size = RING, .producer = &rx_prod,
				       .consumer = &rx_cons, .ring = rx_descs, .flags = &flags };
	x.fq = (struct xsk_ring_prod){ .cached_cons = RING, .mask = RING - 1, .size = RING,
				       .producer = &fq_prod, .consumer = &fq_cons, .ring = fq_addrs,
				       .flags = &flags };
	if (!x.area || !x.joined)
		return 1;

	/* One-frame packets, read where the kernel put them. */
	for (uint32_t p = 0; p < 3; p++)
		produce(&x, p, 100 + p, fl, 9);
	n = uroce_xsk_rx(&x, frames, lens, 64);
	CHECK(n == 3, "3 one-frame packets: got %d", n);
	for (int i = 0; i < n; i++)
		check_packet(frames[i], lens[i], (uint32_t)i, 100 + (uint32_t)i);
	taken += 3;

	/* Multi-buffer: 4154 bytes (a 4 KiB IB MTU packet) in two frames,
	 * between one-frame ones; joined byte for byte. */
	produce(&x, 10, 60, fl, 9);
	produce(&x, 11, 4154, fl, 9);
	produce(&x, 12, 2 * fl, fl, 9);   /* exactly two full frames */
	n = uroce_xsk_rx(&x, frames, lens, 64);
	CHECK(n == 3, "mixed: got %d packets", n);
	if (n == 3) {
		check_packet(frames[0], lens[0], 10, 60);
		check_packet(frames[1], lens[1], 11, 4154);
		check_packet(frames[2], lens[2], 12, 2 * fl);
	}
	taken += 5;

	/* A packet whose second frame is not posted yet: the first stays on
	 * the ring, the complete one before it is taken. */
	produce(&x, 20, 80, fl, 9);
	produce(&x, 21, 5000, fl, 1);
	n = uroce_xsk_rx(&x, frames, lens, 64);
	CHECK(n == 1, "partial: got %d packets, want the complete one", n);
	if (n >= 1)
		check_packet(frames[0], lens[0], 20, 80);
	CHECK(rx_cons == taken + 1, "partial: consumer at %u, want %u", rx_cons, taken + 1);
	taken += 1;
	post_rest();
	n = uroce_xsk_rx(&x, frames, lens, 64);
	CHECK(n == 1, "partial, completed: got %d packets", n);
	if (n == 1)
		check_packet(frames[0], lens[0], 21, 5000);
	taken += 2;

	/* MAX: one packet a call, the others stay. */
	for (uint32_t p = 30; p < 33; p++)
		produce(&x, p, 4000, fl, 9);
	for (uint32_t p = 30; p < 33; p++) {
		n = uroce_xsk_rx(&x, frames, lens, 1);
		CHECK(n == 1, "max 1, packet %u: got %d", p, n);
		if (n == 1)
			check_packet(frames[0], lens[0], p, 4000);
	}
	taken += 6;

	/* Longer than two frames (no peer's frame is: the program passes
	 * them to the kernel): dropped, its frames given back; the next
	 * packet is still read. */
	produce(&x, 40, 3 * fl, fl, 9);
	produce(&x, 41, 200, fl, 9);
	n = uroce_xsk_rx(&x, frames, lens, 64);
	CHECK(n == 1, "too long: got %d packets, want the one after it", n);
	if (n == 1)
		check_packet(frames[0], lens[0], 41, 200);
	taken += 4;

	/* Every frame taken went back to the fill ring. */
	uroce_xsk_rx_done(&x);
	CHECK(rx_cons == taken, "consumed %u descriptors, want %u", rx_cons, taken);
	CHECK(fq_prod == taken, "fill ring got %u frames back, want %u", fq_prod, taken);
	for (uint32_t i = 0; i < fq_prod && i < RING; i++)
		CHECK(fq_addrs[i] < (uint64_t)NFRAMES * UROCE_XSK_FRAME_SIZE &&
		      fq_addrs[i] % UROCE_XSK_FRAME_SIZE == HEADROOM,
		      "fill ring entry %u (0x%llx) is not a frame given", i,
		      (unsigned long long)fq_addrs[i]);

	free(x.area);
	free(x.joined);
	if (failures)
		return 1;
	printf("ok: AF_XDP receive ring: one-frame, joined, partial, MAX and too-long packets\n");
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * ICRC throughput: roce_icrc over 4 KiB RDMA WRITE packets (a real
 * IPv4/UDP/BTH/RETH header) next to memcpy of the same bytes, on the same
 * machine, so the ratio says what the CRC costs relative to touching the
 * data once.  usage: icrc_bench [SECONDS_PER_TEST]  (default 1)
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>

#include "wire/wire.h"

#define PKT 4096
#define NBUF 256                  /* 1 MiB of payloads: stays in L2/L3 */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static volatile uint32_t sink;

/* GB/s of FN over all buffers, repeated for SECONDS. */
static double run(void (*fn)(uint8_t **, int, void *), uint8_t **bufs, void *arg, double seconds)
{
	double t0 = now(), t;
	uint64_t bytes = 0;

	do {
		fn(bufs, NBUF, arg);
		bytes += (uint64_t)NBUF * PKT;
		t = now() - t0;
	} while (t < seconds);
	return bytes / t / 1e9;
}

struct icrc_arg {
	struct roce_net net;
	uint8_t hdr[64];
	int hdrlen;
};

static void do_icrc(uint8_t **bufs, int n, void *a)
{
	struct icrc_arg *arg = a;

	for (int i = 0; i < n; i++) {
		struct iovec iov = { bufs[i], PKT };

		sink ^= roce_icrc(&arg->net, arg->hdr, arg->hdrlen, &iov, 1, 0);
	}
}

static void do_memcpy(uint8_t **bufs, int n, void *a)
{
	uint8_t *dst = a;

	for (int i = 0; i < n; i++) {
		memcpy(dst, bufs[i], PKT);
		sink ^= dst[i];
	}
}

static void print_cpu(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	printf("CPU: PCLMULQDQ %s, AVX512F %s, VPCLMULQDQ %s (ISA-L's crc32_gzip_refl "
	       "dispatches to its fastest variant for these)\n",
	       __builtin_cpu_supports("pclmul") ? "yes" : "no",
	       __builtin_cpu_supports("avx512f") ? "yes" : "no",
	       __builtin_cpu_supports("vpclmulqdq") ? "yes" : "no");
#endif
}

int main(int argc, char **argv)
{
	static const uint8_t src[16] = { [10] = 0xff, 0xff, 10, 0, 0, 1 };
	static const uint8_t dst[16] = { [10] = 0xff, 0xff, 10, 0, 0, 2 };
	double secs = argc > 1 ? atof(argv[1]) : 1.0, icrc, copy;
	struct roce_pkt p = { .opcode = ROCE_WRITE_ONLY, .pkey = 0xffff, .dqpn = 0x11,
			      .psn = 1, .va = 0x7f0000000000ull, .rkey = 0x1234, .dma_len = PKT };
	struct icrc_arg arg;
	uint8_t *bufs[NBUF], *out = aligned_alloc(64, PKT);

	for (int i = 0; i < NBUF; i++) {
		bufs[i] = aligned_alloc(64, PKT);
		for (int j = 0; j < PKT; j++)
			bufs[i][j] = i * 31 + j;
	}
	roce_net_from_socket(&arg.net, AF_INET, src, dst, 0xc000, ROCE_UDP_PORT);
	arg.hdrlen = roce_build(arg.hdr, sizeof(arg.hdr), &p, PKT);
	print_cpu();
	icrc = run(do_icrc, bufs, &arg, secs);
	copy = run(do_memcpy, bufs, out, secs);
	printf("roce_icrc, 4 KiB RDMA WRITE packets: %6.2f GB/s\n", icrc);
	printf("memcpy of the same 4 KiB buffers:   %6.2f GB/s\n", copy);
	printf("ratio icrc/memcpy: %.2f\n", icrc / copy);
	for (int i = 0; i < NBUF; i++)
		free(bufs[i]);
	free(out);
	return 0;
}

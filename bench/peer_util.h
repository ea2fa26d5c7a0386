/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What the bench's socket peers (udp_peer.c, tcp_peer.c) share: the clock,
 * the CPU seconds, and the summary of a ping-pong's round trips (median,
 * mean, p99, p99.9 of the one-way time, and every sample for the
 * distribution plot).  Header-only: each peer is one program.
 */
#ifndef UROCE_BENCH_PEER_UTIL_H
#define UROCE_BENCH_PEER_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static inline void die(const char *what)
{
	perror(what);
	exit(1);
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Sort the N round trips RTT (ns) and print their one-way figures (half a
 * round trip, as perftest counts a SEND's latency) and CPU seconds CPU, as
 * key=value pairs.  BENCH_SAMPLES=FILE: every one-way time too, in µs,
 * sorted, one a line.  0, or 1 if FILE could not be written.
 */
static inline int pingpong_report(uint64_t *rtt, int n, double cpu)
{
	const char *path = getenv("BENCH_SAMPLES");
	uint64_t sum = 0;
	FILE *f;

	qsort(rtt, n, sizeof(*rtt), cmp_u64);
	for (int i = 0; i < n; i++)
		sum += rtt[i];
	printf("oneway_us_median=%.3f oneway_us_mean=%.3f oneway_us_p99=%.3f oneway_us_p999=%.3f "
	       "iters=%d cpu_s=%.3f\n",
	       rtt[n / 2] / 2000.0, sum / (2000.0 * n), rtt[(int64_t)n * 99 / 100] / 2000.0,
	       rtt[(int64_t)n * 999 / 1000] / 2000.0, n, cpu);
	fflush(stdout);
	if (!path || !*path)
		return 0;
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 1;
	}
	for (int i = 0; i < n; i++)
		fprintf(f, "%.3f\n", rtt[i] / 2000.0);
	return fclose(f) ? 1 : 0;
}

#endif

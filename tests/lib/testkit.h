/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What the two-process verbs test programs (verbs_verify, rc_faults,
 * uc_loss) share: counted checks that print "ok:"/"FAIL:"/"FATAL:" lines
 * and a "N passed, M failed" tally, the TCP side channel they exchange QP
 * numbers, GIDs and keys over (as the ibv_*_pingpong tools do), a clock.
 */
#ifndef UROCE_TESTKIT_H
#define UROCE_TESTKIT_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

extern int passes, failures;
extern int sock;            /* the side channel, after tcp_setup */

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (cond) {                                                     \
			passes++;                                               \
		} else {                                                        \
			failures++;                                             \
			printf("FAIL: ");                                       \
			printf(__VA_ARGS__);                                    \
			putchar('\n');                                          \
		}                                                               \
		fflush(stdout);                                                 \
	} while (0)
#define NOTE(...) do { printf("ok: " __VA_ARGS__); putchar('\n'); fflush(stdout); } while (0)
#define DIE(...) do { printf("FATAL: " __VA_ARGS__); printf("\n%d passed, %d failed\n", passes, failures + 1); exit(1); } while (0)

/* HOST NULL: listen on PORT and accept one peer; else connect to HOST:PORT
 * (retrying for 10 s while the server starts).  Dies on failure. */
void tcp_setup(const char *host, const char *port);
/* Send N bytes of OUT and receive N bytes into IN; dies if the peer is gone. */
void xfer(void *out, void *in, size_t n);
/* Both sides wait for each other. */
void barrier(void);
/* The options of a test on one device: -d DEV -g GIDX, and -n N where N
 * is not NULL (*N keeps its value without it).  Exits with a usage line
 * (status 2) on anything else. */
void device_args(int argc, char **argv, const char **dev, int *gidx, int *n);
/* Open the verbs device NAME (NULL: the first); dies if there is none. */
struct ibv_context *open_device(const char *name);
/* Take RC QP (in RESET or INIT) to RTS towards QP DQPN of the same device,
 * whose GID at index GIDX names both ends: path MTU 1024, ACK timeout
 * TIMEOUT (4.096 us x 2^TIMEOUT), RETRY_CNT transport retries, RNR retries
 * without end, ACCESS what the peer may do.  Dies on failure. */
void rc_connect_local(struct ibv_qp *qp, uint32_t dqpn, int gidx, int access, int timeout,
		      int retry_cnt);
/* CLOCK_MONOTONIC in milliseconds. */
double now_ms(void);
/* The next completion of CQ, polled for at most LIMIT_S seconds; dies
 * naming WHAT if none comes. */
struct ibv_wc poll_wc(struct ibv_cq *cq, int limit_s, const char *what);

#endif

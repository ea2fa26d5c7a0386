/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * UROCE_TRACE=FILE: the process records its verbs-level events next to its
 * packets, in one pcapng file ("%p" in FILE becomes the PID), bounded by
 * UROCE_TRACE_MAX bytes (default 256 MiB).  `uroce trace` reads it.
 *
 * Every hook in the verbs and engine code is one line,
 *     UROCE_TRACE(uroce_trace_xxx(...));
 * which costs one predictable branch on a global flag when tracing is off.
 */
#ifndef UROCE_TRACE_H
#define UROCE_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "trace/why.h"

extern bool uroce_tracing;

#define UROCE_TRACE(call)                                        \
	do {                                                     \
		if (__builtin_expect(uroce_tracing, 0))          \
			call;                                    \
	} while (0)

struct uroce_qp;
struct uroce_send_wqe;
struct ibv_qp_attr;
struct ibv_recv_wr;
struct ibv_wc;
struct roce_net;

/* The trace clock now, or 0 when not tracing (a packet's stamp is taken
 * before it leaves, so that the receiver's record is never earlier). */
uint64_t uroce_trace_clock_slow(void);
static inline uint64_t uroce_trace_clock(void)
{
	return __builtin_expect(uroce_tracing, 0) ? uroce_trace_clock_slow() : 0;
}

/* Packets: sent (UDP payload IOV[N], stamped TS) and received. */
void uroce_trace_pkt(uint64_t ts, bool out, struct roce_net *net, const struct iovec *iov, int n);
void uroce_trace_rx(struct roce_net *net, uint8_t *buf, uint32_t len);
/* Send WQEs in slots [FROM, TO) were posted. */
void uroce_trace_sq_posted(struct uroce_qp *qp, uint32_t from, uint32_t to);
/* A receive WR was posted to QPN (0: to an SRQ). */
void uroce_trace_post_recv(uint32_t qpn, const struct ibv_recv_wr *wr);
/* The requester starts W: its PSNs are known from now on. */
void uroce_trace_wqe_start(struct uroce_qp *qp, const struct uroce_send_wqe *w);
/* ibv_modify_qp from state OLD with ATTR/MASK (applied). */
void uroce_trace_modify(struct uroce_qp *qp, int old, const struct ibv_qp_attr *attr, int mask);
/* The engine moved QP to the error state (async event EV). */
void uroce_trace_to_error(struct uroce_qp *qp, int ev);
/* A completion was queued. */
void uroce_trace_cqe(const struct ibv_wc *wc);
/* A protocol decision about PSN; ARG is the decision's number (retries
 * left, RNR wait in microseconds, the expected PSN), or -1. */
void uroce_trace_why(struct uroce_qp *qp, enum uroce_why why, uint32_t psn, int64_t arg);
/* rdma CM: connection ID's state changed; an event was queued. */
void uroce_trace_cm_state(uint32_t id, uint32_t qpn, const char *from, const char *to);
void uroce_trace_cm_event(uint32_t id, uint32_t qpn, uint32_t event, int32_t status);

#endif

/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * UROCE_TRACE=FILE: the process records its verbs-level events next to its
 * packets, in one pcapng file ("%p" in FILE becomes the PID), bounded by
 * UROCE_TRACE_MAX bytes (default 256 MiB).  `uroce trace` reads it.
 *
 * Every hook in the verbs, CM and engine code is one line,
 *     UROCE_TRACE(uroce_trace_xxx(...));
 * which costs one predictable branch on a global flag when tracing is off.
 * This folder writes the records and depends on wire/ only: the hooks
 * that read QPs and WQEs are the engine's (engine/trace_hooks.c, declared
 * in engine/engine.h), written with the record writer below.
 */
#ifndef UROCE_TRACE_H
#define UROCE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "trace/why.h"

extern bool uroce_tracing;

#define UROCE_TRACE(call)                                        \
	do {                                                     \
		if (__builtin_expect(uroce_tracing, 0))          \
			call;                                    \
	} while (0)

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

/* ---- hooks of plain values ---------------------------------------------- */

/* Packets: sent (UDP payload IOV[N], stamped TS) and received. */
void uroce_trace_pkt(uint64_t ts, bool out, struct roce_net *net, const struct iovec *iov, int n);
void uroce_trace_rx(struct roce_net *net, uint8_t *buf, uint32_t len);
/* A receive WR was posted to QPN (0: to an SRQ). */
void uroce_trace_post_recv(uint32_t qpn, const struct ibv_recv_wr *wr);
/* A completion was queued. */
void uroce_trace_cqe(const struct ibv_wc *wc);
/* rdma CM: connection ID's state changed; an event was queued. */
void uroce_trace_cm_state(uint32_t id, uint32_t qpn, const char *from, const char *to);
void uroce_trace_cm_event(uint32_t id, uint32_t qpn, uint32_t event, int32_t status);

/* ---- the record writer -------------------------------------------------- */

/*
 * One event record: a systemd journal entry of UROCE_* fields for
 * `uroce trace` and a MESSAGE for people (docs/trace.md).  The hooks that
 * read QPs and WQEs are the engine's (engine/trace_hooks.c) and write
 * theirs with these: begin a record of kind EV about QPN (0: none),
 * stamped now; add field UROCE_KEY; add to the message; write it.
 */
struct uroce_rec {
	char buf[1536];
	size_t n;
	char msg[512];
};
void uroce_rec_begin(struct uroce_rec *r, const char *ev, uint32_t qpn);
void uroce_rec_add(struct uroce_rec *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void uroce_rec_msg(struct uroce_rec *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void uroce_rec_end(struct uroce_rec *r);
/* A decision's name (why.h, without UROCE_WHY_) and its title with its
 * IBTA section. */
const char *uroce_trace_why_name(enum uroce_why why);
const char *uroce_trace_why_title(enum uroce_why why);
/* Entry I of a table of names, or "?". */
#define UROCE_NAME_OF(tbl, i) \
	((unsigned)(i) < sizeof(tbl) / sizeof(tbl[0]) && tbl[i] ? tbl[i] : "?")

#endif

/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The engine's door: what the verbs, the CM's QP 1 and the provider call
 * (one engine per process and device: the sockets, the progress thread,
 * the protocol state of every QP).  Callers outside engine/ include this
 * header only.  It brings the objects verbs and engine share: wq.h (QP,
 * SRQ, AH, WQE, rings), and through it objects.h (device, context, PD,
 * MR/MW, CQ), evobj.h and keytab.h; and upcalls.h, the table through which
 * the engine reaches verbs and the CM.  The engine's own state and the
 * prototypes its files share are in engine_int.h, which nothing outside
 * engine/ includes (tests/unit/layers.sh).
 */
#ifndef UROCE_ENGINE_H
#define UROCE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <infiniband/verbs.h>
#include <uroce/stats.h>

#include "engine/qp_attr.h"
#include "engine/upcalls.h"
#include "engine/wq.h"

struct roce_pkt;
struct uroce_engine;
struct uroce_gsi;
struct uroce_rx;

/* UROCE_DEBUG=1: protocol events (timeouts, NAKs, drops) on stderr. */
extern int uroce_debug;

/* ---- fork (docs/fork.md) -------------------------------------------------------- */

/* Counts the forks this process came from: a verbs object or engine made
 * under another count is a forked child's copy of its parent's, which the
 * child may not use (its threads and its peer's view are the parent's). */
extern unsigned uroce_fork_gen;
static inline bool uroce_parents(unsigned gen)
{
	return __atomic_load_n(&uroce_fork_gen, __ATOMIC_RELAXED) != gen;
}

/* ---- the provider (verbs/provider.c) ---------------------------------------- */

/* The table of what the engine asks of verbs and the CM, set once when
 * the provider loads, before any device opens. */
void uroce_engine_set_upcalls(const struct uroce_upcalls *up);
/* Drop a reference to an engine (a context's, at close; the CM's). */
void uroce_engine_put(struct uroce_engine *eng);

/* ---- QPs: the hooks of the verbs layer (qp_hooks.c) -------------------------- */

/* Give QP a device-unique QPN (shared with other processes), starting the
 * context's engine with its first QP; 0 or errno. */
int uroce_engine_qp_create(struct uroce_qp *qp);
/* The QP's state is about to change (qp->lock held): what it owes the
 * peer leaves first. */
void uroce_engine_qp_leaving(struct uroce_qp *qp);
/* State or attributes changed (called with qp->lock held, after the change). */
void uroce_engine_qp_modified(struct uroce_qp *qp, enum ibv_qp_state old_state,
			      int attr_mask);
/* New send WQEs are in qp->sq (called with qp->lock held). */
void uroce_engine_sq_posted(struct uroce_qp *qp);
/* After a post published WQEs without the QP's lock: true if the engine's
 * next pass will send them, so that the post need not take the lock. */
bool uroce_engine_post_deferred(struct uroce_qp *qp);
/* New receive WQEs are in qp->rq or the SRQ (no lock held). */
void uroce_engine_rq_posted(struct uroce_qp *qp);
/* SQD and the requester still has WQEs it started (ibv_query_qp's
 * sq_draining; qp->lock held). */
bool uroce_engine_sq_draining(const struct uroce_qp *qp);
/* QP goes away: no packet or timer refers to it after this returns. */
void uroce_engine_qp_destroy(struct uroce_qp *qp);

/* UD multicast (mcast_groups.c): attach UD QP to group GID (of FAMILY),
 * joining it; detach it, leaving the group with its last QP.  0 or an
 * errno (ENOMEM: max_mcast_grp or max_mcast_qp_attach; EINVAL: no engine
 * yet, or not attached).  Whether QP is attached to a group. */
int uroce_mcast_attach(struct uroce_qp *qp, const union ibv_gid *gid, int family);
int uroce_mcast_detach(struct uroce_qp *qp, const union ibv_gid *gid);
bool uroce_mcast_attached(struct uroce_qp *qp);

/* True when [ADDR, ADDR+LEN) is mapped in this process (LEN 0: true; mem.c). */
bool uroce_mem_mapped(const void *addr, uint64_t len);

/* ---- CQ polls (recv.c) ------------------------------------------------------ */

/* Busy polling: an application thread in poll_cq drains the sockets itself
 * (if no other thread is doing it), instead of waiting for the progress
 * thread to be scheduled. */
void uroce_engine_poll(struct uroce_engine *eng);
/* An application thread goes to sleep (req_notify_cq): what its polls
 * held back (resp_ack.c: ACKs) leaves now, and the progress thread watches
 * the wire for it (poll.c). */
void uroce_engine_poll_done(struct uroce_engine *eng);
/* An application thread turns from its data path to the CM (cm/ucma.c):
 * the ACKs its polls held for its next post leave now, on every engine of
 * the process (engine.c). */
void uroce_engine_flush_held_all(void);

/* ---- QP 1: what the CM's GSI (cm/gsi.c) needs of a device's engine ---------- */

/* The engine of device DEVNAME on NETDEV, without an ibv_context (the CM
 * hears QP1 on devices librdmacm has not opened yet); a reference. */
struct uroce_engine *uroce_engine_get_dev(const char *devname, const char *netdev,
					  const char *transport);
/* Does the engine's transport serve local address GID (IPv4-mapped or IPv6)? */
bool uroce_engine_has_addr(struct uroce_engine *eng, const uint8_t *gid);
/* The device's name, its netdev, the network namespace's id (device/). */
const char *uroce_engine_devname(const struct uroce_engine *eng);
const char *uroce_engine_netdev(const struct uroce_engine *eng);
const char *uroce_engine_nsid(const struct uroce_engine *eng);
/* The port other processes of the device pass this one's packets to. */
uint16_t uroce_engine_fwd_port(const struct uroce_engine *eng);
/* Pass RX to the process of this device whose forwarding port is PORT;
 * 0 (counted as forwarded_out) or -errno (-EOPNOTSUPP: the transport
 * does not forward). */
int uroce_engine_forward(struct uroce_engine *eng, uint16_t port, const struct uroce_rx *rx);
/* The engine is closing (uroce_engine_put drains its transport). */
bool uroce_engine_stopping(struct uroce_engine *eng);
/* The CM's state of this device (cm/gsi.c), kept by the engine for it. */
struct uroce_gsi *uroce_engine_gsi(const struct uroce_engine *eng);
void uroce_engine_set_gsi(struct uroce_engine *eng, struct uroce_gsi *gsi);
/* Count N events of kind E (enum uroce_stat) in the device's counters. */
void uroce_engine_count(struct uroce_engine *eng, enum uroce_stat e, uint64_t n);
/* Build headers for PKT (opcode set), append PAYLOAD, pad and ICRC, and
 * send it from (av->sgid, sport) to av->dst now, with anything this thread
 * has queued; 0 or -errno (pkt.c). */
int uroce_pkt_send(struct uroce_engine *eng, const struct uroce_av *av, uint16_t sport,
		   const struct roce_pkt *pkt, const struct iovec *payload, int n);

/* ---- trace hooks that read QPs (trace_hooks.c, UROCE_TRACE) ----------------- */

/* Send WQEs in slots [FROM, TO) were posted; ibv_modify_qp from state OLD
 * with ATTR/MASK (applied). */
struct ibv_qp_attr;
void uroce_trace_sq_posted(struct uroce_qp *qp, uint32_t from, uint32_t to);
void uroce_trace_modify(struct uroce_qp *qp, int old, const struct ibv_qp_attr *attr, int mask);

#endif

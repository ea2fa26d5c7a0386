/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Queue pairs, shared receive queues, address handles and their work
 * queue entries: the contract between the verbs layer (qp.c, srq.c, ah.c,
 * post.c, wr.c: validation, rings) and the protocol engine (qp_hooks.c,
 * req.c, resp*.c, comp.c, cqe.c: packets, PSNs, completions).
 *
 * Locking: qp->lock protects the rings and all protocol state of a QP; the
 * verbs layer takes it to post, the engine to transmit and receive.  A CQ
 * has its own lock (cq.c); lock order is qp->lock, then srq->lock, then
 * cq->lock.
 */
#ifndef UROCE_ENGINE_WQ_H
#define UROCE_ENGINE_WQ_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "engine/objects.h"

/* ---- address vectors (RoCEv2: the GID is an IP address) --------------- */

struct uroce_av {
	union ibv_gid dgid;
	union ibv_gid sgid;          /* our GID at sgid_index, resolved at create/modify */
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t sl;
	uint32_t flow_label;
	int family;                  /* AF_INET (IPv4-mapped GIDs) or AF_INET6 */
	union {
		struct sockaddr_in in4;
		struct sockaddr_in6 in6;
	} dst;                       /* dgid as a socket address, port 4791 */
};

struct uroce_ah {
	struct ibv_ah ibv_ah;
	struct uroce_av av;
};

struct uroce_xrcd_dom;
struct uroce_qp_eng;

/* ---- work queue entries ------------------------------------------------ */

struct uroce_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/*
 * A send WQE.  Slots are sq_stride bytes: this header, then either
 * num_sge struct uroce_sge or (IBV_SEND_INLINE) inline_len bytes copied
 * at post time.
 */
struct uroce_send_wqe {
	uint64_t wr_id;
	enum ibv_wr_opcode opcode;
	unsigned int send_flags;     /* IBV_SEND_SIGNALED|SOLICITED|FENCE|INLINE */
	uint32_t imm_data;           /* network order, as in ibv_send_wr */
	uint32_t invalidate_rkey;
	uint64_t remote_addr;        /* RDMA and atomics */
	uint32_t rkey;
	uint64_t compare_add;        /* atomics */
	uint64_t swap;
	struct {                     /* IBV_WR_BIND_MW (mw.c) */
		struct ibv_mw *mw;
		uint32_t rkey;       /* the window's new R_Key */
		struct ibv_mw_bind_info info;
	} bind;
	/* UD */
	struct uroce_av av;
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint32_t xrc_srqn;           /* XRC send QPs: the target's XRC SRQ (XRCETH) */
	/* payload */
	uint32_t num_sge;
	uint32_t inline_len;         /* valid when IBV_SEND_INLINE */
	uint64_t length;             /* total bytes of the message */
	/* requester state (engine) */
	uint32_t first_psn;
	uint32_t last_psn;
	uint64_t sent;               /* bytes handed to the wire so far */
	uint32_t read_done;          /* RDMA READ: response bytes placed */
	int state;                   /* enum uroce_wqe_state */
	bool executed;               /* a local operation (bind, invalidate) ran: a
				      * resend from an earlier WQE must not run it again */
	enum ibv_wc_status status;
	/* followed by struct uroce_sge[num_sge] or inline bytes */
	uint8_t data[] __attribute__((aligned(16)));
};

enum uroce_wqe_state {
	UROCE_WQE_POSTED,            /* not yet started */
	UROCE_WQE_SENDING,           /* some packets out */
	UROCE_WQE_SENT,              /* all packets out, awaiting ACK/response */
	UROCE_WQE_DONE,              /* acknowledged or failed; CQE due */
};

static inline struct uroce_sge *wqe_sges(struct uroce_send_wqe *w)
{
	return (struct uroce_sge *)w->data;
}

/* A receive WQE: slots are rq_stride bytes. */
struct uroce_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t pad;
	uint64_t length;             /* sum of the SGE lengths */
	struct uroce_sge sge[];
};

/* ---- rings --------------------------------------------------------------- */

/*
 * Indices run freely (uint32_t) and are masked with (size - 1); size is a
 * power of two.  prod - cons entries are in use.
 */
struct uroce_ring {
	uint8_t *buf;
	uint32_t size;
	uint32_t stride;
	uint32_t prod;               /* next slot the verbs layer fills (ring_publish) */
	uint32_t cons;               /* oldest slot not yet completed (ring_retire) */
	bool custom_buf;             /* buf is from a parent domain's allocator (pd.c) */
};

static inline void *ring_slot(struct uroce_ring *r, uint32_t idx)
{
	return r->buf + (size_t)(idx & (r->size - 1)) * r->stride;
}

/* A send queue's producer and consumer do not share a lock: a post may
 * fill and publish a WQE while the engine holds the QP's lock
 * (verbs/post.c).  So prod is published after the slot is filled, and
 * cons advanced after the slot's last use, each with a release store, and
 * both are read with acquire loads. */
static inline uint32_t ring_prod(const struct uroce_ring *r)
{
	return __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE);
}

static inline uint32_t ring_used(const struct uroce_ring *r)
{
	return ring_prod(r) - __atomic_load_n(&r->cons, __ATOMIC_ACQUIRE);
}

/* The producer hands the slot at prod, now filled, to the consumer. */
static inline void ring_publish(struct uroce_ring *r)
{
	__atomic_store_n(&r->prod, r->prod + 1, __ATOMIC_RELEASE);
}

/* The consumer is done with the slot at cons: it may be filled again. */
static inline void ring_retire(struct uroce_ring *r)
{
	__atomic_store_n(&r->cons, r->cons + 1, __ATOMIC_RELEASE);
}

/* ---- SRQ ----------------------------------------------------------------- */

struct uroce_srq {
	struct verbs_srq vsrq;
	unsigned fork_gen;           /* made by this process, or a forked child's copy (uroce_parents) */
	pthread_mutex_t lock;
	struct uroce_ring rq;
	uint32_t max_wr;             /* as reported to the user */
	uint32_t max_sge;
	uint32_t srq_limit;          /* 0 = disarmed (IBTA 10.2.9.2) */
	struct uroce_pd *pd;
	atomic_int users;            /* QPs attached: destroy_srq is EBUSY while > 0 */
	struct uroce_evobj ev;       /* SRQ_LIMIT_REACHED names it (evobj.h) */
	/* XRC SRQs (xrc.c): their domain and the CQ their completions go to.
	 * Every SRQ has a number (vsrq.srq_num); XRCETHs name XRC SRQs by it. */
	struct uroce_xrcd_dom *xrcd;
	struct uroce_cq *cq;
};

static inline struct uroce_srq *to_usrq(struct ibv_srq *s)
{
	return (struct uroce_srq *)s;
}

/* ---- QP -------------------------------------------------------------------- */

struct uroce_qp {
	struct verbs_qp vqp;         /* ibv_qp / ibv_qp_ex: must be first */
	struct uroce_context *ctx;
	unsigned fork_gen;           /* made by this process, or a forked child's copy (uroce_parents) */
	pthread_mutex_t lock;        /* the engine's: QP state, both queues' consumers */
	/* The send queue's producers (post_send, the wr_* API, bind_mw) and
	 * modify_qp, taken before lock.  A post takes lock only when the
	 * engine must act now (verbs/post.c). */
	pthread_mutex_t post_lock;
	/* Asynchronous events naming this QP: until ibv_ack_async_event has
	 * counted as many, destroy_qp keeps the struct (evobj.h). */
	struct uroce_evobj ev;

	enum ibv_qp_state state;
	struct ibv_qp_attr attr;     /* the attributes set so far (query_qp) */
	struct ibv_qp_cap cap;       /* as granted at create */
	int sq_sig_all;
	uint64_t send_ops_flags;     /* ibv_qp_init_attr_ex.send_ops_flags */

	struct uroce_ring sq;        /* struct uroce_send_wqe slots */
	struct uroce_ring rq;        /* struct uroce_recv_wqe slots (no SRQ) */
	/* An XRC receive (TGT) QP has none of these of its own: its responder
	 * takes them from the XRC SRQ each request names (xrc.c). */
	struct uroce_srq *srq;
	struct uroce_cq *scq, *rcq;
	struct uroce_pd *pd;
	struct uroce_xrcd_dom *xrcd;  /* XRC receive QPs */

	/* remote end (RC/UC from modify_qp RTR; UD per WQE) */
	struct uroce_av av;
	uint16_t udp_sport;          /* per-QP source port: ECMP entropy */

	/* ibv_wr_* state between wr_start and wr_complete (wr.c) */
	uint32_t wr_start_prod;
	int wr_error;
	struct uroce_send_wqe *wr_cur;

	/* The engine's protocol state of the QP (requester, responder,
	 * completer: engine_int.h), opaque outside engine/; NULL until
	 * uroce_engine_qp_create. */
	struct uroce_qp_eng *engine;
	unsigned int res_slot;       /* its entry in ctx->res (verbs/restrack.c), 0: none */
};

/* The reliable connected service: RC, and XRC, whose two halves (the send
 * QP's requester, the receive QP's responder) run RC's protocol. */
static inline bool uroce_qp_type_rc(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC || t == IBV_QPT_XRC_SEND || t == IBV_QPT_XRC_RECV;
}

static inline struct uroce_qp *to_uqp(struct ibv_qp *qp)
{
	return (struct uroce_qp *)qp;
}

static inline struct uroce_qp *qp_ex_to_uqp(struct ibv_qp_ex *qpx)
{
	return (struct uroce_qp *)qpx; /* qp_ex shares the start of verbs_qp */
}

#endif

/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The verbs objects the engine works with besides QPs (wq.h): device,
 * context, PD, MR and MW, CQ; and the limits the device advertises.
 */
#ifndef UROCE_ENGINE_OBJECTS_H
#define UROCE_ENGINE_OBJECTS_H

#include <pthread.h>
#include <stdbool.h>
#include <time.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include <uroce/provider_abi.h>

#include "engine/evobj.h"
#include "engine/keytab.h"
#include "device/device.h"

struct uroce_engine;
struct uroce_monitor;
struct uroce_res;

/* Limits reported by query_device; every create/reg verb enforces them. */
enum {
	UROCE_MAX_QP = 65536,
	UROCE_MAX_QP_WR = 16384,
	UROCE_MAX_SGE = 32,
	UROCE_MAX_INLINE = 512,
	UROCE_MAX_CQ = 65536,
	UROCE_MAX_CQE = 1 << 20,
	UROCE_MAX_MR = 1 << 20,
	UROCE_MAX_PD = 1 << 20,
	UROCE_MAX_AH = 1 << 20,
	UROCE_MAX_SRQ = 65536,
	UROCE_MAX_SRQ_WR = 16384,
	UROCE_MAX_RD_ATOM = 128,
	/* UD multicast (engine/mcast_groups.c): groups per device and process (a socket
	 * each), QPs per group. */
	UROCE_MAX_MCAST_GRP = 256,
	UROCE_MAX_MCAST_QP_ATTACH = 64,
	UROCE_NUM_COMP_VECTORS = 1,
	UROCE_VENDOR_ID = 0xFFFFFF, /* no IEEE OUI: a software device, as rxe */
};
#define UROCE_MAX_MR_SIZE (1ULL << 47)   /* the x86-64 user address space */
#define UROCE_MAX_MSG_SZ (1U << 31)      /* IBTA: 2^31 bytes */

struct uroce_device {
	struct verbs_device vdev;
	char netdev[IF_NAMESIZE];
	enum uroce_transport transport;
};

struct uroce_context {
	struct verbs_context vctx;
	uint64_t node_guid;           /* host order */
	int async_wr_fd;              /* we write async events here; async_fd reads */
	struct uroce_keytab mr_keys;  /* lkey/rkey -> struct uroce_mr */
	pthread_mutex_t lock;
	uint32_t next_pdn;
	struct uroce_engine *engine;  /* protocol engine, started by the first QP */
	struct uroce_monitor *monitor; /* netdev/registry watcher (verbs/monitor.c) */
	struct uroce_evobj *zombies;  /* destroyed objects an unacked event still names (evobj.h) */
	struct uroce_res *res;        /* its objects for `rdma resource` (device/res.h), or NULL */
};

struct uroce_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
	atomic_int users;             /* MRs, QPs, AHs, SRQs: dealloc_pd is EBUSY while > 0 */
	unsigned int res_slot;        /* its entry in ctx->res (verbs/restrack.c), 0: none */
	/* A parent domain (ibv_alloc_parent_domain(3), pd.c): objects made
	 * with it are protected by PROTECTION, and their ring buffers come
	 * from its allocator.  NULL for a plain PD. */
	struct uroce_pd *protection;
	struct ibv_td *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type);
	void *pd_context;
};

/* The resource_type our buffers are asked of a parent domain's allocator with. */
enum {
	UROCE_RES_TYPE_QP = 1,        /* a QP's send or receive ring */
	UROCE_RES_TYPE_SRQ = 2,       /* an SRQ's ring */
	UROCE_RES_TYPE_CQ = 3,        /* a CQ's ring */
};

/*
 * What a key (L_Key/R_Key) names.  Both live in the context's key table,
 * which holds a pointer to the object's key_kind member.
 */
enum uroce_key_kind {
	UROCE_KEY_MR = 1,
	UROCE_KEY_MW,
};

struct uroce_mr {
	struct verbs_mr vmr;
	enum uroce_key_kind key_kind; /* UROCE_KEY_MR */
	struct uroce_pd *pd;
	uint8_t *addr;                /* where the bytes are in this process */
	uint64_t iova;                /* the address peers and WRs use */
	uint64_t length;
	int access;
	atomic_int mw_binds;          /* MWs bound to it: dereg/rereg are EBUSY while > 0 */
	unsigned int res_slot;        /* its entry in the context's res table, 0: none */
	uint32_t res_id;              /* its MRN there */
};

/*
 * A memory window (IBTA 10.6.7): remote rights over part of an MR, bound
 * and invalidated through the send queue (mw.c).  Type 1 is bound with
 * ibv_bind_mw, type 2 (2B: tied to the binding QP) with IBV_WR_BIND_MW.
 */
struct uroce_mw {
	struct ibv_mw ibv_mw;
	enum uroce_key_kind key_kind; /* UROCE_KEY_MW */
	struct uroce_pd *pd;
	struct uroce_mr *mr;          /* bound to; NULL while free (invalid) */
	uint64_t iova;                /* the window as peers address it */
	uint64_t length;
	uint64_t mr_va;               /* where the window starts in the MR's iova space */
	int access;                   /* IBV_ACCESS_REMOTE_* (and ZERO_BASED) */
	uint32_t qpn;                 /* type 2: the QP it was bound through */
	uint32_t key;                 /* its key in the key table (ibv_mw.rkey of a
				       * type 1 window runs ahead, from its post) */
};

/* The MR or MW behind a key-table entry, or NULL if it is the other kind. */
static inline struct uroce_mr *uroce_key_mr(void *k)
{
	return k && *(enum uroce_key_kind *)k == UROCE_KEY_MR ?
		(struct uroce_mr *)((char *)k - offsetof(struct uroce_mr, key_kind)) : NULL;
}

static inline struct uroce_mw *uroce_key_mw(void *k)
{
	return k && *(enum uroce_key_kind *)k == UROCE_KEY_MW ?
		(struct uroce_mw *)((char *)k - offsetof(struct uroce_mw, key_kind)) : NULL;
}

/* A completion as queued: the work completion and, for CQs created with
 * timestamp flags, when it was generated (ns; see cq_ex.c). */
struct uroce_cqe {
	struct ibv_wc wc;
	uint64_t ts;                  /* CLOCK_MONOTONIC_RAW: the "HCA clock" */
	uint64_t wallclock;           /* CLOCK_REALTIME */
};

struct uroce_cq {
	struct verbs_cq vcq;
	unsigned fork_gen;            /* made by this process, or a forked child's copy (uroce_parents) */
	pthread_spinlock_t lock;
	struct uroce_cqe *ring;
	uint32_t size;                /* power of two */
	uint32_t head, tail;          /* consumer, producer */
	int chan_fd;                  /* write end of the completion channel, or -1 */
	int arm;                      /* enum uroce_cq_arm (evobj.h) */
	int overrun;                  /* a completion was lost: the CQ is in error */
	atomic_int users;             /* QPs using it: destroy_cq is EBUSY while > 0 */
	struct uroce_evobj ev;        /* completion and CQ_ERR events name it (evobj.h) */
	uint64_t wc_flags;            /* ibv_create_cq_ex's wc_flags; 0 for ibv_create_cq */
	struct ibv_pd *parent;        /* the parent domain whose allocator gives the ring, or NULL */
	bool custom_ring;             /* ring is from that allocator */
	struct uroce_cqe cur;         /* the entry ibv_start_poll/next_poll took */
	unsigned int res_slot;        /* its entry in the context's res table, 0: none */
	uint32_t res_id;              /* its CQN there (a QP's entry names it) */
};

static inline struct uroce_device *to_udev(struct ibv_device *d)
{
	return (struct uroce_device *)d;
}

static inline struct uroce_context *to_uctx(struct ibv_context *c)
{
	return (struct uroce_context *)((char *)c - offsetof(struct uroce_context, vctx.context));
}

/* The PD that protects objects made with PD: itself, or a parent
 * domain's protection domain. */
static inline struct uroce_pd *to_upd(struct ibv_pd *pd)
{
	struct uroce_pd *p = (struct uroce_pd *)pd;

	return p->protection ? p->protection : p;
}

static inline struct uroce_cq *to_ucq(struct ibv_cq *cq)
{
	return (struct uroce_cq *)cq;
}

#endif
